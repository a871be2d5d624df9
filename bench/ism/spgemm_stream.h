// Component streams of outer-product SpGEMM, A = B * B: for every k, the
// products B(i,k) * B(k,j) for i in column k and j in row k. Components
// arrive unsorted and each (i,j) recurs once per k that reaches it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tcc/runtime/matrix_market.h"

namespace tcc::bench {

class OuterProductStream {
 public:
  explicit OuterProductStream(const std::string& path) {
    tcc::rt::Coo b = tcc::rt::readMatrixMarket(path);
    rows_ = b.dims.at(0);
    cols_ = b.dims.at(1);
    // Column k of B (for i) and row k of B (for j) share the index k.
    int32_t inner = rows_ == cols_ ? rows_ : std::min(rows_, cols_);
    columnPos_.assign(static_cast<std::size_t>(cols_) + 1, 0);
    rowPos_.assign(static_cast<std::size_t>(rows_) + 1, 0);
    const auto& is = b.coords.at(0);
    const auto& js = b.coords.at(1);
    for (std::size_t e = 0; e < b.nnz(); ++e) {
      ++columnPos_[js[e] + 1];
      ++rowPos_[is[e] + 1];
    }
    for (std::size_t p = 1; p < columnPos_.size(); ++p) columnPos_[p] += columnPos_[p - 1];
    for (std::size_t p = 1; p < rowPos_.size(); ++p) rowPos_[p] += rowPos_[p - 1];
    columnRows_.resize(b.nnz());
    columnVals_.resize(b.nnz());
    rowCols_.resize(b.nnz());
    rowVals_.resize(b.nnz());
    std::vector<int64_t> columnNext(columnPos_.begin(), columnPos_.end() - 1);
    std::vector<int64_t> rowNext(rowPos_.begin(), rowPos_.end() - 1);
    for (std::size_t e = 0; e < b.nnz(); ++e) {
      int64_t c = columnNext[js[e]]++;
      columnRows_[c] = is[e];
      columnVals_[c] = b.values[e];
      int64_t r = rowNext[is[e]]++;
      rowCols_[r] = js[e];
      rowVals_[r] = b.values[e];
    }
    inner_ = inner;
    for (int32_t k = 0; k < inner_; ++k) {
      components_ += (columnPos_[k + 1] - columnPos_[k]) * (rowPos_[k + 1] - rowPos_[k]);
    }
    inputNonzeros_ = static_cast<int64_t>(b.nnz());
  }

  int32_t rows() const { return rows_; }
  int32_t cols() const { return cols_; }
  int64_t components() const { return components_; }
  int64_t inputNonzeros() const { return inputNonzeros_; }

  // visit(i, j, value) once per product, in outer-product order.
  template <class Visit>
  void forEach(Visit&& visit) const {
    for (int32_t k = 0; k < inner_; ++k) {
      for (int64_t p = columnPos_[k]; p < columnPos_[k + 1]; ++p) {
        int32_t i = columnRows_[p];
        double bik = columnVals_[p];
        for (int64_t q = rowPos_[k]; q < rowPos_[k + 1]; ++q) visit(i, rowCols_[q], bik * rowVals_[q]);
      }
    }
  }

 private:
  int32_t rows_ = 0, cols_ = 0, inner_ = 0;
  int64_t components_ = 0, inputNonzeros_ = 0;
  std::vector<int64_t> columnPos_, rowPos_;
  std::vector<int32_t> columnRows_, rowCols_;
  std::vector<double> columnVals_, rowVals_;
};

}  // namespace tcc::bench
