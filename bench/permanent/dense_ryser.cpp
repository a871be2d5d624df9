#include "dense_ryser.h"

#include <cstddef>
#include <cstdint>

namespace tcc::bench {

double denseGrayCodeRyser(const std::vector<double>& a, int n) {
  if (n == 0) return 1;
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) {
    double rowSum = 0;
    for (int j = 0; j < n; ++j) rowSum += a[static_cast<size_t>(i) * n + j];
    x[i] = a[static_cast<size_t>(i) * n + n - 1] - rowSum / 2;
  }
  double sum = 1;
  for (int i = 0; i < n; ++i) sum *= x[i];
  const uint64_t iterations = uint64_t{1} << (n - 1);
  for (uint64_t g = 1; g < iterations; ++g) {
    const int column = __builtin_ctzll(g);
    const double sign = ((g ^ (g >> 1)) >> column) & 1 ? 1.0 : -1.0;
    double product = 1;
    for (int i = 0; i < n; ++i) {
      x[i] += sign * a[static_cast<size_t>(i) * n + column];
      product *= x[i];
    }
    sum += (g & 1) ? -product : product;
  }
  return (n % 2 == 1 ? 2.0 : -2.0) * sum;
}

}  // namespace tcc::bench
