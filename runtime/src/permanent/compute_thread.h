// An engine's batches run on a thread of their own, so the calling thread
// stays free to talk to the other ranks.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "range_engine.h"

namespace tcc::rt::permanent {

template <typename Sum>
class ComputeThread {
 public:
  using Batches = std::function<std::vector<int64_t>()>;

  ComputeThread(RangeEngine<Sum>& engine, uint64_t chunkSize, StopFlags stop,
                typename RangeEngine<Sum>::ChunkDone chunkDone)
      : engine_(engine), chunkSize_(chunkSize), stop_(stop), chunkDone_(std::move(chunkDone)) {}
  ~ComputeThread() { quit(); }

  // Rank 0's thread pulls its batches itself until none is left.
  void startPulling(Batches next) {
    idle_ = false;
    thread_ = std::thread([this, next = std::move(next)] {
      for (auto batch = next(); !batch.empty() && !stop_.requested(); batch = next())
        engine_.sumChunks(batch, chunkSize_, stop_, chunkDone_);
      std::lock_guard lock(mutex_);
      idle_ = true;
    });
  }

  // A worker's thread runs the batches it is given.
  void startServing() {
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      for (;;) {
        wake_.wait(lock, [&] { return quit_ || !batch_.empty(); });
        if (quit_) return;
        std::vector<int64_t> batch = std::move(batch_);
        batch_.clear();
        lock.unlock();
        engine_.sumChunks(batch, chunkSize_, stop_, chunkDone_);
        lock.lock();
        idle_ = true;
      }
    });
  }

  void give(std::vector<int64_t> batch) {
    std::lock_guard lock(mutex_);
    batch_ = std::move(batch);
    idle_ = false;
    wake_.notify_one();
  }

  bool idle() {
    std::lock_guard lock(mutex_);
    return idle_;
  }

  void quit() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  RangeEngine<Sum>& engine_;
  uint64_t chunkSize_;
  StopFlags stop_;
  typename RangeEngine<Sum>::ChunkDone chunkDone_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<int64_t> batch_;
  bool idle_ = true, quit_ = false;
};

}  // namespace tcc::rt::permanent
