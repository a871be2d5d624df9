// Outputs whose first level is compressed (DCSR, a sparse vector, CSF)
// appended in place by a row loop on CPU threads that runs in ranges of
// coordinates: a pass counts each range's appends, a prefix sum over the
// ranges gives each its offsets, a second pass appends. Unions,
// differences, intersections, three operands, DCSR beside CSR, COO and
// dense operands; inputs with most rows empty, rows only one operand
// stores, fewer rows than ranges, an empty operand, both empty, real
// matrices; 1, 2, 3 and 8 threads; strict and fast mode: every run against
// the dense reference. A loop that one unique level drives alone (its
// positions cut by the ranges' binary searches) and a loop over the plain
// coordinates (CSR operands only) append in ranges too. Where the ranges
// do not append in order (the Workspace strategy asked for) the sparse
// workspaces stay, and `tcc explain` says which path is taken and why.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_check.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

// Compiles `dsl` once and runs it at 1, 2, 3 and 8 threads.
std::string expectEveryThreadCountMatchesReference(const std::string& dsl,
                                                   const std::map<std::string, rt::Coo>& inputs) {
  return expectEachThreadCountMatchesReference(dsl, inputs, {1, 2, 3, 8});
}

struct Statement {
  std::string declarations;  // every tensor, the output Y first
  std::string text;
};

const std::string kRows = "parallelize(i, CPUThread, NoRaces)";

// Matrix statements over A and B (and C, D) of inputsOverAB.
const std::vector<Statement> kMatrixStatements = {
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) + B(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n",
     "Y(i,j) = 2 * A(i,j) - B(i,j) + C(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) - B(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : coo\ntensor B(I, J) : dcsr\ntensor C(I, J) : csr\n",
     "Y(i,j) = A(i,j) + B(i,j) + C(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) * B(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : csr\n",
     "Y(i,j) = A(i,j) + B(i,j) * C(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor D(I, J) : dense\n", "Y(i,j) = A(i,j) + D(i,j)"},
};

std::vector<NamedInputs> matrixInputs() {
  rt::Coo none = rt::Coo::ofShape({50, 40});
  return {inputsOverAB("random 10x8, fewer rows than ranges", randomSparse({10, 8}, 0.12, 1),
                       randomSparse({10, 8}, 0.2, 2), 3),
          inputsOverAB("random 40x30, most rows empty", randomSparse({40, 30}, 0.02, 5), randomSparse({40, 30}, 0.04, 6),
                       7),
          inputsOverAB("random 3000x20, rows only one operand stores", randomSparse({3000, 20}, 0.01, 10),
                       randomSparse({3000, 20}, 0.015, 11), 12),
          inputsOverAB("A empty, B random 50x40", none, randomSparse({50, 40}, 0.05, 13), 14),
          inputsOverAB("A and B empty", none, none, 15),
          inputsOverAB("ibm32a + ibm32b^T", realMatrix("ibm32a.mtx"), transposed(realMatrix("ibm32b.mtx")), 20)};
}

std::string program(const Statement& statement, const std::string& mode, const std::string& schedule = kRows) {
  return withSchedule(statement.declarations + statement.text + "\n" + mode, schedule);
}

// The ranges append the output themselves: no sparse workspace, two passes.
void expectAppendedByRanges(const std::string& code) {
  EXPECT_TRUE(contains(code, "ranges of i on the threads, each")) << code;
  EXPECT_TRUE(contains(code, "count each range of i's appends to Y's levels")) << code;
  EXPECT_TRUE(contains(code, "append each range of i to Y from its offsets")) << code;
  // (The prelude declares the workspace runtime's calls; the kernel makes none.)
  EXPECT_FALSE(contains(code, "= tcc_ism_kernel_create")) << code;
  EXPECT_FALSE(contains(code, "tcc_ism_insert_hash_2(ws_")) << code;
}

TEST(RangesAppendOutput, MatricesMatchReferenceAtEveryThreadCount) {
  const std::vector<NamedInputs> all = matrixInputs();
  int checked = 0;
  for (const auto& statement : kMatrixStatements)
    for (const char* mode : {"", "fp fast\n"}) {
      std::string dsl = program(statement, mode);
      SCOPED_TRACE(dsl);
      EXPECT_TRUE(contains(decisionsOf(dsl), "Y ({compressed, compressed}) is appended in place by the ranges of i"))
          << decisionsOf(dsl);
      for (const auto& inputs : all) {
        SCOPED_TRACE(inputs.name);
        ++checked;
        expectAppendedByRanges(expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors)));
      }
    }
  EXPECT_EQ(checked, 7 * 2 * 6);
}

TEST(RangesAppendOutput, SparseVectorsThirdOrderTensorsAndACopyInTheLoopsOrder) {
  const std::vector<std::pair<std::string, std::map<std::string, rt::Coo>>> cases = {
      {"tensor Y(I) : sparse\ntensor A(I) : sparse\ntensor B(I) : sparse\nY(i) = A(i) - 3 * B(i)\n",
       {{"A", randomSparse({500}, 0.03, 30)}, {"B", randomSparse({500}, 0.05, 31)}}},
      {"tensor Y(I) : sparse\ntensor A(I) : sparse\ntensor B(I) : sparse\nY(i) = A(i) - 3 * B(i)\n",
       {{"A", rt::Coo::ofShape({70})}, {"B", randomSparse({70}, 0.1, 32)}}},
      {"tensor Y(I, J, K) : {compressed, compressed, compressed}\ntensor A(I, J, K) : {compressed, compressed, "
       "compressed}\ntensor B(I, J, K) : {compressed, compressed, compressed}\nY(i,j,k) = A(i,j,k) + B(i,j,k)\n",
       {{"A", randomSparse({60, 9, 7}, 0.01, 33)}, {"B", randomSparse({60, 9, 7}, 0.02, 34)}}},
      {"tensor Y(I, J, K) : {compressed, compressed, compressed}\ntensor A(I, J, K) : {compressed, compressed, "
       "compressed}\ntensor B(I, J, K) : coo\nY(i,j,k) = A(i,j,k) * B(i,j,k) + A(i,j,k)\n",
       {{"A", randomSparse({40, 6, 8}, 0.05, 35)}, {"B", randomSparse({40, 6, 8}, 0.1, 36)}}},
      // B's first level drives the loop over i alone.
      {"tensor Y(I, J, K) : csf\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nY(i,j,k) = B(i,j,k) * c(k)\n",
       {{"B", randomSparse({50, 8, 9}, 0.03, 39)}, {"c", randomDense({9}, 40)}}},
      // An operand stored in the other order, read from a copy in the
      // loops' order.
      {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(J, I) : dcsr\nY(i,j) = A(i,j) + B(j,i)\n",
       {{"A", randomSparse({80, 30}, 0.03, 37)}, {"B", randomSparse({30, 80}, 0.03, 38)}}},
  };
  for (const auto& [text, inputs] : cases) {
    std::string dsl = withSchedule(text, kRows);
    SCOPED_TRACE(dsl);
    EXPECT_TRUE(contains(decisionsOf(dsl), "is appended in place by the ranges of i")) << decisionsOf(dsl);
    expectAppendedByRanges(expectEveryThreadCountMatchesReference(dsl, inputs));
  }
}

// Loops that do not merge: one unique level drives the loop over i alone
// (a range walks the positions between its two binary searches), or no
// operand stores i sparsely (a range walks its coordinates).
const std::vector<std::pair<Statement, std::string>> kUnmergedStatements = {
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) * B(i,j)"},
     "each over the positions of the one level that drives the loop"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\n", "Y(i,j) = 2 * A(i,j)"},
     "each over the positions of the one level that drives the loop"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) * B(i,j) * A(i,j)"},
     "each merging the operands' cursors"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) + B(i,j)"},
     "each over its coordinates"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) * B(i,j)"},
     "each over its coordinates"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : csr\n", "Y(i,j) = -A(i,j)"}, "each over its coordinates"},
};

TEST(RangesAppendOutput, LoneDriverAndCoordinateLoopsMatchReferenceAtEveryThreadCount) {
  const std::vector<NamedInputs> all = matrixInputs();
  int checked = 0;
  for (const auto& [statement, walk] : kUnmergedStatements)
    for (const char* mode : {"", "fp fast\n"}) {
      std::string dsl = program(statement, mode);
      SCOPED_TRACE(dsl);
      std::string decisions = decisionsOf(dsl);
      EXPECT_TRUE(contains(decisions, "Y ({compressed, compressed}) is appended in place by the ranges of i"))
          << decisions;
      EXPECT_FALSE(contains(decisions, "one per thread of the loop over i")) << decisions;
      for (const auto& inputs : all) {
        SCOPED_TRACE(inputs.name);
        ++checked;
        std::string code = expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors));
        expectAppendedByRanges(code);
        EXPECT_TRUE(contains(code, "ranges of i on the threads, " + walk)) << code;
        EXPECT_FALSE(contains(code, "= tcc_ism_kernel_create")) << code;
      }
    }
  EXPECT_EQ(checked, 6 * 2 * 6);
}

// assemble(Y, Append, true) (the output's values allocated apart from its
// coordinates otherwise): the ranges allocate every array themselves.
TEST(RangesAppendOutput, UnderAssembleApartFromValues) {
  const std::vector<Statement> statements = {kMatrixStatements[0], kUnmergedStatements[0].first,
                                             kUnmergedStatements[1].first, kUnmergedStatements[3].first};
  const std::vector<NamedInputs> all = matrixInputs();
  for (const auto& statement : statements)
    for (const auto& inputs : {all[1], all[4]}) {
      std::string dsl = program(statement, "", kRows + "\nassemble(Y, Append, true)");
      SCOPED_TRACE(dsl + inputs.name);
      EXPECT_TRUE(contains(decisionsOf(dsl), "is appended in place by the ranges of i")) << decisionsOf(dsl);
      expectAppendedByRanges(expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors)));
    }
}

// Where the ranges cannot append in order, the workspaces stay (and give
// the right answer), and explain says why.
TEST(RangesAppendOutput, OtherLoopsKeepTheSparseWorkspaces) {
  struct Kept {
    std::string declarations, text, schedule, why;
  };
  const std::vector<Kept> kept = {
      {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) + B(i,j)",
       "parallelize(i, CPUThread, Workspace)", ""},
  };
  const NamedInputs inputs = matrixInputs()[1];
  for (const auto& each : kept) {
    std::string dsl = withSchedule(each.declarations + each.text + "\n", each.schedule);
    SCOPED_TRACE(dsl);
    std::string decisions = decisionsOf(dsl);
    EXPECT_FALSE(contains(decisions, "is appended in place by the ranges")) << decisions;
    EXPECT_TRUE(contains(decisions, "one per thread of the loop over i")) << decisions;
    if (!each.why.empty()) EXPECT_TRUE(contains(decisions, each.why)) << decisions;
    std::string code = expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors));
    EXPECT_TRUE(contains(code, "= tcc_ism_kernel_create_per_thread(")) << code;
  }
}

}  // namespace
}  // namespace tcc::test
