#include "gpu_launch.h"

#include "gpu_host_part.h"
#include "gpu_intrinsic_runners.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "tcc/ir/imperative_printer.h"
#include "tcc/jit/kernel_cache.h"

namespace tcc::detail {

namespace imp = ir::imp;

namespace {

// ---- the cubin cache ----------------------------------------------------------

std::string digestOf(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  std::ostringstream hex;
  hex << std::hex << hash;
  return hex.str();
}

// A cubin file holds its full key first, so another key's file is a miss.
std::string cachedCubin(const std::string& key, const std::string& source, const std::string& architecture,
                        bool fusedMultiplyAdd) {
  static std::mutex mutex;
  static std::map<std::string, std::string> memory;
  std::unique_lock<std::mutex> lock(mutex);
  if (auto found = memory.find(key); found != memory.end()) return found->second;
  auto directory = jit::KernelCacheSettings::fromEnvironment().diskDirectory;
  std::filesystem::path file;
  if (directory) {
    file = *directory / ("cuda-" + digestOf(key) + ".cubin");
    std::ifstream in(file, std::ios::binary);
    std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (contents.size() > key.size() + 1 && contents.compare(0, key.size(), key) == 0 && contents[key.size()] == '\0')
      return memory[key] = contents.substr(key.size() + 1);
  }
  // NVRTC runs unlocked, so that threads compile different sources at once
  // (two threads with the same source both compile it; either result is kept).
  lock.unlock();
  std::string cubin = rt::cuda::compileToCubin(source, architecture, "tcc_kernels.cu", fusedMultiplyAdd);
  lock.lock();
  memory[key] = cubin;
  if (directory) {
    std::error_code ignored;
    std::filesystem::create_directories(*directory, ignored);
    std::filesystem::path temporary = file;
    temporary += std::to_string(::getpid());  // the process's own temporary
    temporary += ".tmp";
    std::ofstream out(temporary, std::ios::binary);
    out << key << '\0' << cubin;
    out.close();
    if (!out.good() || (std::filesystem::rename(temporary, file, ignored), ignored)) std::filesystem::remove(temporary, ignored);
  }
  return cubin;
}

// A device pos array copied to the host with its longest segment, kept for
// as long as its allocation lives unchanged (rt::cuda::allocationId): a
// kernel run again on the same device tensors reads no pos entry from the
// device. Arrays that are not a whole DeviceBuffer are copied every time.
std::shared_ptr<const HostPositions> hostPositions(const void* device, int64_t entries) {
  struct Kept {
    const void* device;
    int64_t entries;
    std::shared_ptr<const HostPositions> copy;
  };
  static std::mutex mutex;
  static std::map<uint64_t, Kept> kept;  // by allocation id
  uint64_t id = rt::cuda::allocationId(device);
  if (id != 0) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = kept.find(id);
    if (found != kept.end() && found->second.entries == entries) return found->second.copy;
  }
  std::vector<int64_t> pos(static_cast<size_t>(std::max<int64_t>(entries, 0)));
  if (!pos.empty()) rt::cuda::copyToHost(pos.data(), device, pos.size() * sizeof(int64_t));
  auto copy = hostPositionsOf(std::move(pos));
  if (id != 0) {
    std::lock_guard<std::mutex> lock(mutex);
    // Copies of arrays freed or written since are never asked for again.
    for (auto it = kept.begin(); it != kept.end();)
      it = rt::cuda::allocationId(it->second.device) == it->first ? std::next(it) : kept.erase(it);
    kept[id] = Kept{device, entries, copy};
  }
  return copy;
}

// The workspaces that GPU loops share (a scan's tile totals, dense
// workspaces), kept for the next calls as the scratch arena keeps its
// buffer; the two together keep at most kKeptGpuScratchBytes (the arena's
// buffer counts first, as a launch cannot run without it): a call takes the smallest kept
// buffer that is large enough, or allocates one, and hands it back once the
// kernels that use it are done, so that a kernel run again on tensors of
// the same size neither allocates nor frees device memory.
class WorkspacePool {
 public:
  rt::cuda::DeviceBuffer take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = kept_.end();
      for (auto it = kept_.begin(); it != kept_.end(); ++it)
        if (it->size() >= bytes && (best == kept_.end() || it->size() < best->size())) best = it;
      if (best != kept_.end()) {
        rt::cuda::DeviceBuffer buffer = std::move(*best);
        kept_.erase(best);
        keptBytes_ -= buffer.size();
        return buffer;
      }
    }
    return rt::cuda::DeviceBuffer(bytes);
  }

  // `buffer` once no kernel uses it: kept, the smallest kept freed first
  // where it would pass `cap` (a buffer larger than the cap is freed).
  void keep(rt::cuda::DeviceBuffer buffer, size_t cap) {
    if (buffer.size() > cap) return;
    std::lock_guard<std::mutex> lock(mutex_);
    freeSmallestUntil(cap - buffer.size());
    keptBytes_ += buffer.size();
    kept_.push_back(std::move(buffer));
  }

  // Frees kept buffers, the smallest first, until at most `cap` bytes are kept.
  void trimTo(size_t cap) {
    std::lock_guard<std::mutex> lock(mutex_);
    freeSmallestUntil(cap);
  }

  size_t bytesKept() {
    std::lock_guard<std::mutex> lock(mutex_);
    return keptBytes_;
  }

 private:
  void freeSmallestUntil(size_t cap) {
    while (keptBytes_ > cap) {
      auto smallest = std::min_element(kept_.begin(), kept_.end(),
                                       [](const auto& a, const auto& b) { return a.size() < b.size(); });
      keptBytes_ -= smallest->size();
      kept_.erase(smallest);
    }
  }

  std::mutex mutex_;
  std::vector<rt::cuda::DeviceBuffer> kept_;
  size_t keptBytes_ = 0;
};

WorkspacePool& workspacePool() {
  static auto* pool = new WorkspacePool;  // never freed: the process's CUDA context goes first
  return *pool;
}

// The scratch buffers of the GPU threads' workspaces, one device buffer
// that grows to a launch's needs: launches on the default stream run in
// order, so each uses it after the one before is done. Kept for the next
// launches up to kKeptGpuScratchBytes (the workspace pool then keeps no
// more than what the cap leaves); a larger one is freed once its
// launch is done (a launch's scratch may take a gigabyte, which the
// process would otherwise hold for good). Held locked from carving to
// launch, so that no other host thread grows it (freeing what a launch was
// given) in between.
class ScratchArena {
 public:
  void launch(const KernelLaunch& request, const std::function<void(std::vector<void*>&)>& run) {
    std::lock_guard<std::mutex> lock(mutex_);
    constexpr int64_t kAlignment = 256;
    int64_t bytes = 0;
    for (const auto& scratch : request.scratch) bytes += (scratch.bytes + kAlignment - 1) / kAlignment * kAlignment;
    if (static_cast<size_t>(bytes) > buffer_.size()) {
      rt::cuda::synchronize();  // launches still running use the old buffer
      buffer_ = rt::cuda::DeviceBuffer();
      buffer_ = rt::cuda::DeviceBuffer(static_cast<size_t>(bytes));
    }
    // (Also where the launch fails: the next launch finds the arena within the cap.)
    struct ShrinkAfter {
      ScratchArena& arena;
      ~ShrinkAfter() {
        if (arena.buffer_.size() > kKeptGpuScratchBytes) {
          try {
            rt::cuda::synchronize();  // the launch still uses it
          } catch (...) {
          }
          arena.buffer_ = rt::cuda::DeviceBuffer();
        }
        arena.bytesKept_ = arena.buffer_.size();
        workspacePool().trimTo(kKeptGpuScratchBytes - arena.bytesKept_);
      }
    } shrinkAfter{*this};
    std::vector<std::array<unsigned char, 8>> arguments = request.arguments;
    int64_t offset = 0;
    for (const auto& scratch : request.scratch) {
      void* address = static_cast<unsigned char*>(buffer_.get()) + offset;
      std::memcpy(arguments.at(scratch.argument).data(), &address, sizeof address);
      offset += (scratch.bytes + kAlignment - 1) / kAlignment * kAlignment;
    }
    std::vector<void*> pointers;
    for (auto& argument : arguments) pointers.push_back(argument.data());
    run(pointers);
  }

  // Read without the lock (the pool asks while a launch may hold it).
  size_t bytesKept() const { return bytesKept_; }

 private:
  std::mutex mutex_;
  rt::cuda::DeviceBuffer buffer_;
  std::atomic<size_t> bytesKept_ = 0;
};

ScratchArena& scratchArena() {
  static auto* arena = new ScratchArena;  // never freed: the process's CUDA context goes first
  return *arena;
}


}  // namespace

size_t gpuScratchBytesKept() { return scratchArena().bytesKept(); }
size_t gpuWorkspaceBytesKept() { return workspacePool().bytesKept(); }

std::string cudaArchitectureFor(const Program& program, const CompileOptions& options) {
  if (!options.cudaArchitecture.empty()) return options.cudaArchitecture;
  const auto& line = program.syntax().target;
  if (line && line->target == frontend::Target::Cuda && !line->sm.empty()) return line->sm;
  return rt::cuda::device().architecture();
}

bool fusedMultiplyAddFor(const Lowered& lowered) {
  const bool intrinsics = std::any_of(lowered.gpuFunctions.begin(), lowered.gpuFunctions.end(),
                                      [](const lowering::GpuFunction& function) { return !function.intrinsics.empty(); });
  return lowered.floatingPoint == frontend::FloatingPointMode::Fast || intrinsics;
}

std::string cubinFor(const std::string& kernels, const std::string& architecture, bool useCache,
                     bool fusedMultiplyAdd) {
  if (!useCache) return rt::cuda::compileToCubin(kernels, architecture, "tcc_kernels.cu", fusedMultiplyAdd);
  return cachedCubin("tcc " TCC_VERSION " " + architecture + (fusedMultiplyAdd ? "" : " --fmad=false") + "\n" + kernels,
                     kernels, architecture, fusedMultiplyAdd);
}

std::shared_ptr<const rt::cuda::Module> loadCudaKernels(const Lowered& lowered, const std::string& architecture,
                                                       bool useCache) {
  rt::cuda::device();  // a clear error first where there is no GPU
  return std::make_shared<const rt::cuda::Module>(
      cubinFor(lowered.cudaKernels, architecture, useCache, fusedMultiplyAddFor(lowered)));
}

int32_t launchGpuFunction(const lowering::GpuFunction& function, const rt::cuda::Module& module,
                          const std::vector<tcc_tensor*>& tensors, std::vector<std::string>* launched,
                          std::vector<rt::cuda::DeviceBuffer>* outputArrays) {
  HostPartDevice device;
  device.launch = [&](const KernelLaunch& launch) {
    if (launched) launched->push_back(launch.kernel->name);
    void* kernel = module.function(launch.kernel->name);
    if (!launch.scratch.empty()) {
      scratchArena().launch(launch, [&](std::vector<void*>& arguments) {
        rt::cuda::launch(kernel, launch.blocks, launch.kernel->threadsPerBlock, arguments);
      });
      return;
    }
    std::vector<void*> arguments;
    for (auto& argument : launch.arguments) arguments.push_back(const_cast<unsigned char*>(argument.data()));
    rt::cuda::launch(kernel, launch.blocks, launch.kernel->threadsPerBlock, arguments);
  };
  device.read = [](void* host, const void* address, size_t bytes) { rt::cuda::copyToHost(host, address, bytes); };
  device.positions = hostPositions;
  // The workspaces GPU loops share: handed back to the pool when released,
  // or freed when the call ends (an error left them), after the kernels
  // that use them.
  std::vector<rt::cuda::DeviceBuffer> workspaces;
  struct FreeWhenDone {
    std::vector<rt::cuda::DeviceBuffer>& buffers;
    ~FreeWhenDone() {
      if (buffers.empty()) return;
      try {
        rt::cuda::synchronize();
      } catch (...) {
      }
    }
  } freeWhenDone{workspaces};
  device.allocate = [&](size_t bytes) {
    workspaces.push_back(workspacePool().take(std::max<size_t>(bytes, 1)));
    return workspaces.back().get();
  };
  device.allocateZeroed = [&](size_t bytes) {
    void* address = device.allocate(bytes);
    workspaces.back().zero();
    return address;
  };
  device.release = [&](void* address) {
    rt::cuda::synchronize();
    for (auto it = workspaces.begin(); it != workspaces.end(); ++it)
      if (it->get() == address) {
        workspacePool().keep(std::move(*it), kKeptGpuScratchBytes - scratchArena().bytesKept());
        workspaces.erase(it);
        return;
      }
  };
  if (outputArrays)
    device.allocateOutput = [outputArrays](size_t bytes) {
      outputArrays->emplace_back(std::max<size_t>(bytes, 1));
      outputArrays->back().zero();
      return outputArrays->back().get();
    };
  device.intrinsic = [&](const lowering::GpuIntrinsicCall& call, const std::map<std::string, tcc_tensor*>& operands) {
    GpuIntrinsicRunner runner = gpuIntrinsicRunner(call.op->name);
    if (!runner) throw Error("intrinsic '" + call.op->name + "' has no in-process CUDA host step");
    return runner(GpuIntrinsicRun{call, module, operands});
  };
  return runHostPart(function, tensors, device);
}

}  // namespace tcc::detail

namespace tcc::detail {

namespace {

template <typename T>
T* downloadArray(const void* device, int64_t entries) {
  auto* host = static_cast<T*>(std::malloc(sizeof(T) * static_cast<size_t>(std::max<int64_t>(entries, 1))));
  if (!host) throw Error("out of memory copying a sparse output from the GPU");
  if (entries > 0) rt::cuda::copyToHost(host, device, sizeof(T) * static_cast<size_t>(entries));
  return host;
}

}  // namespace

tcc_tensor downloadAssembledOutput(const tcc_tensor& device) {
  rt::cuda::synchronize();
  tcc_tensor host = device;
  int64_t positions = 1;
  for (int level = 0; level < device.order; ++level) {
    tcc_level& copy = host.levels[level];
    copy.pos = nullptr, copy.crd = nullptr, copy.pos_capacity = 0, copy.crd_capacity = 0;
    const tcc_level& source = device.levels[level];
    if (source.kind == TCC_LEVEL_DENSE) {
      positions *= source.size;
      continue;
    }
    if (source.kind != TCC_LEVEL_COMPRESSED)
      throw Error("the GPU assembles sparse outputs of dense and compressed levels only");
    copy.pos = downloadArray<long long>(source.pos, positions + 1);
    copy.pos_capacity = positions + 1;
    positions = copy.pos[positions];
    copy.crd = downloadArray<int>(source.crd, positions);
    copy.crd_capacity = positions;
  }
  if (positions != device.vals_size)
    throw Error("a sparse output assembled on the GPU holds " + std::to_string(positions) + " positions but " +
                std::to_string(device.vals_size) + " values (a compiler bug)");
  const size_t bytes = rt::cuda::bytesPerValue(device.datatype);
  host.vals = std::malloc(bytes * static_cast<size_t>(std::max<int64_t>(positions, 1)));
  if (!host.vals) throw Error("out of memory copying a sparse output from the GPU");
  if (positions > 0) rt::cuda::copyToHost(host.vals, device.vals, bytes * static_cast<size_t>(positions));
  host.vals_capacity = positions;
  return host;
}

}  // namespace tcc::detail
