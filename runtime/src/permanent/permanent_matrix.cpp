#include "permanent_matrix.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

namespace tcc::rt::permanent {
namespace {

double valueAt(const tcc_tensor& tensor, int64_t position) {
  switch (tensor.datatype) {
    case TCC_FLOAT64: return static_cast<const double*>(tensor.vals)[position];
    case TCC_FLOAT32: return static_cast<const float*>(tensor.vals)[position];
    case TCC_INT32: return static_cast<const int32_t*>(tensor.vals)[position];
    case TCC_INT64: return static_cast<double>(static_cast<const int64_t*>(tensor.vals)[position]);
    default: throw PermanentError("perm: the matrix's element type has no arithmetic here (float16 is storage only)");
  }
}

// Visits every stored entry: level by level, each level dense, compressed
// or singleton, in the tensor's mode order.
void walkLevels(const tcc_tensor& tensor, int level, int64_t parentPosition, int coordinates[2],
                std::vector<double>& dense, int n) {
  const tcc_level& storage = tensor.levels[level];
  const int mode = tensor.mode_ordering[level];
  auto visit = [&](int coordinate, int64_t position) {
    coordinates[mode] = coordinate;
    if (level + 1 < tensor.order)
      walkLevels(tensor, level + 1, position, coordinates, dense, n);
    else
      dense[static_cast<size_t>(coordinates[0]) * n + coordinates[1]] += valueAt(tensor, position);
  };
  switch (storage.kind) {
    case TCC_LEVEL_DENSE:
      for (int coordinate = 0; coordinate < storage.size; ++coordinate)
        visit(coordinate, parentPosition * storage.size + coordinate);
      break;
    case TCC_LEVEL_COMPRESSED:
      for (int64_t position = storage.pos[parentPosition]; position < storage.pos[parentPosition + 1]; ++position)
        visit(storage.crd[position], position);
      break;
    case TCC_LEVEL_SINGLETON: visit(storage.crd[parentPosition], parentPosition); break;
    default: throw PermanentError("perm: the matrix has a level kind the CPU permanent cannot read");
  }
}

uint64_t fnv1a(uint64_t hash, const void* bytes, size_t size) {
  const auto* data = static_cast<const unsigned char*>(bytes);
  for (size_t k = 0; k < size; ++k) hash = (hash ^ data[k]) * 1099511628211ULL;
  return hash;
}

}  // namespace

SortedColumnMatrix readSortedColumnMatrix(const tcc_tensor& tensor) {
  if (tensor.order != 2) throw PermanentError("perm: expects a matrix, got a tensor of order " + std::to_string(tensor.order));
  const int rows = tensor.dims[0], columns = tensor.dims[1];
  if (rows != columns)
    throw PermanentError("perm: expects a square matrix, got " + std::to_string(rows) + " x " + std::to_string(columns));
  if (rows > kMaxOrder)
    throw PermanentError("perm: the matrix is " + std::to_string(rows) + " x " + std::to_string(rows) +
                         "; the permanent kernel handles n <= " + std::to_string(kMaxOrder) +
                         " (2^(n-1) iterations)");
  const int n = rows;
  std::vector<double> dense(static_cast<size_t>(n) * n, 0.0);
  int coordinates[2] = {0, 0};
  if (n > 0) walkLevels(tensor, 0, 0, coordinates, dense, n);

  SortedColumnMatrix matrix;
  matrix.n = n;
  std::vector<int64_t> degree(n, 0);
  for (int row = 0; row < n; ++row)
    for (int column = 0; column < n; ++column) degree[column] += dense[static_cast<size_t>(row) * n + column] != 0;
  matrix.originalColumn.resize(n);
  std::iota(matrix.originalColumn.begin(), matrix.originalColumn.end(), 0);
  std::stable_sort(matrix.originalColumn.begin(), matrix.originalColumn.end(),
                   [&](int a, int b) { return degree[a] < degree[b]; });
  matrix.columnStart.push_back(0);
  for (int column : matrix.originalColumn) {
    for (int row = 0; row < n; ++row) {
      double value = dense[static_cast<size_t>(row) * n + column];
      if (value == 0) continue;
      matrix.rows.push_back(row);
      matrix.values.push_back(value);
    }
    matrix.columnStart.push_back(static_cast<int32_t>(matrix.rows.size()));
  }
  matrix.nonzeros = static_cast<int64_t>(matrix.rows.size());
  uint64_t hash = fnv1a(1469598103934665603ULL, &matrix.n, sizeof matrix.n);
  for (double value : dense) {
    uint64_t bits = std::bit_cast<uint64_t>(value == 0 ? 0.0 : value);  // -0 and 0 alike
    hash = fnv1a(hash, &bits, sizeof bits);
  }
  matrix.fingerprint = hash;
  return matrix;
}

int equilibrateByPowersOfTwo(SortedColumnMatrix& matrix) {
  const int n = matrix.n;
  int exponent = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<double> rowMax(n, 0.0);
    for (int64_t k = 0; k < matrix.nonzeros; ++k)
      rowMax[matrix.rows[k]] = std::max(rowMax[matrix.rows[k]], std::abs(matrix.values[k]));
    std::vector<int> rowShift(n, 0);
    for (int row = 0; row < n; ++row) {
      if (rowMax[row] == 0) continue;
      std::frexp(rowMax[row], &rowShift[row]);  // rowMax = m * 2^shift, m in [1/2, 1)
      exponent += rowShift[row];
    }
    for (int64_t k = 0; k < matrix.nonzeros; ++k)
      matrix.values[k] = std::ldexp(matrix.values[k], -rowShift[matrix.rows[k]]);
    for (int column = 0; column < n; ++column) {
      double columnMax = 0;
      for (int32_t k = matrix.columnStart[column]; k < matrix.columnStart[column + 1]; ++k)
        columnMax = std::max(columnMax, std::abs(matrix.values[k]));
      if (columnMax == 0) continue;
      int shift = 0;
      std::frexp(columnMax, &shift);
      exponent += shift;
      for (int32_t k = matrix.columnStart[column]; k < matrix.columnStart[column + 1]; ++k)
        matrix.values[k] = std::ldexp(matrix.values[k], -shift);
    }
  }
  return exponent;
}

bool hasPerfectMatching(const SortedColumnMatrix& matrix) {
  const int n = matrix.n;
  std::vector<int> rowMatchedTo(n, -1);
  // Kuhn's augmenting paths; n <= 64 keeps this trivially cheap.
  std::vector<char> visited(n);
  auto augment = [&](auto&& self, int column) -> bool {
    for (int32_t k = matrix.columnStart[column]; k < matrix.columnStart[column + 1]; ++k) {
      int row = matrix.rows[k];
      if (visited[row]) continue;
      visited[row] = 1;
      if (rowMatchedTo[row] < 0 || self(self, rowMatchedTo[row])) {
        rowMatchedTo[row] = column;
        return true;
      }
    }
    return false;
  };
  for (int column = 0; column < n; ++column) {
    std::fill(visited.begin(), visited.end(), 0);
    if (!augment(augment, column)) return false;
  }
  return true;
}

}  // namespace tcc::rt::permanent
