// The ISM template (Algorithm 1 of the sparse-workspace paper) over an
// accumulation policy: Insert into the accumulation array; when it is full,
// Sort it, Merge it into the all array, clear it, grow it by the
// reallocation heuristic, and insert again; finish() sorts and merges what
// is left. Compress (compress.h) then builds any level-format chain.
//
// Pipelining keeps two accumulation arrays: a full one is sorted and merged
// on a second thread while inserts continue into the other. Double
// buffering keeps two all arrays so a merge needs no temporary.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "tcc/ism/all_array.h"
#include "tcc/ism/component.h"
#include "tcc/ism/policy.h"
#include "tcc/ism/reallocation.h"

namespace tcc::ism {

struct WorkspaceOptions {
  bool pipelining = false;
  bool doubleBuffering = false;
  // First accumulation capacity in components; 0 picks 2^ceil(log2 nnzHint),
  // at least 1024 (the paper's L).
  std::size_t capacity = 0;
  // After a merge that leaves the all array at least as large as the
  // accumulation array, grow the latter by the reallocation heuristic, up
  // to maxCapacity.
  bool growCapacity = true;
  std::size_t maxCapacity = std::size_t{1} << 22;
  std::size_t nnzHint = 0;  // expected result nonzeros; 0 when unknown
};

template <template <int> class Policy, int N>
  requires AccumulationPolicy<Policy<N>, N>
class Workspace {
 public:
  Workspace(const Shape<N>& shape, const WorkspaceOptions& options = {})
      : shape_((shape.validate(), shape)),
        options_(options),
        params_(makeParams(options)),
        all_(options.doubleBuffering) {
    static_assert(N >= 1 && N <= kMaxOrder, "ism workspaces have order 1 to 4");
    accumulators_[0].emplace(shape_, params_);
    if (options_.pipelining) accumulators_[1].emplace(shape_, params_);
  }

  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() { stopWorker(); }

  const Shape<N>& shape() const { return shape_; }

  // Insert stage; coordinates in mode order. Throws std::out_of_range on a
  // coordinate outside the shape, std::logic_error after finish().
  void insert(const Coordinates<N>& modeCoordinates, double value) {
    insertLevelOrder(shape_.toLevelOrder(modeCoordinates), value);
  }

  // Insert stage for coordinates already in level order.
  void insertLevelOrder(const Coordinates<N>& crd, double value) {
    for (int l = 0; l < N; ++l) {
      if (static_cast<uint32_t>(crd[l]) >= static_cast<uint32_t>(shape_.levelDim(l))) {
        throw std::out_of_range("ism: coordinate " + std::to_string(crd[l]) + " at level " +
                                std::to_string(l) + " is outside [0, " +
                                std::to_string(shape_.levelDim(l)) + ")");
      }
    }
    if (finished_) throw std::logic_error("ism: insert after finish");
    if (accumulators_[active_]->insert(crd, value)) return;
    flushActive();
    if (!accumulators_[active_]->insert(crd, value)) {
      throw std::logic_error("ism: policy refused an insert into an empty accumulation array");
    }
  }

  // Sorts and merges what is left; the all array is then complete.
  const AllArray<N>& finish() {
    if (finished_) return all_;
    if (options_.pipelining) waitIdle();
    sortAndMerge(*accumulators_[active_]);
    stopWorker();
    for (auto& accumulator : accumulators_) accumulator.reset();
    all_.releaseSpare();
    finished_ = true;
    return all_;
  }

  // Sorts and merges what is left without ending the workspace: the all
  // array is complete until restart(), which empties it for another round
  // of inserts with the accumulation arrays kept (a workspace reused for
  // each iteration of a loop hoisted out of it).
  const AllArray<N>& drain() {
    if (finished_) throw std::logic_error("ism: drain after finish");
    if (options_.pipelining) waitIdle();
    sortAndMerge(*accumulators_[active_]);
    return all_;
  }
  void restart() {
    if (finished_) throw std::logic_error("ism: restart after finish");
    all_.clear();
  }

  const AllArray<N>& allArray() const { return all_; }
  bool finished() const { return finished_; }
  std::size_t merges() const { return merges_; }

 private:
  static PolicyParams makeParams(const WorkspaceOptions& options) {
    // Accumulation ids are 32-bit (signed in the bucket chains).
    constexpr std::size_t kMaxCapacity = std::size_t{1} << 31;
    if (options.capacity >= kMaxCapacity || options.maxCapacity >= kMaxCapacity) {
      throw std::invalid_argument("ism: accumulation capacity must be below 2^31");
    }
    PolicyParams params;
    params.nnzHint = options.nnzHint;
    params.capacity = options.capacity != 0
                          ? options.capacity
                          : nextPowerOfTwo(std::max<std::size_t>(options.nnzHint, 1024));
    if (params.capacity > options.maxCapacity && options.capacity == 0) {
      params.capacity = std::max<std::size_t>(options.maxCapacity, 1);
    }
    return params;
  }

  // Sort, Merge, clear, and grow one accumulation array (on either thread).
  void sortAndMerge(Policy<N>& accumulator) {
    if (accumulator.size() == 0) return;
    accumulator.sort();
    all_.merge(accumulator);
    accumulator.clear();
    ++merges_;
    std::size_t capacity = accumulator.capacity();
    if (options_.growCapacity && capacity != kUnbounded && capacity < options_.maxCapacity &&
        all_.size() >= capacity) {
      accumulator.reserve(std::min(nextCapacity(capacity), options_.maxCapacity));
    }
  }

  void flushActive() {
    if (!options_.pipelining) {
      sortAndMerge(*accumulators_[active_]);
      return;
    }
    waitIdle();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ = &*accumulators_[active_];
    }
    if (!worker_.joinable()) worker_ = std::thread([this] { workerLoop(); });
    wake_.notify_one();
    active_ = 1 - active_;
  }

  void workerLoop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return pending_ != nullptr || stopping_; });
      if (pending_ == nullptr) return;
      Policy<N>* job = pending_;
      lock.unlock();
      try {
        sortAndMerge(*job);
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        lock.unlock();
      }
      lock.lock();
      pending_ = nullptr;
      idle_.notify_all();
    }
  }

  void waitIdle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return pending_ == nullptr; });
    if (error_) {
      std::exception_ptr error = error_;
      error_ = nullptr;
      std::rethrow_exception(error);
    }
  }

  void stopWorker() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }

  Shape<N> shape_;
  WorkspaceOptions options_;
  PolicyParams params_;
  std::optional<Policy<N>> accumulators_[2];  // the second only when pipelining
  int active_ = 0;
  AllArray<N> all_;
  std::size_t merges_ = 0;
  bool finished_ = false;

  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  Policy<N>* pending_ = nullptr;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace tcc::ism
