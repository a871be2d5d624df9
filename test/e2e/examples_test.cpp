// Every examples/*.tc, on the inputs its `# run:` line names, against the
// dense reference evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reference_check.h"

namespace tcc::e2e {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(TCC_SOURCE_DIR) / "examples";

std::vector<std::string> exampleNames() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples))
    if (entry.path().extension() == ".tc") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The NAME=FILE bindings of the first `# run:` line, FILE made absolute.
std::vector<std::pair<std::string, std::string>> runBindings(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const std::string marker = "# run:";
    if (line.rfind(marker, 0) != 0) continue;
    std::istringstream words(line.substr(marker.size()));
    std::vector<std::pair<std::string, std::string>> bindings;
    std::string word;
    while (words >> word) {
      if (word != "--in" || !(words >> word)) throw std::runtime_error(file.string() + ": bad # run: line: " + line);
      auto equals = word.find('=');
      if (equals == std::string::npos) throw std::runtime_error(file.string() + ": binding without '=': " + word);
      bindings.emplace_back(word.substr(0, equals), (kExamples / word.substr(equals + 1)).string());
    }
    return bindings;
  }
  throw std::runtime_error(file.string() + " has no '# run:' line");
}

class ExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleTest, MatchesDenseReference) {
  std::filesystem::path file = kExamples / (GetParam() + ".tc");
  Program program = Program::fromFile(file.string());
  auto bindings = runBindings(file);
  ASSERT_FALSE(bindings.empty());
  auto inputs = readInputs(program, bindings);
  for (const auto& [name, tensor] : inputs) {
    std::vector<double> values = rt::toDense(tensor);
    EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](double v) { return v != 0; }))
        << name << " is all zero";
  }
  expectMatchesReference(program, inputs, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest, ::testing::ValuesIn(exampleNames()),
                         [](const auto& info) { return info.param; });

TEST(Examples, EveryKernelOfTheListIsPresent) {
  auto names = exampleNames();
  for (const char* expected : {"spmv", "spmv_csc", "spmv_coo", "spmv_dcsr", "spmm", "sddmm", "spgemm", "add_csr",
                               "sub_dcsr", "mul_csr", "mul_dcsr", "add_mixed", "sub_mixed", "mul_mixed", "scale",
                               "transpose", "ttv", "ttm", "mttkrp", "inner", "contract4", "spmv_parallel", "spmm_pos",
                               "sddmm_fused", "spgemm_parallel", "mttkrp_precompute", "add_parallel", "perm",
                               "perm_exact"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected << ".tc is missing";
}

}  // namespace
}  // namespace tcc::e2e
