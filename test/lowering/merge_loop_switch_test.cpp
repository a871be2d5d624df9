// One merge loop picks its lattice case by a switch on which operands are at
// the coordinate (CompileOptions::mergeLoopSwitch), instead of testing the
// cases in turn: the cases of an operand that ran out are never tested. The
// switch jumps to the case the tests in turn would take (the first whose
// operands are all there), so every program here is compared with the dense
// reference in both floating-point modes, and in strict mode bit for bit with
// the cases tested in turn and with TACO's loops per lattice point. The
// inputs make operands run out first, last and together, and leave rows
// empty; unions of 2 to 6 operands, products inside unions, a nested sum and
// a scalar. A loop of three cases or fewer keeps the tests in turn.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernel_check.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

// The entries whose row is in [first, last).
rt::Coo rowsIn(const rt::Coo& m, int32_t first, int32_t last) {
  rt::Coo kept = rt::Coo::ofShape(m.dims);
  for (size_t k = 0; k < m.nnz(); ++k)
    if (m.coords[0][k] >= first && m.coords[0][k] < last) {
      std::vector<int32_t> c;
      for (const auto& mode : m.coords) c.push_back(mode[k]);
      kept.push(c.data(), m.values[k]);
    }
  return kept;
}

// Without the rows whose index is a multiple of `every` (empty rows).
rt::Coo withoutEveryNthRow(const rt::Coo& m, int32_t every) {
  rt::Coo kept = rt::Coo::ofShape(m.dims);
  for (size_t k = 0; k < m.nnz(); ++k)
    if (m.coords[0][k] % every != 0) {
      std::vector<int32_t> c;
      for (const auto& mode : m.coords) c.push_back(mode[k]);
      kept.push(c.data(), m.values[k]);
    }
  return kept;
}

// Row r moves to row (r + shift) mod rows.
rt::Coo rowsRotated(const rt::Coo& m, int32_t shift) {
  rt::Coo moved = rt::Coo::ofShape(m.dims);
  for (size_t k = 0; k < m.nnz(); ++k) {
    int32_t c[2] = {(m.coords[0][k] + shift) % m.dims[0], m.coords[1][k]};
    moved.push(c, m.values[k]);
  }
  moved.sort();
  return moved;
}

rt::Coo scalar(double value) {
  rt::Coo s;
  s.values = {value};
  return s;
}

const char* kUnionOfTwo =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nY(i,j) = A(i,j) - B(i,j)\n";
const char* kSumAndProduct =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "Y(i,j) = A(i,j) + B(i,j) * C(i,j)\n";
const char* kUnionOfFour =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "tensor D(I, J) : dcsr\nY(i,j) = A(i,j) + B(i,j) - C(i,j) + D(i,j)\n";
// No operand is a point alone: every case needs two.
const char* kProductsInAUnion =
    "tensor Y(I, J) : csr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "tensor D(I, J) : dcsr\nY(i,j) = A(i,j) * B(i,j) + C(i,j) * D(i,j)\n";
// Six operands: the most a switch takes (63 values).
const char* kThreeProducts =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "tensor D(I, J) : dcsr\ntensor E(I, J) : dcsr\ntensor F(I, J) : dcsr\n"
    "Y(i,j) = A(i,j) * B(i,j) - C(i,j) * D(i,j) + E(i,j) * F(i,j)\n";
// Sums over the rows, one scaled by a scalar.
const char* kScaledSums =
    "tensor y(I) : dense\ntensor s : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "tensor x(J) : dense\ntensor z(J) : dense\n"
    "y(i) = s * A(i,j) * x(j) + B(i,j) * z(j) - C(i,j) * x(j)\n";
// A sum of a union inside a product, in a union (the bench's slow shape).
const char* kUnionSumInASumOfProducts =
    "tensor Y(I, J) : csr\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : dcsr\n"
    "tensor F(I, J) : dcsr\ntensor G(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) * F(i,j) + G(i,j) * sum(l, (A(i,j,l) + D(i,j,l)) * x(l))\n";

std::vector<ProgramCase> cases() {
  const int32_t n = 40, m = 30;
  // A runs out of rows first, B holds the last row, C ends with B, D has
  // empty rows.
  auto first = [&](uint64_t seed) { return rowsIn(randomSparse({n, m}, 0.2, seed), 0, n / 3); };
  auto last = [&](uint64_t seed) { return rowsIn(randomSparse({n, m}, 0.15, seed), n / 4, n); };
  auto withEmptyRows = [&](uint64_t seed) { return withoutEveryNthRow(randomSparse({n, m}, 0.25, seed), 3); };
  rt::Coo bus = realMatrix("494_bus.mtx");  // 494 x 494
  rt::Coo busT = transposed(bus), busRotated = rowsRotated(bus, 247);
  const int32_t rows = bus.dims[0];
  return {
      {"union_of_two_first_and_last", kUnionOfTwo, {{"A", first(7301)}, {"B", last(7302)}}},
      {"union_of_two_together", kUnionOfTwo, {{"A", last(7303)}, {"B", last(7304)}}},
      {"union_of_two_real", kUnionOfTwo, {{"A", withoutEveryNthRow(bus, 2)}, {"B", busT}}},
      {"sum_and_product_first_last_together", kSumAndProduct,
       {{"A", first(7311)}, {"B", last(7312)}, {"C", last(7313)}}},
      {"sum_and_product_product_first", kSumAndProduct,
       {{"A", withEmptyRows(7314)}, {"B", first(7315)}, {"C", last(7316)}}},
      {"sum_and_product_real", kSumAndProduct,
       {{"A", rowsIn(bus, 0, rows / 2)}, {"B", busT}, {"C", withoutEveryNthRow(busRotated, 3)}}},
      {"union_of_four", kUnionOfFour,
       {{"A", first(7321)}, {"B", last(7322)}, {"C", withEmptyRows(7323)}, {"D", randomSparse({n, m}, 0.1, 7324)}}},
      {"union_of_four_real", kUnionOfFour,
       {{"A", bus}, {"B", busT}, {"C", rowsIn(busRotated, rows / 3, rows)}, {"D", withoutEveryNthRow(bus, 4)}}},
      {"products_in_a_union", kProductsInAUnion,
       {{"A", first(7331)}, {"B", last(7332)}, {"C", withEmptyRows(7333)}, {"D", last(7334)}}},
      {"products_in_a_union_real", kProductsInAUnion,
       {{"A", bus}, {"B", busT}, {"C", busRotated}, {"D", rowsIn(busT, 0, 2 * rows / 3)}}},
      {"three_products", kThreeProducts,
       {{"A", first(7341)}, {"B", randomSparse({n, m}, 0.4, 7342)}, {"C", last(7343)}, {"D", last(7344)},
        {"E", withEmptyRows(7345)}, {"F", randomSparse({n, m}, 0.3, 7346)}}},
      {"scaled_sums", kScaledSums,
       {{"s", scalar(-1.75)}, {"A", first(7351)}, {"B", withEmptyRows(7352)}, {"C", last(7353)},
        {"x", randomDense({m}, 7354)}, {"z", randomDense({m}, 7355)}}},
      {"scaled_sums_real", kScaledSums,
       {{"s", scalar(0.5)}, {"A", busT}, {"B", rowsIn(bus, rows / 2, rows)}, {"C", withoutEveryNthRow(busRotated, 2)},
        {"x", randomDense({rows}, 7356)}, {"z", randomDense({rows}, 7357)}}},
      {"union_sum_in_a_sum_of_products", kUnionSumInASumOfProducts,
       {{"A", randomSparse({n, m, 5}, 0.08, 7361)}, {"D", rowsIn(randomSparse({n, m, 5}, 0.08, 7362), 0, n / 2)},
        {"E", first(7363)}, {"F", randomSparse({n, m}, 0.3, 7364)}, {"G", withEmptyRows(7365)},
        {"x", randomDense({5}, 7366)}}},
      {"union_sum_in_a_sum_of_products_real", kUnionSumInASumOfProducts,
       {{"A", randomSparse({rows, rows, 3}, 0.01, 7371)}, {"D", randomSparse({rows, rows, 3}, 0.01, 7372)},
        {"E", bus}, {"F", busT}, {"G", busRotated}, {"x", randomDense({3}, 7373)}}},
  };
}

const std::vector<ProgramCase>& allCases() {
  static const std::vector<ProgramCase> all = cases();
  return all;
}

class MergeLoopSwitch : public ::testing::TestWithParam<std::tuple<size_t, FloatingPointMode>> {};

TEST_P(MergeLoopSwitch, MatchesReference) {
  const auto& [index, mode] = GetParam();
  const ProgramCase& c = allCases().at(index);
  SCOPED_TRACE(c.name + " in " + frontend::toString(mode) + " mode:\n" + c.program);
  CompileOptions options;
  options.floatingPoint = mode;
  try {
    std::string cpp = expectProgramMatchesReference(c.program, c.inputs, options, mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
    // The rows' lattice: 4 cases or more, the switch; 3 (A - B, A + B .* C,
    // A .* B + C .* D), the tests in turn.
    const bool fewCases = c.program == kUnionOfTwo || c.program == kSumAndProduct || c.program == kProductsInAUnion;
    EXPECT_EQ(cpp.find("switch (i_present)") != std::string::npos, !fewCases) << cpp;
  } catch (const std::exception& error) {
    FAIL() << "refused: " << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Statements, MergeLoopSwitch,
                         ::testing::Combine(::testing::Range(size_t{0}, allCases().size()),
                                            ::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast)),
                         [](const auto& info) {
                           return allCases().at(std::get<0>(info.param)).name +
                                  (std::get<1>(info.param) == FloatingPointMode::Strict ? "_strict" : "_fast");
                         });

// The same case for every entry, with the same additions in the same order:
// the bits of the cases tested in turn, and of the loops per lattice point.
class MergeLoopSwitchStrict : public ::testing::TestWithParam<size_t> {};

TEST_P(MergeLoopSwitchStrict, BitsAreThoseOfTheCasesInTurn) {
  const ProgramCase& c = allCases().at(GetParam());
  SCOPED_TRACE(c.name + ":\n" + c.program);
  CompileOptions switched, inTurn, perPoint;
  inTurn.mergeLoopSwitch = false;
  perPoint.oneMergeLoop = false;
  auto actual = outputsOf(c.program, c.inputs, switched);
  expectSameBits(actual, outputsOf(c.program, c.inputs, inTurn));
  expectSameBits(actual, outputsOf(c.program, c.inputs, perPoint));
}

INSTANTIATE_TEST_SUITE_P(Statements, MergeLoopSwitchStrict, ::testing::Range(size_t{0}, allCases().size()),
                         [](const auto& info) { return allCases().at(info.param).name; });

// Each case's values are those the tests in turn reach: E's and F's case
// (3) also when A, D or both are there without G, G's and A's (12) also
// with E or F alone.
TEST(MergeLoopSwitch, CasesTakeTheValuesOfTheFirstTestThatHolds) {
  std::string cpp = lowerProgram(Program::fromText(kUnionSumInASumOfProducts, "test.tc")).cpp;
  EXPECT_NE(cpp.find("int32_t j_present = (((((int32_t)((jE == j)) + ((int32_t)((jF == j)) * 2)) + "
                     "((int32_t)((jG == j)) * 4)) + ((int32_t)((jA == j)) * 8)) + ((int32_t)((jD == j)) * 16));"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("case 3:\n        case 7:\n        case 11:\n        case 19:\n        case 27:\n"), std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("case 12:\n        case 13:\n        case 14:\n"), std::string::npos) << cpp;
  CompileOptions inTurn;
  inTurn.mergeLoopSwitch = false;
  EXPECT_EQ(lowerProgram(Program::fromText(kUnionSumInASumOfProducts, "test.tc"), inTurn).cpp.find("switch ("),
            std::string::npos);
}

}  // namespace
}  // namespace tcc::test
