// Building index notation with the C++ builder and printing it gives TACO's
// textual form.
#include "tcc/ir/index_printer.h"

#include <gtest/gtest.h>

#include "tcc/ir/builder.h"

namespace tcc::ir {
namespace {

class IndexPrinterTest : public ::testing::Test {
 protected:
  IndexVar i{"i"}, j{"j"}, k{"k"};
  TensorVar A{"A", {"I", "J"}, Format::csr()};
  TensorVar B{"B", {"I", "K"}, Format::csr()};
  TensorVar C{"C", {"K", "J"}, Format::csr()};
  TensorVar w{"w", {"J"}};
  TensorVar a{"a"};
  TensorVar x{"x", {"I"}};
};

TEST_F(IndexPrinterTest, EinsumMatrixMultiply) {
  EXPECT_EQ(toString(A(i, j) = B(i, k) * C(k, j)), "A(i,j) = B(i,k) * C(k,j)");
}

TEST_F(IndexPrinterTest, ConcreteNotationWithForallAndWhere) {
  IndexStmt loops = forall(i, forall(j, forall(k, A(i, j) += B(i, k) * C(k, j))));
  EXPECT_EQ(toString(loops), "forall(i, forall(j, forall(k, A(i,j) += B(i,k) * C(k,j))))");
  IndexStmt workspace =
      where(forall(j, A(i, j) = w(j)), forall(k, forall(j, w(j) += B(i, k) * C(k, j))));
  EXPECT_EQ(toString(workspace),
            "where(forall(j, A(i,j) = w(j)), forall(k, forall(j, w(j) += B(i,k) * C(k,j))))");
}

TEST_F(IndexPrinterTest, ScalarAccessPrintsBareName) {
  EXPECT_EQ(toString(a() = B(i, j) * B(i, j)), "a = B(i,j) * B(i,j)");
}

TEST_F(IndexPrinterTest, ParenthesesOnlyWherePrecedenceNeedsThem) {
  EXPECT_EQ(toString((B(i, k) + C(k, j)) * x(i)), "(B(i,k) + C(k,j)) * x(i)");
  EXPECT_EQ(toString(B(i, k) + C(k, j) * x(i)), "B(i,k) + C(k,j) * x(i)");
  EXPECT_EQ(toString(x(i) - (x(i) - x(i))), "x(i) - (x(i) - x(i))");
  EXPECT_EQ(toString((x(i) - x(i)) - x(i)), "x(i) - x(i) - x(i)");
  EXPECT_EQ(toString(x(i) / (x(i) * x(i))), "x(i) / (x(i) * x(i))");
  EXPECT_EQ(toString(-(x(i) + x(i))), "-(x(i) + x(i))");
  EXPECT_EQ(toString(-x(i) * x(i)), "-x(i) * x(i)");
}

TEST_F(IndexPrinterTest, LiteralsKeepTheirType) {
  EXPECT_EQ(toString(2 * x(i)), "2 * x(i)");
  EXPECT_EQ(toString(2.0 * x(i)), "2.0 * x(i)");
  EXPECT_EQ(toString(0.5 * x(i)), "0.5 * x(i)");
  EXPECT_EQ(toString(x(i) * -3), "x(i) * -3");
  EXPECT_EQ(toString(-IndexExpr(-3)), "-(-3)");
}

TEST_F(IndexPrinterTest, SumAndBuiltins) {
  EXPECT_EQ(toString(a() = sum(i, x(i) * x(i))), "a = sum(i, x(i) * x(i))");
  TensorVar M("M", {4, 4});
  EXPECT_EQ(toString(a() = perm(M)), "a = perm(M)");
  EXPECT_EQ(toString(call("max", {x(i), IndexExpr(0.0)})), "max(x(i), 0.0)");
}

TEST_F(IndexPrinterTest, ForallAttributesAndProvenance) {
  IndexVar i0("i0"), i1("i1"), f("f"), jpos("jpos");
  ForallAttributes parallel{ParallelUnit::CPUThread, OutputRaceStrategy::NoRaces, 0};
  IndexStmt body = forall(i1, x(i) = 1.0, ForallAttributes{ParallelUnit::NotParallel, OutputRaceStrategy::IgnoreRaces, 4});
  IndexStmt scheduled = suchThat(forall(i0, body, parallel),
                                 {SplitRelation{i, i0, i1, 32}, FuseRelation{i, j, f},
                                  PosRelation{j, jpos, B(i, j)},
                                  BoundRelation{i, i0, 100, BoundKind::MaxExact}});
  EXPECT_EQ(toString(scheduled),
            "suchthat(forall(i0, forall(i1, x(i) = 1.0, unroll 4), CPUThread, NoRaces), "
            "split(i, i0, i1, 32), fuse(i, j, f), pos(j, jpos, B(i,j)), bound(i, i0, 100, MaxExact))");
}

TEST_F(IndexPrinterTest, SequenceAndMulti) {
  IndexStmt s = sequence(forall(i, x(i) = 0), forall(i, x(i) += 1));
  EXPECT_EQ(toString(s), "sequence(forall(i, x(i) = 0), forall(i, x(i) += 1))");
  EXPECT_EQ(toString(multi(a() = 1, forall(i, x(i) = 2))), "multi(a = 1, forall(i, x(i) = 2))");
}

TEST_F(IndexPrinterTest, TensorDeclaration) {
  EXPECT_EQ(declarationString(A), "A(I, J) : {dense, compressed} of float64");
  TensorVar s("s", Datatype::Int32);
  EXPECT_EQ(declarationString(s), "s : {} of int32");
  TensorVar T("T", {3, Dimension(), "K"}, Format::coo(3), Datatype::Float32);
  EXPECT_EQ(declarationString(T),
            "T(3, ?, K) : {compressed(nonunique), singleton(nonunique), singleton} of float32");
}

}  // namespace
}  // namespace tcc::ir
