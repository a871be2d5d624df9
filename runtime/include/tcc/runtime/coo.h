// Coordinate lists: the exchange form between files, generators and packed
// tensors. Entries may be unsorted and may repeat (pack sums or rejects
// repeats). Values are doubles, so integers are exact up to 2^53; the
// readers refuse integer values beyond that rather than round them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tcc::rt {

struct Coo {
  std::vector<int32_t> dims;
  std::vector<std::vector<int32_t>> coords;  // coords[mode][k], 0-based
  std::vector<double> values;

  int order() const { return static_cast<int>(dims.size()); }
  size_t nnz() const { return values.size(); }

  // An empty list of the given shape (coords has one vector per mode).
  static Coo ofShape(std::vector<int32_t> dims);
  void reserve(size_t entries);
  // Appends one entry; coordinate has order() elements.
  void push(const int32_t* coordinate, double value);
  // Sorts entries lexicographically by mode 0, 1, ... (stable).
  void sort();
};

// The Kronecker product of two matrices: (a.rows * b.rows) x (a.cols *
// b.cols), entry (i * b.rows + k, j * b.cols + l) = a(i, j) * b(k, l). The
// benchmarks' scale-ups: large inputs that keep real matrices' structure.
Coo kroneckerProduct(const Coo& a, const Coo& b);

}  // namespace tcc::rt
