// A precompute names its part of the statement as the user wrote it. Two
// ways the compiler's own form of the statement hid the part, each refused
// as "not a part" or "not a subexpression" though the part is there:
// - the statement's float literals take its output's type (`0.5` in a
//   float32 statement is a float32 literal), the schedule's were float64;
// - a term of a statement whose terms each add into the output by loops of
//   their own reads an input from a copy in its loops' order, and the part
//   named the input, not the copy.
// Each kernel is compared with the dense reference; what stays refused
// names the inputs as written, not the copies.
#include <gtest/gtest.h>

#include <array>

#include "kernel_check.h"
#include "tcc/ir/index_printer.h"

namespace tcc::test {
namespace {

// I = 23, J = 29, K = 17.
std::map<std::string, rt::Coo> inputs(uint64_t seed) {
  return {{"A", randomSparse({23, 29}, 0.15, seed)},     {"x", randomDense({29}, seed + 1)},
          {"c", randomDense({23}, seed + 2)},            {"B", randomSparse({29, 17}, 0.15, seed + 3)},
          {"z", randomDense({17}, seed + 4)},            {"E", randomSparse({17, 29}, 0.2, seed + 5)},
          {"u", randomDense({23}, seed + 6)},            {"P", randomSparse({23, 17}, 0.1, seed + 7)},
          {"Q", randomSparse({17, 29}, 0.1, seed + 8)},  {"D", randomSparse({23, 29}, 0.1, seed + 9)}};
}

struct Case : ProgramCase {
  std::string workspace;  // a part of the concrete index notation that shows the workspace
};

const char* kLiterals =
    "tensor y(I) : dense of @T\ntensor v(J) : dense of @T\ntensor A(I, J) : csr of @T\ntensor x(J) : dense of @T\n"
    "tensor c(I) : dense of @T\ntensor B(J, K) : csr of @T\ntensor z(K) : dense of @T\ntensor u(I) : dense of @T\n";

// A literal in the precomputed part: a plain nest, a sum below the top,
// terms that add into the output by nests of their own; in float32 (whose
// literals are typed like the output) and float64 alike.
std::vector<Case> literalCases() {
  const std::vector<std::array<std::string, 4>> list = {
    {"plain_nest", "y(i) = 0.5 * A(i, j) * x(j)", "precompute(0.5 * A(i, j), j, jw)", "w_y(jw) = 0.5 * A(i,jw)"},
    {"plain_nest_whole", "y(i) = 0.25 * A(i, j) * x(j) + 3.5 * c(i)", "precompute(0.25 * A(i, j) * x(j), j, jw)",
     "w_y(jw) = 0.25 * A(i,jw) * x(jw)"},
    {"sum_below_the_top", "y(i) = c(i) * sum(j, 0.5 * A(i, j) * x(j))", "precompute(0.5 * A(i, j), j, jw)",
     "w_y(jw) = 0.5 * A(i,jw)"},
    {"term_sums", "v(j) = A(i, j) * u(i) + 0.5 * B(j, k) * z(k)", "precompute(0.5 * B(j, k), k, kw)",
     "w_v(kw) = 0.5 * B(j,kw)"},
    {"term_sums_negated", "v(j) = A(i, j) * u(i) - 1.5 * B(j, k) * z(k)", "precompute(1.5 * B(j, k) * z(k), j, jw)",
     "1.5 * B(jw,k) * z(k)"},
  };
  std::vector<Case> result;
  uint64_t seed = 7269000;
  for (const char* type : {"float32", "float64"})
    for (const auto& [name, statement, schedule, workspace] : list)
      result.push_back({{name + std::string("_") + type,
                         withSchedule(replaced(kLiterals, "@T", type) + statement + "\n", schedule),
                         inputs(seed += 10)},
                        workspace});
  return result;
}

class PrecomputeOfALiteral : public ::testing::TestWithParam<Case> {};

TEST_P(PrecomputeOfALiteral, MatchesReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.program);
  const bool float32 = contains(c.program, "float32");
  expectProgramMatchesReference(c.program, declaredInputs(c.program, c.inputs), {}, float32 ? 1e-5 : 1e-10);
  const std::string concrete = concreteOf(c.program);
  EXPECT_TRUE(contains(concrete, c.workspace)) << concrete;
}

INSTANTIATE_TEST_SUITE_P(Statements, PrecomputeOfALiteral, ::testing::ValuesIn(literalCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// The sparse form, precompute(expr, {i, j}, {i, j}, W), finds its statement
// and its part alike.
TEST(PrecomputeOfALiteralIntoAWorkspaceTensor, MatchesReference) {
  const std::string text = R"(tensor Y(I, J) : csr of float32
tensor P(I, K) : dcsc of float32
tensor Q(K, J) : dcsr of float32
tensor D(I, J) : csr of float32
tensor W(I, J) : sparse_workspace(policy = coord) of float32
Y(i, j) = 0.5 * P(i, k) * Q(k, j) + D(i, j)
schedule {
  reorder(k, i, j)
  precompute(0.5 * P(i, k) * Q(k, j), {i, j}, {i, j}, W)
}
)";
  expectProgramMatchesReference(text, declaredInputs(text, inputs(7269500)), {}, 1e-5);
  EXPECT_TRUE(contains(concreteOf(text), "W(i,j) += 0.5 * P(i,k) * Q(k,j)")) << concreteOf(text);
}

// Terms that add into v by nests of their own: B(j,k) * E(k,j) reads E,
// stored k-major, from a copy in the term's loops' order (j, k).
const char* kCopies =
    "tensor v(J) : dense\ntensor A(I, J) : csr\ntensor u(I) : dense\ntensor B(J, K) : csr\ntensor E(K, J) : csr\n"
    "tensor z(K) : dense\nv(j) = A(i, j) * u(i) + B(j, k) * E(k, j) * z(k)\n";

TEST(PrecomputeOfAPartReadFromACopy, MatchesReference) {
  struct Scheduled {
    std::string schedule, workspace, explained;
  };
  for (const auto& [schedule, workspace, explained] : std::vector<Scheduled>{
         {"precompute(B(j, k) * E(k, j), k, kw)", "w_v(kw) = B(j,kw) * E_by_j_k(kw,j)",
          "precompute B(j,k) * E(k,j) into dense workspace w_v(kw)"},
         {"precompute(E(k, j), k, kw)", "w_v(kw) = E_by_j_k(kw,j)", "precompute E(k,j) into dense workspace w_v(kw)"},
         {"precompute(B(j, k) * E(k, j) * z(k), j, jw)", "w_v(jw) += B(jw,k) * E_by_j_k(k,jw) * z(k)",
          "precompute B(j,k) * E(k,j) * z(k) into dense workspace w_v(jw)"},
         {"parallelize(j, CPUThread, NoRaces)\nprecompute(B(j, k) * E(k, j), k, kw)", "E_by_j_k(kw,j)",
          "precompute B(j,k) * E(k,j) into dense workspace w_v(kw)"}}) {
    std::string text = withSchedule(kCopies, schedule);
    SCOPED_TRACE(text);
    expectProgramMatchesReference(text, declaredInputs(text, inputs(7269600)));
    EXPECT_TRUE(contains(concreteOf(text), workspace)) << concreteOf(text);
    EXPECT_TRUE(contains(decisionsOf(text), explained)) << decisionsOf(text);
  }
}

// What stays refused names the user's inputs, not the copies.
TEST(PrecomputeOfAPartReadFromACopy, RefusalsNameTheInputsAsWritten) {
  expectRefusedAtLastCommand(kCopies, "precompute(E(k, j) * z(k), k, kw)",
                             "not a part of one assignment of sequence(forall(i, forall(j, v(j) += A(i,j) * u(i))), "
                             "forall(j, forall(k, v(j) += B(j,k) * E(k,j) * z(k))))");
  expectRefusedAtLastCommand(kCopies, "precompute(B(j, k) * E(k, j), j, jw)",
                             "the precomputed expression depends on k, which the rest of B(j,k) * E(k,j) * z(k) also "
                             "uses");
  EXPECT_FALSE(contains(errorOf(withSchedule(kCopies, "precompute(B(j, k) * E(k, j), j, jw)")), "E_by"));
  // One loop nest, C read from a copy in B's order (seed 7269924).
  expectRefusedAtLastCommand("tensor Y(I) : {compressed}\ntensor A(L) : {compressed}\n"
                             "tensor B(I, J, L) : {compressed, dense, dense} order (2,0,1)\n"
                             "tensor C(I, J, L) : {dense, dense, compressed}\nY(i) = 3 * B(i,j,l) * C(i,j,l) * A(l)\n",
                             "dense_workspace(l)\ndense_workspace(i)",
                             "3 * B(i,j,l) * C(i,j,l) * A(l) is precomputed already, by `dense_workspace(l)`");
}

}  // namespace
}  // namespace tcc::test
