// Sparse outputs the ranges of a thread loop over their first index
// append in place (count, prefix sum over the ranges, fill) beyond a
// compressed first level under a loop with one assignment: outputs with
// dense levels above their compressed ones ({dense, dense, compressed},
// {dense, compressed, compressed}, {dense, dense, dense, compressed}), and
// statements with sums below the top (where statements filling scalar
// temporaries) or a precompute's workspace, which each thread keeps a copy
// of. Sums of terms, products, scalars, pos; random inputs (many empty
// slices, fewer rows than ranges, an empty operand) and real matrices; 1,
// 2, 3 and 7 threads, against the dense reference. A thread loop over
// another index is still refused.
#include <gtest/gtest.h>

#include <tuple>

#include "kernel_check.h"

namespace tcc::test {
namespace {

const std::vector<int> kThreadCounts = {1, 2, 3, 7};
const std::string kRows = "parallelize(i, CPUThread, NoRaces)";

struct Case {
  std::string program;  // declarations (the output Y first) and the statement
  std::string schedule = kRows;
};

// The ranges append Y themselves: two passes, no sparse workspace.
void expectAppendedByRanges(const std::string& code) {
  EXPECT_TRUE(contains(code, "count each range of i's appends to Y's levels")) << code;
  EXPECT_TRUE(contains(code, "append each range of i to Y from its offsets")) << code;
  EXPECT_FALSE(contains(code, "= tcc_ism_kernel_create")) << code;
}

void expectCaseMatchesReference(const Case& each, const std::map<std::string, rt::Coo>& inputs) {
  std::string dsl = withSchedule(each.program, each.schedule);
  SCOPED_TRACE(dsl);
  // (Inputs the program does not declare are left out.)
  expectAppendedByRanges(expectEachThreadCountMatchesReference(dsl, inputs, kThreadCounts));
}

// Third-order operands A, B, C (and D dense) of one shape, c a dense vector.
std::map<std::string, rt::Coo> thirdOrderInputs(std::vector<int32_t> dims, double density, uint64_t seed) {
  return {{"A", randomSparse(dims, density, seed)},
          {"B", randomSparse(dims, density * 1.5, seed + 1)},
          {"C", randomSparse(dims, density, seed + 2)},
          {"D", randomDense(dims, seed + 3)},
          {"c", randomDense({dims[2]}, seed + 4)}};
}

std::vector<std::pair<std::string, std::map<std::string, rt::Coo>>> thirdOrderInputSets() {
  auto emptyA = thirdOrderInputs({30, 5, 6}, 0.05, 50);
  emptyA["A"] = rt::Coo::ofShape({30, 5, 6});
  return {{"random 4x3x5, fewer rows than ranges", thirdOrderInputs({4, 3, 5}, 0.2, 40)},
          {"random 200x6x9, most slices empty", thirdOrderInputs({200, 6, 9}, 0.01, 44)},
          {"random 30x5x6, A empty", emptyA}};
}

TEST(RangesAppendDenseLevels, OutputsWithDenseLevelsAboveCompressedOnesMatchReference) {
  const std::vector<Case> cases = {
      {"tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\n"
       "tensor B(I, J, K) : {dense, dense, compressed}\nY(i,j,k) = A(i,j,k) + B(i,j,k)\n"},
      {"tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\ntensor B(I, J, K) : csf\n"
       "Y(i,j,k) = 2 * A(i,j,k) * B(i,j,k)\n"},
      {"tensor Y(I, J, K) : {dense, compressed, compressed}\ntensor A(I, J, K) : csf\n"
       "tensor B(I, J, K) : {dense, compressed, compressed}\ntensor C(I, J, K) : csf\n"
       "Y(i,j,k) = A(i,j,k) - B(i,j,k) + C(i,j,k)\n"},
      {"tensor Y(I, J, K) : {dense, compressed, compressed}\ntensor B(I, J, K) : csf\ntensor c(K) : dense\n"
       "Y(i,j,k) = B(i,j,k) * c(k)\n"},
      // A dense operand: every entry stored.
      {"tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\ntensor D(I, J, K) : dense\n"
       "Y(i,j,k) = A(i,j,k) * 0.5 + D(i,j,k)\n"},
      // The ranges' loop over a dense level of i.
      {"tensor Y(I, J, K) : {dense, dense, compressed}\ntensor B(I, J, K) : {dense, dense, compressed}\n"
       "tensor C(I, J, K) : {dense, compressed, compressed}\nY(i,j,k) = B(i,j,k) + C(i,j,k)\n"},
  };
  int checked = 0;
  for (const auto& each : cases)
    for (const auto& [name, inputs] : thirdOrderInputSets()) {
      SCOPED_TRACE(name);
      expectCaseMatchesReference(each, inputs);
      ++checked;
    }
  EXPECT_EQ(checked, 6 * 3);
}

TEST(RangesAppendDenseLevels, FourthOrderOutputAndRealMatrices) {
  expectCaseMatchesReference(
      {"tensor Y(I, J, K, L) : {dense, dense, dense, compressed}\ntensor A(I, J, K, L) : csf\n"
       "tensor B(I, J, K, L) : {dense, dense, dense, compressed}\nY(i,j,k,l) = A(i,j,k,l) - 3 * B(i,j,k,l)\n"},
      {{"A", randomSparse({20, 3, 4, 5}, 0.05, 60)}, {"B", randomSparse({20, 3, 4, 5}, 0.03, 61)}});
  // Each row of A times the rows of B it selects: Y(i,j,k) = A(i,j) B(j,k).
  const std::map<std::string, rt::Coo> real = {{"A", realMatrix("ibm32a.mtx")}, {"B", realMatrix("ibm32b.mtx")}};
  for (const char* format : {"{dense, dense, compressed}", "{dense, compressed, compressed}"})
    expectCaseMatchesReference({std::string("tensor Y(I, J, K) : ") + format +
                                "\ntensor A(I, J) : csr\ntensor B(J, K) : csr\nY(i,j,k) = A(i,j) * B(j,k)\n"},
                               real);
}

// Where statements below the loop, filling temporaries.
const std::vector<Case> kSumsBelowTheTop = {
    {"tensor Y(I) : sparse\ntensor A(I, L) : dcsr\ntensor b : dense\nY(i) = sum(l, A(i,l)) * b\n",
     kRows + "\npos(l, lpos, A(i,l))"},
    {"tensor Y(I) : sparse\ntensor A(I, L) : csr\nY(i) = sum(l, A(i,l)) + 1\n"},
    {"tensor Y(I) : sparse\ntensor A(I, J, K) : {dense, dense, compressed}\ntensor B(K) : sparse\n"
     "tensor C(I) : dense\ntensor D(I) : sparse\nY(i) = (-3) * A(i,j,k) * B(k) + D(i) * C(i)\n",
     "parallelize(i, CPUThread, ParallelReduction)"},
    {"tensor Y(I) : sparse\ntensor A(I, J) : dcsr\ntensor x(J) : dense\ntensor B(I, K) : csr\n"
     "Y(i) = sum(j, A(i,j) * x(j)) * sum(k, B(i,k))\n"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, K) : csr\nY(i,j) = A(i,j) * sum(k, B(i,k))\n"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, K) : dcsr\n"
     "Y(i,j) = A(i,j) - sum(k, B(i,k)) * A(i,j)\n"},
};

TEST(RangesAppendWhereStatements, SumsBelowTheTopMatchReference) {
  std::vector<std::map<std::string, rt::Coo>> inputSets;
  for (auto [rows, density, seed] : {std::tuple{5, 0.2, 70ull}, std::tuple{300, 0.01, 72ull}}) {
    inputSets.push_back({{"A", randomSparse({rows, 12}, density, seed)},
                         {"B", randomSparse({rows, 9}, density, seed + 1)},
                         {"b", randomDense({}, seed + 2)},
                         {"x", randomDense({12}, seed + 3)},
                         {"C", randomDense({rows}, seed + 4)},
                         {"D", randomSparse({rows}, 0.3, seed + 5)}});
  }
  // (A third-order A and a vector B for the statement that reads them so.)
  auto thirdOrder = [](std::map<std::string, rt::Coo> inputs, int32_t rows, uint64_t seed) {
    inputs["A"] = randomSparse({rows, 4, 9}, 0.05, seed);
    inputs["B"] = randomSparse({9}, 0.5, seed + 1);
    return inputs;
  };
  int checked = 0;
  for (size_t c = 0; c < kSumsBelowTheTop.size(); ++c)
    for (size_t s = 0; s < inputSets.size(); ++s) {
      SCOPED_TRACE("input set " + std::to_string(s));
      const bool third = contains(kSumsBelowTheTop[c].program, "A(I, J, K)");
      const int32_t rows = static_cast<int32_t>(inputSets[s].at("C").dims[0]);
      expectCaseMatchesReference(kSumsBelowTheTop[c], third ? thirdOrder(inputSets[s], rows, 80 + s) : inputSets[s]);
      ++checked;
    }
  EXPECT_EQ(checked, 6 * 2);
}

TEST(RangesAppendWhereStatements, SumsBelowTheTopOnRealMatrices) {
  const std::map<std::string, rt::Coo> real = {{"A", realMatrix("ibm32a.mtx")},
                                               {"B", transposed(realMatrix("ibm32b.mtx"))},
                                               {"b", randomDense({}, 90)},
                                               {"x", randomDense({31}, 91)}};
  for (size_t c : {0, 1, 3, 4, 5}) expectCaseMatchesReference(kSumsBelowTheTop[c], real);
}

// Dense levels and sums below the top together; a precompute's workspace
// inside the loop, one per thread.
TEST(RangesAppendWhereStatements, DenseLevelsWithSumsAndPrecomputes) {
  const auto inputs = thirdOrderInputs({60, 4, 7}, 0.06, 100);
  expectCaseMatchesReference({"tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\n"
                              "tensor B(I, J, L) : csf\nY(i,j,k) = A(i,j,k) * sum(l, B(i,j,l))\n"},
                             {{"A", inputs.at("A")}, {"B", randomSparse({60, 4, 5}, 0.2, 101)}});
  const std::string precomputed = "tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : "
                                  "{compressed, dense, compressed}\ntensor B(I, J, K, M) : {compressed, dense, "
                                  "compressed, compressed}\nY(i,j,k) = B(i,j,k,m) * A(i,j,k) * 2\n";
  const std::map<std::string, rt::Coo> fourth = {{"A", randomSparse({40, 3, 8}, 0.3, 102)},
                                                 {"B", randomSparse({40, 3, 8, 4}, 0.1, 103)}};
  expectCaseMatchesReference({precomputed, "dense_workspace(k)\n" + kRows + "\nprecompute(B(i,j,k,m), k, kw)"},
                             fourth);
  expectCaseMatchesReference({precomputed, kRows + "\nprecompute(B(i,j,k,m), k, kw)"}, fourth);
}

// Gustavson's SpGEMM (a dense workspace with a list of the touched
// columns, one per thread) into a DCSR output, and a third-order tensor's
// fibers times a CSR matrix into a {dense, dense, compressed} output.
TEST(RangesAppendWhereStatements, GustavsonWorkspacesOnePerThread) {
  const std::string spgemm = "tensor Y(I, J) : dcsr\ntensor A(I, K) : csr\ntensor B(K, J) : csr\n"
                             "Y(i,j) = A(i,k) * B(k,j)\n";
  const std::string schedule = "reorder(i, k, j)\nprecompute(A(i,k) * B(k,j), j, j)\n" + kRows;
  expectCaseMatchesReference({spgemm, schedule},
                             {{"A", randomSparse({300, 40}, 0.03, 110)}, {"B", randomSparse({40, 50}, 0.05, 111)}});
  expectCaseMatchesReference({spgemm, schedule},
                             {{"A", realMatrix("ibm32a.mtx")}, {"B", realMatrix("ibm32b.mtx")}});
  // (The summed variable between Y's coordinates: tcc inserts the workspace.)
  expectCaseMatchesReference({"tensor Y(I, J, L) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\n"
                              "tensor B(K, L) : csr\nY(i,j,l) = A(i,j,k) * B(k,l)\n"},
                             {{"A", randomSparse({50, 4, 9}, 0.08, 112)}, {"B", randomSparse({9, 30}, 0.1, 113)}});
}

TEST(RangesAppendDenseLevels, ThreadLoopsOverOtherIndicesAreStillRefused) {
  const std::string program = "tensor Y(I, J, K) : {dense, dense, compressed}\ntensor A(I, J, K) : csf\n"
                              "tensor B(I, J, K) : csf\nY(i,j,k) = A(i,j,k) + B(i,j,k)\n";
  expectRefusedAtLastCommand(program, "parallelize(j, CPUThread, NoRaces)", "output Y is assembled in order");
  expectRefusedAtLastCommand(program, kRows + "\nparallelize(j, CPUThread, NoRaces)",
                             "loops nested in a parallel loop run serially");
  expectRefusedAtLastCommand("tensor Y(I, J, K) : {dense, dense, compressed}\ntensor B(I, J, K) : "
                             "{dense, dense, compressed}\nY(i,j,k) = 2 * B(i,j,k)\n",
                             "parallelize(i, CPUVector, NoRaces)",
                             "output Y is assembled in order, an entry at a time, which vector lanes cannot share");
}

}  // namespace
}  // namespace tcc::test
