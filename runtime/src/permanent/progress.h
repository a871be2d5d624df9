// Progress of a long permanent on stderr: chunks and iterations done, the
// rate, and the time left. On a terminal one line is rewritten in place.
#pragma once

#include <chrono>
#include <cstdint>

#include "tcc/runtime/permanent.h"

namespace tcc::rt::permanent {

class ProgressReporter {
 public:
  ProgressReporter(ProgressMode mode, int64_t totalChunks, uint64_t iterationsPerChunk, int64_t chunksDoneBefore);
  // Called by one thread at a time, after each completed chunk.
  void update(int64_t chunksDone);
  // The closing line (a summary in On mode; ends a rewritten line).
  void finish(int64_t chunksDone, bool completed);

 private:
  using Clock = std::chrono::steady_clock;
  void print(int64_t chunksDone, const char* ending);

  ProgressMode mode_;
  bool terminal_;
  int64_t totalChunks_, chunksDoneBefore_;
  uint64_t iterationsPerChunk_;
  Clock::time_point start_, lastPrint_;
  bool printed_ = false;
};

}  // namespace tcc::rt::permanent
