// Matrices with known permanents, and the runtime kernel called the way
// generated code calls it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tcc/runtime/permanent.h"
#include "tcc/runtime/tensor.h"
#include "tcc/test/reference.h"

namespace tcc::permanent_test {

struct Matrix {
  int n = 0;
  std::vector<double> values;  // row-major
  double& at(int row, int column) { return values[static_cast<size_t>(row) * n + column]; }
  double at(int row, int column) const { return values[static_cast<size_t>(row) * n + column]; }
};

// The message of the exception `body` throws, or "(no error)".
std::string errorOf(const std::function<void()>& body);

Matrix zeros(int n);
// Each entry nonzero with probability `density`: uniform in [-1, 1]
// (never 0), or when `integers`, one of +-1, +-2, +-3.
Matrix randomSparse(int n, double density, uint64_t seed, bool integers = false);
// Erdos-Renyi 0/1 pattern with the diagonal set, so it has a perfect matching.
Matrix randomPattern(int n, double density, uint64_t seed);
Matrix allOnes(int n);
Matrix onesMinusIdentity(int n);
Matrix blockDiagonal(const std::vector<Matrix>& blocks);
// P A Q for random permutations P and Q.
Matrix randomlyPermuted(const Matrix& matrix, uint64_t seed);

test::DenseArray toDenseArray(const Matrix& matrix);
rt::Tensor toTensor(const Matrix& matrix, const rt::TensorFormat& format);

// tcc_permanent on a float64 (or int64) result; throws std::runtime_error
// with tcc_permanent_last_error() when it fails.
double floatPermanent(const rt::Tensor& matrix, const rt::PermanentOptions& options = {});
int64_t exactPermanent(const rt::Tensor& matrix, const rt::PermanentOptions& options = {});
int32_t exactPermanent32(const rt::Tensor& matrix);

// A bound on the rounding error of Ryser's sum in double precision:
// 64 n eps prod_i sum_j |a_ij|.
double ryserTolerance(const Matrix& matrix);

}  // namespace tcc::permanent_test
