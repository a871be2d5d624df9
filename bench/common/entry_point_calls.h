// Where a kernel's time goes, for --split: its compiled entry point called
// alone, on an output allocated once, against Kernel::run's timed calls
// (the output allocated each call), both as MLIR's samples are timed (a
// batch of calls, the sample its mean per call).
#pragma once

#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "stats.h"

// The entry point of a one-statement kernel whose dense output each call
// stores whole (SpMV over CSR rows), bound once to the inputs and to an
// output from one run; empty (false) for any other kernel.
class EntryPointCalls {
 public:
  EntryPointCalls(const tcc::Kernel& kernel, const std::map<std::string, tcc::Tensor>& inputs, const std::string& output) {
    const auto& statements = kernel.lowered().statements;
    if (statements.size() != 1 || !statements[0].convertedInputs.empty() || statements[0].output.order() != 1 ||
        statements[0].computedOutput.name() != output)
      return;
    output_ = kernel.run(inputs).at(output);
    if (!output_.format().isAllDense()) return;
    for (const auto& parameter : statements[0].parameters) {
      if (parameter.name() == output) views_.push_back(output_.abiView());
      else if (auto input = inputs.find(parameter.name()); input != inputs.end()) views_.push_back(input->second.abiView());
      else return;
    }
    for (auto& view : views_) pointers_.push_back(&view);
    entry_ = kernel.entryPoint(0);
  }
  explicit operator bool() const { return entry_ != nullptr; }

  // The mean time of one of `calls` calls in a row.
  double batchMean(int calls) {
    return seconds([&] {
             for (int c = 0; c < calls; ++c)
               if (entry_(pointers_.data()) != 0) throw std::runtime_error("the kernel failed");
           }) /
           calls;
  }

 private:
  tcc::Tensor output_;
  std::vector<tcc_tensor> views_;
  std::vector<tcc_tensor*> pointers_;
  tcc::Kernel::EntryPoint entry_ = nullptr;
};

// The mean of `calls` timed calls of Kernel::run (its binding and input
// checks, once a run, are not timed).
inline double runBatchMean(const tcc::Kernel& kernel, const std::map<std::string, tcc::Tensor>& inputs, int calls) {
  const auto seconds = kernel.run(inputs, tcc::RunOptions{calls}).seconds;
  return std::accumulate(seconds.begin(), seconds.end(), 0.0) / calls;
}
