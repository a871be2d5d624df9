// The nonzero split in one order (fp strict's split, orderedSplitSums in
// gpu_spmm_mappings.h) computed on the CPU in the order the split adds, in
// float32: each share's row segments summed from zero in position order,
// then a row that crosses shares adds its later shares' segments in share
// order. The split's result must have these bits, on the CPU (its IR run
// serially) and on the GPU (no FMA contraction under fp strict), every run.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tcc/runtime/random.h"

namespace tcc::test {

// The statement the split is for: the default CSR SpMM, float32.
inline constexpr const char* kCsrSpmmFloat32 = R"(tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float32
tensor B(J, K) : dense of float32

C(i, k) = A(i, j) * B(j, k)
target cuda
)";

// C = A B, `a` in its CSR's position order (rt::unpack of the packed
// matrix: the values the kernel reads), `b` its rows x N values (float32
// values as doubles), in shares of `share` nonzeros.
inline std::vector<double> orderedSplitSums(const rt::Coo& a, const std::vector<double>& b, int32_t columns,
                                            int share) {
  const int64_t rows = a.dims[0], nonzeros = static_cast<int64_t>(a.nnz());
  std::vector<int64_t> pos(rows + 1, 0);
  for (int64_t p = 0; p < nonzeros; ++p) {
    EXPECT_TRUE(p == 0 || a.coords[0][p - 1] <= a.coords[0][p]) << "not in row order";
    ++pos[a.coords[0][p] + 1];
  }
  for (int64_t r = 0; r < rows; ++r) pos[r + 1] += pos[r];
  const int64_t shares = (nonzeros + share - 1) / share;
  std::vector<float> c(size_t(rows) * columns, 0.0f), slots(size_t(shares) * columns, 0.0f);
  for (int64_t s = 0; s < shares; ++s)
    for (int32_t k = 0; k < columns; ++k) {
      float sum = 0.0f;
      int64_t row = -1, start = -1;
      auto flush = [&] {
        if (row < 0) return;
        if (pos[row] < start)
          slots[size_t(s) * columns + k] = sum;
        else
          c[size_t(row) * columns + k] = sum;
      };
      for (int64_t p = s * share; p < std::min(nonzeros, (s + 1) * share); ++p) {
        if (a.coords[0][p] != row) {
          flush();
          sum = 0.0f;
          row = a.coords[0][p];
          start = p;
        }
        const float product = static_cast<float>(a.values[p]) *
                              static_cast<float>(b[size_t(a.coords[1][p]) * columns + k]);
        sum = sum + product;
      }
      flush();
    }
  for (int64_t r = 0; r < rows; ++r) {
    if (pos[r] == pos[r + 1]) continue;
    const int64_t first = pos[r] / share, last = (pos[r + 1] - 1) / share;
    for (int32_t k = 0; k < columns && first < last; ++k) {
      float sum = c[size_t(r) * columns + k];
      for (int64_t t = first + 1; t <= last; ++t) sum = sum + slots[size_t(t) * columns + k];
      c[size_t(r) * columns + k] = sum;
    }
  }
  return std::vector<double>(c.begin(), c.end());
}

}  // namespace tcc::test
