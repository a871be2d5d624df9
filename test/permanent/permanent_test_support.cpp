#include "permanent_test_support.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "tcc/runtime/pack.h"

namespace tcc::permanent_test {

std::string errorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no error)";
}

Matrix zeros(int n) { return Matrix{n, std::vector<double>(static_cast<size_t>(n) * n, 0.0)}; }

Matrix randomSparse(int n, double density, uint64_t seed, bool integers) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0), value(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(1, 3);
  Matrix matrix = zeros(n);
  for (double& entry : matrix.values) {
    if (coin(random) >= density) continue;
    if (integers) {
      entry = integer(random) * (coin(random) < 0.5 ? -1 : 1);
    } else {
      do entry = value(random);
      while (entry == 0);
    }
  }
  return matrix;
}

Matrix randomPattern(int n, double density, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  Matrix matrix = zeros(n);
  for (int row = 0; row < n; ++row)
    for (int column = 0; column < n; ++column) matrix.at(row, column) = row == column || coin(random) < density;
  return matrix;
}

Matrix allOnes(int n) { return Matrix{n, std::vector<double>(static_cast<size_t>(n) * n, 1.0)}; }

Matrix onesMinusIdentity(int n) {
  Matrix matrix = allOnes(n);
  for (int k = 0; k < n; ++k) matrix.at(k, k) = 0;
  return matrix;
}

Matrix blockDiagonal(const std::vector<Matrix>& blocks) {
  int n = 0;
  for (const Matrix& block : blocks) n += block.n;
  Matrix matrix = zeros(n);
  int offset = 0;
  for (const Matrix& block : blocks) {
    for (int row = 0; row < block.n; ++row)
      for (int column = 0; column < block.n; ++column) matrix.at(offset + row, offset + column) = block.at(row, column);
    offset += block.n;
  }
  return matrix;
}

Matrix randomlyPermuted(const Matrix& matrix, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<int> rows(matrix.n), columns(matrix.n);
  std::iota(rows.begin(), rows.end(), 0);
  std::iota(columns.begin(), columns.end(), 0);
  std::shuffle(rows.begin(), rows.end(), random);
  std::shuffle(columns.begin(), columns.end(), random);
  Matrix permuted = zeros(matrix.n);
  for (int row = 0; row < matrix.n; ++row)
    for (int column = 0; column < matrix.n; ++column)
      permuted.at(rows[row], columns[column]) = matrix.at(row, column);
  return permuted;
}

test::DenseArray toDenseArray(const Matrix& matrix) { return test::DenseArray{{matrix.n, matrix.n}, matrix.values}; }

rt::Tensor toTensor(const Matrix& matrix, const rt::TensorFormat& format) {
  return rt::fromDense(matrix.values, {matrix.n, matrix.n}, format);
}

namespace {

template <typename T>
T callPermanent(const rt::Tensor& matrix, rt::ValueType type, const rt::PermanentOptions& options) {
  rt::PermanentOptionsScope scope(options);
  rt::Tensor result({}, rt::TensorFormat::dense(0), type);
  tcc_tensor resultView = result.abiView();
  tcc_tensor matrixView = matrix.abiView();
  if (tcc_permanent(&resultView, &matrixView) != 0) throw std::runtime_error(tcc_permanent_last_error());
  return *static_cast<const T*>(resultView.vals);
}

}  // namespace

double floatPermanent(const rt::Tensor& matrix, const rt::PermanentOptions& options) {
  return callPermanent<double>(matrix, rt::ValueType::Float64, options);
}
int64_t exactPermanent(const rt::Tensor& matrix, const rt::PermanentOptions& options) {
  return callPermanent<int64_t>(matrix, rt::ValueType::Int64, options);
}
int32_t exactPermanent32(const rt::Tensor& matrix) { return callPermanent<int32_t>(matrix, rt::ValueType::Int32, {}); }

double ryserTolerance(const Matrix& matrix) {
  double bound = 1;
  for (int row = 0; row < matrix.n; ++row) {
    double sum = 0;
    for (int column = 0; column < matrix.n; ++column) sum += std::abs(matrix.at(row, column));
    bound *= sum;
  }
  return 64 * matrix.n * std::numeric_limits<double>::epsilon() * bound;
}

}  // namespace tcc::permanent_test
