// Reading and writing a tensor file chosen by its extension: ".mtx" is
// Matrix Market (order 2), ".tns" FROSTT (any order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tcc/runtime/coo.h"
#include "tcc/runtime/tensor.h"

namespace tcc::rt {

// knownDims, when given, is the shape the caller expects: a .tns file takes
// it as its dimensions; a .mtx file must match it (FileError otherwise).
// Unknown extensions are a FileError.
Coo readTensorFile(const std::string& path, const std::vector<int32_t>& knownDims = {});
void writeTensorFile(const std::string& path, const Tensor& tensor);
void writeTensorFile(const std::string& path, const Coo& coo);

}  // namespace tcc::rt
