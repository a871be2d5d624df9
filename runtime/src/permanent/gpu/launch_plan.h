// How a batch of chunks is spread over GPU threads (Elbek and Kaya's
// Lemma 1 and Algorithm 2). A chunk of the chunk plan (chunk_plan.h) has a
// power-of-two size; each thread takes a power-of-two, aligned slice of
// one, so at every step but the first two the threads of a warp flip the
// same column in the same direction: no divergence, and equal work. A
// launch holds as many chunks as fill the GPU's resident threads
// kWavesPerLaunch times.
#pragma once

#include <cstdint>

namespace tcc::rt::permanent::gpu {

// Slices of 2^13 steps: long enough that a thread's set-up (x from scratch,
// O(nonzeros)) costs under 1% of its work, short enough that a launch of
// one wave takes milliseconds (progress and Ctrl-C are checked between
// launches). Algorithm 2's floor is 2^10.
inline constexpr uint64_t kIterationsPerThread = uint64_t{1} << 13;

// Resident threads' worth of slices per launch: a launch of one wave of
// the fast generated kernels lasts a fraction of a millisecond at n = 40,
// and the host's round trip between launches (the chunks' ids up, their
// sums down) would idle the GPU for a tenth of that.
inline constexpr int64_t kWavesPerLaunch = 4;

struct LaunchPlan {
  int logThreadsPerChunk = 0;
  uint64_t iterationsPerThread = 1;  // a power of two
  int64_t chunksPerLaunch = 1;
  int64_t threadsPerLaunch() const { return chunksPerLaunch << logThreadsPerChunk; }
};

LaunchPlan planLaunch(uint64_t chunkSize, int64_t residentThreads,
                      uint64_t iterationsPerThread = kIterationsPerThread);

}  // namespace tcc::rt::permanent::gpu
