// The chunk driver over MPI ranks (see tcc/runtime/distributed.h).
#pragma once

#include <memory>

#include "range_engine.h"
#include "tcc/runtime/permanent.h"

namespace tcc::rt::permanent {

// Whether a DistributedScope of more than one rank is live.
bool distributedRunActive();

// The sum of all chunks' partial sums, computed over every rank; called by
// every rank with the same matrix. Throws PermanentError (on every rank,
// with the same message) when the run fails or stops.
template <typename Sum>
Sum distributedSumOfChunks(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
                           RangeEngine<Sum>& engine);

// The best engine for this rank's device, chosen by its node-local rank.
template <typename Sum>
std::unique_ptr<RangeEngine<Sum>> engineForThisRank(RangeSum<Sum> rangeSum, const PermanentOptions& options);

// OpenMP threads for a CPU rank that mpirun did not bind (usable ==
// online cores): the node's cores less one per GPU rank (each keeps a core
// busy driving its device), shared among the node's CPU ranks; a bound
// rank takes the cores it was bound to.
int threadsForCpuRank(int usableCores, int onlineCores, int localRanks, int localGpuRanks);
// options.threads, or threadsForCpuRank for this process (0: OpenMP's
// default, when OMP_NUM_THREADS is set).
int cpuThreadsForThisRank(const PermanentOptions& options);

}  // namespace tcc::rt::permanent
