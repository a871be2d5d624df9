// The tcc command as a user runs it: exit codes, stdout and stderr.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Result {
  int exitCode = -1;
  std::string out, err;
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

Result runTcc(const std::string& arguments) {
  auto folder = std::filesystem::temp_directory_path() /
                ("tcc_driver_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  std::string command = std::string("'") + TCC_COMMAND + "' " + arguments + " >'" +
                        (folder / "out").string() + "' 2>'" + (folder / "err").string() + "'";
  int status = std::system(command.c_str());
  Result result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = readFile(folder / "out");
  result.err = readFile(folder / "err");
  return result;
}

std::string writeProgram(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("tcc_driver_test_" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

const char* const kSpGEMM =
    "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\n"
    "A(i,j) = B(i,k) * C(k,j)\nschedule { reorder(k, i, j) }\n";

TEST(Driver, CheckValidFilePrintsNothing) {
  Result result = runTcc("check '" + writeProgram("ok.tc", kSpGEMM) + "'");
  EXPECT_EQ(result.exitCode, 0);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
}

TEST(Driver, CheckInvalidFileReportsEveryErrorAndExitsOne) {
  std::string path = writeProgram("bad.tc", "tensor A(I) : cssr\ntensor B(I) : dense of float8\n");
  Result result = runTcc("check '" + path + "'");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find(path + ":1:15: error: unknown format 'cssr'"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find(path + ":2:24: error: unknown element type 'float8'"),
            std::string::npos)
      << result.err;
  EXPECT_LT(result.err.find(":1:15:"), result.err.find(":2:24:"));
}

TEST(Driver, MissingFileIsAUserError) {
  Result result = runTcc("check /no/such/file.tc");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.err, "/no/such/file.tc: error: cannot read file\n");
}

TEST(Driver, CompileEmitsConcreteIndexNotation) {
  const char* spmv = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
                     "y(i) = A(i,j) * x(j)\n";
  Result result = runTcc("compile '" + writeProgram("cin.tc", spmv) + "' --emit cin");
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("forall(i, forall(j, y(i) += A(i,j) * x(j)))"), std::string::npos)
      << result.out;
}

TEST(Driver, ExplainPrintsFormatsConcreteIndexNotationAndDecisions) {
  const char* gustavson = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                          "A(i,j) = B(i,k) * C(k,j)\n";
  Result result = runTcc("explain '" + writeProgram("explain.tc", gustavson) + "'");
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("B(I, K) : {dense, compressed} of float64"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("forall(i, where("), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("inserted dense workspace w_A(j)"), std::string::npos) << result.out;
}

TEST(Driver, ExplainSaysWhyAnOuterProductTakesASparseWorkspace) {
  // Outer-product SpGEMM scatters across A's rows: it needs a sparse workspace.
  Result result = runTcc("explain '" + writeProgram("outer.tc", kSpGEMM) + "'");
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("B(I, K) : {dense, compressed} order (1,0) of float64"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("sparse scattering of order 2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("inserted sparse workspace ws_A of order 2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("not taken: a dense workspace"), std::string::npos) << result.out;
}

TEST(Driver, UsageErrorsExitTwo) {
  EXPECT_EQ(runTcc("").exitCode, 2);
  EXPECT_EQ(runTcc("check").exitCode, 2);
  EXPECT_EQ(runTcc("frobnicate x.tc").exitCode, 2);
  EXPECT_EQ(runTcc("compile '" + writeProgram("u.tc", kSpGEMM) + "' --emit nonsense").exitCode, 2);
}

TEST(Driver, HelpListsTheSubcommands) {
  Result result = runTcc("--help");
  EXPECT_EQ(result.exitCode, 0);
  for (const char* command : {"check", "compile", "explain"})
    EXPECT_NE(result.out.find(command), std::string::npos) << command;
  Result compileHelp = runTcc("compile --help");
  EXPECT_EQ(compileHelp.exitCode, 0);
  EXPECT_NE(compileHelp.out.find("--emit"), std::string::npos);
}

TEST(Driver, FpFlagOverridesTheProgramsLine) {
  const char* spmv = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\nfp fast\n";
  std::string path = writeProgram("fp.tc", spmv);
  Result byLine = runTcc("compile '" + path + "'");
  EXPECT_EQ(byLine.exitCode, 0) << byLine.err;
  EXPECT_NE(byLine.out.find("// Floating-point mode: fast"), std::string::npos) << byLine.out;
  EXPECT_NE(byLine.out.find("-ffp-contract=fast -fno-trapping-math"), std::string::npos) << byLine.out;
  EXPECT_NE(byLine.out.find("partial sums"), std::string::npos) << byLine.out;
  Result byFlag = runTcc("compile '" + path + "' --fp strict");
  EXPECT_EQ(byFlag.exitCode, 0) << byFlag.err;
  EXPECT_NE(byFlag.out.find("// Floating-point mode: strict"), std::string::npos) << byFlag.out;
  EXPECT_NE(byFlag.out.find("-ffp-contract=off"), std::string::npos) << byFlag.out;
  EXPECT_EQ(byFlag.out.find("partial sums"), std::string::npos) << byFlag.out;
  Result explained = runTcc("explain '" + path + "'");
  EXPECT_NE(explained.out.find("floating point: fast (the program's fp line)"), std::string::npos) << explained.out;
  Result explainedByFlag = runTcc("explain '" + path + "' --fp strict");
  EXPECT_NE(explainedByFlag.out.find("floating point: strict (--fp)"), std::string::npos) << explainedByFlag.out;
  EXPECT_EQ(runTcc("compile '" + path + "' --fp fastest").exitCode, 2);
}

TEST(Driver, HelpNamesTheFloatingPointDefault) {
  Result result = runTcc("--help");
  EXPECT_NE(result.out.find("strict mode by default"), std::string::npos) << result.out;
  Result runHelp = runTcc("run --help");
  EXPECT_NE(runHelp.out.find("--fp"), std::string::npos) << runHelp.out;
}

}  // namespace
