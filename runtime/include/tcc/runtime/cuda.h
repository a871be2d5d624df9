// The GPU side of the runtime: the CUDA device, NVRTC compilation, modules
// loaded through the driver API, device memory and tensors, and event timing.
//
// The driver (libcuda.so.1) is opened when first needed, so tcc runs on
// machines without a GPU; there every call here throws CudaError saying so.
// Every CUDA and NVRTC call is checked: a failure throws CudaError naming
// the call and CUDA's reason. Device memory is plain cudaMalloc'd memory
// with explicit copies (no managed memory).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/runtime/abi.h"

namespace tcc::rt::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether this tcc was built with the CUDA toolkit (NVRTC).
bool builtWithCuda();

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  int maxThreadsPerMultiprocessor = 0;
  int ordinal = 0;  // among the visible devices (CUDA_VISIBLE_DEVICES applies)
  std::string architecture() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// The selected device (device 0 unless selectDevice chose another), its
// primary context made current on first use.
const DeviceInfo& device();

// How many CUDA devices this process sees; 0 where there is no driver, no
// device, or no CUDA toolkit in this build. Never throws.
int deviceCount();
// Makes `ordinal` the device that device() opens (one per process): call it
// before anything uses the GPU. Throws CudaError when a different device is
// already open; device() throws when `ordinal` is not a visible device.
void selectDevice(int ordinal);

// CUDA C++ source -> a cubin for `architecture` (sm_90). Throws CudaError
// with NVRTC's log when the source does not compile. Without
// `fusedMultiplyAdd`, NVRTC contracts no multiply and add into an FMA
// (--fmad=false).
std::string compileToCubin(const std::string& source, const std::string& architecture, const std::string& name,
                           bool fusedMultiplyAdd = true);

class Module {
 public:
  explicit Module(const std::string& cubin);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  void* function(const std::string& name) const;  // a CUfunction
  // A number naming this module, unique over the process's lifetime (a
  // module loaded where a freed one was gets another): lets a caller keep
  // what it looked up in it (functions, plans) under a key that a later
  // module never matches.
  uint64_t id() const { return id_; }

 private:
  void* module_ = nullptr;
  uint64_t id_ = 0;
};

// Launches a kernel on the default stream; `arguments` point at each argument.
void launch(void* function, int64_t blocks, int threadsPerBlock, std::vector<void*> arguments);

// A launch's grid, blocks and dynamic shared memory (hand-written kernels:
// the intrinsics).
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  // Thread block cluster dimensions (sm_90; each divides the grid's, at
  // most 8 CTAs per cluster); all 1: a launch without clusters.
  unsigned cluster[3] = {1, 1, 1};
  // (sm_90) The kernel may start before the one launched before it on the
  // stream has finished (programmatic dependent launch): its threads wait
  // for that kernel (griddepcontrol.wait) before they read what it writes,
  // and that kernel lets it start (griddepcontrol.launch_dependents).
  bool overlapsPrevious = false;
};
void launch(void* function, const LaunchShape& shape, std::vector<void*> arguments);
// Launches with the arguments in an array (no copy; the hot path of the
// intrinsics' host steps).
void launch(void* function, const LaunchShape& shape, void** arguments);
// Sets `count` floats from `device` on to zero on the default stream
// (cuMemsetD32Async: in order with the launches, returns at once).
void zeroFloatsAsync(void* device, size_t count);
// How many clusters of `shape.cluster` CTAs (each of `shape.block` threads
// and `shape.sharedBytes`) the device runs at once: 0 where none fits.
int maxActiveClusters(void* function, const LaunchShape& shape);
// Lets `function` take up to `bytes` of dynamic shared memory per block
// (above the default 48 KiB; the device's limit is 227 KiB on sm_90).
void allowDynamicSharedMemory(void* function, int bytes);
// What the compiler made of a kernel: registers per thread, local memory
// per thread (spills and arrays it could not keep in registers), static
// shared memory per block, and the largest block it can be launched with.
struct FunctionAttributes {
  int registers = 0;
  int localBytes = 0;
  int staticSharedBytes = 0;
  int maxThreadsPerBlock = 0;
};
FunctionAttributes functionAttributes(void* function);
// Blocks of `threadsPerBlock` threads (with `dynamicSharedBytes` each) that
// one multiprocessor holds at once (the occupancy calculator).
int maxActiveBlocksPerMultiprocessor(void* function, int threadsPerBlock, size_t dynamicSharedBytes);
// Copies `bytes` from a device address to the host (waits for the device).
void copyToHost(void* host, const void* device, size_t bytes);
// Copies `bytes` from the host to a device address.
void copyToDevice(void* device, const void* host, size_t bytes);
// Waits for the device and reports a fault of any kernel launched before.
void synchronize();

// A number naming the DeviceBuffer allocation that starts at `device`, unique
// over the process's lifetime (a freed address that is allocated again gets
// a new number), or 0 where no live DeviceBuffer starts there. Lets a caller
// cache what it derived from a buffer's contents (an intrinsic's
// preprocessing) for as long as that buffer lives unchanged: upload() and
// zero() give a live buffer a new number too.
uint64_t allocationId(const void* device);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  void upload(const void* host, size_t bytes);
  void download(void* host, size_t bytes) const;
  void zero();
  void* get() const { return reinterpret_cast<void*>(pointer_); }
  size_t size() const { return bytes_; }

 private:
  unsigned long long pointer_ = 0;
  size_t bytes_ = 0;
};

// A tensor's arrays copied to the device; view() is the tcc_tensor with
// device pointers that a CUDA entry point takes.
// The bytes of one stored value of a tcc_tensor datatype.
size_t bytesPerValue(int datatype);

class DeviceTensor {
 public:
  explicit DeviceTensor(const tcc_tensor& host);
  tcc_tensor& view() { return view_; }
  // Sets every value to zero (a dense output before a run).
  void zeroValues();
  // Copies the values back into `host`, whose shape matches.
  void downloadValues(const tcc_tensor& host) const;

 private:
  tcc_tensor view_{};
  std::vector<DeviceBuffer> buffers_;
  DeviceBuffer* values_ = nullptr;
  size_t valueBytes_ = 0;
};

// Elapsed device time between start() and stop(), from CUDA events.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  double stopSeconds();  // waits for the stop event

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// Launches recorded once and replayed as one (a CUDA graph): the launches
// that `record` makes through launch() are recorded, not run, with their
// arguments' values as they are then (pointers included) and their
// dependent-launch attributes; replay() runs them all, in order, by one
// launch on the default stream. Empty (false) where the driver cannot
// record them (the caller then launches them one by one).
class LaunchGraph {
 public:
  LaunchGraph() = default;
  explicit LaunchGraph(const std::function<void()>& record);
  ~LaunchGraph();
  LaunchGraph(LaunchGraph&& other) noexcept;
  LaunchGraph& operator=(LaunchGraph&& other) noexcept;
  LaunchGraph(const LaunchGraph&) = delete;
  LaunchGraph& operator=(const LaunchGraph&) = delete;
  explicit operator bool() const { return executable_ != nullptr; }
  void replay() const;

 private:
  void* executable_ = nullptr;
};

}  // namespace tcc::rt::cuda
