// A lowered function split for the GPU: each outermost Gpu loop becomes a
// kernel, and what is left is the host code that launches them. An
// Intrinsic statement the CUDA backend expands (tcc/lowering/intrinsics.h)
// stays in the host code, listed in `intrinsics`.
//
// The host code reads only tensor fields (dimensions and array pointers,
// which on the GPU point to device memory), single array entries (each read
// is a copy from the device) and scalars computed from them;
// it launches kernel K with `Evaluate(Call(K.name, K.parameters))`, and
// allocates (zeroed where the Allocate says so) and frees the workspaces that GPU loops share
// (imp::Function::gpuSharedWorkspaces) in device memory. A statement whose
// work is not all inside GPU loops (a loop no parallelize maps to the GPU,
// a sparse output, a sparse workspace) is refused with the reason.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

// The calls host code may make besides launching kernels:
// tcc_longest_segment(pos, segments), an int64: the most positions any of a
// level's `segments` segments holds (the longest row of a CSR matrix). The
// in-process launcher answers it from a host copy of pos kept with the
// device tensor; the printed launcher copies pos and scans it.
inline constexpr const char* kLongestSegmentCall = "tcc_longest_segment";
// And tcc_saturating_mul(a, b), an int64: a * b, or the int64 limit on the
// product's side where it would overflow (the products of the rules that
// pick a kernel per input, gpu_input_rules.h). saturatingMul is the
// launcher's and the rules' own; the printed preludes spell the same.
inline constexpr const char* kSaturatingMulCall = "tcc_saturating_mul";
inline int64_t saturatingMul(int64_t a, int64_t b) {
  constexpr int64_t most = 9223372036854775807LL, least = -most - 1;
  if (a > 0 ? (b > 0 ? a > most / b : b < least / a) : (b > 0 ? a < least / b : (a != 0 && b < most / a)))
    return (a < 0) != (b < 0) ? least : most;
  return a * b;
}

// A call kernels make: tcc_gpu_thread_index(), an int64, the running
// thread's index in the launch (blockIdx.x * blockDim.x + threadIdx.x),
// which picks its copy of a workspace in a scratch buffer
// (imp::Function::gpuThreadScratch).
inline constexpr const char* kGpuThreadIndexCall = "tcc_gpu_thread_index";
// tcc_gpu_thread_count(), an int64: the threads in the launch (gridDim.x *
// blockDim.x), the stride between a thread's entries in a scratch buffer,
// whose copies are interleaved (entry e of thread t at e * count + t).
inline constexpr const char* kGpuThreadCountCall = "tcc_gpu_thread_count";
// tcc_gpu_sparse_workspace_merge(crd, vals, n), an int64: sorts a GPU
// thread's sparse workspace (n coordinates and their values, its own
// arrays in a scratch buffer) by coordinate in place, adds the values of
// repeated coordinates, and returns how many entries are left.
inline constexpr const char* kGpuSparseWorkspaceMergeCall = "tcc_gpu_sparse_workspace_merge";

// A kernel parameter that is a scratch buffer of the GPU threads' copies
// of a workspace (imp::Function::gpuThreadScratch): each launch gets one of
// threads x entriesPerThread entries (a host scalar) of `element`, whose
// contents need not be zero (each thread zeroes its copy before a fill).
struct GpuScratchParameter {
  size_t parameter = 0;  // index into GpuKernel::parameters
  ir::imp::Expr entriesPerThread;
  ir::imp::Type element;
  int64_t bytesPerEntry() const;
};

// The scratch buffers of one launch take at most this many bytes: a
// launch whose threads would need more runs on fewer blocks (its loops
// stride over the iterations the others would have run), and one whose
// single block of threads would need more is refused.
inline constexpr int64_t kGpuScratchBytesLimit = int64_t(1) << 30;
// What a printed CUDA entry point returns when one block's threads would
// need more (the in-process launcher throws, saying so).
inline constexpr int kGpuScratchTooLargeStatus = 6;

struct GpuKernel {
  std::string name;
  // The variables the kernel reads from the host, in order: device array
  // pointers and scalars.
  std::vector<ir::imp::Expr> parameters;
  std::vector<bool> readOnly;  // per parameter: a pointer the kernel never stores through
  ir::imp::Stmt loop;          // the outermost Gpu loop (a For)
  int threadsPerBlock = 256;
  std::vector<GpuScratchParameter> scratch;

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
  // The arrays the host allocates and hands to sparse outputs (pos, crd,
  // vals; SetTensorProperty): the output's, never freed by the host part.
  std::set<std::string> outputArrays;
  const GpuKernel* kernelNamed(const std::string& name) const;
  const GpuIntrinsicCall* intrinsicCall(const ir::imp::Intrinsic* op) const;
};

// `speculativeJamLoads`: unroll-and-jam's guarded copies update their sums
// unguarded, their loads at a live copy's index (unroll_and_jam.cpp); off,
// under each copy's `if` (CompileOptions::gpuSpeculativeJamLoads).
GpuFunction splitIntoKernels(const ir::imp::Function& function, bool speculativeJamLoads = false);

// Blocks a launch needs for `extent` iterations of the kernel's outer loop.
int64_t blocksFor(const GpuKernel& kernel, int64_t extent);

// `blocks` (blocksFor's), fewer where its threads' scratch of
// `bytesPerThread` each would pass kGpuScratchBytesLimit; 0 where one
// block's would.
int64_t blocksWithinScratchLimit(const GpuKernel& kernel, int64_t blocks, int64_t bytesPerThread);

}  // namespace tcc::lowering
