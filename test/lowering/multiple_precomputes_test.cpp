// Several precomputes in one statement: independent parts each in a dense
// workspace of its own, and precomputes nested in another's workspace
// expression (TACO's MTTKRP: a row of the result in one workspace, filled
// by loops that precompute B(i,k,l) * D(l,j) into a second) or around it,
// with split, reorder and parallelize around them; every kernel checked
// against the dense reference in both floating-point modes, on random and
// real inputs. What cannot be placed is refused at its command.
#include <gtest/gtest.h>

#include <string>

#include "kernel_check.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

// MTTKRP with B stored as `formatOfB`.
std::string mttkrp(const std::string& formatOfB) {
  return "tensor A(I, J) : dense\ntensor B(I, K, L) : " + formatOfB +
         "\ntensor C(K, J) : dense\ntensor D(L, J) : dense\nA(i,j) = B(i,k,l) * D(l,j) * C(k,j)\n";
}
const std::string kMttkrp = mttkrp("csf");
// B's rows dense, so that i can be split; its other levels dense too, so
// that k and l can be reordered.
const std::string kMttkrpDenseRows = mttkrp("{dense, compressed, compressed}");
const std::string kMttkrpDense = mttkrp("dense");

// With a factor after the product, for three nested workspaces.
const char* const kScaledMttkrp = R"(
tensor A(I, J) : dense
tensor B(I, K, L) : csf
tensor C(K, J) : dense
tensor D(L, J) : dense
tensor e(J) : dense
A(i,j) = B(i,k,l) * D(l,j) * C(k,j) * e(j)
)";

// Row-wise sparse times sparse into a CSR result, scaled by column.
const char* const kScaledSpgemm = R"(
tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor d(J) : dense
A(i,j) = B(i,k) * C(k,j) * d(j)
)";

// A = B C D row by row: a row of B C in one workspace, its product with D
// in the row workspace of the CSR result.
const char* const kSpgemmChain = R"(
tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, L) : csr
tensor D(L, J) : csr
A(i,j) = B(i,k) * C(k,l) * D(l,j)
)";

// y = A (B x): the inner product into a workspace over j inside the loops
// that fill a workspace over i.
const char* const kChainedSpmv = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor B(J, K) : csr
tensor x(K) : dense
y(i) = A(i,j) * (B(j,k) * x(k))
)";

// Two independent parts of one product, summed over j.
const char* const kProductOfParts = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor B(I, J) : csr
tensor x(J) : dense
tensor z(J) : dense
y(i) = A(i,j) * x(j) * (B(i,j) * z(j))
)";

// Terms whose sums are computed into scalar temporaries, each with a
// workspace of its own.
const char* const kSumOfSpmvs = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor B(I, J) : csr
tensor x(J) : dense
tensor z(J) : dense
y(i) = A(i,j) * x(j) + B(i,j) * z(j) - A(i,j) * z(j)
)";

struct MultiPrecomputeCase {
  std::string name;
  std::string dsl;
  std::map<std::string, rt::Coo> inputs;
  std::vector<std::string> workspaces;  // each must appear in the printed kernel
};

std::map<std::string, rt::Coo> mttkrpInputs(uint64_t seed, bool scaled) {
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({21, 14, 17}, 0.06, seed)},
                                           {"C", randomDense({14, 9}, seed + 1)},
                                           {"D", randomDense({17, 9}, seed + 2)}};
  if (scaled) inputs["e"] = randomDense({9}, seed + 3);
  return inputs;
}

std::vector<MultiPrecomputeCase> cases() {
  std::vector<MultiPrecomputeCase> all;
  all.push_back({"MttkrpRowThenProduct",
                 withSchedule(kMttkrp, "precompute(B(i,k,l) * D(l,j) * C(k,j), j, j)\n"
                                       "precompute(B(i,k,l) * D(l,j), j, j)\nparallelize(i, CPUThread, NoRaces)"),
                 mttkrpInputs(1, false), {"w_A", "w_A_2"}});
  all.push_back({"MttkrpProductThenRowSplit",
                 withSchedule(kMttkrpDenseRows, "split(i, i0, i1, 4)\nprecompute(B(i,k,l) * D(l,j), j, j)\n"
                                       "precompute(B(i,k,l) * D(l,j) * C(k,j), j, j)\n"
                                       "parallelize(i0, CPUThread, NoRaces)"),
                 mttkrpInputs(5, false), {"w_A", "w_A_2"}});
  all.push_back({"MttkrpReorderedRenamed",
                 withSchedule(kMttkrp, "reorder(i, k, j, l)\nprecompute(B(i,k,l) * D(l,j) * C(k,j), j, jw)\n"
                                       "precompute(B(i,k,l) * D(l,j), j, j)"),
                 mttkrpInputs(9, false), {"w_A", "w_A_2"}});
  all.push_back({"MttkrpDenseReorderedParallel",
                 withSchedule(kMttkrpDense, "reorder(i, k, j, l)\nprecompute(B(i,k,l) * D(l,j) * C(k,j), j, j)\n"
                                            "precompute(B(i,k,l) * D(l,j), j, j)\nparallelize(i, CPUThread, NoRaces)"),
                 mttkrpInputs(11, false), {"w_A", "w_A_2"}});
  all.push_back({"ScaledMttkrpThreeNested",
                 withSchedule(kScaledMttkrp, "precompute(B(i,k,l) * D(l,j) * C(k,j) * e(j), j, j)\n"
                                             "precompute(B(i,k,l) * D(l,j) * C(k,j), j, j)\n"
                                             "precompute(B(i,k,l) * D(l,j), j, j)\n"
                                             "parallelize(i, CPUThread, NoRaces)"),
                 mttkrpInputs(13, true), {"w_A", "w_A_2", "w_A_3"}});
  all.push_back({"ScaledSpgemmRowThenProduct",
                 withSchedule(kScaledSpgemm, "precompute(B(i,k) * C(k,j) * d(j), j, j)\n"
                                             "precompute(B(i,k) * C(k,j), j, j)\nsplit(i, i0, i1, 8)\n"
                                             "parallelize(i0, CPUThread, NoRaces)"),
                 {{"B", randomSparse({40, 30}, 0.08, 17)},
                  {"C", randomSparse({30, 35}, 0.08, 18)},
                  {"d", randomDense({35}, 19)}},
                 {"w_A", "w_A_2"}});
  all.push_back({"SpgemmChainRandom",
                 withSchedule(kSpgemmChain, "dense_workspace(j)\nprecompute(B(i,k) * C(k,l), l, l)\n"
                                            "split(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)"),
                 {{"B", randomSparse({30, 25}, 0.1, 33)},
                  {"C", randomSparse({25, 28}, 0.1, 34)},
                  {"D", randomSparse({28, 40}, 0.08, 35)}},
                 {"w_A", "w_A_2"}});
  all.push_back({"ChainedSpmvRandom",
                 withSchedule(kChainedSpmv, "precompute(A(i,j) * (B(j,k) * x(k)), i, i)\n"
                                            "precompute(B(j,k) * x(k), j, j)"),
                 {{"A", randomSparse({50, 40}, 0.1, 21)},
                  {"B", randomSparse({40, 45}, 0.1, 22)},
                  {"x", randomDense({45}, 23)}},
                 {"w_y", "w_y_2"}});
  rt::Coo ash = realMatrix("ash219.mtx");
  const int32_t rows = ash.dims[0];
  all.push_back({"ChainedSpmvReal",
                 withSchedule(kChainedSpmv, "precompute(A(i,j) * (B(j,k) * x(k)), i, i)\n"
                                            "precompute(B(j,k) * x(k), j, j)\nparallelize(i, CPUThread, NoRaces)"),
                 {{"A", ash}, {"B", transposed(ash)}, {"x", randomDense({rows}, 24)}},
                 {"w_y", "w_y_2"}});
  rt::Coo west = realMatrix("west0497.mtx");
  const int32_t m = west.dims[0];
  all.push_back({"ProductOfPartsReal",
                 withSchedule(kProductOfParts, "precompute(A(i,j) * x(j), j, j)\nprecompute(B(i,j) * z(j), j, j)\n"
                                               "parallelize(i, CPUThread, NoRaces)"),
                 {{"A", west}, {"B", transposed(west)}, {"x", randomDense({m}, 25)}, {"z", randomDense({m}, 26)}},
                 {"w_y", "w_y_2"}});
  all.push_back({"ProductOfPartsRandomSplit",
                 withSchedule(kProductOfParts, "split(i, i0, i1, 16)\nprecompute(B(i,j) * z(j), j, j)\n"
                                               "precompute(A(i,j) * x(j), j, j)\nparallelize(i0, CPUThread, NoRaces)"),
                 {{"A", randomSparse({70, 60}, 0.2, 27)},
                  {"B", randomSparse({70, 60}, 0.2, 28)},
                  {"x", randomDense({60}, 29)},
                  {"z", randomDense({60}, 30)}},
                 {"w_y", "w_y_2"}});
  rt::Coo bcsstk = realMatrix("bcsstk01.mtx");
  const int32_t b = bcsstk.dims[0];
  all.push_back({"SumOfSpmvsThreeWorkspacesReal",
                 withSchedule(kSumOfSpmvs, "precompute(A(i,j) * x(j), j, j)\nprecompute(B(i,j) * z(j), j, j)\n"
                                           "precompute(A(i,j) * z(j), j, j)\nparallelize(i, CPUThread, NoRaces)"),
                 {{"A", bcsstk}, {"B", transposed(bcsstk)}, {"x", randomDense({b}, 31)}, {"z", randomDense({b}, 32)}},
                 {"w_y", "w_y_2", "w_y_3"}});
  return all;
}

class MultiplePrecomputes
    : public ::testing::TestWithParam<std::tuple<MultiPrecomputeCase, FloatingPointMode>> {};

TEST_P(MultiplePrecomputes, MatchReference) {
  const auto& [program, mode] = GetParam();
  CompileOptions options;
  options.floatingPoint = mode;
  std::string code = expectProgramMatchesReference(program.dsl, program.inputs, options,
                                                   mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
  for (const auto& workspace : program.workspaces) EXPECT_TRUE(contains(code, workspace)) << workspace << "\n" << code;
}

INSTANTIATE_TEST_SUITE_P(
    Programs, MultiplePrecomputes,
    ::testing::Combine(::testing::ValuesIn(cases()), ::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast)),
    [](const auto& info) {
      return std::get<0>(info.param).name +
             (std::get<1>(info.param) == FloatingPointMode::Fast ? "_Fast" : "_Strict");
    });

TEST(MultiplePrecomputes, NestedWorkspacesAreNestedWheres) {
  std::string decisions = decisionsOf(withSchedule(kMttkrp, "precompute(B(i,k,l) * D(l,j) * C(k,j), j, j)\n"
                                                            "precompute(B(i,k,l) * D(l,j), j, j)"));
  EXPECT_TRUE(contains(decisions, "into dense workspace w_A(j) inside the loops over i")) << decisions;
  EXPECT_TRUE(contains(decisions, "into dense workspace w_A_2(j) inside the loops over k, among the loops that fill w_A"))
      << decisions;
  // The other way round, the row's workspace reads the product's.
  decisions = decisionsOf(withSchedule(kMttkrp, "precompute(B(i,k,l) * D(l,j), j, j)\n"
                                                "precompute(B(i,k,l) * D(l,j) * C(k,j), j, j)"));
  EXPECT_TRUE(contains(decisions, "into dense workspace w_A(j) inside the loops over i, k")) << decisions;
  EXPECT_TRUE(contains(decisions, "w_A(j) * C(k,j) into dense workspace w_A_2(j) inside the loops over nothing, "
                                  "among the loops that read w_A"))
      << decisions;
}

// Seed 7242446 of the differential campaign: the workspace over i would be
// filled inside the loop over j, with i fixed around it (it computed 0s).
TEST(MultiplePrecomputes, AWorkspaceWhoseIndexIsFixedAroundItsPlaceIsRefused) {
  expectRefusedAtLastCommand("tensor Y(I, J) : dense\ntensor A(I) : dense\ntensor B(J) : dense\n"
                             "Y(i,j) = A(i) * B(j)\n",
                             "precompute(B(j), j, jw)\ndense_workspace(i)",
                             "its workspace is indexed by i, but no loop over i runs where it would be filled");
  expectRefusedAtLastCommand("tensor Y(I, J) : dense\ntensor A(I) : dense\ntensor B(J) : dense\n"
                             "Y(i,j) = A(i) * B(j)\n",
                             "precompute(B(j), j, jw)\nprecompute(A(i) * B(j), i, iw)",
                             "its workspace is indexed by i, but no loop over i runs where it would be filled");
}

TEST(MultiplePrecomputes, TheSameExpressionTwiceIsRefused) {
  expectRefusedAtLastCommand(kMttkrp,
                             "precompute(B(i,k,l) * D(l,j), j, j)\nprecompute(B(i,k,l) * D(l,j), j, jw)",
                             "B(i,k,l) * D(l,j) is precomputed already, by `precompute(B(i,k,l) * D(l,j), j, j)`");
}

TEST(MultiplePrecomputes, OneWorkspaceIndexNameForTwoVariablesIsRefused) {
  expectRefusedAtLastCommand(kChainedSpmv,
                             "precompute(A(i,j) * (B(j,k) * x(k)), i, w)\nprecompute(B(j,k) * x(k), j, w)",
                             "w already names the index of the workspace of `precompute(A(i,j) * (B(j,k) * x(k)), "
                             "i, w)`, over i");
  expectRefusedAtLastCommand(kChainedSpmv, "precompute(B(j,k) * x(k), j, k)", "k is a variable of the statement");
}

TEST(MultiplePrecomputes, APartInBothWorkspaceAndRestIsRefused) {
  const char* program = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
tensor z(J) : dense
y(i) = A(i,j) * x(j) * z(j) * (A(i,j) * x(j))
)";
  expectRefusedAtLastCommand(program, "precompute(A(i,j) * x(j) * z(j), j, j)\nprecompute(A(i,j) * x(j), j, j)",
                             "A(i,j) * x(j) stands both in A(i,j) * x(j) * z(j), which `precompute(A(i,j) * x(j) "
                             "* z(j), j, j)` computes into workspace w_y, and in the rest of");
}

TEST(MultiplePrecomputes, ANestedOneThatCannotBePlacedIsRefusedAtItsCommand) {
  // After the reorder, the product's workspace over j would be filled
  // inside the loop over k, which the rest (C(k,j)) also reads.
  expectRefusedAtLastCommand(kMttkrpDense,
                             "reorder(i, l, k, j)\nprecompute(B(i,k,l) * D(l,j) * C(k,j), j, j)\n"
                             "precompute(B(i,k,l) * D(l,j), j, j)",
                             "the precomputed expression depends on k");
}

TEST(MultiplePrecomputes, WholeRightHandSideWithSumsInTemporariesTakesNoOther) {
  expectRefusedAtLastCommand(kSumOfSpmvs,
                             "precompute(A(i,j) * x(j) + B(i,j) * z(j) - A(i,j) * z(j), i, i)\n"
                             "precompute(A(i,j) * x(j), j, j)",
                             "the whole right-hand side goes into a dense workspace already");
}

TEST(MultiplePrecomputes, APartOfASparseOutputsRowPointsToItsWorkspace) {
  // tcc puts no row workspace of its own beside a precompute; the refusal
  // says how to ask for it, and asking for it compiles (SpgemmChain).
  std::string message = errorOf(withSchedule(kSpgemmChain, "precompute(B(i,k) * C(k,l), l, l)"));
  EXPECT_TRUE(contains(message, "or ask for that workspace first, with dense_workspace() before it")) << message;
  expectProgramMatchesReference(withSchedule(kSpgemmChain, "dense_workspace()\nprecompute(B(i,k) * C(k,l), l, l)"),
                                {{"B", randomSparse({20, 15}, 0.15, 36)},
                                 {"C", randomSparse({15, 18}, 0.15, 37)},
                                 {"D", randomSparse({18, 22}, 0.15, 38)}});
}

// (A second workspace tensor over a part of the statement that reads the
// first compiles: precompute_in_sparse_workspace_fill_test.cpp.)
TEST(MultiplePrecomputes, AWorkspaceTensorInsideAnotherStaysRefused) {
  const char* program = R"(
tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor W(I, J) : sparse_workspace(policy = hash)
tensor V(I, J) : sparse_workspace(policy = hash)
A(i,j) = B(i,k) * C(k,j)
)";
  expectRefusedAtLastCommand(program, "precompute(B(i,k) * C(k,j), {i, j}, {i, j}, W)\n"
                                      "precompute(B(i,k) * C(k,j), {i, j}, {i, j}, V)",
                             "B(i,k) * C(k,j) is not a part of W(i,j), the statement that reads workspace W");
}

TEST(MultiplePrecomputes, ADensePrecomputeBesideAWorkspaceTensorGoesAmongItsLoops) {
  const char* program = R"(
tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
tensor W(I, J) : sparse_workspace(policy = hash)
A(i,j) = B(i,k) * C(k,j)
)";
  expectProgramMatchesReference(
    withSchedule(program, "precompute(B(i,k) * C(k,j), {i, j}, {i, j}, W)\nprecompute(B(i,k) * C(k,j), j, j)"),
    {{"B", randomSparse({20, 15}, 0.15, 39)}, {"C", randomSparse({15, 18}, 0.15, 40)}});
}

}  // namespace
}  // namespace tcc::test
