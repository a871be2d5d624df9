// SpMV, SpGEMM, sparse add and the transposed copy on real matrices from the
// shared data folder, against the dense reference evaluator. The matrices
// are small enough for the reference's full-range loops (n^3 <= 1e7 for
// SpGEMM).
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "reference_check.h"

namespace tcc::e2e {
namespace {

const std::vector<std::string> kMatrices = {"LF10",     "cage5",   "bcsstk01", "mesh1e1",  "bcspwr03",
                                 "gent113",  "fs_183_1", "impcol_a", "ash219"};

// The matrix with seeded values in [0.5, 1.5] of random sign, so pattern
// matrices (all ones) still have varied values.
rt::Coo realMatrix(const std::string& name) {
  rt::Coo coo = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  std::mt19937_64 random(std::hash<std::string>{}(name));
  std::uniform_real_distribution<double> magnitude(0.5, 1.5);
  for (double& value : coo.values) value = (random() & 1 ? 1 : -1) * magnitude(random) * (value == 0 ? 1 : value);
  return coo;
}

rt::Coo transposed(const rt::Coo& coo) {
  rt::Coo result = rt::Coo::ofShape({coo.dims[1], coo.dims[0]});
  result.reserve(coo.nnz());
  for (size_t k = 0; k < coo.nnz(); ++k) {
    int32_t coordinate[2] = {coo.coords[1][k], coo.coords[0][k]};
    result.push(coordinate, 0.75 * coo.values[k] + 0.1);
  }
  result.sort();
  return result;
}

rt::Coo randomVector(int32_t size, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  rt::Coo coo = rt::Coo::ofShape({size});
  for (int32_t i = 0; i < size; ++i) coo.push(&i, (random() & 1 ? 1 : -1) * value(random));
  return coo;
}

Tensor packAs(const Program& program, const std::string& name, const rt::Coo& coo) {
  return rt::pack(coo, toRuntimeFormat(program.syntax().findTensor(name)->format()));
}

class RealMatrixTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealMatrixTest, SpmvCsr) {
  Program program = Program::fromText(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n", "spmv.tc");
  rt::Coo a = realMatrix(GetParam());
  expectMatchesReference(program, {{"A", packAs(program, "A", a)}, {"x", packAs(program, "x", randomVector(a.dims[1], 1))}});
}

TEST_P(RealMatrixTest, SpgemmWithTransposeCsr) {
  // B B^T: square or not, the inner dimensions agree.
  Program program = Program::fromText(
      "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n", "spgemm.tc");
  rt::Coo b = realMatrix(GetParam());
  expectMatchesReference(program, {{"B", packAs(program, "B", b)}, {"C", packAs(program, "C", transposed(b))}});
}

TEST_P(RealMatrixTest, SpgemmSquareCsr) {
  rt::Coo b = realMatrix(GetParam());
  if (b.dims[0] != b.dims[1]) GTEST_SKIP() << "not square";
  Program program = Program::fromText(
      "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n", "spgemm.tc");
  expectMatchesReference(program, {{"B", packAs(program, "B", b)}, {"C", packAs(program, "C", b)}});
}

TEST_P(RealMatrixTest, AddWithRotatedTransposeCsr) {
  // A second operand of the same shape whose pattern differs: for a square
  // matrix its transpose; for any, the matrix with rows shifted by one.
  rt::Coo b = realMatrix(GetParam());
  rt::Coo c = b.dims[0] == b.dims[1] ? transposed(b) : rt::Coo::ofShape(b.dims);
  if (b.dims[0] != b.dims[1]) {
    for (size_t k = 0; k < b.nnz(); ++k) {
      int32_t coordinate[2] = {(b.coords[0][k] + 1) % b.dims[0], b.coords[1][k]};
      c.push(coordinate, -0.5 * b.values[k]);
    }
    c.sort();
  }
  Program program = Program::fromText(
      "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) + C(i, j)\n", "add.tc");
  expectMatchesReference(program, {{"B", packAs(program, "B", b)}, {"C", packAs(program, "C", c)}});
}

TEST_P(RealMatrixTest, TransposedCopyCsrToCsc) {
  Program program = Program::fromText("tensor A(J, I) : csc\ntensor B(I, J) : csr\nA(j, i) = B(i, j)\n", "transpose.tc");
  rt::Coo b = realMatrix(GetParam());
  expectMatchesReference(program, {{"B", packAs(program, "B", b)}});
}

INSTANTIATE_TEST_SUITE_P(SharedData, RealMatrixTest, ::testing::ValuesIn(kMatrices),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::e2e
