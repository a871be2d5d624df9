#include "tcc/runtime/tensor.h"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "level_properties.h"
#include "tcc/runtime/nm.h"

namespace tcc::rt {

static_assert(sizeof(long long) == sizeof(int64_t), "pos arrays cross the ABI as long long");
static_assert(sizeof(int) == sizeof(int32_t), "crd arrays cross the ABI as int");

namespace {

void checkDims(const std::vector<int32_t>& dims, const TensorFormat& format) {
  format.validate();
  if (static_cast<int>(dims.size()) != format.order()) {
    throw std::invalid_argument("tensor of order " + std::to_string(dims.size()) +
                                " cannot use format " + format.toString() + " of order " +
                                std::to_string(format.order()));
  }
  for (int32_t dim : dims) {
    if (dim < 0) throw std::invalid_argument("negative dimension " + std::to_string(dim));
  }
}

int64_t checkedMultiply(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw std::length_error("tensor storage size overflows 64 bits");
  }
  return product;
}

}  // namespace

Tensor::Tensor() : Tensor({}, TensorFormat(), ValueType::Float64) {}

Tensor::Tensor(std::vector<int32_t> dims, TensorFormat format, ValueType type)
    : dims_(std::move(dims)), format_(std::move(format)), type_(type) {
  checkDims(dims_, format_);
  levels_.resize(format_.order());
  if (format_.isNM()) {
    // Every window keeps its first N rows, all zero.
    NmLayout layout = nmLayout(format_, dims_[0], dims_[1]);
    levels_[1].crd.resize(layout.indexCount());
    for (int64_t u = 0; u < layout.keptRows; ++u)
      for (int64_t g = 0; g < layout.groups; ++g) levels_[1].crd[u * layout.groups + g] = static_cast<int32_t>(u % layout.n);
    resizeValues(layout.valueCount());
    return;
  }
  int64_t positions = 1;
  for (int level = 0; level < format_.order(); ++level) {
    switch (format_.levels[level].kind) {
      case TCC_LEVEL_DENSE:
        positions = checkedMultiply(positions, levelSize(level));
        break;
      case TCC_LEVEL_COMPRESSED:
        levels_[level].pos.resize(positions + 1);
        positions = 0;
        break;
      case TCC_LEVEL_SINGLETON:
        levels_[level].crd.resize(positions);
        break;
    }
  }
  resizeValues(positions);
}

Tensor Tensor::denseForOverwrite(std::vector<int32_t> dims, TensorFormat format, ValueType type) {
  if (format.isNM() || !format.isAllDense())
    throw std::invalid_argument("a tensor whose values are left unset must be all dense, not " + format.toString());
  checkDims(dims, format);
  Tensor tensor;
  tensor.dims_ = std::move(dims);
  tensor.format_ = std::move(format);
  tensor.type_ = type;
  tensor.levels_.assign(tensor.format_.order(), LevelStorage{});
  int64_t values = 1;
  for (int level = 0; level < tensor.format_.order(); ++level) values = checkedMultiply(values, tensor.levelSize(level));
  tensor.values_ = MallocArray<unsigned char>();
  tensor.values_.resizeForOverwrite(checkedMultiply(values, byteWidth(type)));
  return tensor;
}

int64_t Tensor::positionCount(int level) const {
  if (format_.isNM() && level == 1) return nmLayout(*this).valueCount();
  int64_t positions = 1;
  for (int l = 0; l <= level; ++l) {
    switch (format_.levels[l].kind) {
      case TCC_LEVEL_DENSE: positions *= levelSize(l); break;
      case TCC_LEVEL_COMPRESSED: positions = levels_[l].pos[positions]; break;
      case TCC_LEVEL_SINGLETON: break;
    }
  }
  return positions;
}

template <typename T>
std::span<const T> Tensor::values() const {
  if (sizeof(T) != static_cast<size_t>(byteWidth(type_))) {
    throw std::logic_error("values<T>() with the wrong element size for " + toString(type_));
  }
  return {reinterpret_cast<const T*>(values_.data()), static_cast<size_t>(nnz())};
}

template <typename T>
std::span<T> Tensor::values() {
  if (sizeof(T) != static_cast<size_t>(byteWidth(type_))) {
    throw std::logic_error("values<T>() with the wrong element size for " + toString(type_));
  }
  return {reinterpret_cast<T*>(values_.data()), static_cast<size_t>(nnz())};
}

template std::span<const double> Tensor::values<double>() const;
template std::span<const float> Tensor::values<float>() const;
template std::span<const uint16_t> Tensor::values<uint16_t>() const;
template std::span<const int32_t> Tensor::values<int32_t>() const;
template std::span<const int64_t> Tensor::values<int64_t>() const;
template std::span<double> Tensor::values<double>();
template std::span<float> Tensor::values<float>();
template std::span<uint16_t> Tensor::values<uint16_t>();
template std::span<int32_t> Tensor::values<int32_t>();
template std::span<int64_t> Tensor::values<int64_t>();

double Tensor::valueAtPosition(int64_t position) const {
  const unsigned char* bytes = values_.data() + position * byteWidth(type_);
  switch (type_) {
    case ValueType::Float64: { double v; std::memcpy(&v, bytes, 8); return v; }
    case ValueType::Float32: { float v; std::memcpy(&v, bytes, 4); return v; }
    case ValueType::Float16: { uint16_t v; std::memcpy(&v, bytes, 2); return halfToFloat(v); }
    case ValueType::Int32: { int32_t v; std::memcpy(&v, bytes, 4); return v; }
    case ValueType::Int64: { int64_t v; std::memcpy(&v, bytes, 8); return static_cast<double>(v); }
  }
  return 0;
}

int64_t Tensor::int64ValueAtPosition(int64_t position) const {
  if (type_ == ValueType::Int64) {
    int64_t v;
    std::memcpy(&v, values_.data() + position * 8, 8);
    return v;
  }
  return static_cast<int64_t>(valueAtPosition(position));
}

void Tensor::setValueAtPosition(int64_t position, double value) {
  if (type_ == ValueType::Int32 || type_ == ValueType::Int64) {
    double low = type_ == ValueType::Int32 ? -2147483648.0 : -9223372036854775808.0;
    if (!(value >= low && value < -low)) {
      throw std::out_of_range("value " + std::to_string(value) + " does not fit " + toString(type_));
    }
  }
  unsigned char* bytes = values_.data() + position * byteWidth(type_);
  switch (type_) {
    case ValueType::Float64: std::memcpy(bytes, &value, 8); return;
    case ValueType::Float32: { float v = static_cast<float>(value); std::memcpy(bytes, &v, 4); return; }
    case ValueType::Float16: { uint16_t v = floatToHalf(static_cast<float>(value)); std::memcpy(bytes, &v, 2); return; }
    case ValueType::Int32: { int32_t v = static_cast<int32_t>(value); std::memcpy(bytes, &v, 4); return; }
    case ValueType::Int64: { int64_t v = static_cast<int64_t>(value); std::memcpy(bytes, &v, 8); return; }
  }
}

void Tensor::resizeValues(int64_t count) {
  values_.resize(checkedMultiply(count, byteWidth(type_)));
}

double Tensor::valueAt(std::span<const int32_t> coord) const {
  if (static_cast<int>(coord.size()) != order()) {
    throw std::out_of_range("coordinate of order " + std::to_string(coord.size()) +
                            " for a tensor of order " + std::to_string(order()));
  }
  for (int mode = 0; mode < order(); ++mode) {
    if (coord[mode] < 0 || coord[mode] >= dims_[mode]) {
      throw std::out_of_range("coordinate " + std::to_string(coord[mode]) + " of mode " +
                              std::to_string(mode) + " is outside 0.." +
                              std::to_string(dims_[mode] - 1));
    }
  }
  if (format_.isNM()) return nmValueAt(*this, coord[0], coord[1]);
  // Follow every position range whose coordinate matches; nonunique levels
  // may hold the same coordinate more than once.
  // The sum starts from the first stored value, so a stored -0.0 reads back as -0.0.
  double sum = 0;
  bool stored = false;
  auto descend = [&](auto&& self, int level, int64_t parent) -> void {
    if (level == order()) {
      sum = stored ? sum + valueAtPosition(parent) : valueAtPosition(parent);
      stored = true;
      return;
    }
    int32_t want = coord[format_.modeOfLevel(level)];
    const LevelStorage& storage = levels_[level];
    switch (format_.levels[level].kind) {
      case TCC_LEVEL_DENSE:
        self(self, level + 1, parent * levelSize(level) + want);
        return;
      case TCC_LEVEL_COMPRESSED:
        for (int64_t p = storage.pos[parent]; p < storage.pos[parent + 1]; ++p) {
          if (storage.crd[p] == want) self(self, level + 1, p);
        }
        return;
      case TCC_LEVEL_SINGLETON:
        if (storage.crd[parent] == want) self(self, level + 1, parent);
        return;
    }
  };
  descend(descend, 0, 0);
  return sum;
}

void Tensor::validate() const {
  if (format_.isNM()) {
    validateNmStorage(*this);
    return;
  }
  int64_t positions = 1;
  for (int level = 0; level < order(); ++level) {
    const LevelStorage& storage = levels_[level];
    std::string where = "level " + std::to_string(level) + " (" +
                        format_.levels[level].toString() + ")";
    int32_t size = levelSize(level);
    switch (format_.levels[level].kind) {
      case TCC_LEVEL_DENSE:
        positions = checkedMultiply(positions, size);
        break;
      case TCC_LEVEL_COMPRESSED: {
        if (storage.pos.size() != positions + 1) {
          throw std::invalid_argument(where + ": pos has " + std::to_string(storage.pos.size()) +
                                      " entries, expected " + std::to_string(positions + 1));
        }
        if (storage.pos[0] != 0) throw std::invalid_argument(where + ": pos[0] is not 0");
        for (int64_t p = 0; p < positions; ++p) {
          if (storage.pos[p + 1] < storage.pos[p]) {
            throw std::invalid_argument(where + ": pos decreases at " + std::to_string(p + 1));
          }
        }
        positions = storage.pos[positions];
        [[fallthrough]];
      }
      case TCC_LEVEL_SINGLETON:
        if (storage.crd.size() != positions) {
          throw std::invalid_argument(where + ": crd has " + std::to_string(storage.crd.size()) +
                                      " entries, expected " + std::to_string(positions));
        }
        for (int64_t p = 0; p < positions; ++p) {
          if (storage.crd[p] < 0 || storage.crd[p] >= size) {
            throw std::invalid_argument(where + ": crd[" + std::to_string(p) + "] = " +
                                        std::to_string(storage.crd[p]) + " is outside 0.." +
                                        std::to_string(size - 1));
          }
        }
        break;
    }
  }
  if (nnz() != positions) {
    throw std::invalid_argument("values array has " + std::to_string(nnz()) +
                                " entries, expected " + std::to_string(positions));
  }
  detail::checkLevelProperties(*this);
}

tcc_tensor Tensor::emptyAssembledOutput(const std::vector<int32_t>& dims, const TensorFormat& format, ValueType type) {
  tcc_tensor abi;
  std::memset(&abi, 0, sizeof abi);
  abi.order = static_cast<int>(dims.size());
  abi.datatype = static_cast<int>(type);
  for (int mode = 0; mode < abi.order; ++mode) abi.dims[mode] = dims[mode];
  for (int level = 0; level < abi.order; ++level) {
    abi.mode_ordering[level] = format.modeOfLevel(level);
    abi.levels[level].kind = format.levels[level].kind;
    abi.levels[level].size = dims[format.modeOfLevel(level)];
    abi.levels[level].nm_n = format.levels[level].nmN;
    abi.levels[level].nm_m = format.levels[level].nmM;
    abi.levels[level].nm_l = format.levels[level].nmL;
  }
  return abi;
}

tcc_tensor Tensor::abiView() const {
  tcc_tensor view;
  std::memset(&view, 0, sizeof view);
  view.order = order();
  view.datatype = static_cast<int>(type_);
  for (int mode = 0; mode < order(); ++mode) view.dims[mode] = dims_[mode];
  for (int level = 0; level < order(); ++level) {
    LevelStorage& storage = const_cast<LevelStorage&>(levels_[level]);
    tcc_level& out = view.levels[level];
    view.mode_ordering[level] = format_.modeOfLevel(level);
    out.kind = format_.levels[level].kind;
    out.size = levelSize(level);
    out.pos = reinterpret_cast<long long*>(storage.pos.data());
    out.crd = storage.crd.data();
    out.pos_capacity = storage.pos.capacity();
    out.crd_capacity = storage.crd.capacity();
    out.nm_n = format_.levels[level].nmN;
    out.nm_m = format_.levels[level].nmM;
    out.nm_l = format_.levels[level].nmL;
  }
  view.vals = const_cast<unsigned char*>(values_.data());
  view.vals_size = nnz();
  view.vals_capacity = values_.capacity() / byteWidth(type_);
  return view;
}

tcc_tensor Tensor::release() && {
  tcc_tensor released = abiView();
  for (LevelStorage& storage : levels_) {
    storage.pos.release();
    storage.crd.release();
  }
  values_.release();
  *this = Tensor();
  return released;
}

Tensor Tensor::adopt(tcc_tensor&& filled) {
  // Take every buffer first, so that any error below frees them.
  int order = filled.order;
  std::vector<LevelStorage> levels(order >= 0 && order <= TCC_MAX_ORDER ? order : 0);
  for (size_t level = 0; level < levels.size(); ++level) {
    tcc_level& in = filled.levels[level];
    levels[level].pos = MallocArray<int64_t>::adopt(reinterpret_cast<int64_t*>(in.pos), 0, 0);
    levels[level].crd = MallocArray<int32_t>::adopt(in.crd, 0, 0);
    in.pos = nullptr;
    in.crd = nullptr;
  }
  MallocArray<unsigned char> values =
      MallocArray<unsigned char>::adopt(static_cast<unsigned char*>(filled.vals), 0, 0);
  filled.vals = nullptr;

  if (order < 0 || order > TCC_MAX_ORDER) {
    throw std::invalid_argument("adopt: order " + std::to_string(order) + " is outside 0.." +
                                std::to_string(TCC_MAX_ORDER));
  }
  if (filled.datatype < 0 || filled.datatype > static_cast<int>(ValueType::Int64)) {
    throw std::invalid_argument("adopt: unknown datatype " + std::to_string(filled.datatype));
  }
  std::vector<LevelSpec> specs;
  std::vector<int> ordering;
  std::vector<int32_t> dims(filled.dims, filled.dims + order);
  for (int level = 0; level < order; ++level) {
    // Properties are not in the ABI; assume the named formats' defaults.
    int kind = filled.levels[level].kind;
    if (kind == TCC_LEVEL_NM) throw std::invalid_argument("adopt: a kernel cannot assemble an N:M output");
    bool unique = true;
    if (kind == TCC_LEVEL_COMPRESSED && level + 1 < order &&
        filled.levels[level + 1].kind == TCC_LEVEL_SINGLETON) {
      unique = false;
    }
    if (kind == TCC_LEVEL_SINGLETON && level + 1 < order &&
        filled.levels[level + 1].kind == TCC_LEVEL_SINGLETON) {
      unique = false;
    }
    specs.push_back({kind, unique, true});
    ordering.push_back(filled.mode_ordering[level]);
  }
  TensorFormat format(std::move(specs), std::move(ordering));
  ValueType type = static_cast<ValueType>(filled.datatype);

  Tensor tensor(dims, format, type);
  // Sizes follow from the structure; read pos only within what it must hold.
  int64_t positions = 1;
  for (int level = 0; level < order; ++level) {
    LevelStorage& storage = levels[level];
    switch (format.levels[level].kind) {
      case TCC_LEVEL_DENSE:
        positions *= dims[format.modeOfLevel(level)];
        break;
      case TCC_LEVEL_COMPRESSED: {
        if (storage.pos.data() == nullptr) {
          throw std::invalid_argument("adopt: level " + std::to_string(level) + " has no pos array");
        }
        int64_t capacity = filled.levels[level].pos_capacity;
        if (capacity != 0 && capacity < positions + 1) {
          throw std::invalid_argument("adopt: level " + std::to_string(level) +
                                      " pos capacity is smaller than its parent positions + 1");
        }
        storage.pos = MallocArray<int64_t>::adopt(storage.pos.release(), positions + 1,
                                                  std::max<int64_t>(capacity, positions + 1));
        int64_t next = storage.pos[positions];
        if (next < 0) throw std::invalid_argument("adopt: negative position count");
        positions = next;
        int64_t crdCapacity = filled.levels[level].crd_capacity;
        if (crdCapacity != 0 && crdCapacity < positions) {
          throw std::invalid_argument("adopt: level " + std::to_string(level) +
                                      " crd capacity is smaller than its positions");
        }
        storage.crd = MallocArray<int32_t>::adopt(storage.crd.release(), positions,
                                                  std::max(crdCapacity, positions));
        if (positions > 0 && storage.crd.data() == nullptr) {
          throw std::invalid_argument("adopt: level " + std::to_string(level) + " has no crd array");
        }
        break;
      }
      case TCC_LEVEL_SINGLETON: {
        int64_t crdCapacity = filled.levels[level].crd_capacity;
        storage.crd = MallocArray<int32_t>::adopt(storage.crd.release(), positions,
                                                  std::max(crdCapacity, positions));
        if (positions > 0 && storage.crd.data() == nullptr) {
          throw std::invalid_argument("adopt: level " + std::to_string(level) + " has no crd array");
        }
        break;
      }
    }
  }
  if (filled.vals_size != positions) {
    throw std::invalid_argument("adopt: vals_size is " + std::to_string(filled.vals_size) +
                                " but the levels hold " + std::to_string(positions) +
                                " positions");
  }
  if (positions > 0 && values.data() == nullptr) {
    throw std::invalid_argument("adopt: no values array");
  }
  int width = byteWidth(type);
  int64_t valuesCapacity = std::max<int64_t>(filled.vals_capacity, positions);
  values = MallocArray<unsigned char>::adopt(values.release(), positions * width,
                                             valuesCapacity * width);
  for (int level = 0; level < order; ++level) tensor.levels_[level] = std::move(levels[level]);
  tensor.values_ = std::move(values);
  tensor.validate();
  return tensor;
}

std::string Tensor::describe() const {
  std::string shape;
  for (int mode = 0; mode < order(); ++mode) {
    if (mode > 0) shape += "x";
    shape += std::to_string(dims_[mode]);
  }
  if (shape.empty()) shape = "scalar";
  return format_.toString() + " " + toString(type_) + " " + shape + ", " +
         std::to_string(nnz()) + " stored";
}

}  // namespace tcc::rt
