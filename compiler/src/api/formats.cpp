// Format and file conversions between the compiler's view and the runtime's.
#include <algorithm>

#include "tcc/runtime/frostt.h"
#include "tcc/tcc.h"

namespace tcc {

rt::TensorFormat toRuntimeFormat(const Format& format) {
  std::vector<rt::LevelSpec> levels;
  for (const auto& level : format.levels()) {
    switch (level.kind) {
      case ir::LevelKind::Dense: levels.push_back(rt::LevelSpec::dense()); break;
      case ir::LevelKind::Compressed: levels.push_back(rt::LevelSpec::compressed(level.unique, level.ordered)); break;
      case ir::LevelKind::Singleton: levels.push_back(rt::LevelSpec::singleton(level.unique, level.ordered)); break;
      case ir::LevelKind::NM:
        throw Error("format " + format.toString() + ": N:M levels have no CPU storage yet");
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

namespace {
bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

Tensor readTensor(const std::string& path, const Format& format, ir::Datatype type, std::vector<int32_t> knownDims) {
  // A .tns file has no header: dimensions known from declarations or other
  // inputs win over the largest coordinate seen (0 marks an unknown one).
  bool allKnown = !knownDims.empty() && std::all_of(knownDims.begin(), knownDims.end(), [](int32_t d) { return d > 0; });
  rt::Coo coo = !endsWith(path, ".tns") ? rt::readMatrixMarket(path)
                : allKnown             ? rt::readTns(path, knownDims)
                                       : rt::readTns(path);
  if (endsWith(path, ".tns") && !allKnown && knownDims.size() == coo.dims.size()) {
    for (size_t mode = 0; mode < knownDims.size(); ++mode) {
      if (knownDims[mode] <= 0) continue;
      if (coo.dims[mode] > knownDims[mode])
        throw Error(path + ": mode " + std::to_string(mode + 1) + " has coordinate " + std::to_string(coo.dims[mode]) +
                    " beyond its size " + std::to_string(knownDims[mode]));
      coo.dims[mode] = knownDims[mode];
    }
  }
  if (coo.order() != format.order())
    throw Error(path + ": holds an order-" + std::to_string(coo.order()) + " tensor, but its format " +
                format.toString() + " has " + std::to_string(format.order()) + " levels");
  return rt::pack(coo, toRuntimeFormat(format), toRuntimeType(type));
}

Tensor readMatrixMarket(const std::string& path, const Format& format) {
  return readTensor(path, format);
}

void writeTensor(const std::string& path, const Tensor& tensor) {
  if (endsWith(path, ".tns") || tensor.order() > 2 || tensor.order() == 0) {
    rt::writeTns(path, tensor);
  } else {
    rt::writeMatrixMarket(path, tensor);
  }
}

}  // namespace tcc
