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

std::string withSchedule(const std::string& program, const std::string& schedule) {
  return program + "schedule {\n" + schedule + "\n}\n";
}

std::string errorOf(const std::string& dsl) {
  try {
    compile(Program::fromText(dsl, "test.tc"));
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

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

TEST(Parallelize, SparseOutputAssemblyIsRefused) {
  std::string message = errorOf(R"(
tensor A(I, J) : csr
tensor B(I, J) : csr
tensor C(I, J) : csr
A(i,j) = B(i,j) + C(i,j)
schedule { parallelize(i, CPUThread, NoRaces) }
)");
  EXPECT_NE(message.find("one shared append position"), std::string::npos) << message;
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
  EXPECT_NE(message.find("reorder(j, i) visits j before i, but A stores i above j"), std::string::npos) << message;
}

TEST(Schedule, CommandsNotAppliedYetAreRefusedAtTheirLocation) {
  std::string message = errorOf(withSchedule(kSpmv, "split(i, i0, i1, 32)"));
  EXPECT_NE(message.find("test.tc:"), std::string::npos) << message;
  EXPECT_NE(message.find("'split' is checked but not applied"), std::string::npos) << message;
}

}  // namespace
}  // namespace tcc::test
