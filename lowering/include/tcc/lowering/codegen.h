// Backends turn imperative IR functions into source text for one target.
// The C++ backend exists now; the CUDA backend (with its intrinsics) plugs
// in behind the same interface.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

enum class TargetKind { Cpu, Cuda };

class CodeGenerator {
 public:
  virtual ~CodeGenerator() = default;
  // One self-contained translation unit holding every function, each with
  // the C ABI entry point `extern "C" int32_t NAME(tcc_tensor** tensors)`.
  virtual std::string emit(const std::vector<ir::imp::Function>& functions) const = 0;
  virtual TargetKind target() const = 0;
};

std::unique_ptr<CodeGenerator> makeCodeGenerator(TargetKind target);

// The text every generated C++ unit starts with: fixed-width types, the few
// libc functions kernels call, min/max and a coordinate sort, and the
// tcc_tensor ABI. It includes no system header, which keeps JIT latency low.
const std::string& cppPrelude();

}  // namespace tcc::lowering
