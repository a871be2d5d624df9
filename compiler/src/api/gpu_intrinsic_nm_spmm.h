// Internal to the library: the in-process host step of the nm_spmm
// intrinsic (tcc/lowering/nm_spmm.h): picks a launch plan for the shape,
// timing the candidates once per shape and module when the product is large
// (the default plan otherwise), and launches it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_intrinsic_runners.h"
#include "tcc/lowering/nm_spmm.h"

namespace tcc::detail {

int32_t runNmSpmm(const GpuIntrinsicRun& run);
// Launches `plan` (one of the shape's plans) on the call's operands by the
// current launch path, as a call whose shape had chosen it would; for
// tests of each plan's zeroing. Returns what runNmSpmm would.
int32_t runNmSpmmPlan(const GpuIntrinsicRun& run, const lowering::NmSpmmPlan& plan);
// The plans the autotuner ranked for the call's shape (in the call's
// module and statement), best first: the chosen one, the other finalists
// by their final rounds, then the other sampled candidates; empty where no
// call has tuned that shape (a small product, a forced plan, or none yet).
std::vector<lowering::NmSpmmPlan> nmSpmmTunedPlans(const GpuIntrinsicRun& run);

// How the host step launches a plan. The first call of a statement's shape
// (per module) picks the plan and looks up what its launches need (the
// kernels, their shared-memory limit set once, the launch shapes); every
// later call is a lookup and the launches. Split-K and stream-K plans add
// into C, so C's rows they add into are zeroed first: the paths differ in
// how (bench/nm_spmm/RESULTS.md, rounds 22-23, measures them against each
// other). Every path gives the same sums in the same order (split-K's
// atomic adds are in no fixed order on any of them).
enum class NmSpmmLaunchPath {
  // Every call looks the kernels up and sets their shared-memory limit; one
  // float per thread zeroes C (the host step before the launches were kept).
  Uncached,
  Scalar,  // kept launches; one float per thread zeroes C
  Vector,  // kept launches; 16-byte stores zero C
  Memset,  // kept launches; the driver's memset (cuMemsetD32Async) zeroes C
  // Kept launches; 16-byte stores zero C in a kernel that the tile kernel
  // overlaps (programmatic dependent launch: the tile kernel starts at once
  // and waits for the zeroing only before it writes C).
  Overlapped,
  OverlappedLean,  // as Overlapped, the zeroing by one block of 64 threads per SM (beside a tile kernel's CTA)
  // As Overlapped, and a plan on A's transpose (transposeA) launches what
  // comes after the transpose to overlap it: the tile kernel (or the
  // zeroing, then the tile kernel) starts as the transpose's blocks finish
  // and waits for it before it reads the transpose.
  Chained,
  // Chained's launches recorded into a CUDA graph the second time a call
  // makes them with the same plan and operands (their pointers), replayed
  // by one launch from then on: one call into the driver per call instead
  // of two or three. The autotuner times each candidate the same way, by
  // replaying a graph recorded for it, and hands its choice's graph to the
  // calls (TCC_NM_SPMM_TUNER=steps: launch by launch). The default.
  Graph,
};
// The path of calls from now on (every thread's); at first the one that
// TCC_NM_SPMM_LAUNCH names (uncached, scalar, vector, memset, overlapped,
// lean, chained, graph), else the default (graph).
void setNmSpmmLaunchPath(NmSpmmLaunchPath path);
NmSpmmLaunchPath nmSpmmLaunchPath();
const char* nmSpmmLaunchPathName(NmSpmmLaunchPath path);
std::optional<NmSpmmLaunchPath> nmSpmmLaunchPathNamed(const std::string& name);

// What the host step keeps between calls (host-side; tested without a GPU).

// The dynamic shared-memory limit each kernel was given, by module
// (rt::cuda::Module::id) and function: raise() says whether `bytes` needs
// the limit set (above the default 48 KiB and above what was set before)
// and records it, so that a kernel's limit is set once and never lowered.
class SharedMemoryLimits {
 public:
  bool raise(uint64_t module, const void* function, int bytes) {
    if (bytes <= 48 * 1024) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    int& limit = limits_[{module, function}];
    if (bytes <= limit) return false;
    limit = bytes;
    return true;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<uint64_t, const void*>, int> limits_;
};

// A value per statement (module id and the call's prefix) and shape: the
// first call of a shape keeps one, the later calls find it. Kept values
// stay where they are (a reference stays valid while others are added).
template <typename Value>
class KeptByShape {
 public:
  const Value* find(uint64_t module, const std::string& prefix, const lowering::NmSpmmShape& shape) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = kept_.find(keyOf(module, prefix, shape));
    return found == kept_.end() ? nullptr : &found->second;
  }
  // Keeps `value` unless one was kept for the key meanwhile (by another
  // thread); returns the kept one.
  const Value& keep(uint64_t module, const std::string& prefix, const lowering::NmSpmmShape& shape, Value value) {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.emplace(keyOf(module, prefix, shape), std::move(value)).first->second;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.size();
  }

 private:
  using Key = std::tuple<uint64_t, std::string, int64_t, int64_t, int64_t, int, int, int, bool, bool>;
  static Key keyOf(uint64_t module, const std::string& prefix, const lowering::NmSpmmShape& shape) {
    return Key{module, prefix, shape.m, shape.n, shape.k, shape.N, shape.M, shape.L, shape.aKMajor, shape.tensorCores};
  }
  mutable std::mutex mutex_;
  std::map<Key, Value> kept_;
};

}  // namespace tcc::detail
