// A sum nested in the expression (a scalar temporary) is computed once
// before a loop whose variable it does not read, and once per iteration
// before the lattice cases that would each compute it alike, instead of in
// every case (CompileOptions::hoistNestedSums). Every program is compared
// with the dense reference in both floating-point modes, with and without
// a parallel loop, on random and real matrices; in strict mode the hoisted
// kernel's outputs are bit for bit those of the kernel that computes the
// sums in every case; and the hoisted kernel prints the sum's loop fewer
// times where the statement gives it several cases.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "kernel_check.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

struct Case : ProgramCase {
  // The comment of the nested sum's loop in the printed C++, and whether
  // hoisting prints it fewer times (false: the same, the sum's operands
  // unite at the loop around it or one case computes it).
  std::string sumLoop;
  bool fewerCopies;
};

// The sum reads i only: once per row, before the loop over j.
const char* kSumInAProduct =
    "tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, L) : csr\n"
    "tensor x(L) : dense\nY(i,j) = A(i,j) + B(i,j) * sum(l, C(i,l) * x(l))\n";
// The sum's operand at j, A's fiber, is one: summed once per j where A
// has a fiber, before the cases of E, F and G.
const char* kSumInASumOfProducts =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor E(I, J) : csr\ntensor F(I, J) : csr\n"
    "tensor G(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) * (F(i,j) + G(i,j)) + sum(l, A(i,j,l) * x(l))\n";
// Two sums, one per j (hoisted out of the cases), one per i (out of the loop).
const char* kTwoSums =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor B(I, J) : csr\ntensor C(I, K) : csr\n"
    "tensor D(I, J) : csr\ntensor x(L) : dense\ntensor z(K) : dense\n"
    "Y(i,j) = sum(l, A(i,j,l) * x(l)) - B(i,j) * sum(k, C(i,k) * z(k)) + D(i,j)\n";
// A sum of an intersection at j: hoisted out of the cases.
const char* kSumOfAnIntersection =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : csr\n"
    "tensor F(I, J) : csr\nY(i,j) = E(i,j) - F(i,j) + sum(l, A(i,j,l) * D(i,j,l))\n";
// A sum of a union at j: each case computes a different sum (A's alone,
// D's alone, both), so it stays in the cases.
const char* kSumOfAUnion =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : csr\n"
    "tensor F(I, J) : csr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) - F(i,j) + sum(l, (A(i,j,l) + D(i,j,l)) * x(l))\n";
// A sum that reads no output variable: once, before every loop.
const char* kLoopInvariantSum =
    "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor E(I, J) : csr\ntensor b(M) : sparse\ntensor c(M) : dense\n"
    "Y(i,j) = sum(m, b(m) * c(m)) * A(i,j) - E(i,j)\n";
// Terms that sum over other variables (the einsum rule's sums, not written
// out): A's sum over l into a sparse output among the others' union.
const char* kImplicitSumIntoSparse =
    "tensor Y(I, J) : csr\ntensor A(I, J, L) : csf\ntensor B(L) : dense\ntensor E(I, J) : csr\n"
    "tensor F(I, J) : dcsr\nY(i,j) = A(i,j,l) * B(l) + E(i,j) - F(i,j)\n";

std::vector<Case> cases() {
  rt::Coo bus = realMatrix("494_bus.mtx");  // 494 x 494
  rt::Coo ash = realMatrix("ash219.mtx");   // 219 x 85
  return {
      {"sum_in_a_product_random", kSumInAProduct,
       {{"A", randomSparse({12, 10}, 0.3, 9301)}, {"B", randomSparse({12, 10}, 0.4, 9302)},
        {"C", randomSparse({12, 9}, 0.3, 9303)}, {"x", randomDense({9}, 9304)}},
       "iterate l", true},
      {"sum_in_a_product_real", kSumInAProduct,
       {{"A", randomSparse({494, 494}, 0.01, 9311)}, {"B", bus}, {"C", bus}, {"x", randomDense({494}, 9312)}},
       "iterate l", true},
      {"sum_in_a_sum_of_products_random", kSumInASumOfProducts,
       {{"A", randomSparse({9, 8, 7}, 0.2, 9321)}, {"E", randomSparse({9, 8}, 0.4, 9322)},
        {"F", randomSparse({9, 8}, 0.4, 9323)}, {"G", randomSparse({9, 8}, 0.4, 9324)}, {"x", randomDense({7}, 9325)}},
       "iterate l", true},
      {"two_sums_random", kTwoSums,
       {{"A", randomSparse({9, 8, 7}, 0.2, 9331)}, {"B", randomSparse({9, 8}, 0.4, 9332)},
        {"C", randomSparse({9, 6}, 0.4, 9333)}, {"D", randomSparse({9, 8}, 0.3, 9334)}, {"x", randomDense({7}, 9335)},
        {"z", randomDense({6}, 9336)}},
       "iterate l", true},
      {"two_sums_real", kTwoSums,
       {{"A", randomSparse({219, 85, 5}, 0.02, 9341)}, {"B", ash}, {"C", randomSparse({219, 30}, 0.1, 9342)},
        {"D", randomSparse({219, 85}, 0.05, 9343)}, {"x", randomDense({5}, 9344)}, {"z", randomDense({30}, 9345)}},
       "iterate k", true},
      {"sum_of_an_intersection_random", kSumOfAnIntersection,
       {{"A", randomSparse({8, 9, 6}, 0.3, 9351)}, {"D", randomSparse({8, 9, 6}, 0.3, 9352)},
        {"E", randomSparse({8, 9}, 0.4, 9353)}, {"F", randomSparse({8, 9}, 0.4, 9354)}},
       "co-iterate l", true},
      {"sum_of_a_union_random", kSumOfAUnion,
       {{"A", randomSparse({8, 9, 6}, 0.3, 9361)}, {"D", randomSparse({8, 9, 6}, 0.3, 9362)},
        {"E", randomSparse({8, 9}, 0.4, 9363)}, {"F", randomSparse({8, 9}, 0.4, 9364)}, {"x", randomDense({6}, 9365)}},
       "co-iterate l", false},
      {"loop_invariant_sum_random", kLoopInvariantSum,
       {{"A", randomSparse({10, 11}, 0.3, 9371)}, {"E", randomSparse({10, 11}, 0.3, 9372)},
        {"b", randomSparse({13}, 0.5, 9373)}, {"c", randomDense({13}, 9374)}},
       "iterate m", true},
      {"loop_invariant_sum_real", kLoopInvariantSum,
       {{"A", bus}, {"E", randomSparse({494, 494}, 0.01, 9381)}, {"b", randomSparse({40}, 0.5, 9382)},
        {"c", randomDense({40}, 9383)}},
       "iterate m", true},
      {"implicit_sum_into_a_sparse_output_random", kImplicitSumIntoSparse,
       {{"A", randomSparse({9, 10, 6}, 0.25, 9391)}, {"B", randomDense({6}, 9392)},
        {"E", randomSparse({9, 10}, 0.3, 9393)}, {"F", randomSparse({9, 10}, 0.3, 9394)}},
       "iterate l", true},
  };
}

const std::vector<Case>& allCases() {
  static const std::vector<Case> all = cases();
  return all;
}

const std::vector<std::string> kSchedules = {"", "parallelize(i, CPUThread, NoRaces)"};

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

class HoistedNestedSums : public ::testing::TestWithParam<std::tuple<size_t, std::string, FloatingPointMode>> {};

TEST_P(HoistedNestedSums, MatchesReference) {
  const auto& [index, schedule, mode] = GetParam();
  const Case& c = allCases().at(index);
  std::string dsl = withScheduleIfAny(c.program, schedule);
  SCOPED_TRACE(c.name + " in " + frontend::toString(mode) + " mode:\n" + dsl);
  CompileOptions options;
  options.floatingPoint = mode;
  try {
    expectProgramMatchesReference(dsl, c.inputs, options, mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
  } catch (const std::exception& error) {
    FAIL() << "refused: " << error.what();
  }
}

// Strict mode: the same additions in the same order as the sums computed
// in every case, so the same bits (fast mode promises none).
class HoistedNestedSumsStrict : public ::testing::TestWithParam<std::tuple<size_t, std::string>> {};

TEST_P(HoistedNestedSumsStrict, BitsAreThoseOfTheSumsInEveryCase) {
  const auto& [index, schedule] = GetParam();
  const Case& c = allCases().at(index);
  std::string dsl = withScheduleIfAny(c.program, schedule);
  SCOPED_TRACE(c.name + ":\n" + dsl);
  CompileOptions hoisted, everyCase;
  hoisted.floatingPoint = everyCase.floatingPoint = FloatingPointMode::Strict;
  everyCase.hoistNestedSums = false;
  auto expected = outputsOf(dsl, c.inputs, everyCase);
  auto actual = outputsOf(dsl, c.inputs, hoisted);
  expectSameBits(actual, expected);
}

TEST_P(HoistedNestedSums, PrintsTheSumsLoopsFewerTimes) {
  const auto& [index, schedule, mode] = GetParam();
  const Case& c = allCases().at(index);
  std::string dsl = withScheduleIfAny(c.program, schedule);
  SCOPED_TRACE(c.name + ":\n" + dsl);
  CompileOptions hoisted, everyCase;
  hoisted.floatingPoint = everyCase.floatingPoint = mode;
  everyCase.hoistNestedSums = false;
  Program program = Program::fromText(dsl, "test.tc");
  size_t before = occurrences(lowerProgram(program, everyCase).cpp, "// " + c.sumLoop);
  size_t after = occurrences(lowerProgram(program, hoisted).cpp, "// " + c.sumLoop);
  ASSERT_GT(after, 0u) << "no loop '" << c.sumLoop << "' in the kernel";
  if (c.fewerCopies) {
    EXPECT_LT(after, before);
  } else {
    EXPECT_EQ(after, before);
  }
}

INSTANTIATE_TEST_SUITE_P(Statements, HoistedNestedSums,
                         ::testing::Combine(::testing::Range<size_t>(0, 10), ::testing::ValuesIn(kSchedules),
                                            ::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast)),
                         [](const auto& info) {
                           std::string name = allCases().at(std::get<0>(info.param)).name;
                           name += std::get<1>(info.param).empty() ? "_unscheduled" : "_parallel_rows";
                           name += std::get<2>(info.param) == FloatingPointMode::Strict ? "_strict" : "_fast";
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(Statements, HoistedNestedSumsStrict,
                         ::testing::Combine(::testing::Range<size_t>(0, 10), ::testing::ValuesIn(kSchedules)),
                         [](const auto& info) {
                           std::string name = allCases().at(std::get<0>(info.param)).name;
                           return name + (std::get<1>(info.param).empty() ? "_unscheduled" : "_parallel_rows");
                         });

// The slow differential case (regressions/slow/ac_...): the nested sum's
// loops were printed in every case of the loop over k; now once per
// co-iteration loop.
TEST(HoistedNestedSums, TheSlowRegressionKernelShrinks) {
  const std::string dsl =
      "tensor Y(I, J, K) : {dense, compressed, dense} of int32\n"
      "tensor A(I, J, K) : {compressed, compressed, compressed} of int32\n"
      "tensor B(I, J, K) : coo of int32\n"
      "tensor C(L, N) : {compressed, dense} of int32\n"
      "tensor D(I, J, K) : {compressed, compressed, compressed} of int32\n"
      "tensor E(I, J) : {dense, compressed} of int32\n"
      "tensor F(I, J) : {compressed, dense} of int32\n"
      "Y(i,j,k) = A(i,j,k) - B(i,j,k) + C(l,n) * D(i,j,k) * (E(i,j) - F(i,j))\n";
  CompileOptions everyCase;
  everyCase.hoistNestedSums = false;
  Program program = Program::fromText(dsl, "test.tc");
  size_t before = occurrences(lowerProgram(program, everyCase).cpp, "// iterate l");
  size_t after = occurrences(lowerProgram(program).cpp, "// iterate l");
  EXPECT_LT(after, before);
}

}  // namespace
}  // namespace tcc::test
