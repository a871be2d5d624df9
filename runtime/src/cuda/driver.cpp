// The driver API, opened with dlopen so that tcc runs where there is no
// GPU, and everything built on it: device, modules, launches, memory, events.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>

#include "tcc/runtime/cuda.h"

namespace tcc::rt::cuda {

namespace {

// cuda.h maps names like cuMemAlloc to their current versions
// (cuMemAlloc_v2); expanding the macro before stringizing looks up those.
#define TCC_CUDA_STRING_EXPANDED(name) #name
#define TCC_CUDA_SYMBOL(name) TCC_CUDA_STRING_EXPANDED(name)

struct DriverApi {
  decltype(&::cuInit) init;
  decltype(&::cuDeviceGetCount) deviceGetCount;
  decltype(&::cuDeviceGet) deviceGet;
  decltype(&::cuDeviceGetName) deviceGetName;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent;
  decltype(&::cuCtxSynchronize) ctxSynchronize;
  decltype(&::cuModuleLoadData) moduleLoadData;
  decltype(&::cuModuleUnload) moduleUnload;
  decltype(&::cuModuleGetFunction) moduleGetFunction;
  decltype(&::cuLaunchKernel) launchKernel;
  decltype(&::cuLaunchKernelEx) launchKernelEx;  // null in drivers before CUDA 12
  decltype(&::cuOccupancyMaxActiveClusters) occupancyMaxActiveClusters;  // null as well
  decltype(&::cuFuncSetAttribute) funcSetAttribute;
  decltype(&::cuFuncGetAttribute) funcGetAttribute;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancyMaxActiveBlocksPerMultiprocessor;
  decltype(&::cuMemAlloc) memAlloc;
  decltype(&::cuMemFree) memFree;
  decltype(&::cuMemcpyHtoD) memcpyHtoD;
  decltype(&::cuMemcpyDtoH) memcpyDtoH;
  decltype(&::cuMemsetD8) memsetD8;
  decltype(&::cuMemsetD32Async) memsetD32Async;
  decltype(&::cuEventCreate) eventCreate;
  decltype(&::cuEventDestroy) eventDestroy;
  decltype(&::cuEventRecord) eventRecord;
  decltype(&::cuEventSynchronize) eventSynchronize;
  decltype(&::cuEventElapsedTime) eventElapsedTime;
  decltype(&::cuGetErrorName) getErrorName;
  decltype(&::cuGetErrorString) getErrorString;
  // Optional (LaunchGraph): null where the driver lacks them.
  decltype(&::cuStreamCreate) streamCreate;
  decltype(&::cuStreamDestroy) streamDestroy;
  decltype(&::cuStreamBeginCapture) streamBeginCapture;
  decltype(&::cuStreamEndCapture) streamEndCapture;
  decltype(&::cuGraphInstantiate) graphInstantiate;
  decltype(&::cuGraphLaunch) graphLaunch;
  decltype(&::cuGraphExecDestroy) graphExecDestroy;
  decltype(&::cuGraphDestroy) graphDestroy;
};

const DriverApi& api() {
  static DriverApi table;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      failure = "no CUDA driver on this machine (libcuda.so.1 cannot be loaded), so there is no GPU to run on";
      return;
    }
    auto load = [&](auto& slot, const char* symbol) {
      void* address = dlsym(library, symbol);
      if (!address && failure.empty()) failure = std::string("the CUDA driver lacks ") + symbol + "; update the driver";
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
    };
#define TCC_LOAD(slot, name) load(table.slot, TCC_CUDA_SYMBOL(name))
    TCC_LOAD(init, cuInit);
    TCC_LOAD(deviceGetCount, cuDeviceGetCount);
    TCC_LOAD(deviceGet, cuDeviceGet);
    TCC_LOAD(deviceGetName, cuDeviceGetName);
    TCC_LOAD(deviceGetAttribute, cuDeviceGetAttribute);
    TCC_LOAD(primaryCtxRetain, cuDevicePrimaryCtxRetain);
    TCC_LOAD(ctxSetCurrent, cuCtxSetCurrent);
    TCC_LOAD(ctxSynchronize, cuCtxSynchronize);
    TCC_LOAD(moduleLoadData, cuModuleLoadData);
    TCC_LOAD(moduleUnload, cuModuleUnload);
    TCC_LOAD(moduleGetFunction, cuModuleGetFunction);
    TCC_LOAD(launchKernel, cuLaunchKernel);
    // Optional (thread block clusters): a driver without them runs the rest.
    table.launchKernelEx = reinterpret_cast<decltype(table.launchKernelEx)>(
        dlsym(library, TCC_CUDA_SYMBOL(cuLaunchKernelEx)));
    table.occupancyMaxActiveClusters = reinterpret_cast<decltype(table.occupancyMaxActiveClusters)>(
        dlsym(library, TCC_CUDA_SYMBOL(cuOccupancyMaxActiveClusters)));
    TCC_LOAD(funcSetAttribute, cuFuncSetAttribute);
    TCC_LOAD(funcGetAttribute, cuFuncGetAttribute);
    TCC_LOAD(occupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor);
    TCC_LOAD(memAlloc, cuMemAlloc);
    TCC_LOAD(memFree, cuMemFree);
    TCC_LOAD(memcpyHtoD, cuMemcpyHtoD);
    TCC_LOAD(memcpyDtoH, cuMemcpyDtoH);
    TCC_LOAD(memsetD8, cuMemsetD8);
    TCC_LOAD(memsetD32Async, cuMemsetD32Async);
    TCC_LOAD(eventCreate, cuEventCreate);
    TCC_LOAD(eventDestroy, cuEventDestroy);
    TCC_LOAD(eventRecord, cuEventRecord);
    TCC_LOAD(eventSynchronize, cuEventSynchronize);
    TCC_LOAD(eventElapsedTime, cuEventElapsedTime);
    TCC_LOAD(getErrorName, cuGetErrorName);
    TCC_LOAD(getErrorString, cuGetErrorString);
    auto optional = [&](auto& slot, const char* symbol) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(library, symbol));
    };
    optional(table.streamCreate, TCC_CUDA_SYMBOL(cuStreamCreate));
    optional(table.streamDestroy, TCC_CUDA_SYMBOL(cuStreamDestroy));
    optional(table.streamBeginCapture, TCC_CUDA_SYMBOL(cuStreamBeginCapture));
    optional(table.streamEndCapture, TCC_CUDA_SYMBOL(cuStreamEndCapture));
    optional(table.graphInstantiate, TCC_CUDA_SYMBOL(cuGraphInstantiate));
    optional(table.graphLaunch, TCC_CUDA_SYMBOL(cuGraphLaunch));
    optional(table.graphExecDestroy, TCC_CUDA_SYMBOL(cuGraphExecDestroy));
    optional(table.graphDestroy, TCC_CUDA_SYMBOL(cuGraphDestroy));
#undef TCC_LOAD
  });
  if (!failure.empty()) throw CudaError(failure);
  return table;
}

void check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* description = nullptr;
  api().getErrorName(result, &name);
  api().getErrorString(result, &description);
  std::string message = std::string(call) + " failed: " + (name ? name : "unknown error") +
                        (description ? std::string(" (") + description + ")" : "");
  if (result == CUDA_ERROR_OUT_OF_MEMORY) message += "; the tensors do not fit in GPU memory";
  throw CudaError(message);
}

// Calls that need a current context go through here.
const DriverApi& current() {
  device();
  return api();
}

}  // namespace

bool builtWithCuda() { return true; }

CUcontext primaryContext = nullptr;

namespace {
std::mutex selectionMutex;
int selectedOrdinal = 0;
bool deviceOpened = false;
}  // namespace

int deviceCount() {
  try {
    const DriverApi& driver = api();
    if (driver.init(0) != CUDA_SUCCESS) return 0;
    int count = 0;
    return driver.deviceGetCount(&count) == CUDA_SUCCESS ? count : 0;
  } catch (const CudaError&) {
    return 0;
  }
}

void selectDevice(int ordinal) {
  std::lock_guard lock(selectionMutex);
  if (deviceOpened && ordinal != selectedOrdinal)
    throw CudaError("CUDA device " + std::to_string(selectedOrdinal) + " is already in use; device " +
                    std::to_string(ordinal) + " must be selected before the GPU is first used");
  selectedOrdinal = ordinal;
}

const DeviceInfo& device() {
  static DeviceInfo info;
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    try {
      int ordinal = 0;
      {
        std::lock_guard lock(selectionMutex);
        ordinal = selectedOrdinal;
        deviceOpened = true;
      }
      const DriverApi& driver = api();
      CUresult initialized = driver.init(0);
      if (initialized == CUDA_ERROR_NO_DEVICE) throw CudaError("no CUDA device is visible on this machine");
      check(initialized, "cuInit");
      int count = 0;
      check(driver.deviceGetCount(&count), "cuDeviceGetCount");
      if (count == 0) throw CudaError("no CUDA device is visible on this machine");
      if (ordinal < 0 || ordinal >= count)
        throw CudaError("CUDA device " + std::to_string(ordinal) + " was selected, but " + std::to_string(count) +
                        (count == 1 ? " device is" : " devices are") + " visible (numbered from 0)");
      info.ordinal = ordinal;
      CUdevice handle;
      check(driver.deviceGet(&handle, ordinal), "cuDeviceGet");
      char name[256] = {};
      check(driver.deviceGetName(name, sizeof name, handle), "cuDeviceGetName");
      info.name = name;
      check(driver.deviceGetAttribute(&info.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
            "cuDeviceGetAttribute");
      check(driver.deviceGetAttribute(&info.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle),
            "cuDeviceGetAttribute");
      check(driver.deviceGetAttribute(&info.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle),
            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
      check(driver.deviceGetAttribute(&info.maxThreadsPerMultiprocessor,
                                      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, handle),
            "cuDeviceGetAttribute(MAX_THREADS_PER_MULTIPROCESSOR)");
      check(driver.primaryCtxRetain(&primaryContext, handle), "cuDevicePrimaryCtxRetain");
    } catch (const CudaError& error) {
      failure = error.what();
    }
  });
  if (!failure.empty()) throw CudaError(failure);
  // Every thread that uses the device needs the context current.
  thread_local bool contextCurrent = false;
  if (!contextCurrent) {
    check(api().ctxSetCurrent(primaryContext), "cuCtxSetCurrent");
    contextCurrent = true;
  }
  return info;
}

Module::Module(const std::string& cubin) {
  CUmodule module;
  check(current().moduleLoadData(&module, cubin.data()), "cuModuleLoadData");
  module_ = module;
  static std::atomic<uint64_t> lastId{0};
  id_ = ++lastId;
}

Module::~Module() {
  if (module_) api().moduleUnload(static_cast<CUmodule>(module_));
}

void* Module::function(const std::string& name) const {
  CUfunction function;
  check(api().moduleGetFunction(&function, static_cast<CUmodule>(module_), name.c_str()),
        ("cuModuleGetFunction(" + name + ")").c_str());
  return function;
}

namespace {

// The stream a LaunchGraph records this thread's launches on while it
// records them; else null (the default stream: launches run).
thread_local CUstream recordingStream = nullptr;

}  // namespace

void launch(void* function, int64_t blocks, int threadsPerBlock, std::vector<void*> arguments) {
  if (blocks <= 0) return;
  check(current().launchKernel(static_cast<CUfunction>(function), static_cast<unsigned>(blocks), 1, 1,
                               static_cast<unsigned>(threadsPerBlock), 1, 1, 0, recordingStream, arguments.data(),
                               nullptr),
        "cuLaunchKernel");
}

namespace {

bool clustered(const LaunchShape& shape) { return shape.cluster[0] * shape.cluster[1] * shape.cluster[2] > 1; }

// The launch configuration of a cluster or overlapping launch; `attributes`
// (two) hold its attributes.
CUlaunchConfig extendedConfig(const LaunchShape& shape, CUlaunchAttribute* attributes) {
  CUlaunchConfig config{};
  config.gridDimX = shape.grid[0], config.gridDimY = shape.grid[1], config.gridDimZ = shape.grid[2];
  config.blockDimX = shape.block[0], config.blockDimY = shape.block[1], config.blockDimZ = shape.block[2];
  config.sharedMemBytes = shape.sharedBytes;
  config.hStream = recordingStream;
  config.attrs = attributes;
  config.numAttrs = 0;
  if (clustered(shape)) {
    CUlaunchAttribute& attribute = attributes[config.numAttrs++];
    attribute = CUlaunchAttribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = shape.cluster[0];
    attribute.value.clusterDim.y = shape.cluster[1];
    attribute.value.clusterDim.z = shape.cluster[2];
  }
  if (shape.overlapsPrevious) {
    CUlaunchAttribute& attribute = attributes[config.numAttrs++];
    attribute = CUlaunchAttribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
  }
  return config;
}

}  // namespace

void launch(void* function, const LaunchShape& shape, void** arguments) {
  if (shape.grid[0] == 0 || shape.grid[1] == 0 || shape.grid[2] == 0) return;
  // Where the driver turns a dependent launch down (no cuLaunchKernelEx, or
  // the attribute refused), the kernel runs after the previous one as any
  // other: the same results, no overlap. Said once on stderr.
  static std::atomic<bool> noDependentLaunches{false};
  const bool overlap = shape.overlapsPrevious && !noDependentLaunches.load(std::memory_order_relaxed);
  if (clustered(shape) || overlap) {
    if (!current().launchKernelEx && clustered(shape))
      throw CudaError("cuLaunchKernelEx: this CUDA driver has no thread block clusters");
    if (current().launchKernelEx) {
      CUlaunchAttribute attributes[2];
      LaunchShape requested = shape;
      requested.overlapsPrevious = overlap;
      CUlaunchConfig config = extendedConfig(requested, attributes);
      CUresult result = current().launchKernelEx(&config, static_cast<CUfunction>(function), arguments, nullptr);
      if (result == CUDA_SUCCESS) return;
      if (!overlap) check(result, "cuLaunchKernelEx");
      const char* name = nullptr;
      api().getErrorName(result, &name);
      std::fprintf(stderr, "tcc: a dependent launch (cuLaunchKernelEx) failed with %s; kernels launch one after "
                   "the other from now on\n", name ? name : "an unknown error");
    }
    noDependentLaunches = true;
    if (clustered(shape)) {
      LaunchShape alone = shape;
      alone.overlapsPrevious = false;
      return launch(function, alone, arguments);
    }
  }
  check(current().launchKernel(static_cast<CUfunction>(function), shape.grid[0], shape.grid[1], shape.grid[2],
                               shape.block[0], shape.block[1], shape.block[2], shape.sharedBytes, recordingStream,
                               arguments, nullptr),
        "cuLaunchKernel");
}

void launch(void* function, const LaunchShape& shape, std::vector<void*> arguments) {
  launch(function, shape, arguments.data());
}

void zeroFloatsAsync(void* device, size_t count) {
  if (count == 0) return;
  check(current().memsetD32Async(reinterpret_cast<CUdeviceptr>(device), 0, count, nullptr), "cuMemsetD32Async");
}

void allowDynamicSharedMemory(void* function, int bytes) {
  check(current().funcSetAttribute(static_cast<CUfunction>(function),
                                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

FunctionAttributes functionAttributes(void* function) {
  auto get = [&](CUfunction_attribute attribute, const char* call) {
    int value = 0;
    check(current().funcGetAttribute(&value, attribute, static_cast<CUfunction>(function)), call);
    return value;
  };
  FunctionAttributes attributes;
  attributes.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS, "cuFuncGetAttribute(NUM_REGS)");
  attributes.localBytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
  attributes.staticSharedBytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  attributes.maxThreadsPerBlock =
      get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
  return attributes;
}

int maxActiveClusters(void* function, const LaunchShape& shape) {
  if (!current().occupancyMaxActiveClusters) return 0;
  CUlaunchAttribute attributes[2];
  LaunchShape alone = shape;  // (the occupancy calculator takes no dependent launch)
  alone.overlapsPrevious = false;
  CUlaunchConfig config = extendedConfig(alone, attributes);
  int clusters = 0;
  check(current().occupancyMaxActiveClusters(&clusters, static_cast<CUfunction>(function), &config),
        "cuOccupancyMaxActiveClusters");
  return clusters;
}

int maxActiveBlocksPerMultiprocessor(void* function, int threadsPerBlock, size_t dynamicSharedBytes) {
  int blocks = 0;
  check(current().occupancyMaxActiveBlocksPerMultiprocessor(&blocks, static_cast<CUfunction>(function),
                                                             threadsPerBlock, dynamicSharedBytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

void copyToHost(void* host, const void* device, size_t bytes) {
  check(current().memcpyDtoH(host, reinterpret_cast<CUdeviceptr>(device), bytes), "cuMemcpyDtoH");
}

void copyToDevice(void* device, const void* host, size_t bytes) {
  check(current().memcpyHtoD(reinterpret_cast<CUdeviceptr>(device), host, bytes), "cuMemcpyHtoD");
}

void synchronize() { check(current().ctxSynchronize(), "a kernel (cuCtxSynchronize)"); }

namespace {

// Live DeviceBuffers by start address, each with its allocation number.
std::mutex allocationMutex;
std::map<unsigned long long, uint64_t> allocationIds;
uint64_t lastAllocationId = 0;

void numberAllocation(unsigned long long pointer) {
  std::lock_guard<std::mutex> lock(allocationMutex);
  allocationIds[pointer] = ++lastAllocationId;
}

void forgetAllocation(unsigned long long pointer) {
  std::lock_guard<std::mutex> lock(allocationMutex);
  allocationIds.erase(pointer);
}

}  // namespace

uint64_t allocationId(const void* device) {
  std::lock_guard<std::mutex> lock(allocationMutex);
  auto found = allocationIds.find(reinterpret_cast<unsigned long long>(device));
  return found == allocationIds.end() ? 0 : found->second;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  CUdeviceptr pointer;
  check(current().memAlloc(&pointer, bytes), ("cuMemAlloc of " + std::to_string(bytes) + " bytes").c_str());
  pointer_ = pointer;
  numberAllocation(pointer_);
}

DeviceBuffer::~DeviceBuffer() {
  if (!pointer_) return;
  forgetAllocation(pointer_);
  api().memFree(static_cast<CUdeviceptr>(pointer_));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : pointer_(other.pointer_), bytes_(other.bytes_) {
  other.pointer_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(pointer_, other.pointer_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes) {
  if (bytes == 0) return;
  check(current().memcpyHtoD(static_cast<CUdeviceptr>(pointer_), host, bytes), "cuMemcpyHtoD");
  numberAllocation(pointer_);
}

void DeviceBuffer::download(void* host, size_t bytes) const {
  if (bytes == 0) return;
  check(current().memcpyDtoH(host, static_cast<CUdeviceptr>(pointer_), bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::zero() {
  if (bytes_ == 0) return;
  check(current().memsetD8(static_cast<CUdeviceptr>(pointer_), 0, bytes_), "cuMemsetD8");
  numberAllocation(pointer_);
}

EventTimer::EventTimer() {
  CUevent start, stop;
  check(current().eventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  start_ = start;
  check(current().eventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  stop_ = stop;
}

EventTimer::~EventTimer() {
  if (start_) api().eventDestroy(static_cast<CUevent>(start_));
  if (stop_) api().eventDestroy(static_cast<CUevent>(stop_));
}

void EventTimer::start() { check(api().eventRecord(static_cast<CUevent>(start_), nullptr), "cuEventRecord"); }

double EventTimer::stopSeconds() {
  check(api().eventRecord(static_cast<CUevent>(stop_), nullptr), "cuEventRecord");
  check(api().eventSynchronize(static_cast<CUevent>(stop_)), "a kernel (cuEventSynchronize)");
  float milliseconds = 0;
  check(api().eventElapsedTime(&milliseconds, static_cast<CUevent>(start_), static_cast<CUevent>(stop_)),
        "cuEventElapsedTime");
  return milliseconds * 1e-3;
}

LaunchGraph::LaunchGraph(const std::function<void()>& record) {
  const DriverApi& driver = current();
  if (!driver.streamCreate || !driver.streamDestroy || !driver.streamBeginCapture || !driver.streamEndCapture ||
      !driver.graphInstantiate || !driver.graphLaunch || !driver.graphExecDestroy || !driver.graphDestroy)
    return;
  CUstream stream = nullptr;
  if (driver.streamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return;
  CUgraph graph = nullptr;
  if (driver.streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS) {
    recordingStream = stream;
    bool recorded = true;
    std::exception_ptr failure;
    try {
      record();
    } catch (const CudaError&) {
      recorded = false;  // (a launch refused while recording: the caller launches one by one)
    } catch (...) {
      recorded = false;
      failure = std::current_exception();  // thrown again once the recording is ended
    }
    recordingStream = nullptr;
    if (driver.streamEndCapture(stream, &graph) == CUDA_SUCCESS && graph && recorded) {
      CUgraphExec executable = nullptr;
      if (driver.graphInstantiate(&executable, graph, 0) == CUDA_SUCCESS) executable_ = executable;
    }
    if (graph) driver.graphDestroy(graph);
    if (failure) {
      driver.streamDestroy(stream);
      std::rethrow_exception(failure);
    }
  }
  driver.streamDestroy(stream);
}

LaunchGraph::~LaunchGraph() {
  if (executable_) api().graphExecDestroy(static_cast<CUgraphExec>(executable_));
}

LaunchGraph::LaunchGraph(LaunchGraph&& other) noexcept : executable_(other.executable_) { other.executable_ = nullptr; }

LaunchGraph& LaunchGraph::operator=(LaunchGraph&& other) noexcept {
  if (this != &other) {
    if (executable_) api().graphExecDestroy(static_cast<CUgraphExec>(executable_));
    executable_ = other.executable_;
    other.executable_ = nullptr;
  }
  return *this;
}

void LaunchGraph::replay() const {
  check(current().graphLaunch(static_cast<CUgraphExec>(executable_), nullptr), "cuGraphLaunch");
}

}  // namespace tcc::rt::cuda
