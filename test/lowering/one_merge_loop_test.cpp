// A co-iteration whose lattice cases hold loops (the variables inside, a
// nested sum's) is one while-loop over all its operands, an exhausted one at
// a coordinate past the others, instead of TACO's loop per lattice point
// that printed each case's loops once per loop having the case
// (CompileOptions::oneMergeLoop). Nested sums that depend on a union were
// the worst hit: every case of every such loop held a copy of the sum's
// loops. Every program is compared with the dense reference in both
// floating-point modes, with and without a thread loop, on random and real
// inputs; in strict mode its outputs are bit for bit those of the loops per
// lattice point (the same cases, the same additions in the same order); and
// the kernel is smaller. An innermost co-iteration is one loop from a union
// of five operands on (a sum of eight CSR matrices was refused: 49,000
// lines), and the cases of such a union above it one body, an operand
// absent at the coordinate iterating empty ranges below (five DCSR
// matrices: 19,941 lines, refused).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "kernel_check.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

struct Case : ProgramCase {
  // Whether the loop over i can run on threads (its rows are not
  // co-iterated, the output's rows can be assembled apart).
  bool threadRows = true;
  // Whether TACO's loops per lattice point are past what is compiled.
  bool perPointRefused = false;
};

// The sum's operands unite at j (A's fiber, D's, or both): a different sum
// in each case, inside a product.
const char* kUnionSumInAProduct =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor B(I, J) : dcsr\n"
    "tensor E(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = B(i,j) * sum(l, (A(i,j,l) + D(i,j,l)) * x(l)) - E(i,j)\n";
// The same sum in a sum of products.
const char* kUnionSumInASumOfProducts =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : dcsr\n"
    "tensor F(I, J) : dcsr\ntensor G(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) * F(i,j) + G(i,j) * sum(l, (A(i,j,l) + D(i,j,l)) * x(l))\n";
// Two sums of unions, one at j, one at i (C's row or H's).
const char* kTwoUnionSums =
    "tensor Y(I, J) : dense\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor C(I, K) : dcsr\n"
    "tensor H(I, K) : dcsr\ntensor E(I, J) : dcsr\ntensor x(L) : dense\ntensor z(K) : dense\n"
    "Y(i,j) = sum(l, (A(i,j,l) - D(i,j,l)) * x(l)) - E(i,j) * sum(k, (C(i,k) + H(i,k)) * z(k))\n";
// The union is a factor of the summand, outside the sum's own loops, at a
// loop around the one the sum lives in (the slow differential case's shape,
// regressions/slow/ac_...).
const char* kUnionFactorAroundTheSum =
    "tensor Y(I, J, K) : {dense, compressed, dense}\ntensor A(I, J, K) : {compressed, compressed, compressed}\n"
    "tensor B(I, J, K) : coo\ntensor C(L, N) : {compressed, dense}\n"
    "tensor D(I, J, K) : {compressed, compressed, compressed}\ntensor E(I, J) : {dense, compressed}\n"
    "tensor F(I, J) : {compressed, dense}\n"
    "Y(i,j,k) = A(i,j,k) - B(i,j,k) + C(l,n) * D(i,j,k) * (E(i,j) - F(i,j))\n";
// The same with dense rows, whose loop can run on threads.
const char* kUnionFactorAroundTheSumDenseRows =
    "tensor Y(I, J, K) : dense\ntensor A(I, J, K) : {dense, compressed, compressed}\n"
    "tensor B(I, J, K) : {dense, compressed, compressed}\ntensor C(L, N) : {compressed, dense}\n"
    "tensor D(I, J, K) : {dense, compressed, compressed}\ntensor E(I, J) : {dense, compressed}\n"
    "tensor F(I, J) : {dense, compressed}\n"
    "Y(i,j,k) = A(i,j,k) - B(i,j,k) + C(l,n) * D(i,j,k) * (E(i,j) - F(i,j))\n";
// A union sum into a sparse output, among the union of the other terms.
const char* kUnionSumIntoASparseOutput =
    "tensor Y(I, J) : csr\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : dcsr\n"
    "tensor F(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) - F(i,j) + sum(l, (A(i,j,l) + D(i,j,l)) * x(l))\n";
// No nested sum: a union of matrices whose rows are co-iterated (DCSR), each
// case holding a loop over j.
const char* kUnionOfRows =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "Y(i,j) = A(i,j) + B(i,j) * C(i,j)\n";

// Every point of G, A and D at j (and i) needs another operand: once G's row
// has run out, A's and D's entries can meet no case and are skipped.
const char* kUnionSumInASumOfProductsIntoCsr =
    "tensor Y(I, J) : csr\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : dcsr\n"
    "tensor F(I, J) : dcsr\ntensor G(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) * F(i,j) + G(i,j) * sum(l, (A(i,j,l) + D(i,j,l)) * x(l))\n";

// Innermost unions of five operands or more are one loop too (31 loops per
// point and more): sums and differences, scaled and unscaled.
const char* kUnionOfFiveMatrices =
    "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
    "tensor D(I, J) : csr\ntensor E(I, J) : csr\n"
    "Y(i,j) = A(i,j) + B(i,j) - C(i,j) + 2 * D(i,j) - E(i,j)\n";
// Eight: 49,000 lines of loops per point, past what is compiled.
const char* kUnionOfEightMatrices =
    "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
    "tensor D(I, J) : csr\ntensor E(I, J) : csr\ntensor F(I, J) : csr\ntensor G(I, J) : csr\n"
    "tensor H(I, J) : csr\n"
    "Y(i,j) = A(i,j) + B(i,j) + C(i,j) + D(i,j) + E(i,j) + F(i,j) + G(i,j) + H(i,j)\n";
// A union of five DCSR matrices: each case of the loop over i held the
// loops over j for its operands (3^n cases below in all, 19,941 lines,
// refused); now one body, an operand absent at i iterating an empty row.
const char* kUnionOfFiveDcsr =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "tensor D(I, J) : dcsr\ntensor E(I, J) : dcsr\n"
    "Y(i,j) = A(i,j) - B(i,j) + C(i,j) + 2 * D(i,j) + E(i,j)\n";
// The same into a dense output.
const char* kUnionOfFiveDcsrIntoDense =
    "tensor Y(I, J) : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "tensor D(I, J) : dcsr\ntensor E(I, J) : dcsr\n"
    "Y(i,j) = -(A(i,j) + B(i,j)) + C(i,j) - D(i,j) * 3 + E(i,j)\n";
// Six CSF tensors of order three: empty ranges two levels down.
const char* kUnionOfSixCsf =
    "tensor Y(I, J, K) : csf\ntensor A(I, J, K) : csf\ntensor B(I, J, K) : csf\ntensor C(I, J, K) : csf\n"
    "tensor D(I, J, K) : csf\ntensor E(I, J, K) : csf\ntensor F(I, J, K) : csf\n"
    "Y(i,j,k) = A(i,j,k) + B(i,j,k) + C(i,j,k) - D(i,j,k) + E(i,j,k) + F(i,j,k)\n";
// Products among the union's terms (D .* E meets only where both are), a
// dense factor, into a dense output.
const char* kUnionOfSixTermsWithProducts =
    "tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
    "tensor D(I, J) : csr\ntensor E(I, J) : csr\ntensor F(I, J) : csr\ntensor G(I, J) : csr\n"
    "tensor x(J) : dense\n"
    "Y(i,j) = A(i,j) * x(j) + B(i,j) - 2 * C(i,j) + D(i,j) * E(i,j) + (F(i,j) - G(i,j))\n";
// Eight sparse vectors into a sparse one.
const char* kUnionOfEightVectors =
    "tensor y(I) : sparse\ntensor a(I) : sparse\ntensor b(I) : sparse\ntensor c(I) : sparse\n"
    "tensor d(I) : sparse\ntensor e(I) : sparse\ntensor f(I) : sparse\ntensor g(I) : sparse\n"
    "tensor h(I) : sparse\n"
    "y(i) = a(i) - b(i) + c(i) + d(i) - (e(i) + f(i)) + g(i) * 3 + h(i)\n";
std::vector<Case> cases() {
  rt::Coo bus = realMatrix("494_bus.mtx");  // 494 x 494
  rt::Coo ash = realMatrix("ash219.mtx");   // 219 x 85
  return {
      {"union_sum_in_a_product_random", kUnionSumInAProduct,
       {{"A", randomSparse({9, 8, 7}, 0.25, 7101)}, {"D", randomSparse({9, 8, 7}, 0.25, 7102)},
        {"B", randomSparse({9, 8}, 0.5, 7103)}, {"E", randomSparse({9, 8}, 0.3, 7104)}, {"x", randomDense({7}, 7105)}}},
      {"union_sum_in_a_sum_of_products_random", kUnionSumInASumOfProducts,
       {{"A", randomSparse({9, 8, 7}, 0.25, 7111)}, {"D", randomSparse({9, 8, 7}, 0.25, 7112)},
        {"E", randomSparse({9, 8}, 0.4, 7113)}, {"F", randomSparse({9, 8}, 0.4, 7114)},
        {"G", randomSparse({9, 8}, 0.5, 7115)}, {"x", randomDense({7}, 7116)}}},
      {"union_sum_in_a_sum_of_products_real", kUnionSumInASumOfProducts,
       {{"A", randomSparse({219, 85, 4}, 0.03, 7121)}, {"D", randomSparse({219, 85, 4}, 0.03, 7122)},
        {"E", ash}, {"F", randomSparse({219, 85}, 0.1, 7123)}, {"G", ash}, {"x", randomDense({4}, 7124)}}},
      {"two_union_sums_random", kTwoUnionSums,
       {{"A", randomSparse({9, 8, 6}, 0.25, 7131)}, {"D", randomSparse({9, 8, 6}, 0.25, 7132)},
        {"C", randomSparse({9, 7}, 0.3, 7133)}, {"H", randomSparse({9, 7}, 0.3, 7134)},
        {"E", randomSparse({9, 8}, 0.4, 7135)}, {"x", randomDense({6}, 7136)}, {"z", randomDense({7}, 7137)}}},
      {"union_factor_around_the_sum_random", kUnionFactorAroundTheSum,
       {{"A", randomSparse({6, 8, 8}, 0.2, 7141)}, {"B", randomSparse({6, 8, 8}, 0.3, 7142)},
        {"C", randomSparse({5, 5}, 0.6, 7143)}, {"D", randomSparse({6, 8, 8}, 0.3, 7144)},
        {"E", randomSparse({6, 8}, 0.2, 7145)}, {"F", randomSparse({6, 8}, 0.5, 7146)}},
       /*threadRows=*/false},
      {"union_factor_around_the_sum_dense_rows_random", kUnionFactorAroundTheSumDenseRows,
       {{"A", randomSparse({6, 8, 8}, 0.2, 7191)}, {"B", randomSparse({6, 8, 8}, 0.3, 7192)},
        {"C", randomSparse({5, 5}, 0.6, 7193)}, {"D", randomSparse({6, 8, 8}, 0.3, 7194)},
        {"E", randomSparse({6, 8}, 0.3, 7195)}, {"F", randomSparse({6, 8}, 0.4, 7196)}}},
      {"union_sum_into_a_sparse_output_random", kUnionSumIntoASparseOutput,
       {{"A", randomSparse({9, 10, 6}, 0.25, 7151)}, {"D", randomSparse({9, 10, 6}, 0.2, 7152)},
        {"E", randomSparse({9, 10}, 0.3, 7153)}, {"F", randomSparse({9, 10}, 0.3, 7154)}, {"x", randomDense({6}, 7155)}}},
      {"union_sum_into_a_sparse_output_real", kUnionSumIntoASparseOutput,
       {{"A", randomSparse({494, 494, 3}, 0.002, 7161)}, {"D", randomSparse({494, 494, 3}, 0.002, 7162)},
        {"E", bus}, {"F", randomSparse({494, 494}, 0.005, 7163)}, {"x", randomDense({3}, 7164)}}},
      {"union_sum_in_a_sum_of_products_into_csr_random", kUnionSumInASumOfProductsIntoCsr,
       {{"A", randomSparse({12, 30, 4}, 0.15, 7201)}, {"D", randomSparse({12, 30, 4}, 0.15, 7202)},
        {"E", randomSparse({12, 30}, 0.3, 7203)}, {"F", randomSparse({12, 30}, 0.3, 7204)},
        {"G", randomSparse({12, 30}, 0.1, 7205)}, {"x", randomDense({4}, 7206)}},
       /*threadRows=*/false},
      {"union_sum_in_a_sum_of_products_into_csr_real", kUnionSumInASumOfProductsIntoCsr,
       {{"A", randomSparse({219, 85, 4}, 0.03, 7211)}, {"D", randomSparse({219, 85, 4}, 0.03, 7212)},
        {"E", ash}, {"F", randomSparse({219, 85}, 0.1, 7213)}, {"G", randomSparse({219, 85}, 0.02, 7214)},
        {"x", randomDense({4}, 7215)}},
       /*threadRows=*/false},
      {"union_of_rows_random", kUnionOfRows,
       {{"A", randomSparse({30, 20}, 0.1, 7171)}, {"B", randomSparse({30, 20}, 0.15, 7172)},
        {"C", randomSparse({30, 20}, 0.2, 7173)}}},
      {"union_of_rows_real", kUnionOfRows,
       {{"A", bus}, {"B", randomSparse({494, 494}, 0.01, 7181)}, {"C", bus}}},
      {"union_of_five_matrices_random", kUnionOfFiveMatrices,
       {{"A", randomSparse({20, 30}, 0.1, 7221)}, {"B", randomSparse({20, 30}, 0.15, 7222)},
        {"C", randomSparse({20, 30}, 0.2, 7223)}, {"D", randomSparse({20, 30}, 0.05, 7224)},
        {"E", randomSparse({20, 30}, 0.3, 7225)}}},
      {"union_of_five_matrices_real", kUnionOfFiveMatrices,
       {{"A", bus}, {"B", randomSparse({494, 494}, 0.005, 7231)}, {"C", bus},
        {"D", randomSparse({494, 494}, 0.01, 7232)}, {"E", randomSparse({494, 494}, 0.002, 7233)}}},
      {"union_of_eight_matrices_real", kUnionOfEightMatrices,
       {{"A", bus}, {"B", randomSparse({494, 494}, 0.005, 7281)}, {"C", randomSparse({494, 494}, 0.002, 7282)},
        {"D", bus}, {"E", randomSparse({494, 494}, 0.01, 7283)}, {"F", randomSparse({494, 494}, 0.003, 7284)},
        {"G", randomSparse({494, 494}, 0.004, 7285)}, {"H", bus}},
       /*threadRows=*/true, /*perPointRefused=*/true},
      {"union_of_six_terms_with_products_random", kUnionOfSixTermsWithProducts,
       {{"A", randomSparse({16, 25}, 0.2, 7241)}, {"B", randomSparse({16, 25}, 0.1, 7242)},
        {"C", randomSparse({16, 25}, 0.15, 7243)}, {"D", randomSparse({16, 25}, 0.4, 7244)},
        {"E", randomSparse({16, 25}, 0.4, 7245)}, {"F", randomSparse({16, 25}, 0.1, 7246)},
        {"G", randomSparse({16, 25}, 0.2, 7247)}, {"x", randomDense({25}, 7248)}}},
      {"union_of_six_terms_with_products_real", kUnionOfSixTermsWithProducts,
       {{"A", bus}, {"B", randomSparse({494, 494}, 0.004, 7251)}, {"C", randomSparse({494, 494}, 0.004, 7252)},
        {"D", bus}, {"E", randomSparse({494, 494}, 0.01, 7253)}, {"F", bus},
        {"G", randomSparse({494, 494}, 0.003, 7254)}, {"x", randomDense({494}, 7255)}}},
      {"union_of_five_dcsr_random", kUnionOfFiveDcsr,
       {{"A", randomSparse({30, 20}, 0.1, 7291)}, {"B", randomSparse({30, 20}, 0.15, 7292)},
        {"C", randomSparse({30, 20}, 0.05, 7293)}, {"D", randomSparse({30, 20}, 0.2, 7294)},
        {"E", randomSparse({30, 20}, 0.1, 7295)}},
       /*threadRows=*/false, /*perPointRefused=*/true},
      {"union_of_five_dcsr_real", kUnionOfFiveDcsr,
       {{"A", bus}, {"B", randomSparse({494, 494}, 0.002, 7301)}, {"C", randomSparse({494, 494}, 0.001, 7302)},
        {"D", bus}, {"E", randomSparse({494, 494}, 0.0005, 7303)}},
       /*threadRows=*/false, /*perPointRefused=*/true},
      {"union_of_five_dcsr_into_dense_random", kUnionOfFiveDcsrIntoDense,
       {{"A", randomSparse({25, 30}, 0.1, 7311)}, {"B", randomSparse({25, 30}, 0.04, 7312)},
        {"C", randomSparse({25, 30}, 0.2, 7313)}, {"D", randomSparse({25, 30}, 0.1, 7314)},
        {"E", randomSparse({25, 30}, 0.02, 7315)}},
       /*threadRows=*/false, /*perPointRefused=*/true},
      {"union_of_six_csf_random", kUnionOfSixCsf,
       {{"A", randomSparse({8, 9, 10}, 0.05, 7321)}, {"B", randomSparse({8, 9, 10}, 0.1, 7322)},
        {"C", randomSparse({8, 9, 10}, 0.02, 7323)}, {"D", randomSparse({8, 9, 10}, 0.08, 7324)},
        {"E", randomSparse({8, 9, 10}, 0.15, 7325)}, {"F", randomSparse({8, 9, 10}, 0.05, 7326)}},
       /*threadRows=*/false, /*perPointRefused=*/true},
      {"union_of_eight_vectors_random", kUnionOfEightVectors,
       {{"a", randomSparse({60}, 0.1, 7261)}, {"b", randomSparse({60}, 0.2, 7262)},
        {"c", randomSparse({60}, 0.05, 7263)}, {"d", randomSparse({60}, 0.3, 7264)},
        {"e", randomSparse({60}, 0.1, 7265)}, {"f", randomSparse({60}, 0.15, 7266)},
        {"g", randomSparse({60}, 0.2, 7267)}, {"h", randomSparse({60}, 0.1, 7268)}},
       /*threadRows=*/false, /*perPointRefused=*/true},
  };
}

const std::vector<Case>& allCases() {
  static const std::vector<Case> all = cases();
  return all;
}

// A thread loop over the rows; the co-iterations below it stay serial.
const std::vector<std::string> kSchedules = {"", "parallelize(i, CPUThread, NoRaces)"};

// (case, schedule) pairs: the thread loop only for cases whose rows may
// run on threads (the others are co-iterated or assembled in order).
using CaseSchedule = std::pair<size_t, std::string>;
std::vector<CaseSchedule> caseSchedules() {
  std::vector<CaseSchedule> pairs;
  for (size_t index = 0; index < allCases().size(); ++index)
    for (const std::string& schedule : kSchedules)
      if (schedule.empty() || allCases()[index].threadRows) pairs.emplace_back(index, schedule);
  return pairs;
}

std::string nameOf(const CaseSchedule& pair) {
  return allCases().at(pair.first).name + (pair.second.empty() ? "_unscheduled" : "_thread_rows");
}

size_t linesOf(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

class OneMergeLoop : public ::testing::TestWithParam<std::tuple<CaseSchedule, FloatingPointMode>> {};

TEST_P(OneMergeLoop, MatchesReference) {
  const auto& [pair, mode] = GetParam();
  const auto& [index, schedule] = pair;
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

// The kernel merges somewhere (a while-loop fewer) and is smaller.
TEST_P(OneMergeLoop, KernelIsSmaller) {
  const auto& [pair, mode] = GetParam();
  const auto& [index, schedule] = pair;
  const Case& c = allCases().at(index);
  std::string dsl = withScheduleIfAny(c.program, schedule);
  SCOPED_TRACE(c.name + ":\n" + dsl);
  CompileOptions merged, perPoint;
  merged.floatingPoint = perPoint.floatingPoint = mode;
  perPoint.oneMergeLoop = false;
  Program program = Program::fromText(dsl, "test.tc");
  if (c.perPointRefused) {
    EXPECT_THROW(lowerProgram(program, perPoint), std::exception);
    EXPECT_NO_THROW(lowerProgram(program, merged));
    return;
  }
  std::string before = lowerProgram(program, perPoint).cpp, after = lowerProgram(program, merged).cpp;
  EXPECT_LT(linesOf(after), linesOf(before));
  auto whiles = [](const std::string& text) {
    size_t count = 0;
    for (size_t at = text.find("while ("); at != std::string::npos; at = text.find("while (", at + 1)) ++count;
    return count;
  };
  EXPECT_LT(whiles(after), whiles(before));
}

INSTANTIATE_TEST_SUITE_P(Statements, OneMergeLoop,
                         ::testing::Combine(::testing::ValuesIn(caseSchedules()),
                                            ::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast)),
                         [](const auto& info) {
                           return nameOf(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) == FloatingPointMode::Strict ? "_strict" : "_fast");
                         });

// Strict mode: each entry is computed by the same case with the same
// additions in the same order as in the loops per lattice point, so the
// same bits (fast mode promises none).
class OneMergeLoopStrict : public ::testing::TestWithParam<CaseSchedule> {};

TEST_P(OneMergeLoopStrict, BitsAreThoseOfTheLoopsPerLatticePoint) {
  const auto& [index, schedule] = GetParam();
  const Case& c = allCases().at(index);
  std::string dsl = withScheduleIfAny(c.program, schedule);
  SCOPED_TRACE(c.name + ":\n" + dsl);
  CompileOptions merged, perPoint;
  merged.floatingPoint = perPoint.floatingPoint = FloatingPointMode::Strict;
  perPoint.oneMergeLoop = false;
  auto expected = outputsOf(dsl, c.inputs, perPoint);
  auto actual = outputsOf(dsl, c.inputs, merged);
  expectSameBits(actual, expected);
}

// (Where the loops per point compile.)
std::vector<CaseSchedule> comparableCaseSchedules() {
  std::vector<CaseSchedule> pairs;
  for (const CaseSchedule& pair : caseSchedules())
    if (!allCases().at(pair.first).perPointRefused) pairs.push_back(pair);
  return pairs;
}

INSTANTIATE_TEST_SUITE_P(Statements, OneMergeLoopStrict, ::testing::ValuesIn(comparableCaseSchedules()),
                         [](const auto& info) { return nameOf(info.param); });

// An operand is read while some point it is in can still be met: A's
// coordinate at j needs G's entries too (its only points are G's), E's
// needs F's. In A + B .* C, A is a point alone, read while it has entries,
// and B is read while C has entries too.
TEST(OneMergeLoop, AnOperandIsReadWhileOneOfItsPointsCanBeMet) {
  std::string cpp = lowerProgram(Program::fromText(kUnionSumInASumOfProductsIntoCsr, "test.tc")).cpp;
  EXPECT_NE(cpp.find("int32_t jA = (((pG2 < pG2_end) && (pA2 < pA2_end)) ? A2_crd[pA2]"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("int32_t jE = (((pE2 < pE2_end) && (pF2 < pF2_end)) ? E2_crd[pE2]"), std::string::npos) << cpp;
  cpp = lowerProgram(Program::fromText(kUnionOfRows, "test.tc")).cpp;
  EXPECT_NE(cpp.find("int32_t iA = ((pA1 < pA1_end) ? A1_crd[pA1]"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("int32_t iB = (((pB1 < pB1_end) && (pC1 < pC1_end)) ? B1_crd[pB1]"), std::string::npos) << cpp;
}

// The slow differential case (regressions/slow/ac_...), int32: its kernel
// was 13,708 lines with the sum's loops in 180 places.
TEST(OneMergeLoop, TheSlowRegressionKernelShrinks) {
  const std::string dsl =
      "tensor Y(I, J, K) : {dense, compressed, dense} of int32\n"
      "tensor A(I, J, K) : {compressed, compressed, compressed} of int32\n"
      "tensor B(I, J, K) : coo of int32\n"
      "tensor C(L, N) : {compressed, dense} of int32\n"
      "tensor D(I, J, K) : {compressed, compressed, compressed} of int32\n"
      "tensor E(I, J) : {dense, compressed} of int32\n"
      "tensor F(I, J) : {compressed, dense} of int32\n"
      "Y(i,j,k) = A(i,j,k) - B(i,j,k) + C(l,n) * D(i,j,k) * (E(i,j) - F(i,j))\n";
  CompileOptions perPoint;
  perPoint.oneMergeLoop = false;
  Program program = Program::fromText(dsl, "test.tc");
  std::string before = lowerProgram(program, perPoint).cpp, after = lowerProgram(program).cpp;
  EXPECT_LT(linesOf(after) * 2, linesOf(before));
}

}  // namespace
}  // namespace tcc::test
