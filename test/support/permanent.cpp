#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "tcc/test/reference.h"

namespace tcc::test {

// Ryser: perm(A) = (-1)^n sum over nonempty column subsets S of
// (-1)^|S| prod_i sum_{j in S} a_ij, visiting subsets in Gray code order so
// each step adds or removes one column from the row sums.
double permanent(const DenseArray& matrix) {
  if (matrix.order() != 2 || matrix.dims[0] != matrix.dims[1])
    throw std::invalid_argument("permanent: expects a square matrix");
  const int64_t n = matrix.dims[0];
  if (n == 0) return 1.0;
  if (n > 30) throw std::invalid_argument("permanent: n = " + std::to_string(n) + " is too large to enumerate");
  // Rows, then columns, scaled by powers of two (exact) to a largest
  // magnitude of 1, and the scale multiplied back at the end: entries of
  // very different sizes would otherwise cost the alternating sum all its
  // accuracy.
  std::vector<double> scaled = matrix.values;
  int exponent = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int64_t rowStride = pass == 0 ? n : 1, columnStride = pass == 0 ? 1 : n;
    for (int64_t line = 0; line < n; ++line) {
      double largest = 0.0;
      for (int64_t k = 0; k < n; ++k) largest = std::max(largest, std::abs(scaled[line * rowStride + k * columnStride]));
      if (largest == 0.0) return 0.0;
      int shift = 0;
      std::frexp(largest, &shift);
      exponent += shift;
      for (int64_t k = 0; k < n; ++k) {
        double& entry = scaled[line * rowStride + k * columnStride];
        entry = std::ldexp(entry, -shift);
      }
    }
  }
  std::vector<double> rowSums(n, 0.0);
  double total = 0.0;
  uint64_t previousGray = 0;
  for (uint64_t step = 1; step < (uint64_t{1} << n); ++step) {
    uint64_t gray = step ^ (step >> 1);
    uint64_t flipped = gray ^ previousGray;
    int column = __builtin_ctzll(flipped);
    double sign = (gray & flipped) ? 1.0 : -1.0;  // column added or removed
    for (int64_t row = 0; row < n; ++row) rowSums[row] += sign * scaled[row * n + column];
    previousGray = gray;
    double product = 1.0;
    for (int64_t row = 0; row < n; ++row) product *= rowSums[row];
    int subsetSize = __builtin_popcountll(gray);
    total += ((subsetSize % 2) == (n % 2) ? 1.0 : -1.0) * product;
  }
  return std::ldexp(total, exponent);
}

double permanentByPermutations(const DenseArray& matrix) {
  if (matrix.order() != 2 || matrix.dims[0] != matrix.dims[1])
    throw std::invalid_argument("permanentByPermutations: expects a square matrix");
  const int64_t n = matrix.dims[0];
  if (n > 10) throw std::invalid_argument("permanentByPermutations: n = " + std::to_string(n) + " is too large");
  std::vector<int64_t> sigma(n);
  std::iota(sigma.begin(), sigma.end(), 0);
  double total = 0.0;
  do {
    double product = 1.0;
    for (int64_t row = 0; row < n; ++row) product *= matrix.values[row * n + sigma[row]];
    total += product;
  } while (std::next_permutation(sigma.begin(), sigma.end()));
  return total;
}

}  // namespace tcc::test
