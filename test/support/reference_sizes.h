// Size resolution for the reference evaluator (internal).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tcc/test/reference.h"

namespace tcc::test::detail {

struct ResolvedSizes {
  std::unordered_map<ir::IndexVar, int64_t> varSizes;
  std::map<std::string, std::vector<int64_t>> tensorDims;  // every tensor, by name
  std::map<std::string, ir::TensorVar> tensors;
};

// Binds every index variable and every tensor mode to a size, or throws
// std::invalid_argument naming what conflicts or what nothing determines.
ResolvedSizes resolveSizes(const std::vector<ir::IndexStmt>& statements,
                           const std::map<std::string, DenseArray>& inputs);

}  // namespace tcc::test::detail
