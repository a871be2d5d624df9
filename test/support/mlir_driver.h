// The @main that drives an exported MLIR kernel: reads the inputs, calls
// the kernel (timed with rtclock()), prints what it computed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tcc/lowering/mlir_export.h"

namespace tcc::test {

struct MlirDriverRequest {
  // Input k of the kernel of order > 0 is read with sparse_tensor.new from
  // the file that the environment variable TENSOR<k> names (extended FROSTT).
  // A scalar input is a constant: its value here.
  std::map<std::string, double> scalarInputs;
  std::vector<int64_t> outputDims;
  int repeats = 1;
  int callsPerSample = 1;  // each timed sample is this many calls; it prints the mean
  bool printResult = true;
};

// The whole module: the kernel, then @main. Printed, one number per line:
// the nanoseconds per call of each timed sample, then (printResult) the result of one
// more call: for each stored entry its coordinates and then its value (a
// float as its bit pattern, so nothing is rounded); a scalar is its value.
std::string mlirDriverModule(const lowering::MlirKernel& kernel, const MlirDriverRequest& request);

}  // namespace tcc::test
