// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html).
//
// Reading: coordinate and array layouts; real, integer and pattern fields
// (pattern values read as 1); general, symmetric and skew-symmetric
// symmetry, expanded to both triangles on read. Complex files are refused.
// Array files are column-major as the format says; their zeros are left
// out of the coordinate list. Repeated coordinates are kept (pack decides).
// Any malformed input throws FileError naming the file and line.
//
// Writing: full precision (shortest text that reads back exactly), into a
// temporary file renamed over `path` at the end, so a failure leaves no
// partial output. A tensor's coordinate file lists every stored entry,
// explicit zeros included; only an all-dense tensor's zeros are left out.
#pragma once

#include <string>
#include <string_view>

#include "tcc/runtime/coo.h"
#include "tcc/runtime/tensor.h"

namespace tcc::rt {

Coo readMatrixMarket(const std::string& path);
// Parses text already in memory; `path` only names it in errors.
Coo parseMatrixMarket(std::string_view text, const std::string& path);

enum class MatrixMarketLayout { Coordinate, Array };

// Order-2 tensors only (std::invalid_argument otherwise). A Coo is written
// with the real field; a Tensor with integer for Int32/Int64 values and
// real otherwise.
void writeMatrixMarket(const std::string& path, const Coo& coo,
                       MatrixMarketLayout layout = MatrixMarketLayout::Coordinate);
void writeMatrixMarket(const std::string& path, const Tensor& tensor,
                       MatrixMarketLayout layout = MatrixMarketLayout::Coordinate);

}  // namespace tcc::rt
