// A tensor in the level-format abstraction: per level a dense size, or
// compressed pos/crd arrays, or singleton crd; plus one values array
// indexed by the positions of the last level. Buffers come from
// malloc/realloc so that generated kernels can read them through
// abiView() and hand freshly assembled ones back through adopt().
//
// Positions are 64-bit (pos arrays), coordinates 32-bit (crd arrays).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tcc/runtime/abi.h"
#include "tcc/runtime/malloc_array.h"
#include "tcc/runtime/tensor_format.h"
#include "tcc/runtime/value_type.h"

namespace tcc::rt {

struct LevelStorage {
  MallocArray<int64_t> pos;  // compressed: one entry per parent position, plus one
  MallocArray<int32_t> crd;  // compressed, singleton: one entry per position
};

class Tensor {
 public:
  Tensor();  // a float64 scalar holding 0
  // A tensor with no stored entries: dense levels are allocated and zero,
  // compressed levels hold pos = {0, ..., 0}.
  Tensor(std::vector<int32_t> dims, TensorFormat format, ValueType type = ValueType::Float64);

  // An all-dense tensor whose values are left unset, for a kernel that
  // stores every one of them (see lowering::storesEveryValueOfVectorOutput).
  // Throws std::invalid_argument for a format with a level that is not dense.
  static Tensor denseForOverwrite(std::vector<int32_t> dims, TensorFormat format, ValueType type = ValueType::Float64);

  Tensor(const Tensor&) = default;  // deep copy
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  int order() const { return static_cast<int>(dims_.size()); }
  const std::vector<int32_t>& dims() const { return dims_; }  // in mode order
  const TensorFormat& format() const { return format_; }
  ValueType valueType() const { return type_; }

  // Stored values (positions of the last level); for a dense tensor this
  // is the product of the dimensions.
  int64_t nnz() const { return values_.size() / byteWidth(type_); }
  // Number of positions at `level` (1 for level -1, the root).
  int64_t positionCount(int level) const;
  int levelSize(int level) const { return dims_[format_.modeOfLevel(level)]; }

  std::span<const int64_t> pos(int level) const { return levels_.at(level).pos.span(); }
  std::span<const int32_t> crd(int level) const { return levels_.at(level).crd.span(); }
  LevelStorage& levelStorage(int level) { return levels_.at(level); }
  const LevelStorage& levelStorage(int level) const { return levels_.at(level); }

  // Raw values: nnz() elements of valueType() (Float16 as uint16_t bits).
  const void* valuesData() const { return values_.data(); }
  void* valuesData() { return values_.data(); }
  // Typed view; T must match valueType() (uint16_t for Float16).
  template <typename T>
  std::span<const T> values() const;
  template <typename T>
  std::span<T> values();

  // The value at a stored position, converted to double, and its inverse
  // (rounding to the element type; integers truncate toward zero, and
  // values outside an integer type's range throw std::out_of_range).
  double valueAtPosition(int64_t position) const;
  void setValueAtPosition(int64_t position, double value);
  // Exact for Int64 values beyond 2^53.
  int64_t int64ValueAtPosition(int64_t position) const;
  // Resizes the values array (new values are 0).
  void resizeValues(int64_t count);

  // Slow lookup by coordinate (in mode order), summing repeated entries;
  // 0 where nothing is stored. Throws std::out_of_range on a bad coordinate.
  double valueAt(std::span<const int32_t> coord) const;
  double valueAt(std::initializer_list<int32_t> coord) const {
    return valueAt(std::span<const int32_t>(coord.begin(), coord.size()));
  }

  // Checks that the storage is well formed (array sizes, pos monotone from
  // 0, crd within the level's size) and keeps the promises of its format:
  // a unique level repeats no coordinate, an ordered level's coordinates
  // never decrease, among positions whose ancestors hold the same
  // coordinates. O(stored positions). Throws std::invalid_argument naming
  // the level and the first offending position.
  void validate() const;

  // A view for a kernel: pointers into this tensor's storage, capacities
  // set. The tensor keeps ownership; a kernel that reallocs a buffer must
  // hand the result back through adopt().
  tcc_tensor abiView() const;
  // Hands this tensor's buffers to the C side: the result owns them (free
  // them with free(), or give them back through adopt()) and this tensor
  // is left as an empty float64 scalar. Use it to pass an output to a
  // kernel that may realloc; never adopt() an abiView() of a live tensor.
  tcc_tensor release() &&;
  // Takes ownership of the malloc'd buffers in a kernel's output and
  // clears them in `filledByKernel`. Sizes are derived from the levels
  // (vals_size must match the last level's positions). The storage is
  // validated; on failure the buffers are freed and std::invalid_argument
  // is thrown.
  static Tensor adopt(tcc_tensor&& filledByKernel);
  // What a kernel that assembles an output is given: dimensions, element
  // type and level kinds set, no arrays; adopt() takes the result back.
  static tcc_tensor emptyAssembledOutput(const std::vector<int32_t>& dims, const TensorFormat& format, ValueType type);

  std::string describe() const;  // "csr float64 3x4, 5 stored"

 private:
  std::vector<int32_t> dims_;
  TensorFormat format_;
  ValueType type_ = ValueType::Float64;
  std::vector<LevelStorage> levels_;
  MallocArray<unsigned char> values_;  // nnz() * byteWidth(type_) bytes
};

}  // namespace tcc::rt
