#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>

#include "range_engine.h"

namespace tcc::rt::permanent {
namespace {

int defaultThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

template <typename Sum>
class CpuRangeEngine final : public RangeEngine<Sum> {
 public:
  CpuRangeEngine(RangeSum<Sum> rangeSum, int threads)
      : rangeSum_(std::move(rangeSum)), threads_(threads > 0 ? threads : defaultThreads()) {}

  std::string description() const override {
    return "cpu, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
  }
  int64_t parallelism() const override { return threads_; }

  void sumChunks(std::span<const int64_t> chunks, uint64_t chunkSize, StopFlags stop,
                 const typename RangeEngine<Sum>::ChunkDone& chunkDone) override {
    const auto count = static_cast<int64_t>(chunks.size());
    [[maybe_unused]] const int threads = static_cast<int>(std::min<int64_t>(threads_, count));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t k = 0; k < count; ++k) {
      if (stop.requested()) continue;
      const uint64_t begin = static_cast<uint64_t>(chunks[k]) * chunkSize;
      ChunkOutcome<Sum> outcome = rangeSum_(begin, begin + chunkSize, stop);
      if (!outcome.stopped) chunkDone(chunks[k], outcome);
    }
  }

 private:
  RangeSum<Sum> rangeSum_;
  int threads_;
};

}  // namespace

template <typename Sum>
std::unique_ptr<RangeEngine<Sum>> makeCpuEngine(RangeSum<Sum> rangeSum, int threads) {
  return std::make_unique<CpuRangeEngine<Sum>>(std::move(rangeSum), threads);
}

template std::unique_ptr<RangeEngine<double>> makeCpuEngine<double>(RangeSum<double>, int);
template std::unique_ptr<RangeEngine<Int128>> makeCpuEngine<Int128>(RangeSum<Int128>, int);

}  // namespace tcc::rt::permanent
