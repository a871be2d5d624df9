// Vector-wise N:M storage: pruning, unpacking and checks (tcc/runtime/nm.h).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "tcc/runtime/nm.h"

namespace tcc::rt {

namespace {

std::string nmName(int n, int m, int l) {
  return "nm(" + std::to_string(n) + "," + std::to_string(m) + "," + std::to_string(l) + ")";
}

const LevelSpec& nmLevelOf(const TensorFormat& format) {
  format.validate();
  if (!format.isNM())
    throw std::invalid_argument("format " + format.toString() + " is not {dense, nm(N,M,L)}");
  return format.levels[1];
}

}  // namespace

void validateNmParameters(int n, int m, int l) {
  if (m < 1 || n < 1 || n > m)
    throw std::invalid_argument(nmName(n, m, l) + ": N vectors are kept of every M, so 1 <= N <= M is needed");
  if (m > 4096) throw std::invalid_argument(nmName(n, m, l) + ": M is at most 4096");
  if (l < 1 || l > 65536) throw std::invalid_argument(nmName(n, m, l) + ": the vector length L must be 1..65536");
}

NmLayout nmLayout(const TensorFormat& format, int32_t rows, int32_t cols) {
  const LevelSpec& level = nmLevelOf(format);
  if (rows < 0 || cols < 0)
    throw std::invalid_argument("an N:M matrix has a negative dimension (" + std::to_string(rows) + "x" +
                                std::to_string(cols) + ")");
  NmLayout layout;
  layout.n = level.nmN;
  layout.m = level.nmM;
  layout.l = level.nmL;
  layout.rows = rows;
  layout.cols = cols;
  layout.windows = (static_cast<int64_t>(rows) + layout.m - 1) / layout.m;
  layout.keptRows = layout.windows * layout.n;
  layout.groups = (static_cast<int64_t>(cols) + layout.l - 1) / layout.l;
  layout.paddedCols = layout.groups * layout.l;
  return layout;
}

NmLayout nmLayout(const Tensor& tensor) {
  if (tensor.order() != 2) throw std::invalid_argument("an N:M tensor is a matrix; this one has order " +
                                                       std::to_string(tensor.order()));
  return nmLayout(tensor.format(), tensor.dims()[0], tensor.dims()[1]);
}

Tensor nmPruneAndPack(std::span<const double> dense, int32_t rows, int32_t cols, const TensorFormat& format,
                      ValueType type) {
  NmLayout layout = nmLayout(format, rows, cols);
  if (static_cast<int64_t>(dense.size()) != static_cast<int64_t>(rows) * cols)
    throw std::invalid_argument("N:M pruning: the dense array has " + std::to_string(dense.size()) +
                                " values for a " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix");
  Tensor tensor({rows, cols}, format, type);
  std::span<int32_t> offsets = tensor.levelStorage(1).crd.span();
  std::vector<double> norms(layout.m);
  std::vector<int32_t> order(layout.m);
  for (int64_t window = 0; window < layout.windows; ++window) {
    for (int64_t group = 0; group < layout.groups; ++group) {
      int64_t firstCol = group * layout.l, endCol = std::min<int64_t>(firstCol + layout.l, cols);
      for (int32_t r = 0; r < layout.m; ++r) {
        int64_t row = window * layout.m + r;
        double norm = 0;
        if (row < rows)
          for (int64_t c = firstCol; c < endCol; ++c) norm += dense[row * cols + c] * dense[row * cols + c];
        norms[r] = norm;
      }
      std::iota(order.begin(), order.end(), 0);
      // The N largest norms; ties (and NaN, which compares false) go to
      // the lower row.
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return norms[a] > norms[b]; });
      std::sort(order.begin(), order.begin() + layout.n);
      for (int kept = 0; kept < layout.n; ++kept) {
        int64_t u = window * layout.n + kept;
        int32_t offset = order[kept];
        offsets[u * layout.groups + group] = offset;
        int64_t row = window * layout.m + offset;
        if (row >= rows) continue;
        for (int64_t c = firstCol; c < endCol; ++c) {
          double value = dense[row * cols + c];
          if (type == ValueType::Int32 || type == ValueType::Int64) {
            double low = type == ValueType::Int32 ? -2147483648.0 : -9223372036854775808.0;
            double high = type == ValueType::Int32 ? 2147483648.0 : 9223372036854775808.0;
            if (!(value >= low && value < high) || std::trunc(value) != value)
              throw std::invalid_argument("value " + std::to_string(value) + " at (" + std::to_string(row + 1) + ", " +
                                          std::to_string(c + 1) + ") is not representable as " + toString(type));
          }
          tensor.setValueAtPosition(u * layout.paddedCols + c, value);
        }
      }
    }
  }
  return tensor;
}

std::vector<double> nmUnpack(const Tensor& tensor) {
  NmLayout layout = nmLayout(tensor);
  std::vector<double> dense(static_cast<size_t>(layout.rows) * layout.cols, 0.0);
  detail::forEachNmEntry(tensor, [&](const int32_t* coord, int64_t position) {
    dense[static_cast<size_t>(coord[0]) * layout.cols + coord[1]] += tensor.valueAtPosition(position);
  });
  return dense;
}

void validateNmStorage(const Tensor& tensor) {
  NmLayout layout = nmLayout(tensor);
  std::string where = "level 1 (" + tensor.format().levels[1].toString() + ")";
  std::span<const int32_t> offsets = tensor.crd(1);
  if (static_cast<int64_t>(offsets.size()) != layout.indexCount())
    throw std::invalid_argument(where + ": the index matrix has " + std::to_string(offsets.size()) +
                                " entries, expected " + std::to_string(layout.keptRows) + "x" +
                                std::to_string(layout.groups));
  if (tensor.nnz() != layout.valueCount())
    throw std::invalid_argument(where + ": the values array has " + std::to_string(tensor.nnz()) +
                                " entries, expected " + std::to_string(layout.keptRows) + "x" +
                                std::to_string(layout.paddedCols));
  for (int64_t window = 0; window < layout.windows; ++window) {
    for (int64_t group = 0; group < layout.groups; ++group) {
      for (int kept = 0; kept < layout.n; ++kept) {
        int64_t u = window * layout.n + kept;
        int32_t offset = offsets[u * layout.groups + group];
        std::string entry = where + ": index D[" + std::to_string(u) + "][" + std::to_string(group) + "] = " +
                            std::to_string(offset);
        if (offset < 0 || offset >= layout.m)
          throw std::invalid_argument(entry + " is outside 0.." + std::to_string(layout.m - 1));
        if (kept > 0 && offsets[(u - 1) * layout.groups + group] >= offset)
          throw std::invalid_argument(entry + " does not follow the window's previous index " +
                                      std::to_string(offsets[(u - 1) * layout.groups + group]) +
                                      " (the indices of a window are distinct and increasing)");
        bool paddedRow = layout.sourceRow(u, offset) >= layout.rows;
        for (int64_t c = group * layout.l; c < (group + 1) * layout.l; ++c) {
          if ((paddedRow || c >= layout.cols) && tensor.valueAtPosition(u * layout.paddedCols + c) != 0)
            throw std::invalid_argument(where + ": padding entry B'[" + std::to_string(u) + "][" + std::to_string(c) +
                                        "] (outside the " + std::to_string(layout.rows) + "x" +
                                        std::to_string(layout.cols) + " matrix) is not zero");
        }
      }
    }
  }
}

double nmValueAt(const Tensor& tensor, int32_t row, int32_t col) {
  NmLayout layout = nmLayout(tensor);
  std::span<const int32_t> offsets = tensor.crd(1);
  int64_t window = row / layout.m, group = col / layout.l;
  for (int kept = 0; kept < layout.n; ++kept) {
    int64_t u = window * layout.n + kept;
    if (offsets[u * layout.groups + group] == row % layout.m)
      return tensor.valueAtPosition(u * layout.paddedCols + col);
  }
  return 0;
}

}  // namespace tcc::rt
