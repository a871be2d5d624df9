#include "tcc/runtime/pack.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "level_properties.h"
#include "storage_walk.h"
#include "tcc/runtime/nm.h"

namespace tcc::rt {

namespace {

// Coordinates of the entries to pack, one array per mode.
struct EntryList {
  std::vector<int32_t> dims;
  std::vector<const int32_t*> coords;
  int64_t count = 0;
};

std::string coordinateText(const EntryList& entries, int64_t k) {
  std::string text = "(";
  for (size_t mode = 0; mode < entries.coords.size(); ++mode) {
    if (mode > 0) text += ", ";
    text += std::to_string(entries.coords[mode][k]);
  }
  return text + ")";
}

// Entries sorted by the format's level order and grouped into runs of
// equal coordinates: run r covers sorted[runStart[r] .. runStart[r+1]).
struct SortedRuns {
  std::vector<int64_t> sorted;
  std::vector<int64_t> runStart;
  int64_t runCount() const { return static_cast<int64_t>(runStart.size()) - 1; }
};

SortedRuns sortIntoRuns(const EntryList& entries, const TensorFormat& format) {
  int order = format.order();
  std::vector<const int32_t*> byLevel(order);
  for (int level = 0; level < order; ++level) byLevel[level] = entries.coords[format.modeOfLevel(level)];

  SortedRuns runs;
  runs.sorted.resize(entries.count);
  std::iota(runs.sorted.begin(), runs.sorted.end(), int64_t{0});
  if (order <= 2) {
    // Two 32-bit coordinates make one 64-bit key: sort (key, entry) pairs.
    std::vector<std::pair<uint64_t, int64_t>> keyed(entries.count);
    for (int64_t k = 0; k < entries.count; ++k) {
      uint64_t key = 0;
      for (int level = 0; level < order; ++level) key = (key << 32) | static_cast<uint32_t>(byLevel[level][k]);
      keyed[k] = {key, k};
    }
    std::sort(keyed.begin(), keyed.end());
    for (int64_t k = 0; k < entries.count; ++k) runs.sorted[k] = keyed[k].second;
  } else {
    std::sort(runs.sorted.begin(), runs.sorted.end(), [&](int64_t a, int64_t b) {
      for (int level = 0; level < order; ++level) {
        if (byLevel[level][a] != byLevel[level][b]) return byLevel[level][a] < byLevel[level][b];
      }
      return a < b;
    });
  }
  auto sameCoordinates = [&](int64_t a, int64_t b) {
    for (int level = 0; level < order; ++level) {
      if (byLevel[level][a] != byLevel[level][b]) return false;
    }
    return true;
  };
  runs.runStart.reserve(entries.count + 1);
  for (int64_t k = 0; k < entries.count; ++k) {
    if (k == 0 || !sameCoordinates(runs.sorted[k - 1], runs.sorted[k])) runs.runStart.push_back(k);
  }
  runs.runStart.push_back(entries.count);
  return runs;
}

void checkEntries(const EntryList& entries, const TensorFormat& format) {
  format.validate();
  if (static_cast<int>(entries.dims.size()) != format.order()) {
    throw std::invalid_argument("a tensor of order " + std::to_string(entries.dims.size()) +
                                " cannot be packed into format " + format.toString() +
                                " of order " + std::to_string(format.order()));
  }
  for (size_t mode = 0; mode < entries.dims.size(); ++mode) {
    int32_t dim = entries.dims[mode];
    if (dim < 0) throw std::invalid_argument("negative dimension " + std::to_string(dim));
    const int32_t* coords = entries.coords[mode];
    for (int64_t k = 0; k < entries.count; ++k) {
      if (coords[k] < 0 || coords[k] >= dim) {
        throw std::invalid_argument("entry " + std::to_string(k) + " at " +
                                    coordinateText(entries, k) + ": coordinate of mode " +
                                    std::to_string(mode) + " is outside 0.." +
                                    std::to_string(dim - 1));
      }
    }
  }
}

// Builds the levels of `tensor` (already shaped) from sorted runs and
// returns, for each position of the last level, its run or -1.
std::vector<int64_t> buildLevels(Tensor& tensor, const EntryList& entries, const SortedRuns& runs) {
  const TensorFormat& format = tensor.format();
  std::vector<int64_t> rangeBegin{0}, rangeEnd{runs.runCount()};
  for (int level = 0; level < format.order(); ++level) {
    const int32_t* coords = entries.coords[format.modeOfLevel(level)];
    auto coordOfRun = [&](int64_t run) { return coords[runs.sorted[runs.runStart[run]]]; };
    const LevelSpec& spec = format.levels[level];
    LevelStorage& storage = tensor.levelStorage(level);
    int64_t parents = static_cast<int64_t>(rangeBegin.size());
    std::vector<int64_t> childBegin, childEnd;
    switch (spec.kind) {
      case TCC_LEVEL_DENSE: {
        int64_t size = tensor.levelSize(level);
        childBegin.assign(parents * size, 0);
        childEnd.assign(parents * size, 0);
        for (int64_t p = 0; p < parents; ++p) {
          for (int64_t run = rangeBegin[p]; run < rangeEnd[p];) {
            int32_t c = coordOfRun(run);
            int64_t next = run + 1;
            while (next < rangeEnd[p] && coordOfRun(next) == c) ++next;
            childBegin[p * size + c] = run;
            childEnd[p * size + c] = next;
            run = next;
          }
        }
        break;
      }
      case TCC_LEVEL_COMPRESSED: {
        storage.pos = MallocArray<int64_t>(parents + 1);
        storage.crd = MallocArray<int32_t>();
        storage.crd.reserve(std::max<int64_t>(runs.runCount(), 1));
        for (int64_t p = 0; p < parents; ++p) {
          for (int64_t run = rangeBegin[p]; run < rangeEnd[p];) {
            int32_t c = coordOfRun(run);
            int64_t next = run + 1;
            if (spec.unique) {
              while (next < rangeEnd[p] && coordOfRun(next) == c) ++next;
            }
            storage.crd.push_back(c);
            childBegin.push_back(run);
            childEnd.push_back(next);
            run = next;
          }
          storage.pos[p + 1] = storage.crd.size();
        }
        break;
      }
      case TCC_LEVEL_SINGLETON: {
        storage.crd = MallocArray<int32_t>(parents);
        childBegin = rangeBegin;
        childEnd = rangeEnd;
        for (int64_t p = 0; p < parents; ++p) {
          if (rangeBegin[p] == rangeEnd[p]) continue;  // padding: coordinate 0, value 0
          int32_t c = coordOfRun(rangeBegin[p]);
          for (int64_t run = rangeBegin[p] + 1; run < rangeEnd[p]; ++run) {
            if (coordOfRun(run) != c) {
              throw std::invalid_argument(
                  "format " + format.toString() + " cannot hold this tensor: singleton level " +
                  std::to_string(level) + " would need two coordinates under one parent, for " +
                  coordinateText(entries, runs.sorted[runs.runStart[rangeBegin[p]]]) + " and " +
                  coordinateText(entries, runs.sorted[runs.runStart[run]]));
            }
          }
          storage.crd[p] = c;
        }
        break;
      }
    }
    rangeBegin = std::move(childBegin);
    rangeEnd = std::move(childEnd);
  }
  std::vector<int64_t> leafRun(rangeBegin.size(), -1);
  for (size_t p = 0; p < rangeBegin.size(); ++p) {
    if (rangeEnd[p] - rangeBegin[p] > 1) {
      throw std::logic_error("pack: a stored position received two distinct coordinates");
    }
    if (rangeEnd[p] > rangeBegin[p]) leafRun[p] = rangeBegin[p];
  }
  tensor.resizeValues(static_cast<int64_t>(leafRun.size()));
  try {
    detail::checkLevelProperties(tensor);
  } catch (const std::invalid_argument& broken) {
    throw std::invalid_argument("format " + format.toString() + " cannot hold these entries: " + broken.what());
  }
  return leafRun;
}

void rejectDuplicates(const EntryList& entries, const SortedRuns& runs) {
  for (int64_t run = 0; run < runs.runCount(); ++run) {
    if (runs.runStart[run + 1] - runs.runStart[run] > 1) {
      throw std::invalid_argument("duplicate entry at coordinate " +
                                  coordinateText(entries, runs.sorted[runs.runStart[run]]) +
                                  " (0-based)");
    }
  }
}

// Stores a double into `tensor`, refusing values an integer type cannot
// hold exactly and finite values float16 would store as infinity (it
// rounds the others: that is its precision, not a wrong value).
void storeChecked(Tensor& tensor, int64_t position, double value, const EntryList& entries,
                  int64_t entry) {
  ValueType type = tensor.valueType();
  if (type == ValueType::Float16 && std::isfinite(value) && std::isinf(halfToFloat(floatToHalf(float(value))))) {
    throw std::invalid_argument("value " + std::to_string(value) + " at " + coordinateText(entries, entry) +
                                " is out of float16's range (its largest value is 65504)");
  }
  if (type == ValueType::Int32 || type == ValueType::Int64) {
    double low = type == ValueType::Int32 ? -2147483648.0 : -9223372036854775808.0;
    double high = type == ValueType::Int32 ? 2147483648.0 : 9223372036854775808.0;
    if (!(value >= low && value < high) || std::trunc(value) != value) {
      throw std::invalid_argument("value " + std::to_string(value) + " at " +
                                  coordinateText(entries, entry) + " is not representable as " +
                                  toString(type));
    }
  }
  tensor.setValueAtPosition(position, value);
}

EntryList entriesOf(const Coo& coo) {
  EntryList entries;
  entries.dims = coo.dims;
  entries.count = static_cast<int64_t>(coo.values.size());
  if (coo.coords.size() != coo.dims.size()) {
    throw std::invalid_argument("Coo has " + std::to_string(coo.coords.size()) +
                                " coordinate arrays for " + std::to_string(coo.dims.size()) +
                                " dimensions");
  }
  for (const auto& modeCoords : coo.coords) {
    if (static_cast<int64_t>(modeCoords.size()) != entries.count) {
      throw std::invalid_argument("Coo coordinate arrays and values differ in length");
    }
    entries.coords.push_back(modeCoords.data());
  }
  return entries;
}

}  // namespace

namespace {

// The values of one run of equal coordinates, added in order. The sum
// starts from the first value, not from 0, so a lone -0.0 stays -0.0.
template <typename ValueAt>
double sumOfRun(int64_t first, int64_t last, ValueAt valueAt) {
  double sum = valueAt(first);
  for (int64_t k = first + 1; k < last; ++k) sum += valueAt(k);
  return sum;
}

}  // namespace

Tensor pack(const Coo& coo, const TensorFormat& format, ValueType type, Duplicates duplicates) {
  EntryList entries = entriesOf(coo);
  checkEntries(entries, format);
  SortedRuns runs = sortIntoRuns(entries, format);
  if (duplicates == Duplicates::Reject) rejectDuplicates(entries, runs);
  // N:M is a pruning of the dense matrix.
  if (format.isNM()) return nmPruneAndPack(toDense(coo), coo.dims[0], coo.dims[1], format, type);
  Tensor tensor(coo.dims, format, type);
  std::vector<int64_t> leafRun = buildLevels(tensor, entries, runs);
  for (size_t p = 0; p < leafRun.size(); ++p) {
    int64_t run = leafRun[p];
    if (run < 0) continue;
    double sum = sumOfRun(runs.runStart[run], runs.runStart[run + 1],
                          [&](int64_t k) { return coo.values[runs.sorted[k]]; });
    storeChecked(tensor, static_cast<int64_t>(p), sum, entries, runs.sorted[runs.runStart[run]]);
  }
  return tensor;
}

Coo unpack(const Tensor& tensor) {
  Coo coo = Coo::ofShape(tensor.dims());
  bool zerosImplicit = detail::zerosAreImplicit(tensor);
  detail::forEachStoredPosition(tensor, [&](const int32_t* coord, int64_t position) {
    double value = tensor.valueAtPosition(position);
    if (zerosImplicit && value == 0) return;
    coo.push(coord, value);
  });
  return coo;
}

Tensor convert(const Tensor& tensor, const TensorFormat& format) {
  return convert(tensor, format, tensor.valueType());
}

Tensor convert(const Tensor& tensor, const TensorFormat& format, ValueType type) {
  if (format.isNM()) {
    if (tensor.order() != 2)
      throw std::invalid_argument("a tensor of order " + std::to_string(tensor.order()) +
                                  " cannot be stored in format " + format.toString() + ", which holds matrices");
    return nmPruneAndPack(toDense(tensor), tensor.dims()[0], tensor.dims()[1], format, type);
  }
  // Coordinates plus the source position of each entry; values are copied
  // position to position so Int64 stays exact.
  int order = tensor.order();
  std::vector<std::vector<int32_t>> coords(order);
  std::vector<int64_t> sourcePositions;
  bool zerosImplicit = detail::zerosAreImplicit(tensor);
  detail::forEachStoredPosition(tensor, [&](const int32_t* coord, int64_t position) {
    if (zerosImplicit && tensor.valueAtPosition(position) == 0) return;
    for (int mode = 0; mode < order; ++mode) coords[mode].push_back(coord[mode]);
    sourcePositions.push_back(position);
  });
  EntryList entries;
  entries.dims = tensor.dims();
  entries.count = static_cast<int64_t>(sourcePositions.size());
  for (const auto& modeCoords : coords) entries.coords.push_back(modeCoords.data());
  checkEntries(entries, format);
  SortedRuns runs = sortIntoRuns(entries, format);
  Tensor result(tensor.dims(), format, type);
  std::vector<int64_t> leafRun = buildLevels(result, entries, runs);
  bool exactIntegers = type == ValueType::Int64 && tensor.valueType() == ValueType::Int64;
  for (size_t p = 0; p < leafRun.size(); ++p) {
    int64_t run = leafRun[p];
    if (run < 0) continue;
    int64_t first = runs.runStart[run], last = runs.runStart[run + 1];
    if (exactIntegers) {
      int64_t sum = 0;
      for (int64_t k = first; k < last; ++k) {
        sum += tensor.int64ValueAtPosition(sourcePositions[runs.sorted[k]]);
      }
      result.values<int64_t>()[p] = sum;
      continue;
    }
    double sum = sumOfRun(first, last, [&](int64_t k) { return tensor.valueAtPosition(sourcePositions[runs.sorted[k]]); });
    storeChecked(result, static_cast<int64_t>(p), sum, entries, runs.sorted[first]);
  }
  return result;
}

namespace {

int64_t denseSize(const std::vector<int32_t>& dims) {
  int64_t size = 1;
  for (int32_t dim : dims) {
    if (dim < 0) throw std::invalid_argument("negative dimension " + std::to_string(dim));
    if (__builtin_mul_overflow(size, static_cast<int64_t>(dim), &size)) {
      throw std::length_error("dense size of the tensor overflows 64 bits");
    }
  }
  return size;
}

int64_t rowMajorIndex(const std::vector<int32_t>& dims, const int32_t* coord) {
  int64_t index = 0;
  for (size_t mode = 0; mode < dims.size(); ++mode) index = index * dims[mode] + coord[mode];
  return index;
}

// A dense row-major array in which each cell sums the values stored at its
// coordinate in order. A cell's sum starts from its first value, not from
// 0, so a lone -0.0 stays -0.0 (as pack, convert and valueAt keep it); a
// cell nothing is stored at holds +0.
class DenseSums {
 public:
  explicit DenseSums(const std::vector<int32_t>& dims)
      : dims_(dims), values_(denseSize(dims), 0.0), stored_(values_.size(), false) {}
  void add(const int32_t* coord, double value) {
    int64_t index = rowMajorIndex(dims_, coord);
    values_[index] = stored_[index] ? values_[index] + value : value;
    stored_[index] = true;
  }
  std::vector<double> take() { return std::move(values_); }

 private:
  std::vector<int32_t> dims_;
  std::vector<double> values_;
  std::vector<bool> stored_;
};

}  // namespace

Tensor fromDense(std::span<const double> values, const std::vector<int32_t>& dims,
                 const TensorFormat& format, ValueType type) {
  int64_t size = denseSize(dims);
  if (static_cast<int64_t>(values.size()) != size) {
    throw std::invalid_argument("dense array has " + std::to_string(values.size()) +
                                " values for a tensor of " + std::to_string(size));
  }
  if (format.isNM()) {
    if (dims.size() != 2)
      throw std::invalid_argument("a tensor of order " + std::to_string(dims.size()) +
                                  " cannot be stored in format " + format.toString() + ", which holds matrices");
    return nmPruneAndPack(values, dims[0], dims[1], format, type);
  }
  Coo coo = Coo::ofShape(dims);
  std::vector<int32_t> coord(dims.size(), 0);
  for (int64_t index = 0; index < size; ++index) {
    if (values[index] != 0) coo.push(coord.data(), values[index]);
    for (int mode = static_cast<int>(dims.size()) - 1; mode >= 0; --mode) {
      if (++coord[mode] < dims[mode]) break;
      coord[mode] = 0;
    }
  }
  return pack(coo, format, type, Duplicates::Reject);
}

std::vector<double> toDense(const Tensor& tensor) {
  DenseSums dense(tensor.dims());
  detail::forEachStoredPosition(
      tensor, [&](const int32_t* coord, int64_t position) { dense.add(coord, tensor.valueAtPosition(position)); });
  return dense.take();
}

std::vector<double> toDense(const Coo& coo) {
  EntryList entries = entriesOf(coo);
  DenseSums dense(coo.dims);
  std::vector<int32_t> coord(coo.order());
  for (int64_t k = 0; k < entries.count; ++k) {
    for (int mode = 0; mode < coo.order(); ++mode) {
      coord[mode] = coo.coords[mode][k];
      if (coord[mode] < 0 || coord[mode] >= coo.dims[mode]) {
        throw std::invalid_argument("entry " + std::to_string(k) + " at " +
                                    coordinateText(entries, k) + " is outside the tensor");
      }
    }
    dense.add(coord.data(), coo.values[k]);
  }
  return dense.take();
}

}  // namespace tcc::rt
