// What runs a permanent's chunks on one device: given chunks of the Gray-code
// iteration range, it sums (-1)^g prod_i x_i(g) over each chunk's range
// [begin, end). A process under MPI hands its engine the batches its rank is
// granted; the CPU engine runs a batch's chunks on OpenMP threads, a GPU
// engine would run a whole batch at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "gray_code_ryser.h"

namespace tcc::rt::permanent {

template <typename Sum>
class RangeEngine {
 public:
  // Called (from any of the engine's threads, one call at a time is not
  // promised) for each chunk that completed or overflowed.
  using ChunkDone = std::function<void(int64_t chunk, const ChunkOutcome<Sum>& outcome)>;

  virtual ~RangeEngine() = default;
  // e.g. "cpu, 16 threads"
  virtual std::string description() const = 0;
  // Chunks a batch should hold at least to keep the device busy.
  virtual int64_t parallelism() const = 0;
  // Sums the iterations [c * chunkSize, (c + 1) * chunkSize) of every chunk
  // c of `chunks`; returns once each has been reported to chunkDone, or
  // early (leaving some unreported) when `stop` is requested.
  virtual void sumChunks(std::span<const int64_t> chunks, uint64_t chunkSize, StopFlags stop,
                         const ChunkDone& chunkDone) = 0;
};

// The sum over one iteration range, [begin, end): floatChunk or exactChunk
// bound to a matrix's tables.
template <typename Sum>
using RangeSum = std::function<ChunkOutcome<Sum>(uint64_t begin, uint64_t end, StopFlags stop)>;

// Chunks on `threads` OpenMP threads (0: OpenMP's default), one chunk per
// thread at a time.
template <typename Sum>
std::unique_ptr<RangeEngine<Sum>> makeCpuEngine(RangeSum<Sum> rangeSum, int threads);

}  // namespace tcc::rt::permanent
