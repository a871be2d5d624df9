// A lowered function split for the GPU: each outermost Gpu loop becomes a
// kernel, and what is left is the host code that launches them. An
// Intrinsic statement the CUDA backend expands (tcc/lowering/intrinsics.h)
// stays in the host code, listed in `intrinsics`.
//
// The host code reads only tensor fields (dimensions and array pointers,
// which on the GPU point to device memory), single array entries (each read
// is a copy from the device) and scalars computed from them;
// it launches kernel K with `Evaluate(Call(K.name, K.parameters))`. A
// statement whose work is not all inside GPU loops (a loop no parallelize
// maps to the GPU, a sparse output, a workspace) is refused with the reason.
#pragma once

#include <string>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

// The one call host code may make besides launching kernels:
// tcc_longest_segment(pos, segments), an int64: the most positions any of a
// level's `segments` segments holds (the longest row of a CSR matrix). The
// in-process launcher answers it from a host copy of pos kept with the
// device tensor; the printed launcher copies pos and scans it.
inline constexpr const char* kLongestSegmentCall = "tcc_longest_segment";

struct GpuKernel {
  std::string name;
  // The variables the kernel reads from the host, in order: device array
  // pointers and scalars.
  std::vector<ir::imp::Expr> parameters;
  std::vector<bool> readOnly;  // per parameter: a pointer the kernel never stores through
  ir::imp::Stmt loop;          // the outermost Gpu loop (a For)
  int threadsPerBlock = 256;

  ir::imp::LoopKind unit() const;
  // Iterations of the outermost loop one block runs at a time.
  int iterationsPerBlock() const;
};

// An intrinsic statement of the host code and the unique prefix of the
// names its expansion emits.
struct GpuIntrinsicCall {
  const ir::imp::Intrinsic* op = nullptr;  // a node of the function's host body
  std::string prefix;
};

struct GpuFunction {
  ir::imp::Function host;
  std::vector<GpuKernel> kernels;
  std::vector<GpuIntrinsicCall> intrinsics;
  const GpuKernel* kernelNamed(const std::string& name) const;
  const GpuIntrinsicCall* intrinsicCall(const ir::imp::Intrinsic* op) const;
};

GpuFunction splitIntoKernels(const ir::imp::Function& function);

// Blocks a launch needs for `extent` iterations of the kernel's outer loop.
int64_t blocksFor(const GpuKernel& kernel, int64_t extent);

}  // namespace tcc::lowering
