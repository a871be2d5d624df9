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
// among the ranks on it.
int cpuThreadsForRank(const RankPlacement& placement) {
  if (std::getenv("OMP_NUM_THREADS")) return 0;  // OpenMP's default honours it
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  const int usable = CPU_COUNT(&set);
  const int online = static_cast<int>(std::thread::hardware_concurrency());
  if (usable < online) return usable;
  return std::max(1, usable / std::max(1, placement.localSize));
}

}  // namespace

template <typename Sum>
std::unique_ptr<RangeEngine<Sum>> engineForThisRank(RangeSum<Sum> rangeSum, const PermanentOptions& options) {
  const RankPlacement placement = currentPlacement();
  // The cpu target's engine. The cuda target's permanent brings its own
  // (gpu/gpu_engine.h, through engine_driver.h), on device 0 of each node;
  // device placement.localRank % deviceCount would spread the ranks of a
  // node over its GPUs.
  const int threads = options.threads > 0 ? options.threads : cpuThreadsForRank(placement);
  return makeCpuEngine<Sum>(std::move(rangeSum), threads);
}

template std::unique_ptr<RangeEngine<double>> engineForThisRank<double>(RangeSum<double>, const PermanentOptions&);
template std::unique_ptr<RangeEngine<Int128>> engineForThisRank<Int128>(RangeSum<Int128>, const PermanentOptions&);

}  // namespace tcc::rt::permanent
