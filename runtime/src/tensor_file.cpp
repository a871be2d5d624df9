#include "tcc/runtime/tensor_file.h"

#include <cctype>

#include "tcc/runtime/errors.h"
#include "tcc/runtime/frostt.h"
#include "tcc/runtime/matrix_market.h"

namespace tcc::rt {

namespace {

enum class FileKind { MatrixMarket, Frostt };

FileKind kindOf(const std::string& path) {
  auto endsWith = [&](const std::string& suffix) {
    if (path.size() < suffix.size()) return false;
    for (size_t i = 0; i < suffix.size(); ++i) {
      char c = path[path.size() - suffix.size() + i];
      if (std::tolower(static_cast<unsigned char>(c)) != suffix[i]) return false;
    }
    return true;
  };
  if (endsWith(".mtx")) return FileKind::MatrixMarket;
  if (endsWith(".tns")) return FileKind::Frostt;
  throw FileError(path, 0, "unknown tensor file type: expected a .mtx (Matrix Market) or .tns (FROSTT) file");
}

std::string shapeText(const std::vector<int32_t>& dims) {
  std::string text;
  for (size_t mode = 0; mode < dims.size(); ++mode) {
    if (mode > 0) text += "x";
    text += std::to_string(dims[mode]);
  }
  return dims.empty() ? "scalar" : text;
}

}  // namespace

Coo readTensorFile(const std::string& path, const std::vector<int32_t>& knownDims) {
  if (kindOf(path) == FileKind::Frostt) return readTns(path, knownDims);
  Coo coo = readMatrixMarket(path);
  if (!knownDims.empty() && knownDims != coo.dims) {
    throw FileError(path, 0, "file holds a " + shapeText(coo.dims) + " matrix, but a " +
                                 shapeText(knownDims) + " tensor is expected");
  }
  return coo;
}

void writeTensorFile(const std::string& path, const Tensor& tensor) {
  if (kindOf(path) == FileKind::Frostt) return writeTns(path, tensor);
  writeMatrixMarket(path, tensor);
}

void writeTensorFile(const std::string& path, const Coo& coo) {
  if (kindOf(path) == FileKind::Frostt) return writeTns(path, coo);
  writeMatrixMarket(path, coo);
}

}  // namespace tcc::rt
