#include "launch_plan.h"

#include <algorithm>
#include <bit>

namespace tcc::rt::permanent::gpu {

LaunchPlan planLaunch(uint64_t chunkSize, int64_t residentThreads, uint64_t iterationsPerThread) {
  LaunchPlan plan;
  plan.iterationsPerThread = std::min(chunkSize, std::bit_floor(std::max<uint64_t>(1, iterationsPerThread)));
  plan.logThreadsPerChunk = std::countr_zero(chunkSize / plan.iterationsPerThread);
  plan.chunksPerLaunch = std::max<int64_t>(1, std::max<int64_t>(1, residentThreads) >> plan.logThreadsPerChunk);
  return plan;
}

}  // namespace tcc::rt::permanent::gpu
