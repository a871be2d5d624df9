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

class EmittedCpp : public ::testing::TestWithParam<std::string> {};

TEST_P(EmittedCpp, CompilesAloneWithWarningsAsErrors) {
  fs::path example = fs::path(TCC_SOURCE_DIR) / "examples" / GetParam();
  Lowered lowered = lowerProgram(Program::fromFile(example.string()));
  fs::path directory = fs::temp_directory_path() / ("tcc_emitted_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  fs::path source = directory / (example.stem().string() + ".cpp");
  std::ofstream(source) << lowered.cpp;
  const char* compiler = std::getenv("CXX");
  bool openmp = false;
  for (const auto& statement : lowered.statements) openmp = openmp || statement.function.usesOpenMP;
  std::string command = std::string(compiler ? compiler : "c++") + " -O3 -Wall -Wextra -Werror" +
                        (openmp ? " -fopenmp" : "") + " -c '" + source.string() +
                        "' -o '" + (directory / "kernel.o").string() + "' 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << lowered.cpp;
  fs::remove_all(directory);
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
