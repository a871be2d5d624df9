#include "tcc/runtime/random.h"

#include "tcc/runtime/abi.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <unordered_set>

namespace tcc::rt {

namespace {

// std::mt19937_64 is specified exactly; the distributions below are ours so
// that results do not depend on the standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t bound) {  // [0, bound), unbiased
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    for (;;) {
      uint64_t draw = engine_();
      if (draw < limit) return draw % bound;
    }
  }
  double value() {  // magnitude in [0.5, 2), random sign
    double magnitude = 0.5 + 1.5 * uniform();
    return (engine_() & 1) ? magnitude : -magnitude;
  }

 private:
  std::mt19937_64 engine_;
};

uint64_t cellCount(const std::vector<int32_t>& dims) {
  uint64_t cells = 1;
  for (int32_t dim : dims) {
    if (dim < 0) throw std::invalid_argument("negative dimension " + std::to_string(dim));
    if (__builtin_mul_overflow(cells, static_cast<uint64_t>(dim), &cells)) {
      throw std::invalid_argument("random tensor: the number of cells overflows 64 bits");
    }
  }
  return cells;
}

void pushLinear(Coo& coo, uint64_t linear, double value) {
  int32_t coordinate[TCC_MAX_ORDER > 0 ? TCC_MAX_ORDER : 1];
  for (int mode = coo.order() - 1; mode >= 0; --mode) {
    coordinate[mode] = static_cast<int32_t>(linear % static_cast<uint64_t>(coo.dims[mode]));
    linear /= static_cast<uint64_t>(coo.dims[mode]);
  }
  coo.push(coordinate, value);
}

// `count` distinct values in [0, range), in random order (Floyd's method).
std::vector<uint64_t> distinctSample(Random& random, uint64_t range, uint64_t count) {
  std::vector<uint64_t> chosen;
  chosen.reserve(count);
  std::unordered_set<uint64_t> seen;
  seen.reserve(count * 2);
  for (uint64_t j = range - count; j < range; ++j) {
    uint64_t candidate = random.below(j + 1);
    if (!seen.insert(candidate).second) {
      candidate = j;
      seen.insert(j);
    }
    chosen.push_back(candidate);
  }
  // Floyd's output is biased in order; shuffle it (Fisher-Yates).
  for (size_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[random.below(i)]);
  return chosen;
}

void checkProbability(double probability, const char* what) {
  if (!(probability >= 0 && probability <= 1)) {
    throw std::invalid_argument(std::string(what) + " must lie in [0, 1], not " +
                                std::to_string(probability));
  }
}

}  // namespace

Coo randomUniform(const std::vector<int32_t>& dims, double density, uint64_t seed) {
  checkProbability(density, "density");
  if (dims.size() > TCC_MAX_ORDER) throw std::invalid_argument("random tensor: order too large");
  uint64_t cells = cellCount(dims);
  uint64_t count = static_cast<uint64_t>(std::llround(density * static_cast<double>(cells)));
  count = std::min(count, cells);
  Random random(seed);
  Coo coo = Coo::ofShape(dims);
  coo.reserve(count);
  if (count > cells / 4) {
    // Dense enough: selection sampling over every cell, then shuffle.
    std::vector<uint64_t> chosen;
    chosen.reserve(count);
    uint64_t needed = count;
    for (uint64_t cell = 0; cell < cells && needed > 0; ++cell) {
      if (random.below(cells - cell) < needed) {
        chosen.push_back(cell);
        --needed;
      }
    }
    for (size_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[random.below(i)]);
    for (uint64_t cell : chosen) pushLinear(coo, cell, random.value());
    return coo;
  }
  for (uint64_t cell : distinctSample(random, cells, count)) pushLinear(coo, cell, random.value());
  return coo;
}

Coo randomPerRow(int32_t rows, int32_t cols, int32_t nnzPerRow, uint64_t seed) {
  if (rows < 0 || cols < 0 || nnzPerRow < 0) {
    throw std::invalid_argument("randomPerRow: negative argument");
  }
  Random random(seed);
  int32_t perRow = std::min(nnzPerRow, cols);
  Coo coo = Coo::ofShape({rows, cols});
  coo.reserve(static_cast<size_t>(rows) * perRow);
  for (int32_t row = 0; row < rows; ++row) {
    for (uint64_t col : distinctSample(random, static_cast<uint64_t>(cols), perRow)) {
      int32_t coordinate[2] = {row, static_cast<int32_t>(col)};
      coo.push(coordinate, random.value());
    }
  }
  return coo;
}

Coo randomPerColumn(int32_t rows, int32_t cols, int32_t nnzPerColumn, uint64_t seed) {
  Coo transposed = randomPerRow(cols, rows, nnzPerColumn, seed);
  Coo coo;
  coo.dims = {rows, cols};
  coo.coords = {std::move(transposed.coords[1]), std::move(transposed.coords[0])};
  coo.values = std::move(transposed.values);
  return coo;
}

Coo randomErdosRenyi(int32_t n, double probability, uint64_t seed) {
  checkProbability(probability, "probability");
  if (n < 0) throw std::invalid_argument("randomErdosRenyi: negative size");
  Random random(seed);
  Coo coo = Coo::ofShape({n, n});
  uint64_t cells = static_cast<uint64_t>(n) * static_cast<uint64_t>(n);
  if (probability == 0 || cells == 0) return coo;
  coo.reserve(static_cast<size_t>(probability * static_cast<double>(cells) * 1.1) + 16);
  // Geometric skips between successes: O(nnz) instead of O(n^2).
  double logFailure = std::log1p(-probability);
  uint64_t cell = 0;
  for (;;) {
    if (probability < 1) {
      double skip = std::floor(std::log1p(-random.uniform()) / logFailure);
      if (skip >= static_cast<double>(cells - cell)) break;
      cell += static_cast<uint64_t>(skip);
    }
    if (cell >= cells) break;
    pushLinear(coo, cell, random.value());
    ++cell;
  }
  return coo;
}

namespace {

// Power-law lengths: `count` buckets, weights rank^-exponent shuffled over
// buckets, scaled to total about `total`, each capped at `cap`.
std::vector<int64_t> powerLawLengths(Random& random, int64_t count, double total, double exponent,
                                     int64_t cap) {
  std::vector<double> weights(count);
  double weightSum = 0;
  for (int64_t rank = 0; rank < count; ++rank) {
    weights[rank] = std::pow(static_cast<double>(rank + 1), -exponent);
    weightSum += weights[rank];
  }
  for (size_t i = weights.size(); i > 1; --i) std::swap(weights[i - 1], weights[random.below(i)]);
  std::vector<int64_t> lengths(count);
  for (int64_t bucket = 0; bucket < count; ++bucket) {
    double exact = total * weights[bucket] / weightSum;
    int64_t length = static_cast<int64_t>(std::floor(exact));
    if (random.uniform() < exact - std::floor(exact)) ++length;  // unbiased rounding
    lengths[bucket] = std::min(length, cap);
  }
  return lengths;
}

}  // namespace

Coo randomPowerLaw(int32_t rows, int32_t cols, double avgNnzPerRow, double exponent,
                   uint64_t seed) {
  if (rows < 0 || cols < 0 || !(avgNnzPerRow >= 0) || !(exponent >= 0)) {
    throw std::invalid_argument("randomPowerLaw: negative argument");
  }
  Random random(seed);
  std::vector<int64_t> lengths =
      powerLawLengths(random, rows, avgNnzPerRow * rows, exponent, cols);
  Coo coo = Coo::ofShape({rows, cols});
  for (int32_t row = 0; row < rows; ++row) {
    for (uint64_t col : distinctSample(random, static_cast<uint64_t>(cols),
                                       static_cast<uint64_t>(lengths[row]))) {
      int32_t coordinate[2] = {row, static_cast<int32_t>(col)};
      coo.push(coordinate, random.value());
    }
  }
  return coo;
}

Coo randomPowerLawTensor(const std::vector<int32_t>& dims, int64_t nnz, double exponent,
                         uint64_t seed) {
  if (dims.empty() || dims.size() > TCC_MAX_ORDER || nnz < 0 || !(exponent >= 0)) {
    throw std::invalid_argument("randomPowerLawTensor: bad argument");
  }
  Random random(seed);
  std::vector<int32_t> fiberDims(dims.begin() + 1, dims.end());
  uint64_t fiberCells = cellCount(fiberDims);
  cellCount(dims);
  std::vector<int64_t> lengths = powerLawLengths(random, dims[0], static_cast<double>(nnz), exponent,
                                                 static_cast<int64_t>(std::min<uint64_t>(fiberCells, INT64_MAX)));
  Coo coo = Coo::ofShape(dims);
  int32_t coordinate[TCC_MAX_ORDER];
  for (int32_t slice = 0; slice < dims[0]; ++slice) {
    for (uint64_t cell : distinctSample(random, fiberCells, static_cast<uint64_t>(lengths[slice]))) {
      coordinate[0] = slice;
      for (int mode = static_cast<int>(dims.size()) - 1; mode >= 1; --mode) {
        coordinate[mode] = static_cast<int32_t>(cell % static_cast<uint64_t>(dims[mode]));
        cell /= static_cast<uint64_t>(dims[mode]);
      }
      coo.push(coordinate, random.value());
    }
  }
  return coo;
}

}  // namespace tcc::rt
