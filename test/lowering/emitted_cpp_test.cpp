// The emitted C++ is a product: for every example, `tcc compile` output must
// compile on its own with the system compiler, warnings as errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tcc/tcc.h"

namespace tcc::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TCC_SOURCE_DIR) / "examples"))
    if (entry.path().extension() == ".tc") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Compiles the lowered program's C++ alone with the system compiler; "" on
// success, else the command and its output.
std::string compileAlone(const Lowered& lowered, const std::string& name) {
  fs::path directory = fs::temp_directory_path() / ("tcc_emitted_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  fs::path source = directory / (name + ".cpp");
  std::ofstream(source) << lowered.cpp;
  const char* compiler = std::getenv("CXX");
  bool openmp = false;
  for (const auto& statement : lowered.statements) openmp = openmp || statement.function.usesOpenMP;
  bool sparseWorkspaces = false;
  for (const auto& statement : lowered.statements) sparseWorkspaces = sparseWorkspaces || statement.function.usesSparseWorkspaces;
  std::string command = std::string(compiler ? compiler : "c++") + " -O3 -fPIC -Wall -Wextra -Werror" +
                        (openmp ? " -fopenmp" : " -fopenmp-simd") + " -c '" + source.string() +
                        "' -o '" + (directory / "kernel.o").string() + "' 2>&1";
  // A kernel with sparse workspaces links, every symbol resolved, against
  // the ISM runtime as its first comment says.
  if (sparseWorkspaces)
    command += std::string(" && ") + (compiler ? compiler : "c++") + " -shared -Wl,--no-undefined '" +
               (directory / "kernel.o").string() + "' -o '" + (directory / "kernel.so").string() + "' -L'" +
               TCC_ISM_RUNTIME_DIR + "' -ltcc_ism_runtime 2>&1";
  int status = std::system(command.c_str());
  fs::remove_all(directory);
  return status == 0 ? "" : command + "\n" + lowered.cpp;
}

class EmittedCpp : public ::testing::TestWithParam<std::string> {};

TEST_P(EmittedCpp, CompilesAloneWithWarningsAsErrors) {
  fs::path example = fs::path(TCC_SOURCE_DIR) / "examples" / GetParam();
  EXPECT_EQ(compileAlone(lowerProgram(Program::fromFile(example.string())), example.stem().string()), "");
}

// An unrolled loop on threads or vector lanes: g++ accepts no pragma between
// an OpenMP pragma and its loop, which clang tolerates.
TEST(EmittedCpp, UnrolledOpenMPLoopsCompileWithTheSystemCompiler) {
  const std::string spmv = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
                           "y(i) = A(i, j) * x(j)\nschedule {\n";
  for (const char* schedule : {"  unroll(j, 2)\n  parallelize(j, CPUThread, ParallelReduction)\n}\n",
                               "  unroll(i, 4)\n  parallelize(i, CPUThread, NoRaces)\n}\n",
                               "  unroll(j, 2)\n  parallelize(j, CPUVector, ParallelReduction)\n}\n"}) {
    SCOPED_TRACE(schedule);
    EXPECT_EQ(compileAlone(lowerProgram(Program::fromText(spmv + schedule, "unrolled.tc")), "unrolled"), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, EmittedCpp, ::testing::ValuesIn(exampleFiles()),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.size() - 3);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tcc::test
