// Built without the CUDA toolkit: the GPU runtime says so.
#include "tcc/runtime/cuda.h"

namespace tcc::rt::cuda {

namespace {

[[noreturn]] void unavailable() {
  throw CudaError("this tcc was built without the CUDA toolkit, so it cannot compile or run CUDA kernels");
}

}  // namespace

bool builtWithCuda() { return false; }
const DeviceInfo& device() { unavailable(); }
int deviceCount() { return 0; }
void selectDevice(int) {}
std::string compileToCubin(const std::string&, const std::string&, const std::string&, bool) { unavailable(); }
Module::Module(const std::string&) { unavailable(); }
Module::~Module() = default;
void* Module::function(const std::string&) const { unavailable(); }
void launch(void*, int64_t, int, std::vector<void*>) { unavailable(); }
void launch(void*, const LaunchShape&, std::vector<void*>) { unavailable(); }
void launch(void*, const LaunchShape&, void**) { unavailable(); }
void zeroFloatsAsync(void*, size_t) { unavailable(); }
LaunchGraph::LaunchGraph(const std::function<void()>&) { unavailable(); }
LaunchGraph::~LaunchGraph() = default;
LaunchGraph::LaunchGraph(LaunchGraph&&) noexcept = default;
LaunchGraph& LaunchGraph::operator=(LaunchGraph&&) noexcept = default;
void LaunchGraph::replay() const { unavailable(); }
void allowDynamicSharedMemory(void*, int) { unavailable(); }
FunctionAttributes functionAttributes(void*) { unavailable(); }
int maxActiveBlocksPerMultiprocessor(void*, int, size_t) { unavailable(); }
int maxActiveClusters(void*, const LaunchShape&) { unavailable(); }
void copyToHost(void*, const void*, size_t) { unavailable(); }
void copyToDevice(void*, const void*, size_t) { unavailable(); }
void synchronize() { unavailable(); }
uint64_t allocationId(const void*) { return 0; }
DeviceBuffer::DeviceBuffer(size_t) { unavailable(); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&&) noexcept = default;
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept = default;
void DeviceBuffer::upload(const void*, size_t) { unavailable(); }
void DeviceBuffer::download(void*, size_t) const { unavailable(); }
void DeviceBuffer::zero() { unavailable(); }
DeviceTensor::DeviceTensor(const tcc_tensor&) { unavailable(); }
void DeviceTensor::zeroValues() { unavailable(); }
void DeviceTensor::downloadValues(const tcc_tensor&) const { unavailable(); }
EventTimer::EventTimer() { unavailable(); }
EventTimer::~EventTimer() = default;
void EventTimer::start() { unavailable(); }
double EventTimer::stopSeconds() { unavailable(); }

}  // namespace tcc::rt::cuda
