#include "tcc/runtime/coo.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace tcc::rt {

Coo Coo::ofShape(std::vector<int32_t> dims) {
  Coo coo;
  coo.coords.resize(dims.size());
  coo.dims = std::move(dims);
  return coo;
}

void Coo::reserve(size_t entries) {
  for (auto& modeCoords : coords) modeCoords.reserve(entries);
  values.reserve(entries);
}

void Coo::push(const int32_t* coordinate, double value) {
  for (int mode = 0; mode < order(); ++mode) coords[mode].push_back(coordinate[mode]);
  values.push_back(value);
}

void Coo::sort() {
  std::vector<size_t> permutation(nnz());
  std::iota(permutation.begin(), permutation.end(), size_t{0});
  std::stable_sort(permutation.begin(), permutation.end(), [&](size_t a, size_t b) {
    for (int mode = 0; mode < order(); ++mode) {
      if (coords[mode][a] != coords[mode][b]) return coords[mode][a] < coords[mode][b];
    }
    return false;
  });
  for (auto& modeCoords : coords) {
    std::vector<int32_t> sorted(modeCoords.size());
    for (size_t k = 0; k < permutation.size(); ++k) sorted[k] = modeCoords[permutation[k]];
    modeCoords = std::move(sorted);
  }
  std::vector<double> sortedValues(values.size());
  for (size_t k = 0; k < permutation.size(); ++k) sortedValues[k] = values[permutation[k]];
  values = std::move(sortedValues);
}

Coo kroneckerProduct(const Coo& a, const Coo& b) {
  if (a.order() != 2 || b.order() != 2) throw std::invalid_argument("a Kronecker product takes two matrices");
  Coo product = Coo::ofShape({a.dims[0] * b.dims[0], a.dims[1] * b.dims[1]});
  product.reserve(a.nnz() * b.nnz());
  for (size_t p = 0; p < a.nnz(); ++p)
    for (size_t q = 0; q < b.nnz(); ++q) {
      int32_t c[2] = {a.coords[0][p] * b.dims[0] + b.coords[0][q], a.coords[1][p] * b.dims[1] + b.coords[1][q]};
      product.push(c, a.values[p] * b.values[q]);
    }
  return product;
}

}  // namespace tcc::rt
