// Names of the tensors tcc inserts into a program: copies of inputs in the
// loops' order (B_by_j_i), dense and sparse workspaces (w_Y, ws_Y) and dense
// copies of N:M operands (X_dense). A user may name a tensor of the program
// exactly so; the inserted tensor then takes another name, so that every
// name in the generated code, and every name the host code looks a tensor
// up by, denotes one tensor.
#pragma once

#include <set>
#include <string>

namespace tcc::lowering {

// `base`, else base_2, base_3, ...: the first name `taken` lacks, taken
// from then on.
inline std::string takeFreshName(const std::string& base, std::set<std::string>& taken) {
  std::string name = base;
  for (int suffix = 2; taken.count(name); ++suffix) name = base + "_" + std::to_string(suffix);
  taken.insert(name);
  return name;
}

}  // namespace tcc::lowering
