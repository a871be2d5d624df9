// Runs a program through the library and compares every output with the
// dense reference evaluator.
#pragma once

#include <map>
#include <string>

#include "tcc/tcc.h"

namespace tcc::e2e {

// Fails the current test (with the generated code attached) when an output
// differs from the reference by more than relativeTolerance times the
// largest reference magnitude (at least 1).
void expectMatchesReference(const Program& program, const std::map<std::string, Tensor>& inputs,
                            double relativeTolerance = 1e-9);

// Reads the inputs bound as NAME=FILE into their declared formats. Matrix
// Market files go first so their headers size the symbols that .tns files
// (whose shape is their largest coordinates) then take, as `tcc run` does.
std::map<std::string, Tensor> readInputs(const Program& program,
                                         const std::vector<std::pair<std::string, std::string>>& bindings);

}  // namespace tcc::e2e
