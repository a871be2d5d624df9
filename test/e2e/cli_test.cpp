// The `tcc` executable as a user runs it: exit codes, the summary line and
// the error messages for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace tcc::e2e {
namespace {

using ::testing::HasSubstr;

struct Outcome {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

// Runs `tcc ARGS` from the examples folder, so the data paths are the ones
// the examples' `# run:` lines use.
Outcome runTcc(const std::string& arguments) {
  std::string command = "cd '" + std::string(TCC_SOURCE_DIR) + "/examples' && '" + TCC_EXECUTABLE + "' " + arguments + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, read);
  int status = pclose(pipe);
  outcome.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::filesystem::path scratchFile(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() / ("tcc_e2e_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove(path);
  return path;
}

const std::string kMalformed = std::string(TCC_SHARED_DATA_DIR) + "/malformed";

TEST(Cli, RunsSpmvAndPrintsTheSummary) {
  Outcome outcome = runTcc("run spmv.tc --in A=data/494_bus.mtx --in x=data/x494.tns --time --repeat 3");
  EXPECT_EQ(outcome.exitCode, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("y: {dense} float64 494, 494 stored"));
  EXPECT_THAT(outcome.output, HasSubstr("(median of 3)"));
}

TEST(Cli, RunsSpgemmAndWritesTheOutput) {
  auto out = scratchFile("spgemm.mtx");
  Outcome outcome = runTcc("run spgemm.tc --in B=data/cage5.mtx --in C=data/cage5_rot.mtx --out A=" + out.string());
  EXPECT_EQ(outcome.exitCode, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("A: {dense, compressed} float64 37x37,"));
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove(out);
}

TEST(Cli, MissingInputFileIsNamed) {
  auto out = scratchFile("missing.tns");
  Outcome outcome = runTcc("run spmv.tc --in A=data/no_such_matrix.mtx --in x=data/x494.tns --out y=" + out.string());
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.output, HasSubstr("data/no_such_matrix.mtx"));
  EXPECT_THAT(outcome.output, HasSubstr("cannot open"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "--out left a file behind";
}

TEST(Cli, MalformedMatrixMarketNamesFileAndLine) {
  auto out = scratchFile("malformed.tns");
  Outcome outcome = runTcc("run spmv.tc --in A='" + kMalformed + "/mangled1.mtx' --in x=data/x494.tns --out y=" + out.string());
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.output, HasSubstr("mangled1.mtx:1:"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "--out left a file behind";
}

TEST(Cli, EveryMalformedFileIsRefusedWithoutACrash) {
  for (const auto& entry : std::filesystem::directory_iterator(kMalformed)) {
    if (entry.path().extension() != ".mtx") continue;
    Outcome outcome = runTcc("run transpose.tc --in B='" + entry.path().string() + "'");
    SCOPED_TRACE(entry.path().filename().string() + ": " + outcome.output);
    // Some files are only unusual (tiny, no header, integer types); those may
    // run. None may crash, and a refusal names the file.
    EXPECT_TRUE(outcome.exitCode == 0 || outcome.exitCode == 1) << "exit code " << outcome.exitCode;
    if (outcome.exitCode != 0) EXPECT_THAT(outcome.output, HasSubstr(entry.path().filename().string()));
  }
}

TEST(Cli, VectorLongerThanTheMatrixNamesTheDimension) {
  auto out = scratchFile("shape.tns");
  Outcome outcome = runTcc("run spmv_csc.tc --in A=data/LF10.mtx --in x=data/x37.tns --out y=" + out.string());
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.output, HasSubstr("data/x37.tns:19:"));
  EXPECT_THAT(outcome.output, HasSubstr("outside 1..18"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "--out left a file behind";
}

TEST(Cli, MatricesOfDifferentShapesAreRefused) {
  auto out = scratchFile("shape.mtx");
  Outcome outcome = runTcc("run add_csr.tc --in B=data/cage5.mtx --in C=data/LF10.mtx --out A=" + out.string());
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.output, HasSubstr("data/LF10.mtx"));
  EXPECT_THAT(outcome.output, HasSubstr("18x18"));
  EXPECT_THAT(outcome.output, HasSubstr("37x37"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "--out left a file behind";
}

TEST(Cli, ExplainSaysWhatTheScheduleDid) {
  Outcome outcome = runTcc("explain spgemm_parallel.tc");
  EXPECT_EQ(outcome.exitCode, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("precompute B(i,k) * C(k,j) into dense workspace w_A(j)"));
  EXPECT_THAT(outcome.output, HasSubstr("A's rows are assembled in parallel"));
  EXPECT_THAT(outcome.output, HasSubstr("each thread fills its own copy of the workspace w_A"));
}

TEST(Cli, AnIllegalScheduleIsLocatedAndLeavesNoOutput) {
  auto program = scratchFile("illegal.tc");
  std::ofstream(program) << "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
                            "y(i) = A(i, j) * x(j)\nschedule {\n  pos(i, ipos, A(i, j))\n}\n";
  auto out = scratchFile("illegal.tns");
  Outcome outcome = runTcc("run '" + program.string() + "' --in A=data/494_bus.mtx --in x=data/x494.tns --out y=" +
                           out.string());
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_THAT(outcome.output, HasSubstr("illegal.tc:6:3: error: pos(i, ipos, A(i, j)): A stores i in a dense level"));
  EXPECT_THAT(outcome.output, HasSubstr("  pos(i, ipos, A(i, j))\n  ^"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "--out left a file behind";
  std::filesystem::remove(program);
}

}  // namespace
}  // namespace tcc::e2e
