// Format and file conversions between the compiler's view and the runtime's.
#include <algorithm>
#include <stdexcept>

#include "tcc/runtime/tensor_file.h"
#include "tcc/tcc.h"

namespace tcc {

rt::TensorFormat toRuntimeFormat(const Format& format) {
  std::vector<rt::LevelSpec> levels;
  for (const auto& level : format.levels()) {
    switch (level.kind) {
      case ir::LevelKind::Dense: levels.push_back(rt::LevelSpec::dense()); break;
      case ir::LevelKind::Compressed: levels.push_back(rt::LevelSpec::compressed(level.unique, level.ordered)); break;
      case ir::LevelKind::Singleton: levels.push_back(rt::LevelSpec::singleton(level.unique, level.ordered)); break;
      case ir::LevelKind::NM: levels.push_back(rt::LevelSpec::nm(level.nmN, level.nmM, level.nmL)); break;
    }
  }
  return rt::TensorFormat(levels, format.modeOrdering());
}

rt::ValueType toRuntimeType(ir::Datatype type) {
  switch (type) {
    case ir::Datatype::Float64: return rt::ValueType::Float64;
    case ir::Datatype::Float32: return rt::ValueType::Float32;
    case ir::Datatype::Float16: return rt::ValueType::Float16;
    case ir::Datatype::Int32: return rt::ValueType::Int32;
    case ir::Datatype::Int64: return rt::ValueType::Int64;
  }
  return rt::ValueType::Float64;
}

Tensor readTensor(const std::string& path, const Format& format, ir::Datatype type, std::vector<int32_t> knownDims) {
  // Dimensions known from declarations or other inputs win over a .tns
  // file's largest coordinate; 0 marks one that is not known.
  bool allKnown = !knownDims.empty() && std::all_of(knownDims.begin(), knownDims.end(), [](int32_t d) { return d > 0; });
  rt::Coo coo = rt::readTensorFile(path, allKnown ? knownDims : std::vector<int32_t>{});
  if (coo.order() != format.order())
    throw Error(path + ": holds an order-" + std::to_string(coo.order()) + " tensor, but its format " +
                format.toString() + " has " + std::to_string(format.order()) + " levels");
  for (size_t mode = 0; mode < knownDims.size() && !allKnown; ++mode) {
    if (knownDims[mode] <= 0) continue;
    if (coo.dims[mode] > knownDims[mode])
      throw Error("shape mismatch: " + path + " has coordinates up to " + std::to_string(coo.dims[mode]) +
                  " in mode " + std::to_string(mode + 1) + ", whose size is " + std::to_string(knownDims[mode]));
    coo.dims[mode] = knownDims[mode];
  }
  try {
    return rt::pack(coo, toRuntimeFormat(format), toRuntimeType(type));
  } catch (const std::invalid_argument& refused) {
    throw Error(path + ": " + refused.what());
  }
}

Tensor readMatrixMarket(const std::string& path, const Format& format) { return readTensor(path, format); }

void writeTensor(const std::string& path, const Tensor& tensor) { rt::writeTensorFile(path, tensor); }

}  // namespace tcc
