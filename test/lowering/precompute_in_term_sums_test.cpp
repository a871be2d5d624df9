// Precomputes in a statement whose terms reduce over different variables
// and each add into a dense output in a loop nest of their own (`y(j) =
// A(i,j) * x(i) + B(j,k) * z(k)`, A CSR: no one loop order reads both
// terms' sparse inputs in storage order). A precompute of a part of one
// term goes among that term's loops, and the workspace's copy adds into
// the output, which holds the other terms' sums already; dense_workspace
// (a precompute of the whole right-hand side) gives each term that loops
// over its index a dense workspace of its own; a part spanning terms is
// refused at its command. Every kernel is compared with the dense
// reference on random and real inputs.
#include <gtest/gtest.h>

#include <array>

#include "kernel_check.h"
#include "tcc/ir/index_printer.h"

namespace tcc::test {
namespace {

// I = 23 rows of A, J = 29 columns (the output's index), K = 17, L = 11.
std::map<std::string, rt::Coo> inputs(uint64_t seed) {
  return {{"A", randomSparse({23, 29}, 0.12, seed)},      {"x", randomDense({23}, seed + 1)},
          {"B", randomSparse({29, 17}, 0.15, seed + 2)},  {"z", randomDense({17}, seed + 3)},
          {"c", randomDense({29}, seed + 4)},             {"s", randomSparse({29}, 0.3, seed + 5)},
          {"v", randomSparse({23}, 0.3, seed + 6)},       {"w", randomSparse({17}, 0.3, seed + 7)},
          {"C", randomDense({23, 11}, seed + 8)},         {"F", randomSparse({17, 11}, 0.3, seed + 9)},
          {"H", randomSparse({23, 29, 7}, 0.05, seed + 10)}, {"m", randomDense({7}, seed + 11)}};
}

const char* kDeclarations =
    "tensor y(J) : @y\ntensor Y(J, L) : @y\ntensor A(I, J) : @A\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
    "tensor z(K) : dense\ntensor c(J) : dense\ntensor s(J) : sparse\ntensor v(I) : sparse\ntensor w(K) : sparse\n"
    "tensor C(I, L) : dense\ntensor F(K, L) : @F\ntensor H(I, J, N) : csf\ntensor m(N) : dense\n";

std::string program(const std::string& statement, const std::string& schedule, const std::string& formatOfA = "csr",
                     const std::string& formatOfY = "dense", const std::string& formatOfF = "csr") {
  std::string text = replaced(replaced(replaced(kDeclarations, "@A", formatOfA), "@y", formatOfY), "@F", formatOfF);
  return withSchedule(text + statement + "\n", schedule);
}

struct Case : ProgramCase {
  std::string concrete;  // a part of the concrete index notation the schedule gives
};

// Statements and schedules: 2 and 3 terms; the precomputed part in the
// first, a later or a negated term; dense and sparse inputs; vector and
// matrix outputs; each over A's formats, one in float32.
std::vector<Case> cases() {
  const std::string twoTerms = "y(j) = A(i, j) * x(i) + B(j, k) * z(k)";
  const std::string threeTerms = "y(j) = A(i, j) * x(i) - c(j) + 0.5 * (B(j, k) * z(k))";
  const std::vector<std::array<std::string, 4>> list = {
    {"later_term_row", twoTerms, "precompute(B(j, k) * z(k), j, jw)",
     "where(forall(j, y(j) += w_y(j)), forall(jw, forall(k, w_y(jw) += B(jw,k) * z(k))))"},
    {"first_term_row", twoTerms, "precompute(A(i, j) * x(i), j, jw)",
     "where(forall(j, y(j) += w_y(j)), forall(i, forall(jw, w_y(jw) += A(i,jw) * x(i))))"},
    {"later_term_inside_its_row", twoTerms, "precompute(B(j, k) * z(k), k, kw)",
     "forall(j, where(forall(k, y(j) += w_y(k)), forall(kw, w_y(kw) = B(j,kw) * z(kw))))"},
    {"first_term_factor", twoTerms, "precompute(x(i), i, iw)", "where(forall(i, forall(j, y(j) += A(i,j) * w_y(i)))"},
    {"later_term_factor", twoTerms, "precompute(z(k), k, kw)", "forall(j, where(forall(k, y(j) += B(j,k) * w_y(k))"},
    {"two_precomputes", twoTerms, "precompute(A(i, j) * x(i), j, jw)\nprecompute(z(k), k, kw)", "w_y_2"},
    {"dense_workspace", twoTerms, "dense_workspace()", "where(forall(j, y(j) += w_y_2(j))"},
    {"dense_workspace_j", twoTerms, "dense_workspace(j)", "where(forall(j, y(j) += w_y(j))"},
    {"dense_workspace_then_a_part", twoTerms, "dense_workspace(j)\nprecompute(z(k), k, kw)", "w_y_3(kw) = z(kw)"},
    {"dense_workspace_k", twoTerms, "dense_workspace(k)",
     "sequence(forall(i, forall(j, y(j) += A(i,j) * x(i))), forall(j, where(forall(k, y(j) += w_y(k))"},
    {"split_then_precomputed", twoTerms, "split(i, i0, i1, 8)\nprecompute(B(j, k) * z(k), j, jw)",
     "forall(i0, forall(i1, forall(j, y(j) += A(i,j) * x(i))))"},
    {"negated_term", "y(j) = B(j, k) * z(k) - A(i, j) * x(i)", "precompute(A(i, j) * x(i), j, jw)",
     "where(forall(j, y(j) += -w_y(j))"},
    {"negated_dense_workspace", "y(j) = B(j, k) * z(k) - A(i, j) * x(i)", "dense_workspace(j)", "-(A(i,j) * x(i))"},
    {"third_term", threeTerms, "precompute(B(j, k) * z(k), j, jw)", "y(j) += 0.5 * w_y(j)"},
    {"three_terms_dense_workspace", threeTerms, "dense_workspace()", "w_y_3"},
    {"sparse_vectors", "y(j) = A(i, j) * v(i) + B(j, k) * w(k) - s(j)", "precompute(B(j, k) * w(k), j, jw)",
     "y(j) += w_y(j)"},
    {"sparse_vectors_dense_workspace", "y(j) = A(i, j) * v(i) + B(j, k) * w(k) - s(j)", "dense_workspace(j)",
     "w_y_3"},
    {"order_three_input", "y(j) = H(i, j, n) * m(n) - B(j, k) * z(k)", "precompute(H(i, j, n) * m(n), j, jw)",
     "w_y(jw) += H(i,jw,n) * m(n)"},
    {"matrix_output_later_row", "Y(j, l) = A(i, j) * C(i, l) - B(j, k) * F(k, l)",
     "precompute(B(j, k) * F(k, l), l, lw)", "forall(j, where(forall(l, Y(j,l) += -w_Y(l))"},
    {"matrix_output_first_row", "Y(j, l) = B(j, k) * F(k, l) + A(i, j) * C(i, l)",
     "precompute(B(j, k) * F(k, l), l, lw)", "forall(j, where(forall(l, Y(j,l) += w_Y(l))"},
    // Terms not indexed by the workspace's index (a literal; a term that
    // loops over l as an index of Y only) add into the output as they are
    // (they had workspaces of their own that nothing sized: "cannot size
    // workspace w_y_3", located at the statement).
    {"constant_term_as_it_is", "y(j) = A(i, j) * x(i) + B(j, k) * z(k) + 2", "dense_workspace(j)",
     "forall(j, y(j) += 2)"},
    {"sparse_vectors_constant_term", "y(j) = A(i, j) * v(i) + B(j, k) * w(k) - 3", "dense_workspace()",
     "forall(j, y(j) += -3)"},
    {"matrix_output_term_not_indexed_by_l", "Y(j, l) = B(j, k) * F(k, l) + A(i, j) * x(i)", "dense_workspace(l)",
     "forall(i, forall(j, forall(l, Y(j,l) += A(i,j) * x(i))))"},
  };
  std::vector<Case> result;
  uint64_t seed = 9700;
  for (const auto& [label, statement, schedule, concrete] : list)
    for (const char* a : {"csr", "dcsr", "coo"}) {
      std::string name = label + "_A_" + a;
      result.push_back({{name, program(statement, schedule, a), inputs(seed += 20)}, concrete});
    }
  result.push_back({{"later_term_row_float32", program(twoTerms, "precompute(B(j, k) * z(k), j, jw)", "csr",
                                                      "dense of float32"), inputs(seed += 20)},
                    "y(j) += w_y(j)"});
  result.push_back({{"matrix_output_dense_F", program("Y(j, l) = A(i, j) * C(i, l) - B(j, k) * F(k, l)",
                                                     "precompute(B(j, k) * F(k, l), l, lw)", "csr", "dense", "dense"),
                     inputs(seed += 20)},
                    "Y(j,l) += -w_Y(l)"});
  return result;
}

class PrecomputeInTermSums : public ::testing::TestWithParam<Case> {};

TEST_P(PrecomputeInTermSums, MatchesReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.program);
  const bool float32 = contains(c.program, "float32");
  expectProgramMatchesReference(c.program, declaredInputs(c.program, c.inputs), {}, float32 ? 1e-5 : 1e-10);
  const std::string concrete = concreteOf(c.program);
  // Each term still adds into y in a nest of its own, no sparse workspace.
  EXPECT_TRUE(concrete.rfind("sequence(", 0) == 0 || concrete.rfind("suchthat(sequence(", 0) == 0) << concrete;
  EXPECT_FALSE(contains(concrete, "ws_")) << concrete;
  EXPECT_TRUE(contains(concrete, c.concrete)) << concrete;
}

INSTANTIATE_TEST_SUITE_P(Structures, PrecomputeInTermSums, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Real matrices: A^T x + A z and A^T C - A D (B = A's transpose, stored by
// rows), a row of one term's product precomputed.
TEST(PrecomputeInTermSumsReal, RealMatrices) {
  for (const char* name : {"bcsstk01.mtx", "west0497.mtx", "ash219.mtx", "impcol_a.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo a = realMatrix(name);
    const int32_t rows = a.dims[0];
    std::map<std::string, rt::Coo> coos = {{"A", a},
                                           {"B", transposed(a)},
                                           {"x", randomDense({rows}, 9901)},
                                           {"z", randomDense({rows}, 9902)},
                                           {"C", randomDense({rows, 5}, 9903)},
                                           {"F", randomDense({rows, 5}, 9904)}};
    std::string spmv = "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
                       "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n";
    std::string spmm = "tensor Y(J, L) : dense\ntensor A(I, J) : csr\ntensor C(I, L) : dense\ntensor B(J, K) : csr\n"
                       "tensor F(K, L) : dense\nY(j, l) = A(i, j) * C(i, l) - B(j, k) * F(k, l)\n";
    for (const auto& text : {withSchedule(spmv, "precompute(B(j, k) * z(k), j, jw)"),
                             withSchedule(spmv, "precompute(A(i, j) * x(i), j, jw)"),
                             withSchedule(spmv, "dense_workspace()"),
                             withSchedule(spmm, "precompute(B(j, k) * F(k, l), l, lw)")}) {
      SCOPED_TRACE(text);
      expectProgramMatchesReference(text, declaredInputs(text, coos));
      EXPECT_EQ(concreteOf(text).rfind("sequence(", 0), 0u) << concreteOf(text);
    }
  }
}

// A loop on threads over the output's index: each thread fills a workspace
// of its own. A loop on threads that sums takes the sparse workspace (each
// thread's own), the precompute among the loops that fill it.
TEST(PrecomputeInTermSumsParallel, OnThreads) {
  const std::string twoTerms = "y(j) = A(i, j) * x(i) + B(j, k) * z(k)";
  for (const char* schedule : {"parallelize(j, CPUThread, NoRaces)\nprecompute(B(j, k) * z(k), k, kw)",
                               "parallelize(j, CPUThread, NoRaces)\nprecompute(z(k), k, kw)"}) {
    std::string text = program(twoTerms, schedule);
    SCOPED_TRACE(text);
    std::string code = expectProgramMatchesReference(text, declaredInputs(text, inputs(9990)));
    EXPECT_TRUE(contains(code, "#pragma omp")) << code;
    EXPECT_EQ(concreteOf(text).rfind("sequence(", 0), 0u) << concreteOf(text);
  }
  std::string summing = program(twoTerms, "parallelize(i, CPUThread, NoRaces)\nprecompute(B(j, k) * z(k), k, kw)");
  SCOPED_TRACE(summing);
  expectProgramMatchesReference(summing, declaredInputs(summing, inputs(9995)));
  EXPECT_TRUE(contains(concreteOf(summing), "ws_y")) << concreteOf(summing);
}

// What explain says is what the kernel does.
TEST(PrecomputeInTermSumsExplain, SaysWhereEachWorkspaceGoes) {
  std::string decisions = decisionsOf(program("y(j) = A(i, j) * x(i) + B(j, k) * z(k) - c(j)", "dense_workspace(k)"));
  EXPECT_TRUE(contains(decisions, "dense_workspace(k): the statement's terms add into y (dense) by loops of their own, "
                                  "so each term over k goes into a dense workspace of its own (B(j,k) * z(k)); the "
                                  "terms not indexed by k add into y as they are, which a loop over k then adds "
                                  "into y")) << decisions;
  decisions = decisionsOf(program("y(j) = A(i, j) * x(i) + B(j, k) * z(k)", "dense_workspace()"));
  // (The terms' workspaces in the statement's order.)
  EXPECT_TRUE(contains(decisions, "precompute A(i,j) * x(i) into dense workspace w_y(j) inside the loops over nothing\n"
                                  "precompute B(j,k) * z(k) into dense workspace w_y_2(j)"))
    << decisions;
}

// What stays wrong is refused at its command, with the reason.
TEST(PrecomputeInTermSumsRefusals, WhatNoOneNestFillsIsRefusedAtItsCommand) {
  const std::string threeTerms = "y(j) = A(i, j) * x(i) - c(j) + 0.5 * (B(j, k) * z(k))";
  std::string declarations = replaced(replaced(replaced(kDeclarations, "@A", "csr"), "@y", "dense"), "@F", "csr");
  expectRefusedAtLastCommand(declarations + threeTerms + "\n", "precompute(A(i, j) * x(i) - c(j), j, jw)",
                             "the precomputed expression spans the terms A(i,j) * x(i) and c(j), which reduce over "
                             "different variables and each add into y in a loop nest of their own; no one loop nest "
                             "fills its workspace");
  // A's term loops over i, j, l: its row over l would depend on j, whose
  // loop runs inside i's, where the workspace would be filled.
  expectRefusedAtLastCommand(declarations + "Y(j, l) = A(i, j) * C(i, l) - B(j, k) * F(k, l)\n", "dense_workspace(l)",
                             "the precomputed expression depends on j, which the rest of");
  expectRefusedAtLastCommand(declarations + "y(j) = A(i, j) * x(i) + B(j, k) * z(k)\n",
                             "precompute(B(j, k) * z(k), i, iw)", "the precomputed expression is not indexed by i");
  // The one term indexed by j iterates its positions, not j (the literal's
  // loop over j holds no workspace): the loops named are that term's.
  expectRefusedAtLastCommand("tensor Y(I, J) : dense\ntensor C(M, I, J) : {dense, dense, compressed}\n"
                             "Y(i, j) = C(m, i, j) - 3\n",
                             "pos(j, jp, C(m, i, j))\ndense_workspace()",
                             "j is no loop of the nests that add into Y, one per term, of the terms indexed by j "
                             "(their loops: m, i, jp); each term's dense workspace is indexed by one of its own loops");
  expectRefusedAtLastCommand(declarations + "y(j) = A(i, j) * x(i) + B(j, k) * z(k)\n",
                             "precompute(z(k), k, kw)\ndense_workspace(j)",
                             "the whole right-hand side goes into a dense workspace per term, which takes no "
                             "precompute before it in a statement whose terms each add into y in a loop nest of their "
                             "own, and `precompute(z(k), k, kw)` comes before it");
}

}  // namespace
}  // namespace tcc::test
