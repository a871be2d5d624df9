// TACO's published CPU schedules (Senanayake et al., "A Sparse Iteration
// Space Transformation Framework for Sparse Tensor Algebra", OOPSLA 2020),
// written in the DSL and checked against the dense reference on random and
// real inputs.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {


const char* kSpmv = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
y(i) = A(i,j) * x(j)
schedule {
  split(i, i0, i1, 32)
  parallelize(i0, CPUThread, NoRaces)
}
)";

const char* kSpmm = R"(
tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense
C(i,k) = A(i,j) * B(j,k)
schedule {
  split(i, i0, i1, 32)
  pos(j, jpos, A(i,j))
  split(jpos, jpos0, jpos1, 4)
  reorder(i0, i1, jpos0, k, jpos1)
  parallelize(i0, CPUThread, NoRaces)
  parallelize(k, CPUVector, IgnoreRaces)
}
)";

const char* kSddmm = R"(
tensor A(I, J) : dense
tensor B(I, J) : csr
tensor C(I, K) : dense
tensor D(K, J) : dense
A(i,j) = B(i,j) * C(i,k) * D(k,j)
schedule {
  fuse(i, j, f)
  pos(f, fpos, B(i,j))
  split(fpos, f0, f1, 16)
  parallelize(f0, CPUThread, NoRaces)
}
)";

const char* kMttkrp = R"(
tensor A(I, J) : dense
tensor B(I, K, L) : csf
tensor C(K, J) : dense
tensor D(L, J) : dense
A(i,j) = B(i,k,l) * D(l,j) * C(k,j)
schedule {
  precompute(B(i,k,l) * D(l,j), j, j)
  parallelize(i, CPUThread, NoRaces)
}
)";

const char* kSpgemm = R"(
tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
A(i,j) = B(i,k) * C(k,j)
schedule {
  precompute(B(i,k) * C(k,j), j, j)
  split(i, i0, i1, 16)
  parallelize(i0, CPUThread, NoRaces)
}
)";

TEST(TacoSchedules, SpmvRandom) {
  std::string code = expectProgramMatchesReference(
      kSpmv, {{"A", randomSparse({300, 250}, 0.03, 1)}, {"x", randomDense({250}, 2)}});
  EXPECT_TRUE(contains(code, "#pragma omp parallel for")) << code;
}

TEST(TacoSchedules, SpmmRandom) {
  std::string code = expectProgramMatchesReference(
      kSpmm, {{"A", randomSparse({130, 90}, 0.06, 3)}, {"B", randomDense({90, 17}, 4)}});
  EXPECT_TRUE(contains(code, "#pragma omp simd")) << code;
  EXPECT_TRUE(contains(code, "jpos_begin")) << code;
}

TEST(TacoSchedules, SddmmRandom) {
  std::string code = expectProgramMatchesReference(
      kSddmm, {{"B", randomSparse({70, 60}, 0.05, 5)}, {"C", randomDense({70, 9}, 6)}, {"D", randomDense({9, 60}, 7)}});
  EXPECT_TRUE(contains(code, "tcc_segment_of")) << code;
}

TEST(TacoSchedules, SddmmWithEmptyRows) {
  // Rows without entries are skipped by the segment cursor.
  expectProgramMatchesReference(
      kSddmm, {{"B", randomSparse({80, 50}, 0.01, 8)}, {"C", randomDense({80, 5}, 9)}, {"D", randomDense({5, 50}, 10)}});
}

TEST(TacoSchedules, MttkrpRandom) {
  expectProgramMatchesReference(kMttkrp, {{"B", randomSparse({20, 15, 12}, 0.05, 11)},
                                          {"C", randomDense({15, 8}, 12)},
                                          {"D", randomDense({12, 8}, 13)}});
}

TEST(TacoSchedules, SpgemmRandom) {
  std::string code = expectProgramMatchesReference(
      kSpgemm, {{"B", randomSparse({90, 70}, 0.05, 14)}, {"C", randomSparse({70, 80}, 0.05, 15)}});
  EXPECT_TRUE(contains(code, "prefix sum")) << code;
}

class TacoSchedulesOnRealMatrices : public ::testing::TestWithParam<std::string> {};

TEST_P(TacoSchedulesOnRealMatrices, MatchReference) {
  rt::Coo matrix = realMatrix(GetParam());
  int32_t rows = matrix.dims[0], columns = matrix.dims[1];
  expectProgramMatchesReference(kSpmv, {{"A", matrix}, {"x", randomDense({columns}, 21)}});
  expectProgramMatchesReference(kSpmm, {{"A", matrix}, {"B", randomDense({columns, 8}, 22)}});
  expectProgramMatchesReference(
      kSddmm, {{"B", matrix}, {"C", randomDense({rows, 4}, 23)}, {"D", randomDense({4, columns}, 24)}});
  if (rows == columns) expectProgramMatchesReference(kSpgemm, {{"B", matrix}, {"C", matrix}});
}

INSTANTIATE_TEST_SUITE_P(SharedData, TacoSchedulesOnRealMatrices, ::testing::Values("494_bus.mtx", "bcsstk01.mtx", "west0497.mtx", "ash219.mtx"));

}  // namespace
}  // namespace tcc::test
