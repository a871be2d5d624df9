// Terms that reduce over different variables into a dense output on the
// cpu target (`y(j) = A(i,j) * x(i) + B(j,k) * z(k)`, A CSR: no one loop
// order reads both terms' sparse inputs in storage order with j
// outermost): each term's loop nest adds into the output directly, one
// nest after another, no sparse workspace. Every kernel is compared with
// the dense reference on random and real inputs, and each case checks that
// it took the direct form (or, where a loop on threads sums, the workspace).
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "tcc/ir/index_printer.h"

namespace tcc::test {
namespace {

using Case = ProgramCase;

// The concrete index notation of the program's first statement.
// J = 29 columns of the matrices the terms scatter into, I = 23 rows.
std::map<std::string, rt::Coo> inputs(uint64_t seed) {
  return {{"A", randomSparse({23, 29}, 0.12, seed)},      {"x", randomDense({23}, seed + 1)},
          {"B", randomSparse({29, 17}, 0.15, seed + 2)},  {"z", randomDense({17}, seed + 3)},
          {"c", randomDense({29}, seed + 4)},             {"s", randomSparse({29}, 0.3, seed + 5)},
          {"v", randomSparse({23}, 0.3, seed + 6)},       {"w", randomSparse({17}, 0.3, seed + 7)},
          {"D", randomSparse({29, 11}, 0.2, seed + 8)},   {"C", randomDense({23, 11}, seed + 9)},
          {"E", randomSparse({17, 13}, 0.2, seed + 10)},  {"u", randomDense({13}, seed + 11)},
          {"G", randomSparse({29, 11}, 0.25, seed + 12)}, {"H", randomSparse({23, 29, 7}, 0.05, seed + 13)},
          {"m", randomDense({7}, seed + 14)}};
}

const char* kDeclarations =
    "tensor y(J) : @y\ntensor Y(J, L) : @y\ntensor A(I, J) : @A\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
    "tensor z(K) : dense\ntensor c(J) : dense\ntensor s(J) : sparse\ntensor v(I) : sparse\ntensor w(K) : sparse\n"
    "tensor D(J, L) : dcsr\ntensor C(I, L) : dense\ntensor E(K, M) : csr\ntensor u(M) : dense\n"
    "tensor G(J, L) : csc\ntensor H(I, J, N) : csf\ntensor m(N) : dense\n";

std::string program(const std::string& statement, const std::string& formatOfA, const std::string& formatOfY) {
  std::string text = std::string(kDeclarations) + statement + "\n";
  for (const auto& [key, value] : std::map<std::string, std::string>{{"@A", formatOfA}, {"@y", formatOfY}})
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

// The statements over A's format; float64 and float32 outputs.
std::vector<Case> cases() {
  const std::vector<std::pair<std::string, std::string>> statements = {
    {"two_terms", "y(j) = A(i, j) * x(i) + B(j, k) * z(k)"},
    {"difference", "y(j) = B(j, k) * z(k) - A(i, j) * x(i)"},
    {"three_terms", "y(j) = A(i, j) * x(i) - c(j) + 0.5 * B(j, k) * z(k)"},
    {"single_tensor_terms", "y(j) = A(i, j) * x(i) + c(j) - s(j)"},
    {"sparse_vectors", "y(j) = A(i, j) * v(i) + B(j, k) * w(k) - s(j)"},
    {"term_of_two_sums", "y(j) = A(i, j) * x(i) + sum(k, sum(n, B(j, k) * E(k, n) * u(n)))"},
    // (A sum below a term's top goes into a scalar temporary instead: the
    // statement never reaches the terms' nests, whatever the output.)
    {"nested_sum", "y(j) = A(i, j) * x(i) + B(j, k) * sum(n, E(k, n) * u(n))"},
    {"order_three_input", "y(j) = H(i, j, n) * m(n) - B(j, k) * z(k)"},
    {"matrix_output", "Y(j, l) = A(i, j) * C(i, l) - 2 * D(j, l) + G(j, l)"},
  };
  std::vector<Case> result;
  uint64_t seed = 8100;
  for (const auto& [label, statement] : statements)
    for (const char* a : {"csr", "dcsr", "coo"})
      for (const char* y : {"dense", "dense of float32"}) {
        if (std::string(y) != "dense" && std::string(a) != "csr") continue;
        std::string name = label + "_A_" + a + (std::string(y) == "dense" ? "" : "_float32");
        result.push_back({name, program(statement, a, y), inputs(seed += 20)});
      }
  return result;
}

class TermSumsIntoDenseOutput : public ::testing::TestWithParam<Case> {};

TEST_P(TermSumsIntoDenseOutput, AddsIntoTheOutputAndMatchesReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.program);
  const bool float32 = contains(c.program, "float32");
  expectProgramMatchesReference(c.program, declaredInputs(c.program, c.inputs), {}, float32 ? 1e-5 : 1e-10);
  EXPECT_FALSE(contains(concreteOf(c.program), "ws_y")) << concreteOf(c.program);
  if (!contains(c.name, "nested_sum"))
    EXPECT_EQ(concreteOf(c.program).rfind("sequence(", 0), 0u) << concreteOf(c.program);
}

INSTANTIATE_TEST_SUITE_P(Structures, TermSumsIntoDenseOutput, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

const std::string kTwoTerms = program("y(j) = A(i, j) * x(i) + B(j, k) * z(k)", "csr", "dense");

// Real matrices: A^T x + A z and A^T C - A D (B = A's transpose, stored by rows).
TEST(TermSumsIntoDenseOutputReal, RealMatrices) {
  for (const char* name : {"bcsstk01.mtx", "west0497.mtx", "ash219.mtx", "impcol_a.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo a = realMatrix(name);
    const int32_t rows = a.dims[0];
    std::map<std::string, rt::Coo> vectors = {{"A", a},
                                              {"B", transposed(a)},
                                              {"x", randomDense({rows}, 8801)},
                                              {"z", randomDense({rows}, 8802)},
                                              {"C", randomDense({rows, 5}, 8803)},
                                              {"D", randomDense({rows, 5}, 8804)}};
    std::string spmv = "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
                       "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n";
    std::string spmm = "tensor Y(J, L) : dense\ntensor A(I, J) : csr\ntensor C(I, L) : dense\ntensor B(J, K) : csr\n"
                       "tensor D(K, L) : dense\nY(j, l) = A(i, j) * C(i, l) - B(j, k) * D(k, l)\n";
    for (const auto& text : {spmv, spmm}) {
      expectProgramMatchesReference(text, declaredInputs(text, vectors));
      EXPECT_EQ(concreteOf(text).rfind("sequence(", 0), 0u) << concreteOf(text);
    }
  }
}

// Each entry gets its terms' additions in loop order, term after term: the
// order a workspace that never fills keeps too (same bits); the default
// workspace, whose capacity fills, adds a batch's sums to the earlier ones.
TEST(TermSumsIntoDenseOutputOrder, SameBitsAsAWorkspaceThatNeverFills) {
  rt::Coo a = realMatrix("west0497.mtx");
  const int32_t rows = a.dims[0];
  std::map<std::string, rt::Coo> coos = {{"A", a},
                                         {"B", transposed(a)},
                                         {"C", randomDense({rows, 8}, 8811)},
                                         {"D", randomDense({rows, 8}, 8812)}};
  std::string text = "tensor Y(J, L) : dense\ntensor A(I, J) : csr\ntensor C(I, L) : dense\ntensor B(J, K) : csr\n"
                     "tensor D(K, L) : dense\nY(j, l) = A(i, j) * C(i, l) - B(j, k) * D(k, l)\n";
  auto direct = outputsOf(text, coos);
  auto roomy = outputsOf(withSchedule(text, "sparse_workspace(policy = hash, capacity = 1000000)"), coos);
  expectSameBits(direct, roomy);
}

// Loops on threads over the output's index race on nothing: the direct
// form runs them; a parallel loop that sums keeps a workspace per thread,
// under any strategy, and explain says why.
TEST(TermSumsIntoDenseOutputParallel, ThreadsOverTheOutputsIndexAddDirectly) {
  for (const char* schedule : {"parallelize(j, CPUThread, NoRaces)", "parallelize(k, CPUVector, ParallelReduction)",
                               "parallelize(j, CPUThread, NoRaces)\nparallelize(k, CPUVector, ParallelReduction)"}) {
    std::string text = withSchedule(kTwoTerms, schedule);
    SCOPED_TRACE(text);
    std::string code = expectProgramMatchesReference(text, declaredInputs(text, inputs(8900)));
    EXPECT_EQ(concreteOf(text).rfind("sequence(", 0), 0u) << concreteOf(text);
    EXPECT_TRUE(contains(code, "#pragma omp")) << code;
  }
}

TEST(TermSumsIntoDenseOutputParallel, AParallelLoopThatSumsKeepsTheWorkspace) {
  for (const char* strategy : {"NoRaces", "Atomics", "Temporary"}) {
    std::string text = withSchedule(kTwoTerms, std::string("parallelize(i, CPUThread, ") + strategy + ")");
    SCOPED_TRACE(text);
    expectProgramMatchesReference(text, declaredInputs(text, inputs(8910)));
    EXPECT_TRUE(contains(concreteOf(text), "ws_y")) << concreteOf(text);
    std::string decisions = decisionsOf(text);
    EXPECT_TRUE(contains(decisions, "not taken: each term adding into y directly (the loop over i runs on threads "
                                    "and sums into y's entries, so its iterations would race")) << decisions;
    EXPECT_TRUE(contains(decisions, "inserted sparse workspace ws_y")) << decisions;
    EXPECT_FALSE(contains(decisions, "each term adds into y")) << decisions;
  }
}

// What explain says is what the kernel does.
TEST(TermSumsIntoDenseOutputExplain, SaysEachTermAddsIntoTheOutput) {
  std::string decisions = decisionsOf(kTwoTerms);
  EXPECT_TRUE(contains(decisions, "each term adds into y (dense, zeroed once before the first nest) in a loop nest of "
                                  "its own, one nest after another (A(i,j) * x(i) over loops i, j; B(j,k) * z(k) over "
                                  "loops j, k)")) << decisions;
  EXPECT_TRUE(contains(decisions, "not taken: a sparse workspace of y's entries")) << decisions;
  EXPECT_FALSE(contains(decisions, "inserted sparse workspace")) << decisions;
  EXPECT_FALSE(contains(decisions, "kernel each")) << decisions;
}

// sparse_workspace(...) still asks for the workspace; a sparse output keeps it.
TEST(TermSumsIntoDenseOutputExplain, AWorkspaceAskedForOrASparseOutputKeepsIt) {
  std::string asked = withSchedule(kTwoTerms, "sparse_workspace(policy = bucket)");
  EXPECT_TRUE(contains(decisionsOf(asked), "inserted sparse workspace ws_y")) << decisionsOf(asked);
  expectProgramMatchesReference(asked, declaredInputs(asked, inputs(8920)));
  std::string sparse = "tensor y(J) : sparse\ntensor A(I, J) : csr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
                       "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n";
  EXPECT_TRUE(contains(decisionsOf(sparse), "inserted sparse workspace ws_y")) << decisionsOf(sparse);
  expectProgramMatchesReference(sparse, declaredInputs(sparse, inputs(8930)));
}

// (A precompute among a term's loops: precompute_in_term_sums_test.cpp.)

}  // namespace
}  // namespace tcc::test
