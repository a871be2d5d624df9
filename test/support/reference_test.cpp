// The reference evaluator against small cases computed by hand.
#include "tcc/test/reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tcc/ir/builder.h"

namespace tcc::test {
namespace {

using namespace tcc::ir;

class ReferenceTest : public ::testing::Test {
 protected:
  IndexVar i{"i"}, j{"j"}, k{"k"};
  TensorVar A{"A", {"I", "J"}, Format::csr()};
  TensorVar B{"B", {"I", "K"}, Format::csr()};
  TensorVar C{"C", {"K", "J"}, Format::csc()};
  TensorVar x{"x", {"I"}}, y{"y", {"I"}}, w{"w", {"J"}};
  TensorVar a{"a"};
  DenseArray B22{{2, 2}, {1, 2, 3, 4}};
  DenseArray C22{{2, 2}, {5, 6, 7, 8}};
};

TEST_F(ReferenceTest, DenseArrayIsRowMajorAndBoundsChecked) {
  DenseArray array = DenseArray::zeros({2, 3});
  EXPECT_EQ(array.size(), 6);
  array.at({1, 2}) = 7;
  EXPECT_EQ(array.values[5], 7);
  array.at({0, 1}) = 3;
  EXPECT_EQ(array.values[1], 3);
  EXPECT_THROW(array.at({2, 0}), std::out_of_range);
  EXPECT_THROW(array.at({0}), std::out_of_range);
  DenseArray scalar = DenseArray::zeros({});
  EXPECT_EQ(scalar.values.size(), 1u);
}

TEST_F(ReferenceTest, MatrixMultiplyWithImplicitSummation) {
  auto result = evaluate({A(i, j) = B(i, k) * C(k, j)}, {{"B", B22}, {"C", C22}});
  EXPECT_EQ(result.at("A").dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(result.at("A").values, (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(result.at("B").values, B22.values);  // inputs come back untouched
}

TEST_F(ReferenceTest, ConcreteNotationComputesTheSame) {
  auto loops = evaluate({forall(i, forall(j, forall(k, A(i, j) += B(i, k) * C(k, j))))}, {{"B", B22}, {"C", C22}});
  EXPECT_EQ(loops.at("A").values, (std::vector<double>{19, 22, 43, 50}));
  // Row-wise workspace: w is reset for every i.
  IndexStmt workspace =
      forall(i, where(forall(j, A(i, j) = w(j)), forall(k, forall(j, w(j) += B(i, k) * C(k, j)))));
  auto rows = evaluate({workspace}, {{"B", B22}, {"C", C22}});
  EXPECT_EQ(rows.at("A").values, (std::vector<double>{19, 22, 43, 50}));
}

TEST_F(ReferenceTest, ScalarDotProduct) {
  auto result = evaluate({a() = x(i) * y(i)}, {{"x", {{3}, {1, 2, 3}}}, {"y", {{3}, {4, 5, 6}}}});
  EXPECT_EQ(result.at("a").values, (std::vector<double>{32}));
  auto explicitSum = evaluate({a() = sum(i, x(i) * y(i))}, {{"x", {{3}, {1, 2, 3}}}, {"y", {{3}, {4, 5, 6}}}});
  EXPECT_EQ(explicitSum.at("a").values, (std::vector<double>{32}));
  TensorVar b("b");
  auto scalars = evaluate({a() = b() * 2 - 1}, {{"b", {{}, {3}}}});
  EXPECT_EQ(scalars.at("a").values, (std::vector<double>{5}));
}

TEST_F(ReferenceTest, EachTermIsSummedOverItsOwnVariables) {
  // x(i) = y(i) + B(i,k) means y(i) + sum_k B(i,k), not sum_k (y(i) + B(i,k)).
  auto result = evaluate({x(i) = y(i) + B(i, k)}, {{"y", {{2}, {1, 2}}}, {"B", B22}});
  EXPECT_EQ(result.at("x").values, (std::vector<double>{4, 9}));
  // A product sums over all its variables at once.
  auto product = evaluate({x(i) = y(i) * B(i, k) * 2}, {{"y", {{2}, {1, 2}}}, {"B", B22}});
  EXPECT_EQ(product.at("x").values, (std::vector<double>{6, 28}));
}

TEST_F(ReferenceTest, AccumulateAddsToTheGivenOutput) {
  auto result = evaluate({A(i, j) += B(i, j) * 10}, {{"A", {{2, 2}, {1, 1, 1, 1}}}, {"B", B22}});
  EXPECT_EQ(result.at("A").values, (std::vector<double>{11, 21, 31, 41}));
}

TEST_F(ReferenceTest, LaterStatementsReadEarlierOutputs) {
  TensorVar t("t", {"I"});
  auto result = evaluate({t(i) = B(i, k) * y(k), x(i) = t(i) * t(i) - 1},
                         {{"B", B22}, {"y", {{2}, {1, -1}}}});
  EXPECT_EQ(result.at("t").values, (std::vector<double>{-1, -1}));
  EXPECT_EQ(result.at("x").values, (std::vector<double>{0, 0}));
}

TEST_F(ReferenceTest, SequenceAndMultiRunInOrder) {
  IndexStmt s = sequence(forall(i, x(i) = 1), forall(i, x(i) += y(i) / 2));
  auto result = evaluate({multi(s, forall(i, forall(k, A(i, k) = -B(i, k))))}, {{"y", {{2}, {4, 6}}}, {"B", B22}});
  EXPECT_EQ(result.at("x").values, (std::vector<double>{3, 4}));
  EXPECT_EQ(result.at("A").values, (std::vector<double>{-1, -2, -3, -4}));
}

TEST_F(ReferenceTest, SharedSymbolicDimensionSizesAnOutput) {
  TensorVar z("z", {"I"});
  // j indexes only z; z's size comes from y through the shared symbol I.
  auto result = evaluate({z(j) = sum(i, y(i))}, {{"y", {{3}, {1, 2, 3}}}});
  EXPECT_EQ(result.at("z").values, (std::vector<double>{6, 6, 6}));
}

TEST_F(ReferenceTest, BuiltinsOnExpressions) {
  auto result = evaluate({x(i) = call("max", {y(i), IndexExpr(0.0)}) + call("abs", {y(i)})},
                         {{"y", {{3}, {-2, 0.5, 3}}}});
  EXPECT_EQ(result.at("x").values, (std::vector<double>{2, 1, 6}));
}

TEST_F(ReferenceTest, PermanentOfSmallMatrices) {
  TensorVar M("M", {"N", "N"});
  auto two = evaluate({a() = perm(M)}, {{"M", {{2, 2}, {1, 2, 3, 4}}}});
  EXPECT_EQ(two.at("a").values[0], 10);  // 1*4 + 2*3
  EXPECT_EQ(permanent({{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}), 450);
  EXPECT_EQ(permanent({{3, 3}, std::vector<double>(9, 1.0)}), 6);  // 3!
  EXPECT_EQ(permanent({{1, 1}, {-7}}), -7);
  EXPECT_EQ(permanent({{0, 0}, {}}), 1);
}

TEST_F(ReferenceTest, PermanentMatchesTheSumOverPermutations) {
  const int n = 6;
  DenseArray matrix = DenseArray::zeros({n, n});
  std::mt19937 generator(7);
  std::uniform_int_distribution<int> value(-3, 3);
  for (double& v : matrix.values) v = value(generator);
  std::vector<int> sigma(n);
  std::iota(sigma.begin(), sigma.end(), 0);
  double expected = 0;
  do {
    double product = 1;
    for (int row = 0; row < n; ++row) product *= matrix.values[row * n + sigma[row]];
    expected += product;
  } while (std::next_permutation(sigma.begin(), sigma.end()));
  EXPECT_EQ(permanent(matrix), expected);
}

TEST_F(ReferenceTest, SizeConflictsAndGapsAreErrors) {
  // k is 2 in B but 3 in y.
  EXPECT_THROW(evaluate({x(i) = B(i, k) * y(k)}, {{"B", B22}, {"y", {{3}, {1, 2, 3}}}}), std::invalid_argument);
  // Nothing sizes j.
  EXPECT_THROW(evaluate({forall(j, a() += 1)}, {}), std::invalid_argument);
  // Input contradicts a fixed declaration.
  TensorVar fixed("fixed", {3});
  EXPECT_THROW(evaluate({x(i) = fixed(i)}, {{"fixed", {{2}, {1, 2}}}}), std::invalid_argument);
  // Dims and values disagree.
  EXPECT_THROW(evaluate({a() = y(i)}, {{"y", {{3}, {1, 2}}}}), std::invalid_argument);
  // Scheduled statements are refused rather than misread.
  IndexVar i0("i0"), i1("i1");
  EXPECT_THROW(evaluate({suchThat(forall(i0, forall(i1, x(i) = 1)), {SplitRelation{i, i0, i1, 2}})},
                        {{"x", {{4}, {0, 0, 0, 0}}}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace tcc::test
