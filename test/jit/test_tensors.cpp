#include "test_tensors.h"

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

namespace tcc::jit::testing {

CsrMatrix randomCsr(int rows, int columns, double density, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<int> column(0, columns - 1);
  const int perRow = std::max(1, static_cast<int>(density * columns));
  CsrMatrix matrix;
  matrix.rows = rows;
  matrix.columns = columns;
  matrix.pos.push_back(0);
  std::vector<int> rowColumns;
  for (int i = 0; i < rows; ++i) {
    rowColumns.clear();
    for (int k = 0; k < perRow; ++k) rowColumns.push_back(column(random));
    std::sort(rowColumns.begin(), rowColumns.end());
    rowColumns.erase(std::unique(rowColumns.begin(), rowColumns.end()), rowColumns.end());
    for (int j : rowColumns) {
      matrix.crd.push_back(j);
      double v = value(random);
      matrix.vals.push_back(v == 0.0 ? 0.5 : v);
    }
    matrix.pos.push_back(static_cast<long long>(matrix.crd.size()));
  }
  return matrix;
}

CsfTensor randomCsf(int dim0, int dim1, int dim2, long long nonzeros, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::set<std::tuple<int, int, int>> coordinates;
  while (static_cast<long long>(coordinates.size()) < nonzeros)
    coordinates.insert({static_cast<int>(random() % dim0), static_cast<int>(random() % dim1),
                        static_cast<int>(random() % dim2)});
  CsfTensor tensor;
  tensor.dims[0] = dim0;
  tensor.dims[1] = dim1;
  tensor.dims[2] = dim2;
  for (auto& pos : tensor.pos) pos.push_back(0);
  // Coordinates arrive sorted: open a new fiber whenever a prefix changes.
  bool first = true;
  int last0 = -1, last1 = -1;
  for (const auto& [i, k, l] : coordinates) {
    bool newI = first || i != last0;
    bool newK = newI || k != last1;
    if (newI) {
      if (!first) tensor.pos[1].push_back(static_cast<long long>(tensor.crd[1].size()));
      tensor.crd[0].push_back(i);
    }
    if (newK) {
      if (!first) tensor.pos[2].push_back(static_cast<long long>(tensor.crd[2].size()));
      tensor.crd[1].push_back(k);
    }
    tensor.crd[2].push_back(l);
    double v = value(random);
    tensor.vals.push_back(v == 0.0 ? 0.5 : v);
    first = false;
    last0 = i;
    last1 = k;
  }
  tensor.pos[0].push_back(static_cast<long long>(tensor.crd[0].size()));
  tensor.pos[1].push_back(static_cast<long long>(tensor.crd[1].size()));
  tensor.pos[2].push_back(static_cast<long long>(tensor.crd[2].size()));
  return tensor;
}

std::vector<double> randomVector(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> values(size);
  for (double& v : values) v = value(random);
  return values;
}

static tcc_tensor emptyTensor(int order) {
  tcc_tensor tensor{};
  tensor.order = order;
  tensor.datatype = TCC_FLOAT64;
  for (int l = 0; l < order; ++l) tensor.mode_ordering[l] = l;
  return tensor;
}

tcc_tensor denseVectorView(std::vector<double>& values) {
  tcc_tensor tensor = emptyTensor(1);
  tensor.dims[0] = static_cast<int>(values.size());
  tensor.levels[0] = {TCC_LEVEL_DENSE, tensor.dims[0], nullptr, nullptr, 0, 0};
  tensor.vals = values.data();
  tensor.vals_size = tensor.vals_capacity = static_cast<long long>(values.size());
  return tensor;
}

tcc_tensor denseMatrixView(std::vector<double>& values, int rows, int columns) {
  tcc_tensor tensor = emptyTensor(2);
  tensor.dims[0] = rows;
  tensor.dims[1] = columns;
  tensor.levels[0] = {TCC_LEVEL_DENSE, rows, nullptr, nullptr, 0, 0};
  tensor.levels[1] = {TCC_LEVEL_DENSE, columns, nullptr, nullptr, 0, 0};
  tensor.vals = values.data();
  tensor.vals_size = tensor.vals_capacity = static_cast<long long>(values.size());
  return tensor;
}

tcc_tensor csrView(CsrMatrix& matrix) {
  tcc_tensor tensor = emptyTensor(2);
  tensor.dims[0] = matrix.rows;
  tensor.dims[1] = matrix.columns;
  tensor.levels[0] = {TCC_LEVEL_DENSE, matrix.rows, nullptr, nullptr, 0, 0};
  tensor.levels[1] = {TCC_LEVEL_COMPRESSED, matrix.columns, matrix.pos.data(), matrix.crd.data(),
                      static_cast<long long>(matrix.pos.size()), static_cast<long long>(matrix.crd.size())};
  tensor.vals = matrix.vals.data();
  tensor.vals_size = tensor.vals_capacity = static_cast<long long>(matrix.vals.size());
  return tensor;
}

tcc_tensor csfView(CsfTensor& csf) {
  tcc_tensor tensor = emptyTensor(3);
  for (int l = 0; l < 3; ++l) {
    tensor.dims[l] = csf.dims[l];
    tensor.levels[l] = {TCC_LEVEL_COMPRESSED, csf.dims[l], csf.pos[l].data(), csf.crd[l].data(),
                        static_cast<long long>(csf.pos[l].size()), static_cast<long long>(csf.crd[l].size())};
  }
  tensor.vals = csf.vals.data();
  tensor.vals_size = tensor.vals_capacity = static_cast<long long>(csf.vals.size());
  return tensor;
}

}  // namespace tcc::jit::testing
