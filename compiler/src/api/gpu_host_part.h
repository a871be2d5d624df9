// Internal to the library: running the host part of a GpuFunction (see
// tcc/lowering/gpu_kernels.h) on tensors whose arrays are on the device.
// It evaluates the host's scalars from the tensors' fields (and single
// array entries, read through the device) and hands each kernel launch
// (blocks, and every argument in its parameter's own type) to the device;
// a kernel with nothing to do is not launched.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/abi.h"
#include "tcc/tcc.h"

namespace tcc::detail {

struct KernelLaunch {
  const lowering::GpuKernel* kernel = nullptr;
  int64_t blocks = 0;
  std::vector<std::array<unsigned char, 8>> arguments;  // one per kernel parameter
  // The scratch buffers of the GPU threads' workspaces
  // (GpuKernel::scratch): the argument each one is, and the bytes that
  // the launch's threads need in it. The device allocates them (their
  // contents may be anything) and writes their addresses into those
  // arguments.
  struct Scratch {
    size_t argument = 0;
    int64_t bytes = 0;
  };
  std::vector<Scratch> scratch;
};

// A compressed level's pos array copied to the host once, and the length of
// its longest segment (the longest row of a CSR matrix): what the host part
// reads of pos (a pos range's ends, the row statistics that pick a kernel).
struct HostPositions {
  std::vector<int64_t> pos;
  int64_t longest = 0;
};
// `pos` with its longest segment counted.
std::shared_ptr<const HostPositions> hostPositionsOf(std::vector<int64_t> pos);

struct HostPartDevice {
  std::function<void(const KernelLaunch&)> launch;
  // Copies `bytes` at a device address to `host`.
  std::function<void(void* host, const void* device, size_t bytes)> read;
  // The `entries` entries of a device pos array, on the host (a launcher
  // caches them for as long as the device array lives unchanged).
  std::function<std::shared_ptr<const HostPositions>(const void* device, int64_t entries)> positions;
  // `bytes` of device memory, zeroed, for a dense workspace that GPU loops
  // share; release(address) once the kernels launched before are done with
  // it (the device waits for them). A device that allocates none may leave
  // both out: a program with such a workspace is then refused.
  std::function<void*(size_t bytes)> allocateZeroed;
  std::function<void(void* address)> release;
  // The same for a workspace whose entries the kernels write before they
  // read them (a scan's tile totals): its contents may be anything. A
  // device that leaves it out has allocateZeroed allocate it.
  std::function<void*(size_t bytes)> allocate;
  // `bytes` of device memory, zeroed, for an array of a sparse output (the
  // host part hands it to the output's tcc_tensor, and the caller owns it
  // once the part returns). A device that allocates none may leave it out:
  // a program with a sparse output is then refused.
  std::function<void*(size_t bytes)> allocateOutput;
  // Runs an intrinsic statement on the tensors it names (by name); returns
  // its status (0: success).
  std::function<int32_t(const lowering::GpuIntrinsicCall& call, const std::map<std::string, tcc_tensor*>& tensors)>
      intrinsic;
};

// Returns the entry point's status (0: success; a bound(...) that does not
// hold returns lowering::kBrokenBoundStatus).
int32_t runHostPart(const lowering::GpuFunction& function, const std::vector<tcc_tensor*>& tensors,
                    const HostPartDevice& device);

}  // namespace tcc::detail
