// Seeded random sparse tensors. The same arguments give the same tensor on
// every platform (a fixed 64-bit Mersenne Twister and our own
// distributions). Values are nonzero: magnitude in [0.5, 2), random sign.
// Coordinates are distinct; entries come in no particular order.
#pragma once

#include <cstdint>
#include <vector>

#include "tcc/runtime/coo.h"

namespace tcc::rt {

// Any order: round(density * prod(dims)) distinct coordinates, uniformly.
Coo randomUniform(const std::vector<int32_t>& dims, double density, uint64_t seed);
// Exactly min(nnzPerRow, cols) entries in every row, columns uniform.
Coo randomPerRow(int32_t rows, int32_t cols, int32_t nnzPerRow, uint64_t seed);
// Exactly min(nnzPerColumn, rows) entries in every column.
Coo randomPerColumn(int32_t rows, int32_t cols, int32_t nnzPerColumn, uint64_t seed);
// n x n, each (i, j) present independently with `probability`.
Coo randomErdosRenyi(int32_t n, double probability, uint64_t seed);
// Row lengths follow a power law (row of rank r gets weight r^-exponent,
// ranks shuffled over rows), scaled to about avgNnzPerRow on average and
// capped at cols; columns uniform within a row.
Coo randomPowerLaw(int32_t rows, int32_t cols, double avgNnzPerRow, double exponent,
                   uint64_t seed);
// Any order, `nnz` entries whose mode-0 fibers have power-law lengths.
Coo randomPowerLawTensor(const std::vector<int32_t>& dims, int64_t nnz, double exponent,
                         uint64_t seed);

}  // namespace tcc::rt
