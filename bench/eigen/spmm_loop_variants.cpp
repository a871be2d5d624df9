// The SpMM loop nest tcc generates (C(i,k) += A(i,j) * B(j,k), A CSR, B and C
// dense row-major), as a standalone program to try compiler flags on:
//   g++ -O3 -march=native -ffp-contract=off -DVARIANT=generated spmm_loop_variants.cpp
// VARIANT=generated: the generated loops; VARIANT=row_accumulator: the row of
// C kept in a local 64-entry array. -DRESTRICT=__restrict__ adds restrict.
// Random CSR 5000 x 5000 with 30 entries per row, 64 dense columns; prints
// the median of 11 runs.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#ifndef RESTRICT
#define RESTRICT
#endif
#ifndef VARIANT
#define VARIANT generated
#endif

__attribute__((noinline)) void generated(int32_t rows, int32_t columns, const int64_t* RESTRICT pos,
                                         const int32_t* RESTRICT crd, const double* RESTRICT a,
                                         const double* RESTRICT b, double* RESTRICT c) {
  for (int32_t i = 0; i < rows; i++)
    for (int64_t p = pos[i]; p < pos[i + 1]; p++) {
      int64_t j = crd[p];
      for (int32_t k = 0; k < columns; k++) c[(int64_t)i * columns + k] += a[p] * b[j * columns + k];
    }
}

__attribute__((noinline)) void row_accumulator(int32_t rows, int32_t columns, const int64_t* RESTRICT pos,
                                               const int32_t* RESTRICT crd, const double* RESTRICT a,
                                               const double* RESTRICT b, double* RESTRICT c) {
  for (int32_t i = 0; i < rows; i++) {
    double row[64] = {0};
    for (int64_t p = pos[i]; p < pos[i + 1]; p++) {
      int64_t j = crd[p];
      for (int32_t k = 0; k < 64; k++) row[k] += a[p] * b[j * 64 + k];
    }
    for (int32_t k = 0; k < 64; k++) c[(int64_t)i * columns + k] = row[k];
  }
}

int main() {
  const int rows = 5000, perRow = 30, columns = 64;
  std::mt19937 random(1);
  std::vector<int64_t> pos(rows + 1);
  std::vector<int32_t> crd;
  std::vector<double> a;
  for (int i = 0; i < rows; i++) {
    std::vector<int> cols;
    for (int t = 0; t < perRow; t++) cols.push_back(random() % rows);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int col : cols) crd.push_back(col), a.push_back((random() % 1000) / 500.0 - 1);
    pos[i + 1] = crd.size();
  }
  std::vector<double> b((size_t)rows * columns, 0.5), c((size_t)rows * columns);
  std::vector<double> seconds;
  for (int r = 0; r < 11; r++) {
    std::fill(c.begin(), c.end(), 0);
    auto start = std::chrono::steady_clock::now();
    VARIANT(rows, columns, pos.data(), crd.data(), a.data(), b.data(), c.data());
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("%.3f ms (checksum entry %g)\n", seconds[5] * 1e3, c[7]);
}
