// Internal to the library: the in-process host step of each intrinsic the
// CUDA backend expands (tcc/lowering/intrinsics.h). It does what the
// intrinsic's host statement does in a printed .cu file: prepares what the
// kernels need from the tensors (on the device), launches the intrinsic's
// kernels from the program's module (their names start with the call's
// prefix), and returns a status (0: success).
#pragma once

#include <map>
#include <string>

#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/abi.h"
#include "tcc/runtime/cuda.h"

namespace tcc::detail {

struct GpuIntrinsicRun {
  const lowering::GpuIntrinsicCall& call;
  const rt::cuda::Module& module;
  const std::map<std::string, tcc_tensor*>& tensors;  // the Intrinsic's tensors by name; arrays in device memory
};

using GpuIntrinsicRunner = int32_t (*)(const GpuIntrinsicRun& run);

// Each intrinsic's host step (gpu_intrinsic_<name>.cpp).
GpuIntrinsicRunner tcaSpmmRunner();

// The host step of intrinsic `name`, or nullptr.
GpuIntrinsicRunner gpuIntrinsicRunner(const std::string& name);

}  // namespace tcc::detail
