// Refusals tell tcc's own tensors from the user's by what made them (their
// provenance), not by their names: a user's tensor named the way tcc names
// its copies (X_by_...) and workspaces (w_Y, ws_Y) keeps its own name in a
// refusal, and compiles as it is written; tcc's copies and workspaces are
// still described by what they are for.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernel_check.h"

namespace tcc::test {
namespace {

const char* kRowWiseSpgemm = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n";

// The product precomputed into a workspace the user declares as `name`.
std::string precomputedInto(const std::string& name) {
  return std::string(kRowWiseSpgemm) + "tensor " + name + "(I, J) : sparse_workspace(policy = coord)\n" +
         "A(i,j) = B(i,k) * C(k,j)\n";
}
std::string precomputeCommand(const std::string& name) {
  return "precompute(B(i,k) * C(k,j), {i, j}, {i, j}, " + name + ")";
}

TEST(UserTensorsNamedLikeTccs, DeclaredWorkspacesKeepTheirOwnNames) {
  for (const std::string name : {"ws_A", "w_A", "W"}) {
    const std::string schedule = precomputeCommand(name) + "\nparallelize(i, CPUVector, NoRaces)";
    expectRefusedAtLastCommand(precomputedInto(name), schedule,
                               "inserting into workspace " + name + " is a call, which vector lanes cannot share");
    frontend::Diagnostic refusal = refusalOf(withSchedule(precomputedInto(name), schedule));
    EXPECT_FALSE(contains(refusal.message, "tcc inserted")) << refusal.format();
    EXPECT_FALSE(contains(refusal.message, "asks for")) << refusal.format();
  }
}

TEST(UserTensorsNamedLikeTccs, DeclaredWorkspacesComputeAsWritten) {
  for (const std::string name : {"ws_A", "w_A"}) {
    for (const std::string parallel : {"", "\nparallelize(i, CPUThread, NoRaces)"}) {
      std::string dsl = withSchedule(precomputedInto(name), precomputeCommand(name) + parallel);
      SCOPED_TRACE(dsl);
      expectProgramMatchesReference(dsl, {{"B", randomSparse({29, 23}, 0.15, 9100)},
                                          {"C", randomSparse({23, 31}, 0.15, 9101)}});
    }
  }
}

// y(i) = B_by_j_i(i,j) * B(i,j): B_by_j_i is the user's, read at the same
// indices as B, as a copy of B in the loops' order would be.
const char* kInputNamedLikeACopy = "tensor y(I) : dense\ntensor B(I, J) : csr\ntensor B_by_j_i(I, J) : csr\n"
                                   "y(i) = B_by_j_i(i,j) * B(i,j)\n";
// The same in a statement whose terms sum over different variables (each
// sum computed by loops of its own).
const char* kInputNamedLikeACopyAmongSums = "tensor y(I) : dense\ntensor B(I, K) : csr\ntensor B_by_i_k(I, K) : csr\n"
                                            "tensor C(I, L) : csr\ny(i) = B_by_i_k(i,k) * B(i,k) - C(i,l)\n";

TEST(UserTensorsNamedLikeTccs, InputsNamedLikeCopiesKeepTheirOwnNames) {
  struct Case {
    std::string program, schedule, message;
  };
  const std::vector<Case> cases = {
      {kInputNamedLikeACopy, "fuse(i, j, f)",
       "j is iterated by a compressed level of B_by_j_i, whose coordinates cannot be cut into ranges; schedule its "
       "positions instead: pos(j, jpos, B_by_j_i(i,j)), then schedule jpos"},
      {kInputNamedLikeACopy, "reorder(j, i)",
       "visits j before i, but B_by_j_i stores i above j and sparse levels are visited in storage order"},
      // (A split over a compressed level compiles, its blocks searched:
      // CoordinateBlocks.*; a singleton level's cannot be.)
      {"tensor y(I) : dense\ntensor B(I, K) : csr\ntensor B_by_i_k(I, K) : coo\n"
       "tensor C(I, L) : csr\ny(i) = B_by_i_k(i,k) * B(i,k) - C(i,l)\n",
       "split(k, k0, k1, 2)",
       "k is iterated by a singleton level of B_by_i_k, whose coordinates cannot be cut into ranges; schedule its "
       "positions instead: pos(k, kpos, B_by_i_k(i,k)), then schedule kpos"},
  };
  for (const auto& each : cases) {
    expectRefusedAtLastCommand(each.program, each.schedule, each.message);
    frontend::Diagnostic refusal = refusalOf(withSchedule(each.program, each.schedule));
    EXPECT_FALSE(contains(refusal.message, "copy of")) << refusal.format();
  }
}

TEST(UserTensorsNamedLikeTccs, InputsNamedLikeCopiesComputeAsWritten) {
  expectProgramMatchesReference(kInputNamedLikeACopy, {{"B", randomSparse({37, 29}, 0.2, 9200)},
                                                       {"B_by_j_i", randomSparse({37, 29}, 0.2, 9201)}});
  expectProgramMatchesReference(kInputNamedLikeACopyAmongSums, {{"B", randomSparse({37, 29}, 0.2, 9202)},
                                                                {"B_by_i_k", randomSparse({37, 29}, 0.2, 9203)},
                                                                {"C", randomSparse({37, 23}, 0.2, 9204)}});
}

// B is CSC and A CSR, so tcc reads B from a copy in the loops' order, which
// it would name B_by_i_j; the user's own B_by_i_j keeps that name, read
// beside the copy (in the same statement, or another), and the copy takes
// another.
const char* kCopiedInput = "tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : csc\n"
                           "tensor B_by_i_j(I, J) : csr\n";

std::map<std::string, rt::Coo> copiedInputData() {
  return {{"A", randomSparse({37, 29}, 0.25, 9300)},
          {"B", randomSparse({37, 29}, 0.25, 9301)},
          {"B_by_i_j", randomSparse({37, 29}, 0.25, 9302)},
          {"C", randomSparse({37, 23}, 0.2, 9303)}};
}

TEST(UserTensorsNamedLikeTccs, InputsNamedLikeTheCopyOfAnotherComputeAsWritten) {
  const std::vector<std::string> programs = {
      std::string(kCopiedInput) + "Y(i,j) = A(i,j) * B(i,j) + B_by_i_j(i,j)\n",
      std::string(kCopiedInput) + "Y(i,j) = B_by_i_j(i,j) - A(i,j) * B(i,j)\n",
      std::string(kCopiedInput) + "tensor Z(I, J) : dense\nY(i,j) = A(i,j) * B(i,j)\nZ(i,j) = 2 * B_by_i_j(i,j)\n",
      // Terms that sum over different variables, each in loops of its own.
      std::string(kCopiedInput) + "tensor C(I, L) : csr\n"
                                  "Y(i,j) = A(i,j) * B(i,j) - A(i,j) * B(i,j) * C(i,l) + B_by_i_j(i,j)\n",
  };
  for (const auto& dsl : programs) {
    SCOPED_TRACE(dsl);
    EXPECT_EQ(errorOf(dsl), "");
    EXPECT_TRUE(contains(decisionsOf(dsl), "B(i,j) is read from a copy B_by_i_j_2 stored")) << decisionsOf(dsl);
    expectProgramMatchesReference(dsl, declaredInputs(dsl, copiedInputData()));
  }
}

// Terms that copy the same input into the same order read one copy.
TEST(TccsOwnTensors, TermsThatCopyAnInputAlikeShareTheCopy) {
  const std::string dsl = "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csc\ntensor C(I, L) : csr\n"
                          "Y(i,j) = A(i,j) * B(i,j) - A(i,j) * B(i,j) * C(i,l)\n";
  std::string decisions = decisionsOf(dsl);
  EXPECT_TRUE(contains(decisions, "the sparse inputs of the term A(i,j) * B_by_i_j(i,j) * C(i,l) admit no common loop "
                                  "order: B(i,j) is read from a copy B_by_i_j stored")) << decisions;
  EXPECT_FALSE(contains(decisions, "B_by_i_j_2")) << decisions;
  expectProgramMatchesReference(dsl, declaredInputs(dsl, copiedInputData()));
}

// tcc's own tensors, beside the lookalikes above: described by what they
// are for, whatever the user's tensors are called.
TEST(TccsOwnTensors, AreDescribedByWhatTheyAreFor) {
  struct Case {
    std::string program, schedule, message;
  };
  const std::string sums = "tensor Y(I) : dense\ntensor A(I, K) : csr\ntensor C(I, L) : csr\n";
  const std::vector<Case> cases = {
      {sums + "tensor D(I, L, M) : {compressed, compressed, compressed} order (2,1,0)\n"
              "Y(i) = A(i,k) - C(i,l) * D(i,l,m)\n",
       "reorder(m, l)", "visits m outside l, but the copy of D in the loops' order stores l above m"},
      // tcc's workspaces, in a program that also declares the user's own
      // tensors under the names tcc gives its workspaces.
      {std::string(kRowWiseSpgemm) + "tensor D(I, J) : csr\ntensor ws_A(I, J) : csr\ntensor w_A(I, J) : csr\n"
                                     "A(i,j) = B(i,k) * C(k,j) + D(i,j) + ws_A(i,j) - w_A(i,j)\n",
       "parallelize(i, CPUVector, NoRaces)", "inserting into the sparse workspace tcc inserted for A is a call"},
      {"tensor A(I, J) : dense\ntensor B(I, K) : csr\ntensor C(K, J) : csr\ntensor w_A(J) : dense\n"
       "A(i,j) = B(i,k) * C(k,j) * w_A(j)\n",
       "dense_workspace(j)\nparallelize(k, CPUThread, NoRaces)",
       "k is summed into the dense workspace that dense_workspace(j) asks for, so iterations race on its entries"},
      {std::string(kRowWiseSpgemm) + "tensor w_A(J) : dense\nA(i,j) = B(i,k) * C(k,j) * w_A(j)\n",
       "parallelize(k, CPUThread, NoRaces)",
       "the dense workspace tcc inserted for A keeps one list of the coordinates written so far"},
  };
  for (const auto& each : cases) {
    expectRefusedAtLastCommand(each.program, each.schedule, each.message);
    frontend::Diagnostic refusal = refusalOf(withSchedule(each.program, each.schedule));
    EXPECT_FALSE(contains(refusal.message, "_by_i_l_m_by_")) << refusal.format();
  }
  // A copy of a user's tensor that is itself named like a copy, refused at
  // the split whose inner part is unrolled (a split alone searches the
  // copy's blocks).
  frontend::Diagnostic copied =
      refusalOf(withSchedule(sums + "tensor D_by_i_l_m(I, L, M) : {compressed, compressed, compressed} order (2,1,0)\n"
                                    "Y(i) = A(i,k) - C(i,l) * D_by_i_l_m(i,l,m)\n",
                             "split(m, m0, m1, 2)\nunroll(m1, 2)"));
  EXPECT_EQ(copied.location.line, 7) << copied.format();
  EXPECT_TRUE(contains(copied.message, "m is iterated by a sparse level of the copy of D_by_i_l_m in the loops' order "
                                       "(its levels keep D_by_i_l_m's kinds)"))
      << copied.format();
  EXPECT_FALSE(contains(copied.message, "_by_i_l_m_by_")) << copied.format();
}

}  // namespace
}  // namespace tcc::test
