// Backends turn imperative IR functions into source text for one target:
// C++ (OpenMP for CPU-parallel loops) or CUDA. Both print through one
// C-like printer base (c_like_printer.h); intrinsics plug in as the IR's
// Intrinsic node, expanded by the backend that supports them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/lowering/gpu_kernels.h"

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

// How the C++ backend lets the C++ compiler treat floating point.
//  Strict: the IR's order of operations, no contraction into FMA.
//  Fast: FMA contraction; innermost loops that only sum into scalars are
//    reassociated: as four scalar partial sums where they read through an
//    index they loaded or at a stride, else under
//    `#pragma omp simd reduction(+: ...)`, vectorized.
enum class FloatingPointMode { Strict, Fast };

// The C++ compiler flags that give `mode` (beyond -O3 and -march=native):
// what the JIT passes and what the emitted unit's header comment names.
const std::vector<std::string>& cppFloatingPointFlags(FloatingPointMode mode);

// On the Cpu target floatingPoint picks the loop forms and flags (above);
// on Cuda, strict prints device products as __fmul_rn / __dmul_rn (never
// contracted into FMA, whatever flags compile the unit).
std::unique_ptr<CodeGenerator> makeCodeGenerator(TargetKind target,
                                                 FloatingPointMode floatingPoint = FloatingPointMode::Strict);

// The text every generated C++ unit starts with: fixed-width types, the few
// libc functions kernels call, min/max and a coordinate sort, and the
// tcc_tensor ABI. It includes no system header, which keeps JIT latency low.
const std::string& cppPrelude();

// The tcc_tensor ABI (runtime/abi.h) as text, for generated units.
const std::string& abiText();

// The CUDA target's two texts. emitCudaUnit: one .cu file that nvcc
// compiles alone, with the kernels and, per function, a host launcher with
// the usual entry point (its tensors' arrays are device pointers).
// emitCudaKernels: the kernels alone, with no system header, for NVRTC;
// the runtime launches them as the host part of each GpuFunction says.
std::string emitCudaUnit(const std::vector<GpuFunction>& functions,
                         FloatingPointMode floatingPoint = FloatingPointMode::Strict);
std::string emitCudaKernels(const std::vector<GpuFunction>& functions,
                            FloatingPointMode floatingPoint = FloatingPointMode::Strict);

}  // namespace tcc::lowering
