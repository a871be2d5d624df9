// Rank 0's view of a permanent over MPI ranks: which chunks are done and
// their partial sums (the checkpoint's content), the grants of the chunks
// left, and why the run stops.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "../chunk_plan.h"
#include "tcc/runtime/permanent.h"

namespace tcc::rt::permanent {

inline constexpr int64_t kLargestGrant = 4096;  // chunks

template <typename Sum>
class ChunkLedger {
 public:
  // parallelism: per rank, the chunks its engine takes at once.
  ChunkLedger(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
              const std::vector<int64_t>& parallelism)
      : matrix_(matrix), mode_(mode), options_(options), plan_(planChunks(matrix.n)),
        partials_(plan_.chunks, Sum(0)), done_(plan_.chunks, 0), computedBy_(parallelism.size(), 0),
        firstGrant_(parallelism.size()), granted_(parallelism.size(), 0), grantedChunks_(parallelism.size(), 0) {
    for (int64_t each : parallelism) parallelism_.push_back(std::max<int64_t>(1, each));
  }

  // Reads the checkpoint and saves it back at once (an unwritable path
  // fails before the work); throws PermanentError.
  void resume() {
    for (int64_t chunk : resumeFromCheckpoint(options_.checkpointPath, matrix_, mode_, plan_, partials_))
      done_[chunk] = 1;
    for (int64_t chunk = 0; chunk < plan_.chunks; ++chunk)
      if (!done_[chunk]) todo_.push_back(chunk);
    doneBefore_ = completed_ = plan_.chunks - static_cast<int64_t>(todo_.size());
    save();
  }

  const ChunkPlan& plan() const { return plan_; }
  int64_t doneBefore() const { return doneBefore_; }

  // The next batch for `rank`, guided self-scheduling: a rank whose speed
  // is not known yet gets what its engine takes at once; after that, a
  // share of what is left in proportion to its measured speed (chunks per
  // second since its first grant), in whole multiples of what its engine
  // takes at once. Ranks of very different speeds (GPUs and CPUs) share a
  // run this way: a rank whose next chunk would take longer than the
  // others need for all that is left gets none (an empty batch, as when nothing is left or the run
  // stops), so a slow rank never holds up the end of the run (the others'
  // time counts the chunks they hold as well as those left, and one chunk
  // of the slowest of them, so ranks of equal speed are never refused).
  std::vector<int64_t> grant(int rank) {
    std::lock_guard lock(mutex_);
    const auto left = static_cast<int64_t>(todo_.size() - nextTodo_);
    if (stopping() || left == 0) return {};
    const auto now = std::chrono::steady_clock::now();
    if (!granted_[rank]) {
      granted_[rank] = 1;
      firstGrant_[rank] = now;
    }
    // Speeds in chunks per second; an engine that takes p chunks at once at
    // speed v spends p / v on each chunk, however few it is given.
    const double mine = speedLocked(rank, now);
    double others = 0, othersLongestChunk = 0;
    int64_t othersOutstanding = 0;
    for (size_t each = 0; each < granted_.size(); ++each) {
      if (static_cast<int>(each) == rank) continue;
      const double speed = speedLocked(static_cast<int>(each), now);
      others += speed;
      if (speed > 0) othersLongestChunk = std::max(othersLongestChunk, double(parallelism_[each]) / speed);
      othersOutstanding += grantedChunks_[each] - computedBy_[each];
    }
    int64_t size = parallelism_[rank];
    if (mine > 0) {
      const double othersFinish = double(left + othersOutstanding) / others + othersLongestChunk;
      if (others > 0 && double(parallelism_[rank]) / mine > othersFinish) return {};
      size = std::max(size, static_cast<int64_t>(std::ceil(double(left) * mine / (2 * (mine + others)))));
    }
    // Whole batches of the engine: a GPU launches `parallelism` chunks at a
    // time, and a launch of a few costs as long as a full one.
    const int64_t unit = parallelism_[rank];
    size = std::min(std::max(unit, kLargestGrant / unit * unit), (size + unit - 1) / unit * unit);
    size = std::min(left, size);
    std::vector<int64_t> batch(todo_.begin() + nextTodo_, todo_.begin() + nextTodo_ + size);
    nextTodo_ += size;
    grantedChunks_[rank] += size;
    return batch;
  }

  void record(int rank, int64_t chunk, const ChunkOutcome<Sum>& outcome) {
    std::lock_guard lock(mutex_);
    if (outcome.overflow) return stopLocked(overflowError(matrix_.n).what());
    if (chunk < 0 || chunk >= plan_.chunks || done_[chunk])
      return stopLocked("perm: internal error: rank " + std::to_string(rank) + " reported chunk " +
                        std::to_string(chunk) + ", which is not outstanding");
    partials_[chunk] = outcome.sum;
    done_[chunk] = 1;
    ++completed_;
    ++computedBy_[rank];
    if (options_.chunkLimit > 0 && completed_ - doneBefore_ >= options_.chunkLimit) stopLocked("chunk limit");
  }

  void stop(const std::string& reason) {
    std::lock_guard lock(mutex_);
    stopLocked(reason);
  }
  bool stopping() const { return stopFlag_.load(); }
  const std::atomic<bool>& stopFlag() const { return stopFlag_; }
  int64_t completed() {
    std::lock_guard lock(mutex_);
    return completed_;
  }

  // Writes the chunks done so far (no-op without a checkpoint path).
  void save() {
    if (options_.checkpointPath.empty()) return;
    Checkpoint checkpoint{matrix_.fingerprint, mode_, plan_.chunks, {}};
    {
      std::lock_guard lock(mutex_);
      for (int64_t chunk = 0; chunk < plan_.chunks; ++chunk)
        if (done_[chunk]) checkpoint.partials[chunk] = partialText(partials_[chunk]);
    }
    writeCheckpoint(options_.checkpointPath, checkpoint);
  }

  // The message a stopped or unfinished run fails with ("" when complete).
  std::string failure() {
    std::lock_guard lock(mutex_);
    if (stopReason_.rfind("perm: ", 0) == 0) return stopReason_;
    if (completed_ == plan_.chunks) return "";
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.1f%%", 100.0 * double(completed_) / double(plan_.chunks));
    const std::string& path = options_.checkpointPath;
    return "perm: " + (stopReason_ == "chunk limit" ? std::string("stopped at the chunk limit") : stopReason_) +
           " after " + std::to_string(completed_) + " of " + std::to_string(plan_.chunks) + " chunks (" + percent +
           ")" +
           (path.empty() ? "; run with a checkpoint file to keep the work done"
                         : "; checkpoint saved to " + path + ", run again with it to resume");
  }

  Sum total() { return addInChunkOrder(partials_, matrix_.n); }

  std::string distributionText() {
    std::lock_guard lock(mutex_);
    std::string text = "perm: chunks computed in this run by rank:";
    for (size_t rank = 0; rank < computedBy_.size(); ++rank)
      text += (rank ? ", " : " ") + std::to_string(rank) + ": " + std::to_string(computedBy_[rank]);
    return text + " (" + std::to_string(doneBefore_) + " were done before)";
  }

 private:
  // Chunks per second that `rank` completed since its first grant (0: none yet).
  double speedLocked(int rank, std::chrono::steady_clock::time_point now) const {
    if (!granted_[rank] || computedBy_[rank] == 0) return 0;
    const double seconds = std::chrono::duration<double>(now - firstGrant_[rank]).count();
    return seconds > 0 ? double(computedBy_[rank]) / seconds : 0;
  }

  void stopLocked(const std::string& reason) {
    if (stopReason_.empty()) stopReason_ = reason;
    stopFlag_.store(true);
  }

  const SortedColumnMatrix& matrix_;
  const char* mode_;
  const PermanentOptions& options_;
  ChunkPlan plan_;
  std::mutex mutex_;
  std::vector<Sum> partials_;
  std::vector<uint8_t> done_;
  std::vector<int64_t> todo_;
  size_t nextTodo_ = 0;
  int64_t completed_ = 0, doneBefore_ = 0;
  std::vector<int64_t> computedBy_, parallelism_;
  std::vector<std::chrono::steady_clock::time_point> firstGrant_;
  std::vector<uint8_t> granted_;
  std::vector<int64_t> grantedChunks_;  // in this run
  std::string stopReason_;
  std::atomic<bool> stopFlag_{false};
};

}  // namespace tcc::rt::permanent
