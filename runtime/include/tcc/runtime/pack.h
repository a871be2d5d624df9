// Moving tensors between coordinate lists, dense arrays and any storage
// format.
#pragma once

#include <span>
#include <vector>

#include "tcc/runtime/coo.h"
#include "tcc/runtime/tensor.h"

namespace tcc::rt {

enum class Duplicates {
  Sum,    // repeated coordinates add up
  Reject  // a repeated coordinate throws std::invalid_argument naming it
};

// Packs an unsorted coordinate list into `format`. Throws
// std::invalid_argument when the list is inconsistent (orders, lengths,
// coordinates out of range), when the format cannot hold the tensor (a
// unique singleton level that would need two coordinates under one
// parent, a level declared unique whose coordinates would repeat under the
// same ancestors), or when a value does not fit an integer element type
// exactly. Every entry of the list is stored, zeros included.
Tensor pack(const Coo& coo, const TensorFormat& format, ValueType type = ValueType::Float64,
            Duplicates duplicates = Duplicates::Sum);

// The stored entries in storage order, zeros included: they are part of
// the structure. Only an all-dense tensor's zeros are left out.
Coo unpack(const Tensor& tensor);

// The same tensor in another format (and element type, by default the
// source's). Int64 values stay exact; stored zeros stay stored, except an
// all-dense source's.
Tensor convert(const Tensor& tensor, const TensorFormat& format);
Tensor convert(const Tensor& tensor, const TensorFormat& format, ValueType type);

// Dense row-major arrays (the last mode varies fastest) to and from any
// format. fromDense stores only the nonzeros in sparse levels. toDense sums
// the values stored at a coordinate from the first one, so a stored -0.0
// reads back as -0.0 (as through valueAt); coordinates not stored hold +0.
Tensor fromDense(std::span<const double> values, const std::vector<int32_t>& dims,
                 const TensorFormat& format, ValueType type = ValueType::Float64);
std::vector<double> toDense(const Tensor& tensor);
// Same, for a coordinate list (repeats add up).
std::vector<double> toDense(const Coo& coo);

}  // namespace tcc::rt
