// Internal to the library: compiling a lowered CUDA program with NVRTC
// (through a cache in memory and on disk) and running a statement's host
// part, which launches its kernels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tcc/runtime/cuda.h"
#include "tcc/tcc.h"

namespace tcc::detail {

// The architecture to compile for: the options', else the program's
// `target cuda(sm_XX)`, else the device's.
std::string cudaArchitectureFor(const Program& program, const CompileOptions& options);

// The cubin of NVRTC-ready kernels for `architecture`: with `useCache`,
// from memory, else from the disk cache (the folder of tcc/jit's kernel
// cache; one file per key, which holds the tcc version, the architecture,
// --fmad and the source), else compiled and stored in both. Needs no GPU.
std::string cubinFor(const std::string& kernels, const std::string& architecture, bool useCache,
                     bool fusedMultiplyAdd = true);
// Whether NVRTC may contract the kernels of `lowered` (--fmad): not under fp
// strict (belt and braces: the products tcc prints are rounded anyway),
// unless an intrinsic's kernels are among them, which keep their own
// numerics in both modes.
bool fusedMultiplyAddFor(const Lowered& lowered);

// The loaded kernels of `lowered` (a Cuda program).
std::shared_ptr<const rt::cuda::Module> loadCudaKernels(const Lowered& lowered, const std::string& architecture,
                                                       bool useCache);

// The device memory kept between launches for the GPU threads' workspaces
// (the scratch arena) and the workspaces GPU loops share (the pool), the
// two together, at most: a launch whose scratch needs more has it freed
// once it is done, and the pool keeps what the arena leaves of the cap.
inline constexpr size_t kKeptGpuScratchBytes = size_t(64) << 20;

// What the GPU threads' workspaces keep now (the scratch arena's buffer).
size_t gpuScratchBytesKept();
// What the workspaces GPU loops share keep now, between calls.
size_t gpuWorkspaceBytesKept();

// Runs the host part of `function` on tensors whose arrays are on the
// device: evaluates its scalars, launches its kernels (asynchronously);
// returns the entry point's status (0: success).
// `launched`, when given, gets the name of each kernel launched.
// `outputArrays`, when given, gets the device arrays the host part hands to
// sparse outputs (their tcc_tensor then points into them); without it a
// function that assembles a sparse output is refused.
int32_t launchGpuFunction(const lowering::GpuFunction& function, const rt::cuda::Module& module,
                          const std::vector<tcc_tensor*>& tensors, std::vector<std::string>* launched = nullptr,
                          std::vector<rt::cuda::DeviceBuffer>* outputArrays = nullptr);

// The sparse output `device` (a tcc_tensor whose arrays a launch handed
// to it, in device memory) copied into malloc'd host arrays, for
// Tensor::adopt. Waits for the kernels.
tcc_tensor downloadAssembledOutput(const tcc_tensor& device);

}  // namespace tcc::detail
