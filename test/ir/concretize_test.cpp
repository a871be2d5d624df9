// Concretization picks TACO's default loop order and keeps the meaning of
// the einsum (checked with the dense reference evaluator on random data).
#include "tcc/ir/concretize.h"

#include <gtest/gtest.h>

#include <random>

#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/test/reference.h"

namespace tcc::ir {
namespace {

using test::DenseArray;

DenseArray randomArray(std::vector<int64_t> dims, unsigned seed) {
  DenseArray array = DenseArray::zeros(std::move(dims));
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (double& v : array.values) v = value(generator);
  return array;
}

// The einsum and its concretization compute the same outputs.
void expectSameMeaning(const IndexStmt& einsum, const std::map<std::string, DenseArray>& inputs) {
  IndexStmt concrete = concretize(einsum);
  ASSERT_TRUE(isConcrete(concrete)) << toString(concrete);
  auto expected = test::evaluate({einsum}, inputs);
  auto actual = test::evaluate({concrete}, inputs);
  for (const auto& tensor : tensorsWritten(einsum)) {
    const auto& want = expected.at(tensor.name()).values;
    const auto& got = actual.at(tensor.name()).values;
    ASSERT_EQ(want.size(), got.size());
    for (size_t n = 0; n < want.size(); ++n)
      EXPECT_NEAR(want[n], got[n], 1e-12 * (1 + std::abs(want[n]))) << tensor.name() << " at " << n;
  }
}

class ConcretizeTest : public ::testing::Test {
 protected:
  IndexVar i{"i"}, j{"j"}, k{"k"}, l{"l"};
  TensorVar B{"B", {"I", "K"}, Format::csr()};
  TensorVar C{"C", {"K", "J"}, Format::csr()};
  std::map<std::string, DenseArray> inputs{{"B", randomArray({3, 4}, 1)}, {"C", randomArray({4, 5}, 2)}};
};

TEST_F(ConcretizeTest, CsrOutputLoopsRowsThenColumnsThenReduction) {
  TensorVar A("A", {"I", "J"}, Format::csr());
  IndexStmt einsum = (A(i, j) = B(i, k) * C(k, j));
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(j, forall(k, A(i,j) += B(i,k) * C(k,j))))");
  expectSameMeaning(einsum, inputs);
}

TEST_F(ConcretizeTest, CscOutputLoopsColumnsFirst) {
  TensorVar A("A", {"I", "J"}, Format::csc());
  IndexStmt einsum = (A(i, j) = B(i, k) * C(k, j));
  EXPECT_EQ(toString(concretize(einsum)), "forall(j, forall(i, forall(k, A(i,j) += B(i,k) * C(k,j))))");
  expectSameMeaning(einsum, inputs);
}

TEST_F(ConcretizeTest, CooAndPermutedOrderThreeOutputs) {
  TensorVar A("A", {"I", "J"}, Format::coo(2));
  EXPECT_EQ(toString(concretize(A(i, j) = B(i, k) * C(k, j))),
            "forall(i, forall(j, forall(k, A(i,j) += B(i,k) * C(k,j))))");
  TensorVar T("T", {"I", "J", "L"}, Format({LevelFormat::dense(), LevelFormat::compressed(), LevelFormat::compressed()}, {2, 0, 1}));
  TensorVar D("D", {"L"});
  IndexStmt einsum = (T(i, j, l) = B(i, k) * C(k, j) * D(l));
  EXPECT_EQ(toString(concretize(einsum)),
            "forall(l, forall(i, forall(j, forall(k, T(i,j,l) += B(i,k) * C(k,j) * D(l)))))");
  auto withD = inputs;
  withD["D"] = randomArray({2}, 3);
  expectSameMeaning(einsum, withD);
}

TEST_F(ConcretizeTest, ScalarOutputLoopsOverReductionsInFirstAppearanceOrder) {
  TensorVar a("a");
  IndexStmt einsum = (a() = B(i, k) * C(k, j));
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(k, forall(j, a += B(i,k) * C(k,j))))");
  expectSameMeaning(einsum, inputs);
  IndexStmt scalarOnly = (a() = 2.0);
  EXPECT_TRUE(concretize(scalarOnly).sameAs(scalarOnly));
}

TEST_F(ConcretizeTest, NoReductionKeepsPlainAssignment) {
  TensorVar A("A", {"I", "K"}, Format::dcsr());
  IndexStmt einsum = (A(i, k) = B(i, k) * 3.0);
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(k, A(i,k) = B(i,k) * 3.0))");
  expectSameMeaning(einsum, inputs);
}

TEST_F(ConcretizeTest, ExplicitSumAtTheTopBecomesLoopsAndAccumulation) {
  TensorVar x("x", {"I"}, Format::sparseVector());
  IndexStmt einsum = (x(i) = sum(k, sum(j, B(i, k) * C(k, j))));
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(k, forall(j, x(i) += B(i,k) * C(k,j))))");
  expectSameMeaning(einsum, inputs);
}

TEST_F(ConcretizeTest, UserAccumulationStaysAccumulation) {
  TensorVar A("A", {"I", "J"});
  IndexStmt einsum = (A(i, j) += B(i, k) * C(k, j));
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(j, forall(k, A(i,j) += B(i,k) * C(k,j))))");
  auto withA = inputs;
  withA["A"] = randomArray({3, 5}, 4);
  expectSameMeaning(einsum, withA);
}

TEST_F(ConcretizeTest, EachTermOfASumIsSummedOverItsOwnVariables) {
  TensorVar x("x", {"I"}), y("y", {"I"});
  IndexStmt einsum = (x(i) = y(i) - B(i, k) * 2.0);
  EXPECT_EQ(toString(makeReductionNotation(einsum)), "x(i) = y(i) - sum(k, B(i,k) * 2.0)");
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, where(x(i) = y(i) - tk, forall(k, tk += B(i,k) * 2.0)))");
  auto withY = inputs;
  withY["y"] = randomArray({3}, 5);
  expectSameMeaning(einsum, withY);
}

TEST_F(ConcretizeTest, NestedSumsBecomeTemporariesWithFreshNames) {
  TensorVar x("x", {"I"}), tk("tk", {"I"});
  IndexStmt einsum = (x(i) = sum(k, B(i, k)) * sum(k, B(i, k) * B(i, k)) + tk(i));
  IndexStmt concrete = concretize(einsum);
  EXPECT_EQ(toString(concrete),
            "forall(i, where(where(x(i) = tk1 * tk2 + tk(i), forall(k, tk1 += B(i,k))), "
            "forall(k, tk2 += B(i,k) * B(i,k))))");
  auto withTk = inputs;
  withTk["tk"] = randomArray({3}, 6);
  expectSameMeaning(einsum, withTk);
}

TEST_F(ConcretizeTest, SumInsideAHoistedSumGetsItsOwnWhere) {
  TensorVar x("x", {"I"});
  IndexStmt einsum = (x(i) = sum(k, B(i, k) * sum(j, C(k, j))));
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(k, where(x(i) += B(i,k) * tj, forall(j, tj += C(k,j)))))");
  expectSameMeaning(einsum, inputs);
}

TEST_F(ConcretizeTest, ShadowingSumIsRenamedAndUnusedSumRejected) {
  TensorVar x("x", {"I"});
  IndexStmt einsum = (x(i) = sum(k, B(i, k) * sum(k, B(i, k))));
  EXPECT_EQ(toString(concretize(einsum)),
            "forall(i, forall(k, where(x(i) += B(i,k) * tk, forall(k1, tk += B(i,k1)))))");
  expectSameMeaning(einsum, inputs);
  EXPECT_THROW(concretize(x(i) = sum(k, sum(k, B(i, k)))), std::invalid_argument);
}

TEST_F(ConcretizeTest, RepeatedOutputVariableLoopsOnce) {
  TensorVar D("D", {"I", "I"});
  IndexStmt einsum = (D(i, i) = B(i, k) * B(i, k));
  EXPECT_EQ(toString(concretize(einsum)), "forall(i, forall(k, D(i,i) += B(i,k) * B(i,k)))");
  expectSameMeaning(einsum, {{"B", randomArray({3, 3}, 8)}});
}

TEST_F(ConcretizeTest, OutputLoopsInAGivenOrder) {
  TensorVar Y("Y", {"I", "J"}, Format({LevelFormat::dense(), LevelFormat::dense()}, {1, 0}));
  TensorVar D("D", {"I", "J"});
  IndexStmt einsum = (Y(i, j) = D(i, j) * sum(k, B(i, k)));
  EXPECT_EQ(toString(concretize(einsum)), "forall(j, forall(i, where(Y(i,j) = D(i,j) * tk, forall(k, tk += B(i,k)))))");
  EXPECT_EQ(toString(concretize(einsum, {i, j})), "forall(i, forall(j, where(Y(i,j) = D(i,j) * tk, forall(k, tk += B(i,k)))))");
  auto withD = inputs;
  withD["D"] = randomArray({3, 5}, 9);
  expectSameMeaning(einsum, withD);
  EXPECT_THROW(concretize(einsum, {i}), std::invalid_argument);
  EXPECT_THROW(concretize(einsum, {i, k}), std::invalid_argument);
  EXPECT_THROW(concretize(einsum, {i, j, j}), std::invalid_argument);
}

TEST_F(ConcretizeTest, ConcreteInputIsReturnedAndOtherStatementsRejected) {
  TensorVar A("A", {"I", "J"});
  IndexStmt concrete = forall(i, forall(j, forall(k, A(i, j) += B(i, k) * C(k, j))));
  EXPECT_TRUE(concretize(concrete).sameAs(concrete));
  EXPECT_THROW(concretize(forall(i, A(i, j) = C(i, j))), std::invalid_argument);
  EXPECT_THROW(concretize(IndexStmt()), std::invalid_argument);
}

}  // namespace
}  // namespace tcc::ir
