// Schedules applied from the DSL: results still match the dense reference,
// and illegal schedules stop with the command and the reason.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

const char* kSpmv = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
y(i) = A(i, j) * x(j)
)";

TEST(Parallelize, SpmvRowsInParallelMatchesReference) {
  std::string code = expectProgramMatchesReference(withSchedule(kSpmv, "parallelize(i, CPUThread, NoRaces)"),
                                                   {{"A", randomSparse({300, 200}, 0.05, 1)}, {"x", randomDense({200}, 2)}});
  EXPECT_NE(code.find("#pragma omp parallel for"), std::string::npos);
}

TEST(Parallelize, SpmmRowsInParallelMatchesReference) {
  expectProgramMatchesReference(R"(
tensor C(I, J) : dense
tensor A(I, K) : csr
tensor B(K, J) : dense
C(i,j) = A(i,k) * B(k,j)
schedule { parallelize(i, CPUThread, NoRaces) }
)",
                                {{"A", randomSparse({120, 80}, 0.05, 3)}, {"B", randomDense({80, 16}, 4)}});
}

TEST(Parallelize, AReductionVariableRacesAndIsRefused) {
  std::string message = errorOf(withSchedule(kSpmv, "parallelize(j, CPUThread, NoRaces)"));
  EXPECT_NE(message.find("parallelize(j, CPUThread, NoRaces): j is summed into y"), std::string::npos) << message;
}

TEST(Parallelize, SparseOutputColumnsInParallelAreRefused) {
  std::string message = errorOf(R"(
tensor A(I, J) : csr
tensor B(I, J) : dense
tensor C(I, J) : dense
A(i,j) = B(i,j) * C(i,j)
schedule { parallelize(j, CPUThread, NoRaces) }
)");
  EXPECT_NE(message.find("parallelize(j, CPUThread, NoRaces): output A is assembled in order"), std::string::npos)
      << message;
}

TEST(Reorder, ColumnMajorDenseOrderMatchesReference) {
  expectProgramMatchesReference(R"(
tensor C(I, J) : dense
tensor A(I, K) : dense
tensor B(K, J) : dense
C(i,j) = A(i,k) * B(k,j)
schedule { reorder(j, k, i) }
)",
                                {{"A", randomDense({7, 5}, 5)}, {"B", randomDense({5, 6}, 6)}});
}

TEST(Reorder, BreakingSparseStorageOrderIsRefusedWithTheTensor) {
  std::string message = errorOf(withSchedule(kSpmv, "reorder(j, i)"));
  EXPECT_NE(message.find("test.tc:7:1: error: reorder(j, i): visits j before i, but A stores i above j"),
            std::string::npos) << message;
  EXPECT_NE(message.find("\nreorder(j, i)\n^"), std::string::npos) << message;
}

TEST(Schedule, CommandsNotAppliedYetAreRefusedAtTheirLocation) {
  std::string message = errorOf(withSchedule(kSpmv, "gpu_thread(i)"));
  EXPECT_NE(message.find("test.tc:7:1:"), std::string::npos) << message;
  EXPECT_NE(message.find("'gpu_thread' is checked but not applied"), std::string::npos) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

class SeparateAssembly : public ::testing::TestWithParam<std::string> {};

// assemble(A, Append, true): pos/crd in one pass, values in a second.
TEST_P(SeparateAssembly, MatchesReference) {
  std::string format = GetParam();
  expectProgramMatchesReference("tensor A(I, J) : " + format + R"(
tensor B(I, K) : csr
tensor C(K, J) : csr
A(i,j) = B(i,k) * C(k,j)
schedule { assemble(A, Append, true) }
)",
                                {{"B", randomSparse({40, 30}, 0.1, 7)}, {"C", randomSparse({30, 35}, 0.1, 8)}});
  expectProgramMatchesReference("tensor A(I, J) : " + format + R"(
tensor B(I, J) : csr
tensor C(I, J) : dcsr
A(i,j) = B(i,j) + C(i,j)
schedule { assemble(A, Append, true) }
)",
                                {{"B", randomSparse({25, 30}, 0.15, 9)}, {"C", randomSparse({25, 30}, 0.15, 10)}});
  expectProgramMatchesReference("tensor A(I, J) : " + format + R"(
tensor B(I, J) : csr
tensor C(I, K) : dense
tensor D(K, J) : dense
A(i,j) = B(i,j) * C(i,k) * D(k,j)
schedule { assemble(A, Append, true) }
)",
                                {{"B", randomSparse({20, 24}, 0.1, 11)}, {"C", randomDense({20, 5}, 12)},
                                 {"D", randomDense({5, 24}, 13)}});
}
INSTANTIATE_TEST_SUITE_P(Formats, SeparateAssembly, ::testing::Values("csr", "dcsr", "coo"));

// An output a sparse workspace fills (sparse scattering) is assembled by
// the workspace's Compress, in the one pass: a second pass would fill the
// workspace the first destroyed.
TEST(SeparateAssembly, OfAnOutputASparseWorkspaceFillsMatchesReference) {
  std::string code = expectProgramMatchesReference(R"(
tensor A(I, J) : dcsr
tensor B(I, J, K) : dense
A(i,j) = B(i,j,k)
schedule {
  reorder(j, i, k)
  assemble(A, Append, true)
}
)",
                                                   {{"B", randomSparse({6, 2, 3}, 0.4, 14)}});
  EXPECT_TRUE(contains(code, "tcc_ism_kernel_finish")) << code;
}

TEST(SeparateAssembly, InsertStrategyIsRefused) {
  std::string message = errorOf(withSchedule(R"(
tensor A(I, J) : csr
tensor B(I, J) : csr
A(i,j) = B(i,j)
)", "assemble(A, Insert)"));
  EXPECT_NE(message.find("assemble(..., Insert)"), std::string::npos) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

// (Refused until in-place updates were compiled; in_place_update_test.cpp
// has the rest.)
TEST(Statements, AnInPlaceUpdateAddsToTheValuesFromBefore) {
  expectProgramMatchesReference("tensor A(I, J) : csr\ntensor B(I, J) : csr\nA(i,j) = A(i,j) + B(i,j)\n",
                                {{"A", randomSparse({8, 6}, 0.3, 1)}, {"B", randomSparse({8, 6}, 0.3, 2)}});
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Shapes, AnOutputDeclaredSmallerThanItsIndexRangeIsAMismatch) {
  // The DSL rejects this statically; the C++ builder reaches the run-time check.
  ir::IndexVar i("i"), j("j");
  TensorVar y("y", {5}, Format::denseOfOrder(1)), A("A", {"I", "J"}, Format::csr()),
      x("x", {"J"}, Format::denseOfOrder(1));
  Program program = Program::fromStatements({y(i) = A(i, j) * x(j)}, {y, A, x});
  Kernel kernel = compile(program);
  std::map<std::string, Tensor> inputs{
      {"A", rt::pack(randomSparse({7, 4}, 0.5, 1), toRuntimeFormat(Format::csr()))},
      {"x", rt::pack(randomDense({4}, 2), toRuntimeFormat(Format::denseOfOrder(1)))}};
  try {
    kernel.run(inputs);
    FAIL() << "expected a shape mismatch";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("shape mismatch: index i ranges over 7 in A mode 1 but y mode 1 has 5"),
              std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Split, SpmvRowsInParallelBlocksMatchesReference) {
  // TACO's published CPU SpMV schedule.
  std::string code = expectProgramMatchesReference(
      withSchedule(kSpmv, "split(i, i0, i1, 16)\nparallelize(i0, CPUThread, NoRaces)"),
      {{"A", randomSparse({100, 70}, 0.1, 21)}, {"x", randomDense({70}, 22)}});
  EXPECT_NE(code.find("i = ((i0 * 16) + i1)"), std::string::npos);
}

TEST(Split, DenseReductionVariableMatchesReference) {
  expectProgramMatchesReference(R"(
tensor y(I) : dense
tensor A(I, J) : dense
tensor x(J) : dense
y(i) = A(i,j) * x(j)
schedule { split(j, j0, j1, 8) }
)",
                                {{"A", randomDense({9, 21}, 23)}, {"x", randomDense({21}, 24)}});
}

TEST(Split, SparseOutputRowsStayInOrder) {
  expectProgramMatchesReference(R"(
tensor A(I, J) : csr
tensor B(I, J) : csr
tensor C(I, J) : csr
A(i,j) = B(i,j) + C(i,j)
schedule { split(i, i0, i1, 4) }
)",
                                {{"B", randomSparse({15, 12}, 0.2, 25)}, {"C", randomSparse({15, 12}, 0.2, 26)}});
}

TEST(Split, SplitThenReorderMatchesReference) {
  expectProgramMatchesReference(R"(
tensor C(I, J) : dense
tensor A(I, K) : csr
tensor B(K, J) : dense
C(i,j) = A(i,k) * B(k,j)
schedule {
  split(j, j0, j1, 4)
  reorder(j0, i, k, j1)
}
)",
                                {{"A", randomSparse({12, 9}, 0.2, 27)}, {"B", randomDense({9, 10}, 28)}});
}

TEST(Split, AVariableASingletonLevelIteratesIsRefused) {
  const char* cooSpmv = R"(
tensor y(I) : dense
tensor A(I, J) : coo
tensor x(J) : dense
y(i) = A(i, j) * x(j)
)";
  std::string message = errorOf(withSchedule(cooSpmv, "split(j, j0, j1, 4)"));
  EXPECT_NE(message.find("test.tc:7:1: error: split(j, j0, j1, 4): j is iterated by a singleton level of A"),
            std::string::npos) << message;
  EXPECT_NE(message.find("pos(j, jpos, A(i,j))"), std::string::npos) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Unroll, InnerLoopCarriesTheUnrollPragmaAndMatchesReference) {
  std::string code = expectProgramMatchesReference(withSchedule(kSpmv, "unroll(j, 4)"),
                                                   {{"A", randomSparse({30, 40}, 0.2, 31)}, {"x", randomDense({40}, 32)}});
  EXPECT_NE(code.find("#pragma GCC unroll 4"), std::string::npos);
}

}  // namespace
}  // namespace tcc::test
