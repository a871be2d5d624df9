// The `tcc` executable as a user runs it: exit codes, the summary line and
// the error messages for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// `y(i) += ...` adds to the y given with --in (and stops, saying so, with
// none); y, written by two statements, is described and written once.
TEST(Cli, AnUpdateInPlaceAddsToTheTensorGiven) {
  auto program = scratchFile("update.tc");
  std::ofstream(program) << "tensor A(N, N) : csr\ntensor x(N) : dense\ntensor y(N) : dense\n"
                            "y(i) += A(i, j) * x(j)\ny(i) = y(i) * 2\n";
  auto out = scratchFile("y.tns");
  Outcome outcome = runTcc("run '" + program.string() +
                           "' --in A=data/cage5.mtx --in x=data/x37.tns --in y=data/x37.tns --out y=" + out.string());
  EXPECT_EQ(outcome.exitCode, 0) << outcome.output;
  EXPECT_EQ(outcome.output, "y: {dense} float64 37, 37 stored\n");
  EXPECT_TRUE(std::filesystem::exists(out));
  outcome = runTcc("run '" + program.string() + "' --in A=data/cage5.mtx --in x=data/x37.tns");
  EXPECT_EQ(outcome.exitCode, 1) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("`y(i) += A(i,j) * x(j)` reads y's values from before it, and y has none: "
                                        "bind y as an input or write it in an earlier statement"));
  std::filesystem::remove(program);
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

// Refusals that lowering finds are located too: at the schedule command
// that made them (a precompute standing where the output's workspace would
// go), else at the statement; `tcc compile` writes nothing then.
TEST(Cli, CompileLocatesLoweringRefusalsWithACaret) {
  auto program = scratchFile("precompute.tc");
  std::ofstream(program) << "tensor Y(I) : {compressed}\ntensor A(I, J) : csc\ntensor B(I) : dense\n"
                            "tensor C(J) : dense\nY(i) = 0.5 * B(i) * C(j) * A(i,j)\nschedule {\n"
                            "  precompute(A(i,j), i, iw_0)\n}\n";
  auto out = scratchFile("precompute.cpp");
  Outcome outcome = runTcc("compile '" + program.string() + "' -o " + out.string());
  EXPECT_EQ(outcome.exitCode, 1) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("precompute.tc:7:3: error: precompute(A(i,j), i, iw_0): the loops (j, i) "
                                        "visit the coordinates of Y's level 1"));
  EXPECT_THAT(outcome.output, HasSubstr("\n  precompute(A(i,j), i, iw_0)\n  ^\n"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "-o left a file behind";

  std::ofstream(program) << "tensor y(I) : dense of float16\ntensor A(I, I) : csr\ny(i) = A(i,j) * 2\n";
  outcome = runTcc("compile '" + program.string() + "'");
  EXPECT_EQ(outcome.exitCode, 1) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("precompute.tc:3:1: error: cannot compile `y(i) = A(i,j) * 2`: output y is "
                                        "float16, which tcc reads but does not compute into"));
  EXPECT_THAT(outcome.output, HasSubstr("\ny(i) = A(i,j) * 2\n^\n"));
  std::filesystem::remove(program);
}

// B(i,j) = sum_k A(i,j,k) c(k) with A read from a .tns file whose (i, j)
// pairs repeat across k.
struct TtvFiles {
  std::filesystem::path tensor = scratchFile("repeats.tns");
  std::filesystem::path vector = scratchFile("c.tns");
  std::filesystem::path output = scratchFile("ttv_out.tns");
  std::vector<std::array<int32_t, 3>> entries = {{1, 2, 1}, {1, 2, 4}, {1, 3, 2}, {3, 4, 3}, {3, 4, 5}};
  std::vector<double> values = {1.5, -2.0, 3.0, 0.5, 5.0};
  std::vector<double> c = {1, 10, 100, 1000, 10000};

  TtvFiles() {
    std::ofstream a(tensor);
    for (size_t k = 0; k < entries.size(); ++k)
      a << entries[k][0] << " " << entries[k][1] << " " << entries[k][2] << " " << values[k] << "\n";
    std::ofstream v(vector);
    for (size_t k = 0; k < c.size(); ++k) v << k + 1 << " " << c[k] << "\n";
  }
  ~TtvFiles() {
    for (const auto& path : {tensor, vector, output}) std::filesystem::remove(path);
  }
  std::filesystem::path program(const std::string& format) const {
    auto path = scratchFile("ttv_" + std::to_string(format.size()) + ".tc");
    std::ofstream(path) << "tensor B(I, J) : dense\ntensor A(I, J, K) : " << format
                        << "\ntensor c(K) : dense\nB(i, j) = A(i, j, k) * c(k)\n";
    return path;
  }
  std::string arguments(const std::filesystem::path& program) const {
    return "run '" + program.string() + "' --in A='" + tensor.string() + "' --in c='" + vector.string() +
           "' --out B='" + output.string() + "'";
  }
};

TEST(Cli, RepeatsUnderALevelDeclaredUniqueStopTheRunNamingTensorLevelAndFile) {
  TtvFiles files;
  auto program = files.program("{compressed(nonunique), singleton, singleton}");
  Outcome outcome = runTcc(files.arguments(program));
  EXPECT_EQ(outcome.exitCode, 1) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("tensor A"));
  EXPECT_THAT(outcome.output, HasSubstr(files.tensor.filename().string()));
  EXPECT_THAT(outcome.output, HasSubstr("level 1 (singleton, mode 2) is declared unique"));
  EXPECT_THAT(outcome.output, HasSubstr("position 1 repeats the coordinates (1, 2, *)"));
  EXPECT_FALSE(std::filesystem::exists(files.output)) << "--out left a file behind";
  std::filesystem::remove(program);
}

TEST(Cli, TheNamedCooFormatSumsRepeatedPairs) {
  TtvFiles files;
  auto program = files.program("coo");
  Outcome outcome = runTcc(files.arguments(program));
  ASSERT_EQ(outcome.exitCode, 0) << outcome.output;
  std::map<std::pair<int, int>, double> expected;
  for (size_t k = 0; k < files.entries.size(); ++k)
    expected[{files.entries[k][0], files.entries[k][1]}] += files.values[k] * files.c[files.entries[k][2] - 1];
  std::map<std::pair<int, int>, double> written;
  std::ifstream in(files.output);
  int i, j;
  double value;
  while (in >> i >> j >> value) written[{i, j}] += value;
  EXPECT_EQ(written, expected);
  std::filesystem::remove(program);
}

TEST(Cli, AProgramWithoutStatementsHasNothingToCompute) {
  auto program = scratchFile("empty.tc");
  std::ofstream(program) << "tensor y(I) : dense\ntensor A(I, J) : csr\n";
  auto out = scratchFile("empty.cpp");
  for (const std::string& command : {"run '" + program.string() + "' --in A=data/494_bus.mtx",
                                     "compile '" + program.string() + "' -o '" + out.string() + "'",
                                     "explain '" + program.string() + "'"}) {
    Outcome outcome = runTcc(command);
    EXPECT_EQ(outcome.exitCode, 1) << command << "\n" << outcome.output;
    EXPECT_THAT(outcome.output, HasSubstr("empty.tc: nothing to compute: the program has no statement"));
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "compile -o wrote a file";
  Outcome checked = runTcc("check '" + program.string() + "'");
  EXPECT_EQ(checked.exitCode, 0) << checked.output;
  EXPECT_THAT(checked.output, HasSubstr("warning: "));
  EXPECT_THAT(checked.output, HasSubstr("nothing to compute"));
  std::filesystem::remove(program);
}

TEST(Cli, AProductWritesAndPrintsEveryStoredEntry) {
  auto out = scratchFile("product.mtx");
  std::string matrix = std::string(TCC_SHARED_DATA_DIR) + "/matrices/fs_183_1.mtx";
  Outcome outcome = runTcc("run spgemm.tc --in B='" + matrix + "' --in C='" + matrix + "' --out A=" + out.string() +
                           " --print A");
  ASSERT_EQ(outcome.exitCode, 0) << outcome.output;
  // "A: {dense, compressed} float64 183x183, N stored"
  auto at = outcome.output.find("183x183, ");
  ASSERT_NE(at, std::string::npos) << outcome.output;
  long stored = std::stol(outcome.output.substr(at + 9));
  std::ifstream in(out);
  std::string line;
  std::getline(in, line);  // header
  int rows, cols;
  long declared;
  in >> rows >> cols >> declared;
  EXPECT_EQ(declared, stored);
  long lines = 0;
  for (std::getline(in, line); std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, stored);
  // --print lists one line per stored entry after its heading.
  long printed = 0;
  std::istringstream listing(outcome.output.substr(outcome.output.find("A ({dense, compressed}")));
  for (std::getline(listing, line); std::getline(listing, line);) printed += line.rfind("  ", 0) == 0;
  EXPECT_EQ(printed, stored);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace tcc::e2e
