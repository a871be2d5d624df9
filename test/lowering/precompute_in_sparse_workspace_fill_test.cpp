// A statement whose results go into a sparse (ISM) workspace and that also
// takes a dense precompute: the dense workspace's where stands among the
// loops that fill the sparse one (a row of a product computed densely, then
// inserted), whether the sparse workspace is asked for by sparse_workspace,
// made because the loops scatter, or made because the terms reduce over
// different variables (a dense workspace per term). Against the dense
// reference on random and real inputs; what cannot be placed stays refused
// at its command.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

std::map<std::string, rt::Coo> productInputs(uint64_t seed) {
  return {{"B", randomSparse({23, 19}, 0.15, seed)},
          {"C", randomSparse({19, 27}, 0.15, seed + 1)},
          {"D", randomSparse({23, 27}, 0.1, seed + 2)},
          {"E", randomSparse({19, 27}, 0.15, seed + 3)}};
}

// Row-wise SpGEMM (and sums with it) whose row sparse_workspace hoists the
// loop over i: each row of B*C goes into dense w_A(jw), which the loop over
// j then inserts into the row's sparse workspace.
const char* kRowWise = R"(tensor A(I, J) : @OUT
tensor B(I, K) : @B
tensor C(K, J) : csr
tensor D(I, J) : csr
A(i, j) = @RHS
)";

TEST(PrecomputeInSparseWorkspaceFill, RowOfAProductPrecomputedThenInserted) {
  std::map<std::string, rt::Coo> inputs = productInputs(9100);
  for (const char* out : {"csr", "dcsr", "csc", "dense"})
    for (const char* b : {"csr", "dcsr"})
      for (const char* rhs : {"B(i, k) * C(k, j)", "B(i, k) * C(k, j) + D(i, j)", "B(i, k) * C(k, j) * 0.5 - D(i, j)"})
        for (const char* schedule :
             {"sparse_workspace(j, policy = bucket)\nprecompute(B(i, k) * C(k, j), j, jw)",
              "precompute(B(i, k) * C(k, j), j, jw)\nsparse_workspace(policy = hash, pipeline = on)",
              "sparse_workspace(policy = coord)\ndense_workspace()"}) {
          std::string program =
            withSchedule(replaced(replaced(replaced(kRowWise, "@OUT", out), "@B", b), "@RHS", rhs), schedule);
          SCOPED_TRACE(program);
          // (dense_workspace() indexes the output's last level, i for csc:
          // refused, the loop over j running inside the one over i.)
          if (std::string(out) == "csc" && contains(schedule, "dense_workspace()")) continue;
          expectProgramMatchesReference(program, declaredInputs(program, inputs));
        }
  std::string program = withSchedule(replaced(replaced(replaced(kRowWise, "@OUT", "csr"), "@B", "csr"), "@RHS",
                                              "B(i, k) * C(k, j)"),
                                     "sparse_workspace(j, policy = bucket)\nprecompute(B(i, k) * C(k, j), j, jw)");
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "precompute B(i,k) * C(k,j) into dense workspace w_A(jw) inside the loops over "
                                  "nothing, among the loops that fill sparse workspace ws_A"))
    << decisions;
  EXPECT_TRUE(contains(decisions, "drained after each iteration of i")) << decisions;
}

// The dense row's touched coordinates go into the ISM workspace as they
// were touched, unsorted: the ISM sorts what it holds, and one fill inserts
// each coordinate once, so each entry is the dense row's sum, to the bit
// (the same bits as tcc's default kernel into a CSR output, which sorts
// the row and appends it). Where fills inside a loop the workspace's index
// does not follow insert one coordinate again (a row of C per k), where two
// terms' rows insert into one workspace (whose batches could group a
// coordinate's inserts otherwise), and where the row is appended to the
// output itself, the coordinates stay sorted.
TEST(PrecomputeInSparseWorkspaceFill, TheDenseRowGoesIntoTheIsmUnsorted) {
  const std::string product = "tensor A(I, J) : @OUT\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                              "A(i, j) = B(i, k) * C(k, j)\n";
  const std::string row = "precompute(B(i, k) * C(k, j), j, jw)";
  rt::Coo a = realMatrix("west0497.mtx");
  std::map<std::string, rt::Coo> real = {{"B", a}, {"C", a}};
  for (const char* out : {"csr", "csc"}) {
    std::string workspace = std::string(out) == "csr" ? "sparse_workspace(j, policy = bucket)\n" : "";
    std::string unsorted = withSchedule(replaced(product, "@OUT", out), workspace + row);
    SCOPED_TRACE(unsorted);
    std::string code = expectProgramMatchesReference(unsorted, real);
    EXPECT_FALSE(contains(code, "tcc_order_touched(w_A_list")) << code;
    EXPECT_TRUE(contains(code, "tcc_ism_insert_")) << code;
    expectSameBits(outputsOf(unsorted, real), outputsOf(replaced(product, "@OUT", "csr"), real));
  }
  const std::string twoTerms = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                               "tensor D(I, L) : csr\ntensor E(L, J) : csr\n"
                               "A(i, j) = B(i, k) * C(k, j) + D(i, l) * E(l, j)\n";
  for (const std::string& sorted : {withSchedule(replaced(product, "@OUT", "csr"), row),
                                    withSchedule(replaced(product, "@OUT", "csr"),
                                                 "sparse_workspace(j, policy = bucket)\nprecompute(C(k, j), j, jw)"),
                                    withSchedule(twoTerms, "sparse_workspace(policy = hash)\ndense_workspace()")}) {
    SCOPED_TRACE(sorted);
    std::string code =
      expectProgramMatchesReference(sorted, declaredInputs(sorted, {{"B", a}, {"C", a}, {"D", a}, {"E", a}}));
    EXPECT_TRUE(contains(code, "tcc_order_touched(w_A_list")) << code;
  }
}

// On CPU threads: rows of a CSR output each drained from a thread's own
// workspace, or the outer product's racing results through a workspace per
// thread (the Workspace strategy), each thread with its dense workspace.
TEST(PrecomputeInSparseWorkspaceFill, OnThreads) {
  std::map<std::string, rt::Coo> inputs = productInputs(9150);
  std::string rows = withSchedule(replaced(replaced(replaced(kRowWise, "@OUT", "csr"), "@B", "csr"), "@RHS",
                                           "B(i, k) * C(k, j) + D(i, j)"),
                                  "parallelize(i, CPUThread, NoRaces)\nsparse_workspace(j, policy = hash)\n"
                                  "precompute(B(i, k) * C(k, j), j, jw)");
  SCOPED_TRACE(rows);
  expectProgramMatchesReference(rows, declaredInputs(rows, inputs));
  const char* outer = R"(tensor A(I, J) : @OUT
tensor B(I, K) : dcsc
tensor C(K, J) : dcsr
tensor E(K, J) : dcsr
A(i, j) = B(i, k) * (C(k, j) + E(k, j))
schedule {
  reorder(k, i, j)
  precompute(C(k, j) + E(k, j), j, jw)
  parallelize(k, CPUThread, Workspace)
}
)";
  for (const char* out : {"csr", "csc", "dense"}) {
    std::string program = replaced(outer, "@OUT", out);
    SCOPED_TRACE(program);
    expectProgramMatchesReference(program, declaredInputs(program, inputs));
  }
}

// Outer-product SpGEMM scatters: its whole-output workspace is filled by
// loops k, i, j, among which the union of C's and E's row k goes into a
// dense workspace over j first.
TEST(PrecomputeInSparseWorkspaceFill, ScatteringLoopsTakeADenseWorkspace) {
  const char* outer = R"(tensor A(I, J) : @OUT
tensor B(I, K) : dcsc
tensor C(K, J) : dcsr
tensor E(K, J) : dcsr
tensor D(I, J) : csr
A(i, j) = @RHS
schedule {
  reorder(k, i, j)
  @SCHEDULE
}
)";
  std::map<std::string, rt::Coo> inputs = productInputs(9200);
  for (const char* out : {"csr", "csc", "dcsr"})
    for (const char* rhs : {"B(i, k) * (C(k, j) + E(k, j))", "B(i, k) * (C(k, j) + E(k, j)) * 2 - D(i, j)"})
      for (const char* schedule : {"precompute(C(k, j) + E(k, j), j, jw)",
                                   "precompute(C(k, j) + E(k, j), j, jw)\n  sparse_workspace(policy = map)",
                                   "sparse_workspace(policy = bucket, pipeline = on)\n  precompute(C(k, j) + E(k, j), j, j)"}) {
        std::string program = replaced(replaced(replaced(outer, "@OUT", out), "@RHS", rhs), "@SCHEDULE", schedule);
        SCOPED_TRACE(program);
        // Into csc the loops scatter, and with D's term, which sums nothing,
        // the terms fill a workspace by loops of their own; into csr or dcsr
        // the summed k splits A's coordinates, and beside a precompute tcc
        // inserts no workspace unless sparse_workspace asks.
        if (std::string(out) != "csc" && !contains(schedule, "sparse_workspace") && !contains(rhs, "D(")) {
          std::string message = errorOf(program);
          EXPECT_TRUE(contains(message, "test.tc:9:3: error: precompute(C(k, j) + E(k, j), j, jw): ")) << message;
          EXPECT_TRUE(contains(message, "or for a sparse one, with sparse_workspace()")) << message;
          continue;
        }
        expectProgramMatchesReference(program, declaredInputs(program, inputs));
      }
  for (const char* name : {"bcsstk01.mtx", "bcspwr01.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo a = realMatrix(name);
    std::string program = replaced(replaced(replaced(outer, "@OUT", "csc"), "@RHS", "B(i, k) * (C(k, j) + E(k, j)) - D(i, j)"),
                                   "@SCHEDULE", "precompute(C(k, j) + E(k, j), j, jw)");
    expectProgramMatchesReference(program, {{"B", a}, {"C", a}, {"D", a}, {"E", transposed(a)}});
  }
  // B(i,k) * C(k,j) summed over k into a row over j needs the loop over i
  // outside k's: refused at the precompute.
  std::string message = errorOf(replaced(replaced(replaced(outer, "@OUT", "csr"), "@RHS", "B(i, k) * C(k, j)"),
                                         "@SCHEDULE", "precompute(B(i, k) * C(k, j), j, jw)"));
  EXPECT_TRUE(contains(message, "test.tc:9:3: error: precompute(B(i, k) * C(k, j), j, jw): the precomputed expression "
                                "depends on i")) << message;
}

// Two dense precomputes nested in the fill: (B C) D's row over j inside the
// loops that fill the row's sparse workspace, B C's row over l inside it.
TEST(PrecomputeInSparseWorkspaceFill, NestedDensePrecomputes) {
  const char* chain = R"(tensor A(I, J) : @OUT
tensor B(I, K) : csr
tensor C(K, L) : csr
tensor D(L, J) : csr
A(i,j) = B(i,k) * C(k,l) * D(l,j)
schedule {
  sparse_workspace(@WS)
  precompute(B(i,k) * C(k,l) * D(l,j), j, j)
  precompute(B(i,k) * C(k,l), l, l)
}
)";
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({17, 13}, 0.2, 9300)},
                                           {"C", randomSparse({13, 15}, 0.2, 9301)},
                                           {"D", randomSparse({15, 19}, 0.2, 9302)}};
  for (const char* out : {"csr", "csc"})
    for (const char* ws : {"policy = hash", "j, policy = bucket"}) {
      std::string program = replaced(replaced(chain, "@OUT", out), "@WS", ws);
      SCOPED_TRACE(program);
      if (std::string(out) == "csc" && contains(ws, "j,")) continue;  // j is not csc's second level
      expectProgramMatchesReference(program, declaredInputs(program, inputs));
    }
  rt::Coo a = realMatrix("bcsstk01.mtx");
  expectProgramMatchesReference(replaced(replaced(chain, "@OUT", "csr"), "@WS", "j, policy = bucket"),
                                {{"B", a}, {"C", a}, {"D", a}});
}

// Terms that reduce over different variables fill one sparse workspace,
// each by loops of its own: dense_workspace() puts each term's row into a
// dense workspace of its own among its loops; a precompute of a part goes
// among the loops of the term that holds it.
TEST(PrecomputeInSparseWorkspaceFill, TermsEachTakeADenseWorkspace) {
  const char* terms = R"(tensor A(I, J) : @OUT
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor D(I, L) : csr
tensor E(L, J) : csr
tensor F(I, J, M) : csf
tensor g(L) : dense
A(i, j) = @RHS
schedule {
  sparse_workspace(policy = hash)
  @SCHEDULE
}
)";
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({21, 16}, 0.2, 9400)},
                                           {"C", randomSparse({16, 25}, 0.2, 9401)},
                                           {"D", randomSparse({21, 14}, 0.2, 9402)},
                                           {"E", randomSparse({14, 25}, 0.2, 9403)},
                                           {"F", randomSparse({21, 25, 6}, 0.1, 9404)},
                                           {"g", randomDense({14}, 9405)}};
  for (const char* out : {"csr", "dcsr", "csc", "dense"})
    // (A term not indexed by j, `- 3` or `D(i, l) * g(l)`, inserts as it is.)
    for (const char* rhs : {"B(i, k) * C(k, j) + D(i, l) * E(l, j)", "B(i, k) * C(k, j) * 3 - sum(l, D(i, l) * E(l, j))",
                            "B(i, k) * C(k, j) - F(i, j, m)", "B(i, k) * C(k, j) + D(i, l) * E(l, j) - 3",
                            "B(i, k) * C(k, j) + D(i, l) * g(l)"})
      for (const char* schedule : {"dense_workspace()", "dense_workspace(j)", "precompute(B(i, k) * C(k, j), j, jw)",
                                   "dense_workspace(m)"}) {
        // (dense_workspace() over csc's last level, i: no term's loops put j
        // outside i; m: only F's term sums over it.)
        if (std::string(out) == "csc" && contains(schedule, "()")) continue;
        if (contains(schedule, "(m)") != contains(rhs, "F(")) continue;
        std::string program = replaced(replaced(replaced(terms, "@OUT", out), "@RHS", rhs), "@SCHEDULE", schedule);
        SCOPED_TRACE(program);
        expectProgramMatchesReference(program, declaredInputs(program, inputs));
      }
  std::string program = replaced(replaced(replaced(terms, "@OUT", "csr"), "@RHS", "B(i, k) * C(k, j) - F(i, j, m)"),
                                 "@SCHEDULE", "dense_workspace(m)");
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "each term over m goes into a dense workspace of its own (-F(i,j,m)); the "
                                  "terms not indexed by m insert as they are"))
    << decisions;
  rt::Coo a = realMatrix("bcsstk01.mtx");
  expectProgramMatchesReference(replaced(replaced(replaced(terms, "@OUT", "csr"), "@RHS",
                                                  "B(i, k) * C(k, j) + D(i, l) * E(l, j)"),
                                         "@SCHEDULE", "dense_workspace()"),
                                {{"B", a}, {"C", a}, {"D", a}, {"E", a}});
}

// What cannot be placed stays refused at its command, with the reason.
TEST(PrecomputeInSparseWorkspaceFill, WhatCannotBePlacedIsRefusedAtItsCommand) {
  // sparse_workspace() hoists i and j (Y's dense levels): no loop over j
  // runs where the workspace over k is filled.
  expectRefusedAtLastCommand("tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\n"
                             "Y(i,j,k) = A(i,j,k) * 0.5\n",
                             "sparse_workspace(policy = hash)\nprecompute(A(i,j,k), j, jw)",
                             "its workspace is indexed by j, but no loop over j runs where it would be filled, among "
                             "the loops that fill sparse workspace ws_Y (the loops there: k)");
  // Two sparse_workspace commands would configure one workspace twice.
  expectRefusedAtLastCommand(replaced(replaced(replaced(kRowWise, "@OUT", "csr"), "@B", "csr"), "@RHS",
                                      "B(i, k) * C(k, j)"),
                             "sparse_workspace(policy = bucket)\nsparse_workspace(j, policy = hash)",
                             "a statement takes one sparse workspace, for its output, which "
                             "`sparse_workspace(policy = bucket)` at line 7 asks for already; drop one");
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

// precompute(expr, i_vars, o_vars, W) into a declared sparse workspace W
// beside other precomputes: a dense one of a part of expr goes among the
// loops that insert into W; one of a part of the statement that reads W
// (a dense workspace, or a second workspace tensor, one per term) and
// sparse_workspace (the output's workspace) go to that statement.
const char* kDeclared = R"(tensor A(I, J) : @OUT
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor D(I, L) : csr
tensor E(L, J) : csr
tensor F(I, J) : csr
tensor W(I, J) : sparse_workspace(@W)
tensor V(I, J) : sparse_workspace(policy = hash)
A(i, j) = @RHS
schedule {
  @SCHEDULE
}
)";

std::map<std::string, rt::Coo> declaredWorkspaceInputs(uint64_t seed) {
  return {{"B", randomSparse({19, 14}, 0.2, seed)},     {"C", randomSparse({14, 23}, 0.2, seed + 1)},
          {"D", randomSparse({19, 12}, 0.2, seed + 2)}, {"E", randomSparse({12, 23}, 0.2, seed + 3)},
          {"F", randomSparse({19, 23}, 0.15, seed + 4)}};
}

std::string declaredProgram(const std::string& out, const std::string& w, const std::string& rhs,
                            const std::string& schedule) {
  return replaced(replaced(replaced(replaced(kDeclared, "@OUT", out), "@W", w), "@RHS", rhs), "@SCHEDULE", schedule);
}

TEST(PrecomputeBesideAWorkspaceTensor, DenseRowInsertedIntoW) {
  std::map<std::string, rt::Coo> inputs = declaredWorkspaceInputs(9500);
  for (const char* out : {"csr", "csc", "dense"})
    for (const char* w : {"policy = bucket", "policy = hash, pipeline = on", "policy = coord"})
      for (const char* rhs : {"B(i, k) * C(k, j)", "B(i, k) * C(k, j) * 0.5 + F(i, j)"})
        for (const char* schedule :
             {"precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  precompute(B(i, k) * C(k, j), j, jw)",
              "precompute(B(i, k) * C(k, j), j, j)\n  precompute(B(i, k) * C(k, j), {i, j}, {iw, jw}, W)",
              "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  precompute(B(i, k) * C(k, j), j, jw)\n  "
              "sparse_workspace(policy = map)"}) {
          std::string program = declaredProgram(out, w, rhs, schedule);
          SCOPED_TRACE(program);
          if (std::string(out) == "dense" && contains(schedule, "sparse_workspace(")) continue;
          expectProgramMatchesReference(program, declaredInputs(program, inputs));
        }
  std::string program = declaredProgram("csr", "policy = bucket", "B(i, k) * C(k, j)",
                                        "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  "
                                        "precompute(B(i, k) * C(k, j), j, jw)");
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "producer: precompute B(i,k) * C(k,j) into dense workspace w_W(jw) inside the loops "
                                  "over i, among the loops that fill sparse workspace W"))
    << decisions;
  rt::Coo a = realMatrix("bcsstk01.mtx");
  expectProgramMatchesReference(program, {{"B", a}, {"C", a}});
}

TEST(PrecomputeBesideAWorkspaceTensor, PartsOfTheStatementThatReadsW) {
  std::map<std::string, rt::Coo> inputs = declaredWorkspaceInputs(9600);
  for (const char* out : {"csr", "dcsr", "dense"}) {
    // A dense workspace over the rest: W times the union of two rows.
    std::string program = declaredProgram(out, "policy = hash", "B(i, k) * C(k, j) * (F(i, j) + D(i, l) * E(l, j))",
                                          "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  "
                                          "precompute(F(i, j) + D(i, l) * E(l, j), j, jw)");
    SCOPED_TRACE(program);
    expectProgramMatchesReference(program, declaredInputs(program, inputs));
    // A second workspace tensor, one per term.
    for (const char* rhs : {"B(i, k) * C(k, j) + D(i, l) * E(l, j)", "B(i, k) * C(k, j) - 2 * (D(i, l) * E(l, j)) + F(i, j)"}) {
      program = declaredProgram(out, "policy = bucket", rhs,
                                "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  "
                                "precompute(D(i, l) * E(l, j), {i, j}, {i, j}, V)");
      SCOPED_TRACE(program);
      expectProgramMatchesReference(program, declaredInputs(program, inputs));
    }
  }
  rt::Coo a = realMatrix("bcsstk01.mtx");
  std::string program = declaredProgram("csr", "policy = hash", "B(i, k) * C(k, j) + D(i, l) * E(l, j)",
                                        "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  "
                                        "precompute(D(i, l) * E(l, j), {i, j}, {i, j}, V)");
  expectProgramMatchesReference(program, {{"B", a}, {"C", a}, {"D", a}, {"E", transposed(a)}});
}

TEST(PrecomputeBesideAWorkspaceTensor, AWorkspaceTensorInsideAnotherIsRefused) {
  // V filled inside the loops that fill W: refused at V's command.
  std::string message = errorOf(declaredProgram("csr", "policy = hash", "B(i, k) * C(k, j)",
                                                "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, W)\n  "
                                                "precompute(B(i, k) * C(k, j), {i, j}, {i, j}, V)"));
  EXPECT_TRUE(contains(message, "test.tc:12:3: error: precompute(B(i, k) * C(k, j), {i, j}, {i, j}, V): B(i,k) * "
                                "C(k,j) is not a part of W(i,j), the statement that reads workspace W"))
    << message;
}

}  // namespace
}  // namespace tcc::test
