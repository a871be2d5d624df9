// FROSTT .tns files: one entry per line, 1-based coordinates then the
// value, any order; blank lines and lines starting with '#' are skipped.
// A scalar is a single line holding its value. The file has no header, so
// the order comes from the first entry and each dimension is the largest
// coordinate seen, unless knownDims gives them (then coordinates beyond
// them are errors, and an empty file is an all-zero tensor). Writing a
// tensor lists every stored entry, explicit zeros included; only an
// all-dense tensor's zeros are left out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tcc/runtime/coo.h"
#include "tcc/runtime/tensor.h"

namespace tcc::rt {

Coo readTns(const std::string& path, std::vector<int32_t> knownDims = {});
Coo parseTns(std::string_view text, const std::string& path, std::vector<int32_t> knownDims = {});

// Full precision; written to a temporary file and renamed over `path`.
// Int32/Int64 tensors are written as integers.
void writeTns(const std::string& path, const Coo& coo);
void writeTns(const std::string& path, const Tensor& tensor);

}  // namespace tcc::rt
