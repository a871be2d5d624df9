// Structural equality and hashing of index notation; identity of variables.
#include <gtest/gtest.h>

#include <unordered_set>

#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"

namespace tcc::ir {
namespace {

TEST(IndexVar, IdentityNotNameDecidesEquality) {
  IndexVar i("i"), alsoI("i");
  IndexVar copy = i;
  EXPECT_EQ(i, copy);
  EXPECT_NE(i, alsoI);
  EXPECT_EQ(i.name(), alsoI.name());
  EXPECT_TRUE(i < alsoI);
  IndexVar fresh;
  EXPECT_FALSE(fresh.name().empty());
}

TEST(TensorVar, IdentityNotNameDecidesEquality) {
  TensorVar A("A", {2, 3}), alsoA("A", {2, 3});
  TensorVar copy = A;
  EXPECT_EQ(A, copy);
  EXPECT_NE(A, alsoA);
  EXPECT_EQ(A.order(), 2);
  EXPECT_EQ(A.format(), Format::denseOfOrder(2));
}

TEST(IndexExpr, StructurallyEqualTreesAreEqualAndHashAlike) {
  IndexVar i("i"), k("k");
  TensorVar B("B", {"I", "K"}), c("c", {"K"});
  IndexExpr first = B(i, k) * c(k) + 2.0;
  IndexExpr second = B(i, k) * c(k) + 2.0;
  EXPECT_FALSE(first.sameAs(second));
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.hash(), second.hash());
  std::unordered_set<IndexExpr> set{first};
  EXPECT_EQ(set.count(second), 1u);
}

TEST(IndexExpr, DifferencesAnywhereMakeTreesUnequal) {
  IndexVar i("i"), k("k"), otherK("k");
  TensorVar B("B", {"I", "K"}), c("c", {"K"});
  IndexExpr base = B(i, k) * c(k);
  EXPECT_NE(base, B(i, k) + c(k));             // operator
  EXPECT_NE(base, c(k) * B(i, k));             // operand order
  EXPECT_NE(base, B(i, otherK) * c(otherK));   // a different variable of the same name
  EXPECT_NE(IndexExpr(2.0), IndexExpr(2));     // literal type
  EXPECT_NE(IndexExpr(2.0), IndexExpr(-2.0));
  EXPECT_NE(sum(k, base), sum(otherK, base));
  EXPECT_NE(IndexExpr(), base);
  EXPECT_EQ(IndexExpr(), IndexExpr());
}

TEST(IndexStmt, StructuralEqualityCoversEveryStatementKind) {
  IndexVar i("i"), j("j"), jj("jj");
  TensorVar x("x", {"I"}), y("y", {"I"}), w("w", {"I"});
  auto build = [&](bool accumulate, int unroll) {
    IndexStmt assign = accumulate ? (x(i) += y(i)) : (x(i) = y(i));
    ForallAttributes attributes;
    attributes.unrollFactor = unroll;
    IndexStmt loop = forall(i, assign, attributes);
    return suchThat(where(loop, forall(i, w(i) = y(i))), {SplitRelation{i, j, jj, 4}});
  };
  EXPECT_EQ(build(true, 0), build(true, 0));
  EXPECT_EQ(build(true, 0).hash(), build(true, 0).hash());
  EXPECT_NE(build(true, 0), build(false, 0));
  EXPECT_NE(build(true, 0), build(true, 2));
}

TEST(IndexStmt, EqualityAndHashDistinguishAttributes) {
  IndexVar i("i");
  TensorVar x("x", {"I"}), y("y", {"I"});
  IndexStmt plain = forall(i, x(i) = y(i));
  IndexStmt accumulate = forall(i, x(i) += y(i));
  IndexStmt parallel = forall(i, x(i) = y(i), {ParallelUnit::CPUThread, OutputRaceStrategy::NoRaces, 0});
  EXPECT_EQ(plain, forall(i, x(i) = y(i)));
  EXPECT_EQ(plain.hash(), forall(i, x(i) = y(i)).hash());
  EXPECT_NE(plain, accumulate);
  EXPECT_NE(plain, parallel);
  EXPECT_NE(where(plain, accumulate), where(accumulate, plain));
  EXPECT_NE(sequence(plain, accumulate), multi(plain, accumulate));
  std::unordered_set<IndexStmt> set{plain, accumulate, parallel};
  EXPECT_EQ(set.size(), 3u);
}

TEST(IndexStmt, RelationsTakePartInEquality) {
  IndexVar i("i"), i0("i0"), i1("i1");
  TensorVar x("x", {"I"});
  IndexStmt body = forall(i0, forall(i1, x(i) = 1.0));
  EXPECT_EQ(suchThat(body, {SplitRelation{i, i0, i1, 8}}), suchThat(body, {SplitRelation{i, i0, i1, 8}}));
  EXPECT_NE(suchThat(body, {SplitRelation{i, i0, i1, 8}}), suchThat(body, {SplitRelation{i, i0, i1, 16}}));
  EXPECT_NE(suchThat(body, {SplitRelation{i, i0, i1, 8}}), suchThat(body, {DivideRelation{i, i0, i1, 8}}));
}

}  // namespace
}  // namespace tcc::ir
