// Row loops on CPU threads over operands that store their rows sparsely
// (DCSR, COO) merged as a union: the rows' coordinates cut into ranges,
// each range's cursors found by binary search and merged as the serial
// loop merges. Sums, differences, a scaled operand, three operands, a
// union with an intersection inside, sparse rows beside located (CSR)
// ones, a union times a vector, sums over the rows (a reduction, atomic
// updates), a row's columns merged on the threads; dense, CSR and DCSR
// outputs; in strict and fast mode, against the dense reference on random
// matrices with many empty rows (rows only one operand stores; fewer rows
// than ranges, and many more) and real ones (ibm32a, ibm32b); the DCSR
// outputs appended in place by the ranges. What threads still cannot
// split is refused at the parallelize.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct Statement {
  std::string declarations;  // the operands and any vector, not the output
  std::string text;
  bool matrixOutput = true;  // Y(I, J), stored in each output format
  std::string schedule = "parallelize(i, CPUThread, NoRaces)";
};

const std::vector<Statement> kStatements = {
    {"tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) + B(i,j)"},
    {"tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n", "Y(i,j) = 2 * A(i,j) - B(i,j) + C(i,j)"},
    {"tensor A(I, J) : dcsr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) - B(i,j)"},
    {"tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : csr\n", "Y(i,j) = A(i,j) + B(i,j) * C(i,j)"},
    {"tensor A(I, J) : dcsr\ntensor B(I, J) : coo\n", "Y(i,j) = B(i,j) - 0.5 * A(i,j)"},
    {"tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor x(J) : dense\ntensor y(I) : dense\n",
     "y(i) = (A(i,j) + B(i,j)) * x(j)", false},
    // Sums over the rows: a scalar each thread keeps a partial sum of, a
    // vector the threads update atomically.
    {"tensor s : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "s = sum(i, sum(j, A(i,j) + B(i,j)))",
     false, "parallelize(i, CPUThread, ParallelReduction)"},
    {"tensor y(J) : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "y(j) = sum(i, A(i,j) - 2 * B(i,j))",
     false, "parallelize(i, CPUThread, Atomics)"},
    // The merge of a row's columns on the threads, row by row.
    {"tensor Y(I, J) : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) - B(i,j)", false,
     "parallelize(j, CPUThread, NoRaces)"},
};

std::vector<NamedInputs> allInputs() {
  return {inputsOverAB("random 10x8, fewer rows than ranges", randomSparse({10, 8}, 0.12, 1), randomSparse({10, 8}, 0.2, 2), 3),
          inputsOverAB("random 40x30, most rows empty", randomSparse({40, 30}, 0.02, 5), randomSparse({40, 30}, 0.04, 6), 7),
          inputsOverAB("random 3000x20, rows only one operand stores", randomSparse({3000, 20}, 0.01, 10),
                 randomSparse({3000, 20}, 0.015, 11), 12),
          inputsOverAB("ibm32a + ibm32b^T", realMatrix("ibm32a.mtx"), transposed(realMatrix("ibm32b.mtx")), 20)};
}

std::string program(const Statement& statement, const std::string& output, const std::string& mode) {
  std::string declarations = statement.declarations;
  if (statement.matrixOutput) declarations = "tensor Y(I, J) : " + output + "\n" + declarations;
  return withSchedule(declarations + statement.text + "\n" + mode, statement.schedule);
}

TEST(SparseRowsOnThreads, UnionsMatchReference) {
  const std::vector<NamedInputs> all = allInputs();
  int checked = 0;
  for (const auto& statement : kStatements)
    for (const char* output : {"dense", "csr", "dcsr"}) {
      if (!statement.matrixOutput && std::string(output) != "dense") continue;
      for (const char* mode : {"", "fp fast\n"}) {
        std::string dsl = program(statement, output, mode);
        checked += forEachCodeMatchingReference(dsl, all, [&](const std::string& code) {
          // The coordinates in ranges on the threads, each range's cursors
          // found by binary search.
          EXPECT_TRUE(contains(code, "on the threads, each merging the operands' cursors")) << code;
          EXPECT_TRUE(contains(code, "tcc_lower_bound(A")) << code;
          // A DCSR output appended in place by the ranges, not through
          // per-thread sparse workspaces (ranges_append_output_test.cpp).
          if (std::string(output) == "dcsr") {
            EXPECT_TRUE(contains(code, "append each range of i to Y from its offsets")) << code;
            EXPECT_FALSE(contains(code, "= tcc_ism_kernel_create")) << code;
          }
        });
      }
    }
  // Five matrix statements in three output formats and four with a
  // dense output, in both modes, on four inputs.
  EXPECT_EQ(checked, (5 * 3 + 4) * 2 * 4);
}

TEST(SparseRowsOnThreads, WhatThreadsCannotSplitIsRefused) {
  struct Refused {
    std::string program, schedule, message;
  };
  const std::string add = "tensor Y(I, J) : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n"
                          "Y(i,j) = A(i,j) + B(i,j)\n";
  const std::vector<Refused> refused = {
      {add, "parallelize(i, CPUVector, NoRaces)",
       "co-iterating several sparse operands is a while-loop, which cannot be split among threads or vector lanes"},
      // The rows' merge on threads, and the columns' inside it too.
      {add, "parallelize(i, CPUThread, NoRaces)\nparallelize(j, CPUThread, NoRaces)",
       "loops nested in a parallel loop run serially"},
      // A sparse output's columns are appended in order.
      {"tensor Y(I, J) : csr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nY(i,j) = A(i,j) + B(i,j)\n",
       "parallelize(j, CPUThread, NoRaces)", "output Y is assembled in order"},
  };
  for (const auto& each : refused) expectRefusedAtLastCommand(each.program, each.schedule, each.message);
}

}  // namespace
}  // namespace tcc::test
