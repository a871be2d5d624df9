// Random compositions of scheduling commands: every schedule either
// compiles to a kernel that matches the dense reference, or is refused with
// a located, named error. None may crash, reach an internal error, or
// compute a wrong result.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <regex>

#include "kernel_check.h"
#include "tcc/test/random_schedule.h"

namespace tcc::test {
namespace {

struct Case {
  const char* name;
  const char* program;
  std::vector<std::string> defaultLoops;
  // Variables a sparse level iterates, with the access pos takes.
  std::map<std::string, std::string> positionAccesses;
  std::map<std::string, rt::Coo> inputs;
};

std::vector<Case> cases() {
  return {
      {"gemm",
       "tensor C(I, J) : dense\ntensor A(I, K) : dense\ntensor B(K, J) : dense\nC(i,j) = A(i,k) * B(k,j)\n",
       {"i", "j", "k"},
       {},
       {{"A", randomDense({13, 6}, 1)}, {"B", randomDense({6, 9}, 2)}}},
      {"spmv",
       "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n",
       {"i", "j"},
       {{"j", "A(i,j)"}},
       {{"A", randomSparse({41, 29}, 0.15, 3)}, {"x", randomDense({29}, 4)}}},
      {"spmm",
       "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\nC(i,k) = A(i,j) * B(j,k)\n",
       {"i", "j", "k"},
       {{"j", "A(i,j)"}},
       {{"A", randomSparse({23, 19}, 0.2, 5)}, {"B", randomDense({19, 7}, 6)}}},
      {"spgemm",
       "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n",
       {"i", "k", "j"},
       {},
       {{"B", randomSparse({21, 17}, 0.15, 7)}, {"C", randomSparse({17, 25}, 0.15, 8)}}},
  };
}

std::string randomSchedule(const Case& kernel, std::mt19937& random) {
  std::string schedule;
  for (const auto& command : randomScheduleCommands({kernel.defaultLoops, kernel.positionAccesses}, random))
    schedule += command + "\n";
  return schedule;
}

// Compiles `dsl`: a program that compiles must match the reference; one
// that does not must be refused with a located or stated reason, never an
// internal error. False once a check has failed.
bool matchesReferenceOrIsRefused(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs, int& compiled, int& refused) {
  std::string error = errorOf(dsl);
  if (error.empty()) {
    ++compiled;
    SCOPED_TRACE(dsl);
    expectProgramMatchesReference(dsl, inputs);
    return !::testing::Test::HasFailure();
  }
  ++refused;
  if (std::getenv("TCC_PRINT_REFUSALS")) std::cout << error.substr(0, error.find("\n")) << "\n";
  EXPECT_EQ(error.find("internal"), std::string::npos) << dsl << error;
  // Located: file:line:col, the source line and a caret.
  EXPECT_TRUE(std::regex_search(error, std::regex("^test\\.tc:[1-9][0-9]*:[1-9][0-9]*: error: [^\n]*\n[^\n]*\n[ \t]*\\^\n$")))
      << dsl << error;
  return true;
}

TEST(RandomSchedules, CompileCorrectlyOrAreRefusedWithAReason) {
  std::mt19937 random(20261123);
  int compiled = 0, refused = 0;
  for (int trial = 0; trial < 160; ++trial) {
    for (const auto& kernel : cases()) {
      std::string dsl = withSchedule(kernel.program, randomSchedule(kernel, random));
      if (!matchesReferenceOrIsRefused(dsl, kernel.inputs, compiled, refused)) return;
    }
  }
  // Both outcomes must be common for the test to mean something.
  EXPECT_GT(compiled, 150);
  EXPECT_GT(refused, 50);
  std::cout << compiled << " schedules compiled and matched the reference, " << refused << " were refused\n";
}

// Sparse outputs under random schedules: levels their loops visit once,
// revisit on consecutive iterations (fused loops: one position per
// coordinate), or visit out of order (refused), appended in one pass or
// assembled then computed.
TEST(RandomSchedules, OfSparseOutputsCompileCorrectlyOrAreRefusedWithAReason) {
  std::map<std::string, int> sizes{{"i", 7}, {"j", 5}, {"k", 3}};
  std::vector<Case> outputs = {
      {"dcsr copy", "tensor Y(I, J) : dcsr\ntensor A(I, J) : dense\nY(i,j) = A(i,j)\n", {"i", "j"}, {},
       {{"A", randomSparse({7, 5}, 0.4, 11)}}},
      {"sparse vector of row sums", "tensor Y(I) : sparse\ntensor A(I, J) : dense\nY(i) = A(i,j)\n", {"i", "j"}, {},
       {{"A", randomSparse({7, 5}, 0.3, 12)}}},
      {"csr of sums", "tensor Y(I, J) : csr\ntensor A(I, J, K) : dense\nY(i,j) = A(i,j,k)\n", {"i", "j", "k"}, {},
       {{"A", randomSparse({7, 5, 3}, 0.2, 13)}}},
      {"csf copy", "tensor Y(I, J, K) : csf\ntensor A(I, J, K) : dense\nY(i,j,k) = A(i,j,k)\n", {"i", "j", "k"}, {},
       {{"A", randomSparse({7, 5, 3}, 0.2, 14)}}},
      {"coo product", "tensor Y(I, J) : coo\ntensor A(I, J) : dcsr\ntensor B(I, J) : dense\nY(i,j) = A(i,j) * B(i,j)\n",
       {"i", "j"}, {{"i", "A(i,j)"}, {"j", "A(i,j)"}},
       {{"A", randomSparse({7, 5}, 0.3, 15)}, {"B", randomDense({7, 5}, 16)}}},
  };
  std::mt19937 random(20261127);
  int compiled = 0, refused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    for (const auto& kernel : outputs) {
      ScheduleSpace space{kernel.defaultLoops, kernel.positionAccesses};
      space.wideMix = true;
      space.sizes = sizes;
      std::string schedule;
      for (const auto& command : randomScheduleCommands(space, random)) schedule += command + "\n";
      if (std::uniform_int_distribution<int>(0, 3)(random) == 0) schedule += "assemble(Y, Append, true)\n";
      std::string dsl = withSchedule(kernel.program, schedule);
      if (!matchesReferenceOrIsRefused(dsl, kernel.inputs, compiled, refused)) return;
    }
  }
  EXPECT_GT(compiled, 80);
  EXPECT_GT(refused, 20);
  std::cout << compiled << " schedules of sparse outputs compiled and matched the reference, " << refused
            << " were refused\n";
}

}  // namespace
}  // namespace tcc::test
