// MLIR 16 spellings of tcc's element types, formats and tensor types.
#include <string>

#include "tcc/lowering/mlir_export.h"

namespace tcc::lowering {

namespace {

// MLIR 16's dimLevelType names: "compressed-nu" for a level whose
// coordinates repeat, "-no" for unordered ones.
std::string levelTypeName(const ir::LevelFormat& level) {
  std::string name;
  switch (level.kind) {
    case ir::LevelKind::Dense: return "dense";
    case ir::LevelKind::Compressed: name = "compressed"; break;
    case ir::LevelKind::Singleton: name = "singleton"; break;
    case ir::LevelKind::NM:
      throw MlirExportError("the level format " + level.toString() + " has no MLIR 16 counterpart");
  }
  if (!level.unique) name += "-nu";
  if (!level.ordered) name += "-no";
  return name;
}

bool needsEncoding(const ir::Format& format) {
  return format.order() > 0 && (!format.isAllDense() || !format.hasIdentityOrdering());
}

}  // namespace

std::string mlirElementType(ir::Datatype type) {
  switch (type) {
    case ir::Datatype::Float64: return "f64";
    case ir::Datatype::Float32: return "f32";
    case ir::Datatype::Int32: return "i32";
    case ir::Datatype::Int64: return "i64";
    case ir::Datatype::Float16: return "f16";
  }
  throw MlirExportError("the element type " + ir::toString(type) + " is not exported to MLIR");
}

std::string mlirEncodingName(const ir::Format& format) {
  std::string name = "#";
  for (int level = 0; level < format.order(); ++level) {
    if (level > 0) name += "_";
    std::string levelName = levelTypeName(format.level(level));
    for (char& c : levelName)
      if (c == '-') c = '_';
    name += levelName;
  }
  if (!format.hasIdentityOrdering()) {
    name += "_order";
    for (int level = 0; level < format.order(); ++level) name.append("_").append(std::to_string(format.modeOfLevel(level)));
  }
  return name;
}

std::string mlirEncodingAlias(const ir::Format& format) {
  if (!needsEncoding(format)) return "";
  std::string text = mlirEncodingName(format) + " = #sparse_tensor.encoding<{ dimLevelType = [ ";
  for (int level = 0; level < format.order(); ++level)
    text += (level > 0 ? ", \"" : "\"") + levelTypeName(format.level(level)) + "\"";
  text += " ]";
  if (!format.hasIdentityOrdering()) {
    // dimOrdering maps dimensions (modes) to levels: level l stores mode modeOfLevel(l).
    std::string dims, levels;
    for (int mode = 0; mode < format.order(); ++mode) dims += (mode > 0 ? ", d" : "d") + std::to_string(mode);
    for (int level = 0; level < format.order(); ++level)
      levels += (level > 0 ? ", d" : "d") + std::to_string(format.modeOfLevel(level));
    text += ", dimOrdering = affine_map<(" + dims + ") -> (" + levels + ")>";
  }
  return text + " }>";
}

std::string mlirTensorType(const ir::TensorVar& tensor) {
  std::string text = "tensor<";
  for (int mode = 0; mode < tensor.order(); ++mode) text += "?x";
  text += mlirElementType(tensor.datatype());
  if (needsEncoding(tensor.format())) text += ", " + mlirEncodingName(tensor.format());
  return text + ">";
}

}  // namespace tcc::lowering
