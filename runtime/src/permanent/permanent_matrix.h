// The matrix a permanent is computed over: read from any order-2 tcc_tensor,
// its columns reordered by ascending nonzero count (degree sort) and stored
// as CSC, since each Gray-code step adds or removes one column.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/runtime/abi.h"

namespace tcc::rt::permanent {

inline constexpr int kMaxOrder = 64;

// A problem with the input or the run that the user must hear about.
class PermanentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SortedColumnMatrix {
  int n = 0;
  // CSC of the column-permuted matrix: column c of it is column
  // originalColumn[c] of the input; the last column has the most nonzeros.
  std::vector<int32_t> columnStart, rows;
  std::vector<double> values;
  std::vector<int> originalColumn;
  // Nonzero entries of the input, with repeats summed (zeros dropped).
  int64_t nonzeros = 0;
  // Of the entries and n: tells checkpoints of different matrices apart.
  uint64_t fingerprint = 0;

  int64_t columnSize(int column) const { return columnStart[column + 1] - columnStart[column]; }
};

// Throws PermanentError for a matrix that is not square, larger than
// kMaxOrder, or of a datatype without arithmetic (float16).
SortedColumnMatrix readSortedColumnMatrix(const tcc_tensor& matrix);

// Scales rows and columns by powers of two (exactly, so no entry is
// rounded) until each row's and column's largest magnitude is in [1/2, 1),
// and returns e such that perm(input) = 2^e perm(scaled). Entries of very
// different magnitudes otherwise cost Ryser's alternating sum its accuracy.
int equilibrateByPowersOfTwo(SortedColumnMatrix& matrix);

// Whether the nonzero pattern holds a perfect matching; if not, the
// permanent is exactly zero (structural singularity).
bool hasPerfectMatching(const SortedColumnMatrix& matrix);

}  // namespace tcc::rt::permanent
