// Statements with sums below their top are computed with the loops over the
// output's indices outside, each sum's loop inside the sums around it. A
// sparse input that stores a summed variable above a variable of a loop
// outside it (`sum(j, B(i,j) * ...)` with B column-major or CSC, or
// `sum(j, A(i,j) * sum(k, C(k,j) * x(k)))` with C row-major) is read from a
// copy stored in the loops' order, as the flat path makes them; the nested
// path refused these ("loop order visits j before the outer levels of B").
// Every case is compared with the dense reference, in both floating-point
// modes, on random and real matrices, with and without schedules.
#include <gtest/gtest.h>

#include <tuple>

#include "kernel_check.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

struct Case : ProgramCase {
  std::string copy;  // the name of the copy `tcc explain` reports
};

const char* kColumnMajorB =
    "tensor y(I) : dense\ntensor B(I, J) : {dense, compressed} order (1,0)\ntensor C(J, K) : csr\n"
    "tensor x(K) : dense\ny(i) = sum(j, B(i,j) * sum(k, C(j,k) * x(k)))\n";
const char* kCscB =
    "tensor y(I) : dense\ntensor B(I, J) : csc\ntensor C(J, K) : csr\n"
    "tensor x(K) : dense\ny(i) = sum(j, B(i,j) * sum(k, C(j,k) * x(k)))\n";
const char* kInnerAboveOuter =
    "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor C(K, J) : csr\ntensor x(K) : dense\n"
    "y(i) = sum(j, A(i,j) * sum(k, C(k,j) * x(k)))\n";
const char* kProductWithSum =
    "tensor Y(I, J) : dense\ntensor E(I, J) : csr\ntensor B(I, K) : csc\ntensor x(K) : dense\n"
    "Y(i,j) = E(i,j) * sum(k, B(i,k) * x(k))\n";
const char* kThreeLevels =
    "tensor y(I) : dense\ntensor B(I, J) : csc\ntensor C(J, K) : csr\n"
    "tensor D(K, L) : {dense, compressed} order (1,0)\ntensor x(L) : dense\n"
    "y(i) = sum(j, B(i,j) * sum(k, C(j,k) * sum(l, D(k,l) * x(l))))\n";
const char* kDifferenceOfSums =
    "tensor y(I) : dense\ntensor B(I, J) : csc\ntensor C(J, K) : csr\ntensor x(J) : dense\n"
    "tensor z(K) : dense\ny(i) = sum(j, B(i,j) * x(j) - B(i,j) * sum(k, C(j,k) * z(k)))\n";
const char* kSumsAdded =
    "tensor y(I) : dense\ntensor B(I, J) : csc\ntensor C(J, K) : csr\ntensor D(I, K) : csc\n"
    "tensor x(K) : dense\ny(i) = sum(j, B(i,j) * sum(k, C(j,k) * x(k))) + sum(k, D(i,k) * x(k))\n";

std::vector<Case> cases() {
  rt::Coo ash = realMatrix("ash219.mtx");      // 219 x 85
  rt::Coo bus = realMatrix("494_bus.mtx");     // 494 x 494
  return {
      {"column_major_b_random", kColumnMajorB,
       {{"B", randomSparse({13, 11}, 0.3, 9101)}, {"C", randomSparse({11, 9}, 0.3, 9102)}, {"x", randomDense({9}, 9103)}},
       "B_by_i_j"},
      {"column_major_b_real", kColumnMajorB,
       {{"B", ash}, {"C", randomSparse({85, 17}, 0.2, 9111)}, {"x", randomDense({17}, 9112)}}, "B_by_i_j"},
      {"csc_b_random", kCscB,
       {{"B", randomSparse({12, 14}, 0.25, 9121)}, {"C", randomSparse({14, 8}, 0.3, 9122)}, {"x", randomDense({8}, 9123)}},
       "B_by_i_j"},
      {"csc_b_real", kCscB,
       {{"B", bus}, {"C", randomSparse({494, 12}, 0.05, 9131)}, {"x", randomDense({12}, 9132)}}, "B_by_i_j"},
      {"inner_sum_stored_above_outer_random", kInnerAboveOuter,
       {{"A", randomSparse({10, 12}, 0.3, 9141)}, {"C", randomSparse({9, 12}, 0.3, 9142)}, {"x", randomDense({9}, 9143)}},
       "C_by_j_k"},
      {"inner_sum_stored_above_outer_real", kInnerAboveOuter,
       {{"A", randomSparse({20, 85}, 0.1, 9151)}, {"C", ash}, {"x", randomDense({219}, 9152)}}, "C_by_j_k"},
      {"product_with_a_sum_random", kProductWithSum,
       {{"E", randomSparse({9, 7}, 0.4, 9161)}, {"B", randomSparse({9, 11}, 0.3, 9162)}, {"x", randomDense({11}, 9163)}},
       "B_by_i_k"},
      {"product_with_a_sum_real", kProductWithSum,
       {{"E", randomSparse({494, 6}, 0.3, 9171)}, {"B", bus}, {"x", randomDense({494}, 9172)}}, "B_by_i_k"},
      {"three_levels_random", kThreeLevels,
       {{"B", randomSparse({8, 9}, 0.3, 9181)}, {"C", randomSparse({9, 10}, 0.3, 9182)},
        {"D", randomSparse({10, 7}, 0.3, 9183)}, {"x", randomDense({7}, 9184)}},
       "D_by_k_l"},
      {"difference_of_sums_random", kDifferenceOfSums,
       {{"B", randomSparse({11, 10}, 0.3, 9191)}, {"C", randomSparse({10, 8}, 0.3, 9192)},
        {"x", randomDense({10}, 9193)}, {"z", randomDense({8}, 9194)}},
       "B_by_i_j"},
      {"sums_added_real", kSumsAdded,
       {{"B", ash}, {"C", randomSparse({85, 13}, 0.2, 9201)}, {"D", randomSparse({219, 13}, 0.2, 9202)},
        {"x", randomDense({13}, 9203)}},
       "B_by_i_j"},
  };
}

const std::vector<Case>& allCases() {
  static const std::vector<Case> all = cases();
  return all;
}

const std::vector<std::string> kSchedules = {
    "", "split(i, i0, i1, 4)", "parallelize(i, CPUThread, NoRaces)",
    "split(i, i0, i1, 3)\nparallelize(i0, CPUThread, NoRaces)"};

class NestedSumInputCopies
    : public ::testing::TestWithParam<std::tuple<size_t, std::string, FloatingPointMode>> {};

TEST_P(NestedSumInputCopies, MatchesReference) {
  const auto& [index, schedule, mode] = GetParam();
  const Case& c = allCases().at(index);
  std::string dsl = withScheduleIfAny(c.program, schedule);
  SCOPED_TRACE(c.name + " in " + frontend::toString(mode) + " mode:\n" + dsl);
  CompileOptions options;
  options.floatingPoint = mode;
  double tolerance = mode == FloatingPointMode::Fast ? 1e-9 : 1e-10;
  std::string source;
  try {
    source = expectProgramMatchesReference(dsl, c.inputs, options, tolerance);
  } catch (const std::exception& error) {
    FAIL() << "refused: " << error.what();
  }
  EXPECT_TRUE(contains(source, c.copy)) << "the kernel reads no copy " << c.copy;
}

INSTANTIATE_TEST_SUITE_P(Statements, NestedSumInputCopies,
                         ::testing::Combine(::testing::Range<size_t>(0, 11), ::testing::ValuesIn(kSchedules),
                                            ::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast)));

TEST(NestedSumInputCopies, CasesAreCounted) { EXPECT_EQ(allCases().size(), 11u); }

TEST(NestedSumInputCopies, ExplainSaysWhichInputIsCopied) {
  std::string decisions = decisionsOf(kCscB);
  EXPECT_TRUE(contains(decisions, "B(i,j) stores its indices against the order of the loops around it")) << decisions;
  EXPECT_TRUE(contains(decisions, "read from a copy B_by_i_j stored")) << decisions;
}

// A tensor of the program already named B_by_i_j: the copy takes another name.
TEST(NestedSumInputCopies, CopyTakesAFreshName) {
  std::string program =
      "tensor y(I) : dense\ntensor B(I, J) : csc\ntensor B_by_i_j(I, J) : csr\ntensor C(J, K) : csr\n"
      "tensor x(K) : dense\ny(i) = sum(j, B(i,j) * sum(k, C(j,k) * x(k))) + sum(j, B_by_i_j(i,j) * sum(k, C(j,k) * "
      "x(k)))\n";
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "read from a copy B_by_i_j_2 stored")) << decisions;
  std::string source;
  try {
    source = expectProgramMatchesReference(
        program, {{"B", randomSparse({9, 8}, 0.3, 9301)}, {"B_by_i_j", randomSparse({9, 8}, 0.3, 9302)},
                  {"C", randomSparse({8, 7}, 0.3, 9303)}, {"x", randomDense({7}, 9304)}});
  } catch (const std::exception& error) {
    FAIL() << "refused: " << error.what();
  }
}

}  // namespace
}  // namespace tcc::test
