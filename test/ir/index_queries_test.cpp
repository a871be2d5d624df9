// Queries, substitution and the rewriter base.
#include "tcc/ir/index_queries.h"

#include <gtest/gtest.h>

#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_replace.h"
#include "tcc/ir/index_rewriter.h"

namespace tcc::ir {
namespace {

class IndexQueriesTest : public ::testing::Test {
 protected:
  IndexVar i{"i"}, j{"j"}, k{"k"}, l{"l"};
  TensorVar A{"A", {"I", "J"}}, B{"B", {"I", "K"}}, C{"C", {"K", "J"}}, w{"w", {"J"}}, a{"a"};
};

TEST_F(IndexQueriesTest, FreeAndReductionVariablesInOrderOfFirstAppearance) {
  IndexStmt s = (A(i, j) = B(i, k) * C(k, j));
  EXPECT_EQ(freeVars(s), (std::vector<IndexVar>{i, j}));
  EXPECT_EQ(reductionVars(s), (std::vector<IndexVar>{k}));
  TensorVar T("T", {"K", "L", "I"});
  IndexStmt t = (a() = T(l, k, i) * sum(j, A(i, j)));
  EXPECT_TRUE(freeVars(t).empty());
  EXPECT_EQ(reductionVars(t), (std::vector<IndexVar>{l, k, i, j}));
  EXPECT_THROW(freeVars(forall(i, t)), std::invalid_argument);
}

TEST_F(IndexQueriesTest, IndexVarsOfStatementIncludeLoopsAndRelations) {
  IndexVar i0("i0"), i1("i1");
  IndexStmt s = suchThat(forall(i0, forall(i1, forall(j, A(i, j) = w(j)))), {SplitRelation{i, i0, i1, 4}});
  EXPECT_EQ(indexVarsOf(s), (std::vector<IndexVar>{i0, i1, j, i}));
}

TEST_F(IndexQueriesTest, AccessesAndTensors) {
  IndexStmt s = where(forall(j, A(i, j) += w(j)), forall(k, forall(j, w(j) += B(i, k) * C(k, j))));
  auto accesses = accessesOf(s);
  ASSERT_EQ(accesses.size(), 4u);
  EXPECT_EQ(toString(accesses[0]), "A(i,j)");
  EXPECT_EQ(toString(accesses[3]), "C(k,j)");
  EXPECT_EQ(tensorsWritten(s), (std::vector<TensorVar>{A, w}));
  EXPECT_EQ(tensorsRead(s), (std::vector<TensorVar>{A, w, B, C}));  // A is read by +=
  EXPECT_EQ(assignmentsOf(s).size(), 2u);
  TensorVar M("M", {"N", "N"});
  EXPECT_EQ(tensorsRead(a() = perm(M)), (std::vector<TensorVar>{M}));
}

TEST_F(IndexQueriesTest, TensorsOnlyWrittenOnceAreWrittenByOneAssignmentAndNamedNowhereElse) {
  // A is written once (+= included); w is written and read; B and C are read.
  IndexStmt s = where(forall(j, A(i, j) += w(j)), forall(k, forall(j, w(j) += B(i, k) * C(k, j))));
  EXPECT_EQ(tensorsOnlyWrittenOnce(s), (std::vector<TensorVar>{A}));
  // Written twice (a sequence), or read by another statement: not once.
  IndexStmt twice = sequence(forall(i, forall(j, A(i, j) = B(i, j))), forall(i, forall(j, A(i, j) += C(i, j))));
  EXPECT_TRUE(tensorsOnlyWrittenOnce(twice).empty());
  IndexStmt read = where(forall(j, w(j) = A(i, j)), forall(j, A(i, j) = C(i, j)));
  EXPECT_EQ(tensorsOnlyWrittenOnce(read), (std::vector<TensorVar>{w}));
}

TEST_F(IndexQueriesTest, EinsumAndConcreteAreRecognized) {
  IndexStmt einsum = (A(i, j) = B(i, k) * C(k, j));
  EXPECT_TRUE(isEinsum(einsum));
  EXPECT_FALSE(isConcrete(einsum));
  EXPECT_TRUE(isConcrete(forall(i, forall(j, forall(k, A(i, j) += B(i, k) * C(k, j))))));
  EXPECT_FALSE(isConcrete(forall(i, forall(j, A(i, j) += B(i, k) * C(k, j)))));
  EXPECT_TRUE(isConcrete(forall(i, forall(j, A(i, j) = sum(k, B(i, k) * C(k, j))))));
  EXPECT_FALSE(isConcrete(forall(i, forall(i, w(i) = 1))));
  IndexVar i0("i0"), i1("i1");
  EXPECT_TRUE(isConcrete(suchThat(forall(i0, forall(i1, forall(j, A(i, j) = 1))), {SplitRelation{i, i0, i1, 2}})));
  EXPECT_FALSE(isConcrete(suchThat(forall(i0, forall(j, A(i, j) = 1)), {SplitRelation{i, i0, i1, 2}})));
}

TEST_F(IndexQueriesTest, ReplaceSubexpressionsTensorsAndVariables) {
  IndexStmt s = forall(i, forall(j, forall(k, A(i, j) += B(i, k) * C(k, j))));
  IndexStmt withWorkspace = replace(s, std::unordered_map<IndexExpr, IndexExpr>{{A(i, j), w(j)}});
  EXPECT_EQ(toString(withWorkspace), "forall(i, forall(j, forall(k, w(j) += B(i,k) * C(k,j))))");
  EXPECT_THROW(replace(s, std::unordered_map<IndexExpr, IndexExpr>{{A(i, j), IndexExpr(1.0)}}),
               std::invalid_argument);

  TensorVar D("D", {"I", "K"});
  IndexStmt renamedTensor = replace(s, std::unordered_map<TensorVar, TensorVar>{{B, D}});
  EXPECT_EQ(toString(renamedTensor), "forall(i, forall(j, forall(k, A(i,j) += D(i,k) * C(k,j))))");
  EXPECT_EQ(tensorsRead(renamedTensor), (std::vector<TensorVar>{A, D, C}));

  IndexVar m("m");
  IndexStmt renamedVar = replace(s, std::unordered_map<IndexVar, IndexVar>{{k, m}});
  EXPECT_EQ(toString(renamedVar), "forall(i, forall(j, forall(m, A(i,j) += B(i,m) * C(m,j))))");
  EXPECT_EQ(replace(renamedVar, std::unordered_map<IndexVar, IndexVar>{{m, k}}), s);
}

TEST_F(IndexQueriesTest, ReplaceReachesPosRelations) {
  IndexVar jpos("jpos"), k0("k0");
  IndexStmt s = suchThat(forall(i, forall(jpos, A(i, j) = B(i, j))), {PosRelation{j, jpos, B(i, j)}});
  TensorVar D("D", {"I", "K"});
  EXPECT_EQ(toString(replace(s, std::unordered_map<TensorVar, TensorVar>{{B, D}})),
            "suchthat(forall(i, forall(jpos, A(i,j) = D(i,j))), pos(j, jpos, D(i,j)))");
  EXPECT_EQ(toString(replace(s, std::unordered_map<IndexVar, IndexVar>{{j, k0}})),
            "suchthat(forall(i, forall(jpos, A(i,k0) = B(i,k0))), pos(k0, jpos, B(i,k0)))");
}

TEST_F(IndexQueriesTest, ReplaceLeavesUntouchedSubtreesShared) {
  IndexStmt producer = forall(k, forall(j, w(j) += B(i, k) * C(k, j)));
  IndexStmt s = where(forall(j, A(i, j) = w(j)), producer);
  IndexStmt replaced = replace(s, std::unordered_map<TensorVar, TensorVar>{{A, TensorVar("Z", {"I", "J"})}});
  EXPECT_TRUE(replaced.as<WhereNode>()->producer.sameAs(producer));
  EXPECT_TRUE(replace(s, std::unordered_map<IndexVar, IndexVar>{}).sameAs(s));
}

// A pass written against the rewriter base: double every literal.
class LiteralDoubler : public IndexNotationRewriter {
 protected:
  IndexExpr visit(const LiteralNode* node, const IndexExpr&) override {
    return LiteralNode::make(node->asDouble() * 2);
  }
};

TEST_F(IndexQueriesTest, RewriterOverridesOnlyWhatItNeeds) {
  IndexStmt s = forall(j, w(j) = 1.5 * w(j) + sum(k, C(k, j) * 0.25));
  EXPECT_EQ(toString(LiteralDoubler().rewrite(s)), "forall(j, w(j) = 3.0 * w(j) + sum(k, C(k,j) * 0.5))");
}

}  // namespace
}  // namespace tcc::ir
