// Statements whose results scatter out of the output's storage order,
// compiled through sparse (ISM) workspaces inserted automatically or asked
// for with sparse_workspace(...), against the dense reference.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {



// ---- outer-product SpGEMM: loops k, i, j ----------------------------------------

const char* kOuterProduct = R"(
tensor A(I, J) : OUT
tensor B(I, K) : dcsc
tensor C(K, J) : dcsr
A(i, j) = B(i, k) * C(k, j)
)";

class OuterProduct : public ::testing::TestWithParam<std::string> {};

TEST_P(OuterProduct, RandomInputsMatchReference) {
  std::string program = replaced(kOuterProduct, "OUT", GetParam());
  expectProgramMatchesReference(program, {{"B", randomSparse({41, 29}, 0.08, 1)}, {"C", randomSparse({29, 37}, 0.08, 2)}});
  // A dense output takes results in any order: no workspace.
  bool sparseOutput = GetParam() != "dense";
  EXPECT_EQ(contains(decisionsOf(program), "sparse scattering of order 2"), sparseOutput) << decisionsOf(program);
}
INSTANTIATE_TEST_SUITE_P(OutputFormats, OuterProduct, ::testing::Values("csr", "csc", "dcsr", "dcsc", "coo", "csf", "dense"));

TEST(OuterProduct, RealMatrices) {
  for (const char* name : {"bcsstk01.mtx", "west0497.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo a = realMatrix(name);
    expectProgramMatchesReference(replaced(kOuterProduct, "OUT", "csr"), {{"B", a}, {"C", a}});
  }
}

// ---- transposed outputs ---------------------------------------------------------

const char* kTransposedProduct = R"(
tensor A(J, I) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
A(j, i) = B(i, k) * C(k, j)
)";

TEST(TransposedProduct, Unscheduled) {
  expectProgramMatchesReference(kTransposedProduct,
                                {{"B", randomSparse({23, 31}, 0.1, 3)}, {"C", randomSparse({31, 19}, 0.1, 4)}});
}

// The paper's Figure 11 schedule: reorder, fuse, pos, split, reorder.
TEST(TransposedProduct, UnderThePapersSchedule) {
  std::string program = withSchedule(kTransposedProduct,
                                     "reorder(i, k, j)\n  fuse(i, k, f)\n  pos(f, fpos, B(i, k))\n"
                                     "  split(fpos, f0, f1, 4)\n  reorder(f0, f1, j)");
  expectProgramMatchesReference(program, {{"B", randomSparse({23, 31}, 0.1, 5)}, {"C", randomSparse({31, 19}, 0.1, 6)}});
  rt::Coo a = realMatrix("bcsstk01.mtx");
  expectProgramMatchesReference(program, {{"B", a}, {"C", a}});
}

TEST(TransposedCopy, CsrIntoCsr) {
  const char* program = R"(
tensor A(J, I) : csr
tensor B(I, J) : csr
A(j, i) = B(i, j)
)";
  expectProgramMatchesReference(program, {{"B", randomSparse({17, 43}, 0.1, 7)}});
  expectProgramMatchesReference(program, {{"B", realMatrix("west0497.mtx")}});
}

// Sums of scattered terms: each term inserts its own components, which the
// workspace adds where coordinates repeat.
TEST(ScatteredSums, RepeatedCoordinates) {
  const char* program = R"(
tensor A(J, I) : csr
tensor B(I, J) : csr
tensor C(I, J) : csr
A(j, i) = B(i, j) + 2 * C(i, j) - B(i, j) * C(i, j)
)";
  rt::Coo b = randomSparse({29, 23}, 0.15, 8);
  expectProgramMatchesReference(program, {{"B", b}, {"C", randomSparse({29, 23}, 0.15, 9)}});
  expectProgramMatchesReference(program, {{"B", b}, {"C", b}});  // every coordinate twice
}

// ---- tensor kernels -------------------------------------------------------------

TEST(TensorKernels, SpMttkrpInLoopOrderKLIJ) {
  const char* program = R"(
tensor A(I, J) : OUT
tensor B(K, L, I) : csf
tensor C(K, J) : dense
tensor D(L, J) : dense
A(i, j) = B(k, l, i) * C(k, j) * D(l, j)
)";
  for (const char* out : {"csr", "dcsr", "coo"}) {
    SCOPED_TRACE(out);
    expectProgramMatchesReference(replaced(program, "OUT", out), {{"B", randomSparse({7, 9, 11}, 0.08, 10)},
                                                                  {"C", randomDense({7, 5}, 11)},
                                                                  {"D", randomDense({9, 5}, 12)}});
  }
}

TEST(TensorKernels, SpTtmIntoCoo) {
  const char* program = R"(
tensor A(I, J, L) : coo
tensor B(K, I, J) : csf
tensor C(K, L) : csr
A(i, j, l) = B(k, i, j) * C(k, l)
)";
  expectProgramMatchesReference(program, {{"B", randomSparse({6, 8, 7}, 0.1, 13)}, {"C", randomSparse({6, 9}, 0.3, 14)}});
}

TEST(TensorKernels, SpTtmIIntoCsf) {
  const char* program = R"(
tensor A(K, J, L) : csf
tensor B(K, I, J) : csf
tensor C(I, L) : csr
A(k, j, l) = B(k, i, j) * C(i, l)
)";
  expectProgramMatchesReference(program, {{"B", randomSparse({6, 8, 7}, 0.1, 15)}, {"C", randomSparse({8, 9}, 0.3, 16)}});
}

// ---- inputs whose storage orders disagree ----------------------------------------

TEST(DisagreeingInputs, ConvertedAndRight) {
  struct Case {
    const char* program;
    const char* converted;
  };
  for (const Case& c : {
         Case{"tensor C(I, J) : csr\ntensor A(I, J) : dcsc\ntensor B(I, J) : csr\nC(i, j) = A(i, j) * B(i, j)\n", "A(i,j)"},
         Case{"tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(J, I) : csr\nC(i, j) = A(i, j) + B(j, i)\n", "B(j,i)"},
         Case{"tensor C(I, J) : dense\ntensor A(I, J) : csc\ntensor B(I, J) : dcsr\nC(i, j) = A(i, j) - B(i, j)\n",
              "B(i,j)"},
         Case{"tensor C(I, I) : csr\ntensor A(I, I) : csr\nC(i, j) = A(i, j) * A(j, i)\n", "A(j,i)"},
       }) {
    SCOPED_TRACE(c.program);
    std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({23, 23}, 0.2, 21)}, {"B", randomSparse({23, 23}, 0.2, 22)}};
    if (!contains(c.program, "tensor B")) inputs.erase("B");
    expectProgramMatchesReference(c.program, inputs);
    EXPECT_TRUE(contains(decisionsOf(c.program), std::string(c.converted) + " is read from a copy")) << decisionsOf(c.program);
  }
  rt::Coo real = realMatrix("west0497.mtx");
  expectProgramMatchesReference("tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(J, I) : csr\n"
                                "C(i, j) = A(i, j) + B(j, i)\n",
                                {{"A", real}, {"B", real}});
}

// ---- manual control: every policy, pipelining and double buffering ---------------

TEST(SparseWorkspaceCommand, EveryPolicyAndOption) {
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({53, 47}, 0.06, 17)}, {"C", randomSparse({47, 59}, 0.06, 18)}};
  for (const char* policy : {"bucket", "hash", "coord", "map", "vector"})
    for (const char* pipeline : {"on", "off"})
      for (const char* doubleBuffer : {"on", "off"}) {
        std::string command = std::string("sparse_workspace(policy = ") + policy + ", pipeline = " + pipeline +
                              ", double_buffer = " + doubleBuffer + ", capacity = 16)";
        SCOPED_TRACE(command);
        std::string program = withSchedule(replaced(kOuterProduct, "OUT", "csr"), command);
        expectProgramMatchesReference(program, inputs);
        EXPECT_TRUE(contains(decisionsOf(program), std::string("policy ") + policy + ": as the schedule asks"));
      }
}

// Asked for on a statement that appends in order: the workspace is used anyway.
TEST(SparseWorkspaceCommand, OnAnAppendingStatement) {
  std::string program = withSchedule("tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
                                     "A(i, j) = B(i, j) + C(i, j)\n",
                                     "sparse_workspace(i, policy = coord)");
  expectProgramMatchesReference(program, {{"B", randomSparse({19, 23}, 0.2, 19)}, {"C", randomSparse({19, 23}, 0.2, 20)}});
}

TEST(SparseWorkspaceCommand, BadInputIsLocated) {
  std::string program = replaced(kOuterProduct, "OUT", "csr");
  std::string message = errorOf(withSchedule(program, "sparse_workspace(policy = heap)"));
  EXPECT_TRUE(contains(message, "test.tc:")) << message;
  EXPECT_TRUE(contains(message, "heap")) << message;
  message = errorOf(withSchedule(program, "sparse_workspace(capacity = 0)"));
  EXPECT_TRUE(contains(message, "positive")) << message;
  EXPECT_TRUE(contains(message, "test.tc:")) << message;
  // Outer product: the outermost loop is k, so i cannot be hoisted out of the workspace.
  message = errorOf(withSchedule(program, "sparse_workspace(j)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1")) << message;
  EXPECT_TRUE(contains(message, "hoisting i out of the workspace needs the outermost loops")) << message;
  message = errorOf(withSchedule(program, "sparse_workspace(k)"));
  EXPECT_TRUE(contains(message, "test.tc:")) << message;
}

// Thread loops fill one workspace per thread (tested at several thread
// counts in test/e2e); vector lanes cannot share the insert calls.
TEST(SparseWorkspaceCommand, ParallelProducersMatchReferenceAndVectorLanesAreRefused) {
  // B by columns and C by rows with a dense k level each: one counted loop over k.
  std::string program = replaced(replaced(replaced(kOuterProduct, "OUT", "csr"), "dcsc", "csc"), "dcsr", "csr");
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({61, 43}, 0.05, 23)}, {"C", randomSparse({43, 57}, 0.05, 24)}};
  for (const char* policy : {"bucket", "hash", "coord"}) {
    std::string command = std::string("parallelize(k, CPUThread, NoRaces)\n  sparse_workspace(policy = ") + policy + ")";
    SCOPED_TRACE(command);
    expectProgramMatchesReference(withSchedule(program, command), inputs);
  }
  std::string message = errorOf(withSchedule(program, "parallelize(j, CPUVector, NoRaces)"));
  EXPECT_TRUE(contains(message, "vector lanes cannot share")) << message;
}

// parallelize(..., Workspace): the racing results go through one sparse
// workspace per thread, whatever the output's format.
TEST(WorkspaceRaceStrategy, RacingUpdatesThroughPerThreadWorkspaces) {
  const char* transposedSpmv = "tensor y(J) : OUT\ntensor A(I, J) : csr\ntensor x(I) : dense\ny(j) = A(i, j) * x(i)\n";
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({83, 61}, 0.1, 25)}, {"x", randomDense({83}, 26)}};
  for (const char* out : {"dense", "sparse"}) {
    std::string program = withSchedule(replaced(transposedSpmv, "OUT", out), "parallelize(i, CPUThread, Workspace)");
    SCOPED_TRACE(program);
    expectProgramMatchesReference(program, inputs);
    EXPECT_TRUE(contains(decisionsOf(program), "one per thread of the loop over i")) << decisionsOf(program);
  }
  // A scalar has no coordinates to scatter; the GPU has no sparse workspaces.
  EXPECT_TRUE(contains(errorOf(withSchedule("tensor a : dense\ntensor A(I, J) : csr\na = A(i, j)\n",
                                            "parallelize(i, CPUThread, Workspace)")),
                       "ParallelReduction"));
  std::string message = errorOf(withSchedule(replaced(kOuterProduct, "OUT", "csr"),
                                             "precompute(B(i, k) * C(k, j), j, jw)\n  parallelize(k, CPUThread, Workspace)"));
  // (A precompute goes among the loops that fill the workspaces, where B*C
  // summed over k into a row over j needs i outside k.)
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: precompute(B(i, k) * C(k, j), j, jw): the precomputed expression "
                                "depends on i")) << message;
}

// ---- common-iteration hoisting (§6.2) --------------------------------------------

const char* kRowWise = R"(
tensor A(I, J) : OUT
tensor B(I, K) : csr
tensor C(K, J) : csr
A(i, j) = B(i, k) * C(k, j)
)";

// Row-wise SpGEMM: the dense first-order workspace by default (its
// conditions hold: k is summed and only j follows it); sparse_workspace(j)
// asks for a sparse first-order workspace per row, drained after each row,
// with every policy and option.
TEST(HoistedCommonIteration, RowWiseSpgemmDenseByDefaultSparseOnRequest) {
  std::string plain = replaced(kRowWise, "OUT", "csr");
  std::string decisions = decisionsOf(plain);
  EXPECT_TRUE(contains(decisions, "dense workspace optimization (§6.2): the loop order sums over k and only j follows "
                                  "it, under the hoisted common iteration over i"))
    << decisions;
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({47, 31}, 0.08, 40)}, {"C", randomSparse({31, 53}, 0.08, 41)}};
  for (const char* out : {"csr", "dcsr"})
    for (const char* policy : {"bucket", "hash", "coord", "map", "vector"})
      for (const char* options : {"", ", pipeline = on, capacity = 2", ", double_buffer = on, capacity = 3"}) {
        std::string program = withSchedule(replaced(kRowWise, "OUT", out),
                                           std::string("sparse_workspace(j, policy = ") + policy + options + ")");
        SCOPED_TRACE(program);
        expectProgramMatchesReference(program, inputs);
        std::string explained = decisionsOf(program);
        EXPECT_TRUE(contains(explained, "hoisted common iteration: the outermost loops i iterate A's first level"))
          << explained;
        EXPECT_TRUE(contains(explained, "inserted sparse workspace ws_A of order 1 over j")) << explained;
        EXPECT_TRUE(contains(explained, "drained after each iteration of i")) << explained;
      }
  // sparse_workspace(i) keeps a workspace over all of A.
  std::string whole = withSchedule(replaced(kRowWise, "OUT", "csr"), "sparse_workspace(i)");
  expectProgramMatchesReference(whole, inputs);
  EXPECT_TRUE(contains(decisionsOf(whole), "inserted sparse workspace ws_A of order 2")) << decisionsOf(whole);
}

// Under pos and split of the summed loop, and on a statement that appends
// in order (a first-order workspace per row anyway).
TEST(HoistedCommonIteration, UnderOtherCommandsAndOnAppendingStatements) {
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({43, 37}, 0.1, 48)}, {"C", randomSparse({37, 29}, 0.1, 49)}};
  std::string program = withSchedule(replaced(kRowWise, "OUT", "dcsr"),
                                     "pos(k, kp, B(i, k))\n  split(kp, k0, k1, 4)\n  sparse_workspace(j, policy = bucket)");
  expectProgramMatchesReference(program, inputs);
  EXPECT_TRUE(contains(decisionsOf(program), "A's level over i takes its coordinates in order")) << decisionsOf(program);
  std::string add = withSchedule("tensor A(I, J) : dcsr\ntensor B(I, J) : csr\ntensor C(I, J) : dcsr\n"
                                 "A(i, j) = B(i, j) - C(i, j)\n",
                                 "sparse_workspace(j, policy = map)");
  expectProgramMatchesReference(add, {{"B", randomSparse({31, 23}, 0.2, 50)}, {"C", randomSparse({31, 23}, 0.2, 51)}});
  EXPECT_TRUE(contains(decisionsOf(add), "inserted sparse workspace ws_A of order 1 over j")) << decisionsOf(add);
}

TEST(HoistedCommonIteration, RowWiseSpgemmOnRealMatrices) {
  for (const char* name : {"bcsstk01.mtx", "west0497.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo a = realMatrix(name);
    for (const char* out : {"csr", "dcsr"}) {
      if (a.dims[0] > 100 && std::string(out) == "dcsr") continue;  // the dense reference is cubic
      expectProgramMatchesReference(withSchedule(replaced(kRowWise, "OUT", out), "sparse_workspace(j)"),
                                    {{"B", a}, {"C", a}});
    }
  }
}

// A third-order output with a sum above two of its levels: no dense
// workspace fits, so the loop over i is hoisted and a second-order sparse
// workspace over (j, l) holds one slice at a time, automatically.
TEST(HoistedCommonIteration, SecondOrderWorkspacePerSliceAutomatically) {
  const char* program = R"(
tensor A(I, J, L) : OUT
tensor B(I, K, J) : csf
tensor C(K, L) : csr
A(i, j, l) = B(i, k, j) * C(k, l)
)";
  for (const char* out : {"csf", "{dense, compressed, compressed}", "{dense, dense, compressed}"}) {
    std::string text = replaced(program, "OUT", out);
    SCOPED_TRACE(text);
    expectProgramMatchesReference(text, {{"B", randomSparse({9, 7, 11}, 0.1, 42)}, {"C", randomSparse({7, 13}, 0.25, 43)}});
    std::string decisions = decisionsOf(text);
    EXPECT_TRUE(contains(decisions, "sparse scattering of order 2")) << decisions;
    EXPECT_TRUE(contains(decisions, "hoisted common iteration: the outermost loops i")) << decisions;
    EXPECT_TRUE(contains(decisions, "inserted sparse workspace ws_A of order 2 over j, l")) << decisions;
  }
  // COO cannot be appended in the loops' order: the workspace holds all of A.
  std::string coo = replaced(program, "OUT", "coo");
  expectProgramMatchesReference(coo, {{"B", randomSparse({9, 7, 11}, 0.1, 44)}, {"C", randomSparse({7, 13}, 0.25, 45)}});
  std::string decisions = decisionsOf(coo);
  EXPECT_TRUE(contains(decisions, "inserted sparse workspace ws_A of order 3")) << decisions;
  EXPECT_TRUE(contains(decisions, "hoisting common loops (A's levels to be dense or unique compressed")) << decisions;
  // Asked for, it is refused with the reason and the place.
  std::string message = errorOf(withSchedule(coo, "sparse_workspace(j)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1")) << message;
  EXPECT_TRUE(contains(message, "dense or unique compressed")) << message;
}

// A thread loop over the rows of a CSR output: each thread drains a
// first-order workspace of its own, and the rows are assembled in parallel
// (count, prefix sum, fill).
TEST(HoistedCommonIteration, RowsOnThreadsEachDrainTheirOwnWorkspace) {
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({67, 31}, 0.08, 52)}, {"C", randomSparse({31, 53}, 0.08, 53)}};
  for (const char* policy : {"bucket", "hash", "coord", "map", "vector"}) {
    std::string program = withSchedule(replaced(kRowWise, "OUT", "csr"),
                                       std::string("parallelize(i, CPUThread, NoRaces)\n  sparse_workspace(j, policy = ") +
                                         policy + ", pipeline = on)");
    SCOPED_TRACE(program);
    expectProgramMatchesReference(program, inputs);
    std::string decisions = decisionsOf(program);
    EXPECT_TRUE(contains(decisions, "one per thread of the loop over i, whose rows of A are assembled in parallel"))
      << decisions;
    EXPECT_TRUE(contains(decisions, "drained after each iteration of i")) << decisions;
  }
  rt::Coo real = realMatrix("bcsstk01.mtx");
  expectProgramMatchesReference(withSchedule(replaced(kRowWise, "OUT", "csr"),
                                             "parallelize(i, CPUThread, NoRaces)\n  sparse_workspace(j)"),
                                {{"B", real}, {"C", real}});
  // A DCSR output is not assembled by rows on threads: asked for, hoisting is refused with the reason.
  std::string message = errorOf(withSchedule(replaced(kRowWise, "OUT", "dcsr"),
                                             "parallelize(i, CPUThread, NoRaces)\n  sparse_workspace(j)"));
  EXPECT_TRUE(contains(message, "test.tc:8:3")) << message;
  EXPECT_TRUE(contains(message, "the rows of a {dense, compressed} output")) << message;
}

// Other thread loops fill one whole-output workspace per thread instead.
TEST(HoistedCommonIteration, ThreadLoopsKeepWholeWorkspaces) {
  std::string program = withSchedule(replaced(kRowWise, "OUT", "dcsr"),
                                     "parallelize(i, CPUThread, NoRaces)\n  sparse_workspace(policy = hash)");
  expectProgramMatchesReference(program, {{"B", randomSparse({47, 31}, 0.08, 46)}, {"C", randomSparse({31, 53}, 0.08, 47)}});
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "inserted sparse workspace ws_A of order 2")) << decisions;
  EXPECT_TRUE(contains(decisions, "one per thread")) << decisions;
}

}  // namespace
}  // namespace tcc::test
