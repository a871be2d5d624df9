// What made a tensor (its provenance) is data about the tensor, not part of
// its identity: equality, ordering, hashing and printing stay the handle's
// and the name's.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include "tcc/ir/builder.h"
#include "tcc/ir/concretize.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::ir {
namespace {

TEST(TensorProvenance, TensorsAreTheUsersUnlessTccSaysOtherwise) {
  TensorVar B("B", {"I", "J"}, Format::csr());
  EXPECT_TRUE(B.provenance().isUser());
  EXPECT_FALSE(B.provenance().source.defined());
  EXPECT_TRUE(TensorVar("a").provenance().isUser());
  EXPECT_TRUE(TensorVar().provenance().isUser());  // an undefined handle too

  // Named the way tcc names its copies, a user's tensor is still the user's.
  TensorVar lookalike("B_by_j_i", {"I", "J"}, Format::csr());
  EXPECT_TRUE(lookalike.provenance().isUser());

  TensorVar copy("B_by_j_i", {"I", "J"}, Format({LevelFormat::dense(), LevelFormat::compressed()}, {1, 0}),
                 Datatype::Float64, TensorProvenance::storageOrderCopy(B));
  EXPECT_EQ(copy.provenance().kind, TensorProvenance::Kind::StorageOrderCopy);
  EXPECT_EQ(copy.provenance().source, B);
  EXPECT_FALSE(copy.provenance().isWorkspace());

  TensorVar workspace("w_y", {"J"}, Format::denseOfOrder(1), Datatype::Float64,
                      TensorProvenance::denseWorkspace(B, "dense_workspace(j)"));
  EXPECT_TRUE(workspace.provenance().isWorkspace());
  EXPECT_EQ(workspace.provenance().askedBy, "dense_workspace(j)");
  TensorVar chosen("ws_y", {"J"}, Format::sparseVector(), Datatype::Float64,
                   TensorProvenance::sparseWorkspace(B, ""));
  EXPECT_EQ(chosen.provenance().kind, TensorProvenance::Kind::SparseWorkspace);
  EXPECT_TRUE(chosen.provenance().askedBy.empty());
}

TEST(TensorProvenance, LeavesIdentityOrderHashAndPrintingAlone) {
  TensorVar B("B", {"I", "J"}, Format::csr());
  TensorVar user("B_by_j_i", {"I", "J"}, Format::csr());
  TensorVar copy("B_by_j_i", {"I", "J"}, Format::csr(), Datatype::Float64, TensorProvenance::storageOrderCopy(B));
  TensorVar handle = copy;
  EXPECT_EQ(handle, copy);
  EXPECT_NE(user, copy);  // the same name, two tensors
  EXPECT_TRUE(user < copy);  // creation order
  EXPECT_EQ(std::hash<TensorVar>()(copy), std::hash<int64_t>()(copy.id()));
  EXPECT_EQ(declarationString(user), declarationString(copy));
  std::ostringstream printedUser, printedCopy;
  printedUser << user;
  printedCopy << copy;
  EXPECT_EQ(printedUser.str(), printedCopy.str());
  // Statements over either print alike and compare structurally by the
  // tensors they read.
  IndexVar i("i"), j("j");
  TensorVar y("y", {"I"});
  IndexStmt overUser = y(i) = user(i, j), overCopy = y(i) = copy(i, j);
  EXPECT_EQ(toString(overUser), toString(overCopy));
  EXPECT_NE(IndexExpr(user(i, j)), IndexExpr(copy(i, j)));
}

TEST(TensorProvenance, ConcretizationMarksItsSumTemporaries) {
  IndexVar i("i"), j("j"), k("k");
  TensorVar y("y", {"I"}), B("B", {"I", "J"}), C("C", {"I", "K"});
  // A product of two sums: each is computed into a scalar temporary.
  IndexStmt concrete = concretize(y(i) = sum(j, B(i, j)) * sum(k, C(i, k)));
  int temporaries = 0;
  for (const auto& tensor : tensorsWritten(concrete)) {
    if (tensor == y) {
      EXPECT_TRUE(tensor.provenance().isUser());
      continue;
    }
    EXPECT_EQ(tensor.provenance().kind, TensorProvenance::Kind::SumTemporary) << tensor.name();
    ++temporaries;
  }
  EXPECT_EQ(temporaries, 2) << toString(concrete);
}

}  // namespace
}  // namespace tcc::ir
