// Which engine a rank computes its chunks with.
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "distributed_sum.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt::permanent {
namespace {

// OpenMP threads for one rank: OMP_NUM_THREADS when set; the cores mpirun
// bound the rank to; or, for unbound ranks, the node's cores shared out
// among its CPU ranks, less one core for each rank that drives a GPU.
int cpuThreadsForRank(const RankPlacement& placement) {
  if (std::getenv("OMP_NUM_THREADS")) return 0;  // OpenMP's default honours it
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  const int usable = CPU_COUNT(&set);
  const int online = static_cast<int>(std::thread::hardware_concurrency());
  return threadsForCpuRank(usable, online, placement.localSize, placement.localGpuRanks);
}

}  // namespace

int threadsForCpuRank(int usableCores, int onlineCores, int localRanks, int localGpuRanks) {
  if (usableCores < onlineCores) return std::max(1, usableCores);  // mpirun bound this rank
  const int gpuRanks = std::clamp(localGpuRanks, 0, std::max(0, localRanks - 1));
  const int cpuRanks = std::max(1, localRanks - gpuRanks);
  return std::max(1, (usableCores - gpuRanks) / cpuRanks);
}

int cpuThreadsForThisRank(const PermanentOptions& options) {
  return options.threads > 0 ? options.threads : cpuThreadsForRank(currentPlacement());
}

template <typename Sum>
std::unique_ptr<RangeEngine<Sum>> engineForThisRank(RangeSum<Sum> rangeSum, const PermanentOptions& options) {
  // The cpu target's engine. The cuda target's permanent brings its own
  // (gpu/gpu_engine.h, through engine_driver.h) on the rank's device
  // (deviceForRank), or a CPU engine in its column order where the rank
  // has none (gpu/cpu_fallback.cpp).
  return makeCpuEngine<Sum>(std::move(rangeSum), cpuThreadsForThisRank(options));
}

template std::unique_ptr<RangeEngine<double>> engineForThisRank<double>(RangeSum<double>, const PermanentOptions&);
template std::unique_ptr<RangeEngine<Int128>> engineForThisRank<Int128>(RangeSum<Int128>, const PermanentOptions&);

}  // namespace tcc::rt::permanent
