// A matrix's rows folded into the first two modes of an order-3 tensor,
// B(r / 8, r % 8, c) = M(r, c): every fibre along the last mode is one of
// the matrix's rows (the inputs of the TTV and TTM benches).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tcc/runtime/coo.h"

inline tcc::rt::Coo foldedRows(const tcc::rt::Coo& matrix) {
  tcc::rt::Coo folded = tcc::rt::Coo::ofShape({(matrix.dims[0] + 7) / 8, 8, matrix.dims[1]});
  folded.reserve(matrix.nnz());
  for (size_t k = 0; k < matrix.nnz(); ++k) {
    const int32_t r = matrix.coords[0][k];
    const int32_t c[3] = {r / 8, r % 8, matrix.coords[1][k]};
    folded.push(c, matrix.values[k]);
  }
  return folded;
}
