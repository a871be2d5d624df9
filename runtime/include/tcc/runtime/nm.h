// Vector-wise N:M storage of a matrix B (k x n), format {dense, nm(N,M,L)}.
//
// The k rows fall into windows of M consecutive rows; along n, each row is
// cut into vectors of L entries (q = ceil(n / L) column groups). In every
// window and group, N of the M vectors are kept: those of the largest
// Euclidean norm when a dense matrix is pruned. What is stored:
//
//   values  B' (w x q*L, row-major), w = ceil(k / M) * N: kept row u holds,
//           in group g, the vector of B's row  (u / N) * M + D[u][g];
//   crd     of the nm level: the index matrix D (w x q, row-major), each
//           entry the kept row's offset in its window, 0..M-1; the N
//           entries of one window and group are distinct and increasing.
//
// When k % M or n % L is not zero the last window and group are padded:
// padded rows and columns hold zeros (a padded row may be kept when its
// window has fewer than N nonzero vectors). The level's pos is empty.
//
// The product C = A * B over this storage is, per the N:M SpMM paper,
//   C[i][j] = sum_u A[i][(u / N) * M + D[u][j / L]] * B'[u][j]
// over kept rows u whose source row is below k.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tcc/runtime/tensor.h"

namespace tcc::rt {

// Sizes of one N:M matrix's storage.
struct NmLayout {
  int n = 0, m = 0, l = 0;     // N, M, L
  int32_t rows = 0, cols = 0;  // k and n of the matrix
  int64_t windows = 0;         // ceil(k / M)
  int64_t keptRows = 0;        // w = windows * N
  int64_t groups = 0;          // q = ceil(n / L)
  int64_t paddedCols = 0;      // q * L

  int64_t indexCount() const { return keptRows * groups; }
  int64_t valueCount() const { return keptRows * paddedCols; }
  // The row of B that kept row u holds in group g, given D's entry.
  int64_t sourceRow(int64_t u, int32_t offset) const { return (u / n) * m + offset; }
  // Fraction of B's entries pruned: 1 - N/M.
  double sparsity() const { return 1.0 - static_cast<double>(n) / m; }
};

// Throws std::invalid_argument unless 1 <= N <= M and L >= 1 (and M and L
// fit the kernels' 16-bit index arithmetic: M <= 4096, L <= 65536).
void validateNmParameters(int n, int m, int l);

// The layout of a k x n matrix in `format` ({dense, nm(N,M,L)}).
NmLayout nmLayout(const TensorFormat& format, int32_t rows, int32_t cols);
NmLayout nmLayout(const Tensor& tensor);

// Prunes a dense row-major k x n matrix to N:M: in every window of M rows
// and group of L columns, the N vectors of the largest norm are kept (ties
// go to the lower row). Throws std::invalid_argument for a format that is
// not {dense, nm(N,M,L)}, or for a value the element type cannot hold.
Tensor nmPruneAndPack(std::span<const double> dense, int32_t rows, int32_t cols, const TensorFormat& format,
                      ValueType type = ValueType::Float32);

// The dense row-major k x n matrix an N:M tensor stands for (pruned
// entries are 0).
std::vector<double> nmUnpack(const Tensor& tensor);

// The N:M tensor's storage checks (Tensor::validate calls it): array
// sizes, D's entries within 0..M-1 and distinct per window and group,
// padded entries zero.
void validateNmStorage(const Tensor& tensor);

// The value at (row, col), 0 where the vector was pruned.
double nmValueAt(const Tensor& tensor, int32_t row, int32_t col);

namespace detail {
// Calls visit(const int32_t* coord, int64_t position) for every entry of a
// kept vector inside the k x n matrix (padding left out), in storage order.
template <typename Visit>
void forEachNmEntry(const Tensor& tensor, Visit&& visit) {
  NmLayout layout = nmLayout(tensor);
  std::span<const int32_t> offsets = tensor.crd(1);
  int32_t coord[2];
  for (int64_t u = 0; u < layout.keptRows; ++u) {
    for (int64_t g = 0; g < layout.groups; ++g) {
      int64_t row = layout.sourceRow(u, offsets[u * layout.groups + g]);
      if (row >= layout.rows) continue;
      for (int64_t c = g * layout.l; c < (g + 1) * layout.l && c < layout.cols; ++c) {
        coord[0] = static_cast<int32_t>(row);
        coord[1] = static_cast<int32_t>(c);
        visit(static_cast<const int32_t*>(coord), u * layout.paddedCols + c);
      }
    }
  }
}
}  // namespace detail

}  // namespace tcc::rt
