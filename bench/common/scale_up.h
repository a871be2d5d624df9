// Out-of-cache inputs sized for the machine they run on. A scale-up is
// kron(BIG, SMALL) of two real matrices; where that is too small to leave
// the last-level cache, k copies of it along the diagonal,
// kron(I_k, BIG, SMALL) = I_k ⊗ (BIG ⊗ SMALL): every row keeps its
// pattern and gathers from a span of x as wide as before (one copy's
// columns), and a call reads k times the bytes. The bytes a call reads
// again on the next call (the matrices, x) must be at least `llcMultiple`
// times the last-level cache and the copies together at least `minNnz`
// stored entries; llcMultiple 0 keeps one copy (the sizes of the machines
// first measured, 21-26 M entries).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "tcc/runtime/coo.h"

struct OutOfCacheSizes {
  double llcMultiple = 2.0;
  long long llcBytes = 0;
  int64_t minNnz = 20'000'000;

  // Copies of one scale-up that reads `bytesOfOne` a call and stores
  // `nnzOfOne` entries.
  int copies(double bytesOfOne, double nnzOfOne) const {
    if (llcMultiple <= 0) return 1;
    const double byBytes = std::ceil(llcMultiple * double(llcBytes) / bytesOfOne);
    const double byEntries = std::ceil(double(minNnz) / nnzOfOne);
    return static_cast<int>(std::max({1.0, byBytes, byEntries}));
  }
};

// The k x k identity, the third factor of a scale-up's copies.
inline tcc::rt::Coo identityCoo(int k) {
  tcc::rt::Coo eye = tcc::rt::Coo::ofShape({k, k});
  eye.reserve(size_t(k));
  for (int32_t i = 0; i < k; ++i) {
    const int32_t c[2] = {i, i};
    eye.push(c, 1.0);
  }
  return eye;
}

// kron(I_k, m): k copies of m along the diagonal (m itself when k is 1).
inline tcc::rt::Coo diagonalCopies(const tcc::rt::Coo& m, int k) {
  return k == 1 ? m : tcc::rt::kroneckerProduct(identityCoo(k), m);
}

// "kron(BIG,SMALL)", or "kron(I_4,BIG,SMALL)" for four copies.
inline std::string scaleUpName(const std::string& big, const std::string& small, int copies) {
  return copies == 1 ? "kron(" + big + "," + small + ")"
                     : "kron(I_" + std::to_string(copies) + "," + big + "," + small + ")";
}

// CSR SpMV's bytes on an r x c matrix of n entries: pos, crd, vals, x and
// y once each (what tcc_spmv_fp_bench counts).
inline double spmvBytes(double rows, double cols, double nnz) {
  return 8.0 * (rows + 1) + 12.0 * nnz + 8.0 * cols + 8.0 * rows;
}

struct SizedScaleUp {
  std::string name;  // scaleUpName's
  tcc::rt::Coo coo;
};

// The SpMV scale-up of big ⊗ small that `sizes` asks for: as many copies
// along the diagonal as its bytes a call (spmvBytes) and entries need.
inline SizedScaleUp spmvScaleUp(const OutOfCacheSizes& sizes, const std::string& big, const tcc::rt::Coo& bigCoo,
                                const std::string& small, const tcc::rt::Coo& smallCoo) {
  const double nnzOne = double(bigCoo.nnz()) * double(smallCoo.nnz());
  const int copies = sizes.copies(
      spmvBytes(double(bigCoo.dims[0]) * smallCoo.dims[0], double(bigCoo.dims[1]) * smallCoo.dims[1], nnzOne), nnzOne);
  return {scaleUpName(big, small, copies), tcc::rt::kroneckerProduct(diagonalCopies(bigCoo, copies), smallCoo)};
}
