// An MLIR 16 result's entries, as result_entries.h gives tcc's and Eigen's.
#pragma once

#include "result_entries.h"
#include "tcc/test/mlir_oracle.h"

inline Entries entriesOf(const tcc::test::MlirResult& result) {
  Entries entries;
  for (size_t k = 0; k < result.values.size(); ++k)
    if (result.values[k] != 0) entries.emplace_back(result.coordinates[k], result.values[k]);
  std::sort(entries.begin(), entries.end());
  return entries;
}
