// The entry points of kernel_api.h: one insert per policy and order that
// reaches the workspace's own Insert directly, and a finish that compresses
// into the kernel's output tensor.
#include "tcc/ism/kernel_api.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tcc/ism/ism.h"
#include "tcc/ism/policy_registry.h"
#include "tcc/ism/parallel_compress.h"
#include "tcc/ism/parallel_merge.h"
#include "tcc/runtime/abi.h"
#include "tcc/runtime/array_alloc.h"
#include "tcc/runtime/upper_state.h"

namespace tcc::ism::kernel {
namespace {

std::string& lastError() {
  thread_local std::string message;
  return message;
}

// An output array of `count` elements (at least one, so that an empty
// array is still an array), from `hugePageMinBytes` bytes in 2 MB pages.
template <class T>
T* allocateArray(int64_t count, long long hugePageMinBytes) {
  T* out = static_cast<T*>(
      tcc_array_alloc(static_cast<long long>(std::max<int64_t>(count, 1) * sizeof(T)), hugePageMinBytes));
  if (out == nullptr) throw std::bad_alloc();
  return out;
}

std::size_t elementWidth(int datatype) {
  switch (datatype) {
    case TCC_FLOAT64:
    case TCC_INT64: return 8;
    case TCC_FLOAT32:
    case TCC_INT32: return 4;
  }
  throw std::invalid_argument("ism: sparse workspaces cannot produce element type " + std::to_string(datatype));
}

// The output's level chain as the Compress stage sees it.
std::vector<LevelSpec> levelsOf(const tcc_tensor& output, int order, int uniqueMask) {
  if (output.order != order)
    throw std::invalid_argument("ism: the output has order " + std::to_string(output.order) + ", the workspace " +
                                std::to_string(order));
  std::vector<LevelSpec> levels;
  for (int l = 0; l < order; ++l) {
    int kind = output.levels[l].kind;
    if (kind < TCC_LEVEL_DENSE || kind > TCC_LEVEL_SINGLETON)
      throw std::invalid_argument("ism: output level " + std::to_string(l) + " has kind " + std::to_string(kind));
    levels.push_back({static_cast<LevelKind>(kind), ((uniqueMask >> l) & 1) != 0});
  }
  validateLevels(levels, order);
  return levels;
}

bool allDense(const std::vector<LevelSpec>& levels) {
  return std::all_of(levels.begin(), levels.end(), [](const LevelSpec& l) { return l.kind == LevelKind::Dense; });
}

// Runs step(0) .. step(count - 1) on up to `threads` threads of our own.
template <class Step>
void onOwnThreads(int count, int threads, Step step) {
  std::atomic<int> next{0};
  auto work = [&] {
    for (int k = next++; k < count; k = next++) step(k);
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < std::min(count, threads); ++t) workers.emplace_back(work);
  work();
  for (auto& worker : workers) worker.join();
}

// When each step of finishing per-thread workspaces ended, reported on
// stderr when TCC_ISM_PROFILE is set (to see what limits scaling). Ranges
// is when a kernel whose threads own ranges handed them over (after its
// work pass and the cut); the longest of the threads' own sorts and merges
// is kept beside the step's wall time, which also holds the wait for them.
struct Phases {
  enum Step { Created, Ranges, InsertsDone, Sorted, Planned, Merged, Allocated, Filled, Steps };
  using Clock = std::chrono::steady_clock;
  Clock::time_point at[Steps];
  std::atomic<bool> insertsDone{false};
  std::atomic<int64_t> longestThreadFinish{0};  // nanoseconds
  void mark(Step step) { at[step] = Clock::now(); }
  void markOnce(Step step) {
    if (!insertsDone.exchange(true)) mark(step);
  }
  void threadFinished(Clock::time_point began) {
    int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - began).count();
    int64_t longest = longestThreadFinish.load(std::memory_order_relaxed);
    while (took > longest && !longestThreadFinish.compare_exchange_weak(longest, took, std::memory_order_relaxed)) {
    }
  }
  void report(int threads, std::size_t parts, int64_t values, std::size_t merges) const {
    if (std::getenv("TCC_ISM_PROFILE") == nullptr) return;
    auto ms = [&](Step from, Step to) { return std::chrono::duration<double, std::milli>(at[to] - at[from]).count(); };
    bool owned = at[Ranges] != Clock::time_point();
    std::fprintf(stderr,
                 "ism: %d threads, %zu parts, %lld values, %zu merges into all arrays: %s%.2f ms, inserts %.2f ms, "
                 "sort per thread %.2f ms (longest thread %.2f ms), plan parts %.2f ms, count parts %.2f ms, "
                 "allocate %.2f ms, fill parts %.2f ms\n",
                 threads, parts, static_cast<long long>(values), merges,
                 owned ? "work pass and cut " : "work pass (none) ", owned ? ms(Created, Ranges) : 0.0,
                 ms(owned ? Ranges : Created, InsertsDone), ms(InsertsDone, Sorted),
                 static_cast<double>(longestThreadFinish.load()) / 1e6, ms(Sorted, Planned), ms(Planned, Merged),
                 ms(Merged, Allocated), ms(Allocated, Filled));
  }
};

// The per-thread workspaces this thread last filled, and which of them
// (set when a kernel's thread asks for its handle): finishing prefers it,
// so that a thread sorts the workspace in its own cache.
thread_local const void* filledByThisThread = nullptr;
thread_local int indexFilledByThisThread = -1;

// One workspace per thread of a parallel producer, each filled through the
// ordinary insert entry points. Finishing takes four steps, each on all
// threads at once (kernel_api.h): each thread's workspace is sorted and
// merged into its run; the runs are cut into parts by ranges of the first
// level and each part merged (parallel_merge.h) and its positions counted;
// a prefix sum over the parts sizes the output's arrays; and each part
// writes its slice of them (parallel_compress.h).
template <template <int> class Policy, int N>
class PerThreadWorkspaces final : public AnyWorkspace {
 public:
  PerThreadWorkspaces(int threads, const Shape<N>& shape, const WorkspaceOptions& options)
      : shape_(shape), runs_(threads), threadErrors_(threads), claimed_(new std::atomic<bool>[threads]) {
    for (int t = 0; t < threads; ++t) claimed_[t] = false;
    for (int t = 0; t < threads; ++t) {
      workspaces_.push_back(std::make_unique<TypedWorkspace<Policy, N>>(shape, options));
      handles_.push_back(static_cast<AnyWorkspace*>(workspaces_.back().get()));
    }
    phases_.mark(Phases::Created);
  }
  ~PerThreadWorkspaces() override { releaseArrays(); }
  int threadCount() const override { return static_cast<int>(handles_.size()); }
  int insertAny(const int*, double) noexcept override { return 1; }  // inserts go to a thread's own workspace
  std::string failed() const override {
    for (const auto& workspace : workspaces_)
      if (workspace && !workspace->failure.empty()) return workspace->failure;
    return "";
  }
  CompressedTensor finish(const std::vector<LevelSpec>&) override {
    throw std::logic_error("ism: per-thread workspaces finish straight into their output");
  }
  // Sorts and merges one thread's workspace into its run: the one this
  // thread filled if it is left, else thread t's, else any left. A call
  // per thread finishes them all, whichever thread makes which call.
  void finishThread(int t) override {
    if (t < 0 || t >= threadCount()) return;
    auto claim = [&](int r) { return !claimed_[r].exchange(true, std::memory_order_acq_rel); };
    const void* self = static_cast<const AnyWorkspace*>(this);
    int own = filledByThisThread == self ? indexFilledByThisThread : -1;
    if (own >= 0 && own < threadCount() && claim(own)) {
      t = own;
    } else if (!claim(t)) {
      t = -1;
      for (int r = 0; r < threadCount() && t < 0; ++r)
        if (claim(r)) t = r;
      if (t < 0) return;
    }
    if (runs_[t] || threadErrors_[t] || !workspaces_[t]) return;
    phases_.markOnce(Phases::InsertsDone);
    auto began = Phases::Clock::now();
    try {
      workspaces_[t]->throwIfFailed();
      runs_[t] = &workspaces_[t]->workspace.finish();
      merges_ += workspaces_[t]->workspace.merges();
    } catch (...) {
      threadErrors_[t] = std::current_exception();
    }
    phases_.threadFinished(began);
  }
  void ownedRanges(const long long* cuts, int parts) override {
    ownedCuts_.clear();
    for (int p = 0; p <= parts; ++p) ownedCuts_.push_back(static_cast<int32_t>(cuts[p]));
    phases_.mark(Phases::Ranges);
  }
  int mergeParts(tcc_tensor* output, int uniqueMask) override {
    if (plan_) return static_cast<int>(plan_->ranges());
    try {
      if (output == nullptr) throw std::invalid_argument("ism: merge into a null output");
      planParts(*output, levelsOf(*output, N, uniqueMask));
      return static_cast<int>(plan_->ranges());
    } catch (...) {
      keep(std::current_exception());
      return 0;
    }
  }
  // Merges part p and counts its positions at every level.
  void mergePart(int part) override {
    if (!plan_ || part < 0 || part >= static_cast<int>(plan_->ranges()) || merged_[part]) return;
    try {
      // A range that one run alone holds is read where it lies; the others are merged.
      if (!soleRunOfRange(*plan_, static_cast<std::size_t>(part), spans_[part], &partRun_[part])) {
        mergePlannedRange(*plan_, static_cast<std::size_t>(part), parts_[part]);
        spans_[part] = {parts_[part].crd.data(), parts_[part].vals.data(), parts_[part].size()};
      }
      counts_[part] = countPartPositions<N>(spans_[part], plan_->cuts[part], plan_->cuts[part + 1], shape_, levels_);
    } catch (...) {
      partErrors_[part] = std::current_exception();
    }
    merged_[part] = 1;
  }
  // Offsets of the parts and the output's arrays (one thread).
  void allocateOutput() override {
    if (!plan_ || allocated_ || error_) return;
    phases_.mark(Phases::Merged);
    try {
      for (std::size_t part = 0; part < plan_->ranges(); ++part) mergePart(static_cast<int>(part));
      rethrowFirst(partErrors_);
      // The runs are merged (fillPart frees them, on all threads at once):
      // each once the parts read from it in place are written, and fillPart
      // with the run's index has begun (the latter alone for a run no part
      // reads in place, freed before the output's arrays grow).
      runs_.assign(runs_.size(), nullptr);
      pendingReads_ = std::make_unique<std::atomic<int>[]>(workspaces_.size());
      for (std::size_t r = 0; r < workspaces_.size(); ++r) pendingReads_[r] = 1;
      partsOfRun_.assign(workspaces_.size(), {});
      nextOfRun_ = std::make_unique<std::atomic<std::size_t>[]>(workspaces_.size());
      for (std::size_t r = 0; r < workspaces_.size(); ++r) nextOfRun_[r] = 0;
      for (std::size_t part = 0; part < partRun_.size(); ++part) {
        if (partRun_[part] < 0) continue;
        ++pendingReads_[partRun_[part]];
        partsOfRun_[partRun_[part]].push_back(static_cast<int>(part));
      }
      offsets_ = partOffsets<N>(counts_, totals_);
      for (int l = 0; l < N; ++l) {
        int64_t parents = l == 0 ? 1 : totals_[l - 1];
        if (levels_[l].kind == LevelKind::Compressed) pos_[l] = allocateArray<int64_t>(parents + 1, hugePageMinBytes);
        if (levels_[l].kind != LevelKind::Dense) crd_[l] = allocateArray<int32_t>(totals_[l], hugePageMinBytes);
      }
      if (allDense(levels_) && output_->vals != nullptr) {
        // A dense output arrives allocated and zeroed by its caller: filled in place.
        vals_ = output_->vals;
        valsInPlace_ = true;
      } else {
        vals_ = tcc_array_alloc(
            static_cast<long long>(std::max<int64_t>(totals_[N - 1], 1) * elementWidth(datatype_)), hugePageMinBytes);
        if (vals_ == nullptr) throw std::bad_alloc();
      }
      withArrays([&](auto& arrays) { fillSharedPos<N>(levels_, totals_, arrays); });
      allocated_ = true;
      phases_.mark(Phases::Allocated);
    } catch (...) {
      keep(std::current_exception());
    }
  }
  // Writes part p's slice of the output's arrays.
  // One call per part, on any threads: each writes one part's slice of
  // the output's arrays, preferring a part read from the run this thread
  // filled (still in its cache), else part `call`, else any left.
  void fillPart(int call) override {
    if (!allocated_ || call < 0 || call >= static_cast<int>(plan_->ranges()) ||
        fillCalled_[call].exchange(true, std::memory_order_acq_rel))
      return;
    // Before the output's arrays grow: the threads' workspaces, one a call
    // (those beyond the parts go in finish), once no part reads them in place.
    if (call < threadCount()) releaseRun(call);
    int part = -1;
    const void* self = static_cast<const AnyWorkspace*>(this);
    int own = filledByThisThread == self ? indexFilledByThisThread : -1;
    if (own >= 0 && own < threadCount()) {
      for (std::size_t k; part < 0 && (k = nextOfRun_[own].fetch_add(1, std::memory_order_relaxed)) < partsOfRun_[own].size();)
        if (claimPart(partsOfRun_[own][k])) part = partsOfRun_[own][k];
    }
    if (part < 0 && claimPart(call)) part = call;
    for (int p = 0; part < 0 && p < static_cast<int>(plan_->ranges()); ++p)
      if (claimPart(p)) part = p;
    if (part >= 0) fillOne(part);
  }
  bool finishInto(tcc_tensor& output, const std::vector<LevelSpec>& levels) override {
    if (!plan_ && !error_) {
      // No threads of the caller's ran the steps: run them on threads of our own.
      onOwnThreads(threadCount(), threadCount(), [this](int t) { finishThread(t); });
      try {
        planParts(output, levels);
      } catch (...) {
        keep(std::current_exception());
      }
      int parts = plan_ ? static_cast<int>(plan_->ranges()) : 0;
      onOwnThreads(parts, threadCount(), [this](int p) { mergePart(p); });
      allocateOutput();
      onOwnThreads(allocated_ ? parts : 0, threadCount(), [this](int p) { fillPart(p); });
    }
    if (error_) std::rethrow_exception(error_);
    if (&output != output_ || levels != levels_)
      throw std::logic_error("ism: per-thread workspaces finish into another output than they merged for");
    allocateOutput();
    if (error_) std::rethrow_exception(error_);
    for (std::size_t part = 0; part < plan_->ranges(); ++part)
      if (claimPart(static_cast<int>(part))) fillOne(static_cast<int>(part));
    for (auto& workspace : workspaces_) workspace.reset();
    phases_.mark(Phases::Filled);
    phases_.report(threadCount(), plan_->ranges(), totals_[N - 1], merges_.load());
    if (valsInPlace_) {
      vals_ = nullptr;
      return true;
    }
    for (int l = 0; l < N; ++l) {
      int64_t parents = l == 0 ? 1 : totals_[l - 1];
      output.levels[l].pos = reinterpret_cast<long long*>(pos_[l]);
      output.levels[l].crd = crd_[l];
      output.levels[l].pos_capacity = pos_[l] ? parents + 1 : 0;
      output.levels[l].crd_capacity = crd_[l] ? totals_[l] : 0;
      pos_[l] = nullptr;
      crd_[l] = nullptr;
    }
    output.vals = vals_;
    output.vals_size = totals_[N - 1];
    output.vals_capacity = totals_[N - 1];
    vals_ = nullptr;
    return true;
  }
  int order() const override { return N; }
  void** threadHandles() override { return handles_.data(); }

 private:
  void planParts(tcc_tensor& output, const std::vector<LevelSpec>& levels) {
    for (int t = 0; t < threadCount(); ++t) finishThread(t);
    phases_.mark(Phases::Sorted);
    rethrowFirst(threadErrors_);
    elementWidth(output.datatype);  // refuses element types the parts cannot write
    levels_ = levels;
    output_ = &output;
    datatype_ = output.datatype;
    std::vector<const AllArray<N>*> runs(runs_.begin(), runs_.end());
    // Threads that owned ranges: the parts are those ranges (each in one
    // run), and the runs need no sampling. Otherwise the runs are cut at
    // quantiles, into more parts than threads, so that threads that finish
    // early take more.
    MergePlan<N> plan =
      ownedCuts_.size() >= 2 && ownedCuts_.front() == 0 && ownedCuts_.back() == shape_.levelDim(0) &&
          std::is_sorted(ownedCuts_.begin(), ownedCuts_.end())
        ? MergePlan<N>{std::move(runs), ownedCuts_}
        : planMerge<N>(std::move(runs), shape_.levelDim(0), 4 * threadCount());
    std::size_t parts = plan.ranges();
    parts_.assign(parts, CooBuffer<N>());
    spans_.assign(parts, CooSpan<N>{});
    counts_.assign(parts, LevelPositions<N>{});
    partErrors_.assign(parts, nullptr);
    merged_.assign(parts, 0);
    fillCalled_ = std::make_unique<std::atomic<bool>[]>(parts);
    fillClaimed_ = std::make_unique<std::atomic<bool>[]>(parts);
    for (std::size_t p = 0; p < parts; ++p) fillCalled_[p] = fillClaimed_[p] = false;
    partRun_.assign(parts, -1);
    plan_ = std::move(plan);
    phases_.mark(Phases::Planned);
  }
  template <class Body>
  void withArrays(Body body) {
    auto view = [&]<class T>() {
      OutputArrays<N, T> arrays;
      for (int l = 0; l < N; ++l) {
        arrays.pos[l] = pos_[l];
        arrays.crd[l] = crd_[l];
      }
      arrays.vals = static_cast<T*>(vals_);
      body(arrays);
    };
    switch (datatype_) {
      case TCC_FLOAT64: return view.template operator()<double>();
      case TCC_FLOAT32: return view.template operator()<float>();
      case TCC_INT32: return view.template operator()<int32_t>();
      case TCC_INT64: return view.template operator()<int64_t>();
    }
  }
  bool claimPart(int part) { return !fillClaimed_[part].exchange(true, std::memory_order_acq_rel); }
  // Writes part p's slice of the output's arrays, then lets its run go.
  void fillOne(int part) {
    withArrays([&](auto& arrays) {
      ism::fillPart<N>(spans_[part], plan_->cuts[part], shape_, levels_, counts_[part], offsets_[part], arrays,
                       valsInPlace_);
    });
    // A run is freed on the thread that wrote the last part read from it,
    // while the others still write theirs (not all at the end, on one thread).
    if (partRun_[part] >= 0) releaseRun(partRun_[part]);
    parts_[part] = CooBuffer<N>();
  }
  void releaseRun(int run) {
    if (pendingReads_[run].fetch_sub(1, std::memory_order_acq_rel) == 1) workspaces_[run].reset();
  }
  void keep(std::exception_ptr error) {
    if (!error_) error_ = error;
  }
  void releaseArrays() {
    for (int l = 0; l < N; ++l) {
      std::free(pos_[l]);
      std::free(crd_[l]);
    }
    if (!valsInPlace_) std::free(vals_);
  }
  static void rethrowFirst(const std::vector<std::exception_ptr>& errors) {
    for (const auto& error : errors)
      if (error) std::rethrow_exception(error);
  }

  Shape<N> shape_;
  Phases phases_;
  std::atomic<std::size_t> merges_{0};  // every thread's, for the profile
  std::vector<std::unique_ptr<TypedWorkspace<Policy, N>>> workspaces_;
  std::vector<void*> handles_;
  std::vector<const AllArray<N>*> runs_;  // per thread, once finished
  std::vector<std::exception_ptr> threadErrors_;
  std::unique_ptr<std::atomic<bool>[]> claimed_;  // per thread: its workspace taken by a finishThread call
  std::exception_ptr error_;  // of planning or allocating
  // The parts, once planned: each merged, counted, then written.
  std::optional<MergePlan<N>> plan_;
  std::vector<LevelSpec> levels_;
  tcc_tensor* output_ = nullptr;
  int datatype_ = TCC_FLOAT64;
  std::vector<CooBuffer<N>> parts_;
  std::vector<CooSpan<N>> spans_;  // each part's components: in a run, or in parts_
  std::vector<int32_t> ownedCuts_;  // the threads' owned ranges, when they owned some
  std::vector<int> partRun_;  // the run a part is read from in place; -1 for a merged part
  std::unique_ptr<std::atomic<int>[]> pendingReads_;  // per run: reads left before it is freed
  std::vector<LevelPositions<N>> counts_;
  std::vector<std::exception_ptr> partErrors_;
  std::vector<char> merged_;  // not vector<bool>: parts are marked from several threads
  std::unique_ptr<std::atomic<bool>[]> fillCalled_, fillClaimed_;  // per call of fillPart; per part written
  std::vector<std::vector<int>> partsOfRun_;  // the parts read from each run in place
  std::unique_ptr<std::atomic<std::size_t>[]> nextOfRun_;  // the next of them to claim
  // The output's arrays, once allocated (owned until handed over).
  bool allocated_ = false;
  std::vector<LevelPositions<N>> offsets_;
  LevelPositions<N> totals_{};
  int64_t* pos_[N] = {};
  int32_t* crd_[N] = {};
  void* vals_ = nullptr;
  bool valsInPlace_ = false;
};

// Policies registered by the program (policy_registry.h), by id.
struct Registry {
  std::mutex mutex;
  std::map<int, std::pair<std::string, WorkspaceFactory>> byId;
};
Registry& registry() {
  static Registry instance;
  return instance;
}

const char* const kBuiltinPolicies[] = {"bucket", "hash", "coord", "map", "vector"};

// FNV-1a of the name, folded into [1000, 2^30): stable across processes.
int idOfName(const std::string& name) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  return 1000 + static_cast<int>(hash % ((1u << 30) - 1000));
}

WorkspaceFactory registeredFactory(int policy) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto found = r.byId.find(policy);
  return found == r.byId.end() ? nullptr : found->second.second;
}

// `threads` 0: one workspace; otherwise that many, one per thread.
template <int N>
AnyWorkspace* create(int threads, const int* dims, const int* levelOrder, int policy, const WorkspaceOptions& options) {
  Shape<N> shape;
  for (int m = 0; m < N; ++m) {
    // An empty mode receives no inserts; a size of 1 keeps the shape valid.
    shape.modeDims[m] = dims[m] > 0 ? dims[m] : 1;
    shape.levelOrder[m] = levelOrder[m];
  }
  auto make = [&]<template <int> class Policy>() -> AnyWorkspace* {
    if (threads == 0) return new TypedWorkspace<Policy, N>(shape, options);
    return new PerThreadWorkspaces<Policy, N>(threads, shape, options);
  };
  switch (policy) {
    case 0: return make.template operator()<BucketPolicy>();
    case 1: return make.template operator()<HashPolicy>();
    case 2: return make.template operator()<CoordPolicy>();
    case 3: return make.template operator()<MapPolicy>();
    case 4: return make.template operator()<VectorPolicy>();
  }
  if (WorkspaceFactory factory = registeredFactory(policy)) {
    if (threads != 0)
      throw std::invalid_argument("ism: a registered policy fills one workspace at a time, not one per thread");
    return factory(N, dims, levelOrder, options);
  }
  throw std::invalid_argument("ism: unknown policy id " + std::to_string(policy));
}

template <template <int> class Policy, int N>
int insert(void* w, const Coordinates<N>& coordinates, double value) noexcept {
  auto* workspace = static_cast<TypedWorkspace<Policy, N>*>(static_cast<AnyWorkspace*>(w));
  try {
    workspace->workspace.insert(coordinates, value);
    return 0;
  } catch (const std::exception& error) {
    workspace->fail(error.what());
    return 1;
  }
}

template <class T>
T* copyToMalloc(const std::vector<T>& values, long long hugePageMinBytes) {
  T* out = allocateArray<T>(static_cast<int64_t>(values.size()), hugePageMinBytes);
  if (!values.empty()) std::memcpy(out, values.data(), values.size() * sizeof(T));
  return out;
}

template <class T>
void* convertToMalloc(const std::vector<double>& values, long long hugePageMinBytes) {
  T* out = allocateArray<T>(static_cast<int64_t>(values.size()), hugePageMinBytes);
  for (std::size_t k = 0; k < values.size(); ++k) out[k] = static_cast<T>(values[k]);
  return out;
}

void* valuesOfType(const std::vector<double>& values, int datatype, long long hugePageMinBytes) {
  switch (datatype) {
    case TCC_FLOAT64: return copyToMalloc(values, hugePageMinBytes);
    case TCC_FLOAT32: return convertToMalloc<float>(values, hugePageMinBytes);
    case TCC_INT32: return convertToMalloc<int32_t>(values, hugePageMinBytes);
    case TCC_INT64: return convertToMalloc<int64_t>(values, hugePageMinBytes);
  }
  throw std::invalid_argument("ism: sparse workspaces cannot produce element type " + std::to_string(datatype));
}

// One workspace's steps, on stderr when TCC_ISM_PROFILE is set (beside
// the per-thread workspaces' Phases, to compare a parallel kernel's one
// thread with the sequential kernel).
struct SingleProfile {
  using Clock = std::chrono::steady_clock;
  explicit SingleProfile(const AnyWorkspace& finished) : workspace(finished) {}
  const AnyWorkspace& workspace;
  Clock::time_point finishing = Clock::now(), compressed{};
  ~SingleProfile() {
    if (std::getenv("TCC_ISM_PROFILE") == nullptr || compressed == Clock::time_point()) return;
    auto ms = [](Clock::time_point from, Clock::time_point to) {
      return std::chrono::duration<double, std::milli>(to - from).count();
    };
    std::fprintf(stderr,
                 "ism: 1 workspace, %zu merges into the all array: inserts %.2f ms, sort, merge and compress %.2f ms, "
                 "copy into the output %.2f ms\n",
                 workspace.merges(), ms(workspace.created, finishing), ms(finishing, compressed),
                 ms(compressed, Clock::now()));
  }
};

void finishInto(AnyWorkspace& workspace, tcc_tensor& output, int uniqueMask) {
  int order = workspace.order();
  std::vector<LevelSpec> levels = levelsOf(output, order, uniqueMask);
  if (workspace.finishInto(output, levels)) return;
  SingleProfile profile(workspace);
  CompressedTensor result = workspace.finish(levels);
  profile.compressed = SingleProfile::Clock::now();
  if (allDense(levels) && output.vals != nullptr) {
    // A dense output arrives allocated (and zeroed) by its caller: fill it in place.
    void* values = valuesOfType(result.vals, output.datatype, 0);
    std::size_t width = output.datatype == TCC_FLOAT32 || output.datatype == TCC_INT32 ? 4 : 8;
    std::memcpy(output.vals, values, result.vals.size() * width);
    std::free(values);
    return;
  }
  // Allocate everything before handing anything over.
  std::vector<std::unique_ptr<void, decltype(&std::free)>> owned;
  std::vector<long long*> pos(order, nullptr);
  std::vector<int*> crd(order, nullptr);
  for (int l = 0; l < order; ++l) {
    const CompressedLevel& level = result.levels[l];
    if (level.spec.kind == LevelKind::Compressed) {
      pos[l] = reinterpret_cast<long long*>(copyToMalloc(level.pos, workspace.hugePageMinBytes));
      owned.emplace_back(pos[l], &std::free);
    }
    if (level.spec.kind != LevelKind::Dense) {
      crd[l] = copyToMalloc(level.crd, workspace.hugePageMinBytes);
      owned.emplace_back(crd[l], &std::free);
    }
  }
  void* vals = valuesOfType(result.vals, output.datatype, workspace.hugePageMinBytes);
  for (auto& array : owned) array.release();
  for (int l = 0; l < order; ++l) {
    output.levels[l].pos = pos[l];
    output.levels[l].crd = crd[l];
    output.levels[l].pos_capacity = static_cast<long long>(result.levels[l].pos.size());
    output.levels[l].crd_capacity = static_cast<long long>(result.levels[l].crd.size());
  }
  output.vals = vals;
  output.vals_size = static_cast<long long>(result.vals.size());
  output.vals_capacity = output.vals_size;
}

}  // namespace
}  // namespace tcc::ism::kernel

using namespace tcc::ism;
using tcc::ism::kernel::AnyWorkspace;

namespace tcc::ism::kernel {
namespace {

void* createWorkspace(int threads, int order, const int* dims, const int* level_order, int policy, int flags,
                      long long capacity, long long nnz_hint) {
  try {
    if (dims == nullptr || level_order == nullptr) throw std::invalid_argument("ism: dims or level order is null");
    if (capacity < 0 || nnz_hint < 0) throw std::invalid_argument("ism: capacity and nnz hint must not be negative");
    if (threads < 0) throw std::invalid_argument("ism: a negative thread count");
    WorkspaceOptions options;
    options.pipelining = (flags & 1) != 0;
    options.doubleBuffering = (flags & 2) != 0;
    options.capacity = static_cast<std::size_t>(capacity);
    options.nnzHint = static_cast<std::size_t>(nnz_hint);
    AnyWorkspace* workspace = nullptr;
    switch (order) {
      case 1: workspace = create<1>(threads, dims, level_order, policy, options); break;
      case 2: workspace = create<2>(threads, dims, level_order, policy, options); break;
      case 3: workspace = create<3>(threads, dims, level_order, policy, options); break;
      case 4: workspace = create<4>(threads, dims, level_order, policy, options); break;
      default: throw std::invalid_argument("ism: a sparse workspace has order 1 to 4, not " + std::to_string(order));
    }
    workspace->hugePageMinBytes = (flags & 4) != 0 ? TCC_HUGE_PAGE_DEFAULT_MIN_BYTES : 0;
    return workspace;
  } catch (const std::exception& error) {
    lastError() = error.what();
    return nullptr;
  }
}

}  // namespace
}  // namespace tcc::ism::kernel

extern "C" void* tcc_ism_kernel_create(int order, const int* dims, const int* level_order, int policy, int flags,
                                       long long capacity, long long nnz_hint) {
  return kernel::createWorkspace(0, order, dims, level_order, policy, flags, capacity, nnz_hint);
}

extern "C" void* tcc_ism_kernel_create_per_thread(int threads, int order, const int* dims, const int* level_order,
                                                  int policy, int flags, long long capacity, long long nnz_hint) {
  if (threads < 1) {
    kernel::lastError() = "ism: per-thread workspaces need at least one thread";
    return nullptr;
  }
  return kernel::createWorkspace(threads, order, dims, level_order, policy, flags, capacity, nnz_hint);
}

extern "C" int tcc_ism_kernel_thread_count(void* w) { return static_cast<AnyWorkspace*>(w)->threadCount(); }

extern "C" void tcc_ism_kernel_owned_ranges(void* w, const long long* cuts, int parts) {
  static_cast<AnyWorkspace*>(w)->ownedRanges(cuts, parts);
}

extern "C" void tcc_ism_kernel_finish_thread(void* w, int thread) {
  tcc::rt::clearVectorUpperState();
  static_cast<AnyWorkspace*>(w)->finishThread(thread);
}

extern "C" int tcc_ism_kernel_merge_parts(void* w, tcc_tensor* output, int unique_mask) {
  return static_cast<AnyWorkspace*>(w)->mergeParts(output, unique_mask);  // a failure is kept for finish
}

extern "C" void tcc_ism_kernel_merge_part(void* w, int part) {
  tcc::rt::clearVectorUpperState();
  static_cast<AnyWorkspace*>(w)->mergePart(part);
}

extern "C" void tcc_ism_kernel_allocate_output(void* w) { static_cast<AnyWorkspace*>(w)->allocateOutput(); }

extern "C" void tcc_ism_kernel_fill_part(void* w, int part) {
  tcc::rt::clearVectorUpperState();
  static_cast<AnyWorkspace*>(w)->fillPart(part);
}

extern "C" void* tcc_ism_kernel_thread_handle(void* w, int thread) {
  void** handles = static_cast<AnyWorkspace*>(w)->threadHandles();
  if (handles == nullptr) return w;
  kernel::filledByThisThread = w;
  kernel::indexFilledByThisThread = thread;
  // Kernels ask only for threads of the team the workspaces were made for.
  return handles[thread];
}

#define TCC_ISM_INSERTS(NAME, POLICY)                                                                   \
  extern "C" int tcc_ism_insert_##NAME##_1(void* w, int c0, double v) {                                 \
    tcc::rt::clearVectorUpperState();                                                                   \
    return kernel::insert<POLICY, 1>(w, {c0}, v);                                                      \
  }                                                                                                     \
  extern "C" int tcc_ism_insert_##NAME##_2(void* w, int c0, int c1, double v) {                         \
    tcc::rt::clearVectorUpperState();                                                                   \
    return kernel::insert<POLICY, 2>(w, {c0, c1}, v);                                                  \
  }                                                                                                     \
  extern "C" int tcc_ism_insert_##NAME##_3(void* w, int c0, int c1, int c2, double v) {                 \
    tcc::rt::clearVectorUpperState();                                                                   \
    return kernel::insert<POLICY, 3>(w, {c0, c1, c2}, v);                                              \
  }                                                                                                     \
  extern "C" int tcc_ism_insert_##NAME##_4(void* w, int c0, int c1, int c2, int c3, double v) {         \
    tcc::rt::clearVectorUpperState();                                                                   \
    return kernel::insert<POLICY, 4>(w, {c0, c1, c2, c3}, v);                                          \
  }

TCC_ISM_INSERTS(bucket, BucketPolicy)
TCC_ISM_INSERTS(hash, HashPolicy)
TCC_ISM_INSERTS(coord, CoordPolicy)
TCC_ISM_INSERTS(map, MapPolicy)
TCC_ISM_INSERTS(vector, VectorPolicy)

#undef TCC_ISM_INSERTS

extern "C" int tcc_ism_kernel_finish(void* w, tcc_tensor* output, int unique_mask) {
  tcc::rt::clearVectorUpperState();
  try {
    if (w == nullptr || output == nullptr) throw std::invalid_argument("ism: finish with a null argument");
    kernel::finishInto(*static_cast<AnyWorkspace*>(w), *output, unique_mask);
    return 0;
  } catch (const std::exception& error) {
    kernel::lastError() = error.what();
    return 1;
  }
}

namespace tcc::ism {

int registerPolicyFactory(const std::string& name, WorkspaceFactory factory) {
  for (const char* builtin : kernel::kBuiltinPolicies)
    if (name == builtin) throw std::invalid_argument("ism: '" + name + "' names a built-in policy");
  if (name.empty() || factory == nullptr) throw std::invalid_argument("ism: a policy needs a name and a factory");
  int id = kernel::idOfName(name);
  kernel::Registry& r = kernel::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto [entry, inserted] = r.byId.emplace(id, std::make_pair(name, factory));
  if (!inserted && entry->second.first != name)
    throw std::invalid_argument("ism: policy '" + name + "' hashes like '" + entry->second.first + "'; rename one");
  entry->second.second = factory;
  return id;
}

int policyId(const std::string& name) {
  for (int id = 0; id < 5; ++id)
    if (name == kernel::kBuiltinPolicies[id]) return id;
  int id = kernel::idOfName(name);
  kernel::Registry& r = kernel::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto found = r.byId.find(id);
  return found != r.byId.end() && found->second.first == name ? id : -1;
}

}  // namespace tcc::ism

extern "C" int tcc_ism_kernel_policy_id(const char* name) { return name ? tcc::ism::policyId(name) : -1; }

#define TCC_ISM_USER_INSERT(N, PARAMS, ...)                                                             \
  extern "C" int tcc_ism_insert_user_##N(void* w, PARAMS, double v) {                                  \
    tcc::rt::clearVectorUpperState();                                                                   \
    const int coordinates[N] = {__VA_ARGS__};                                                           \
    return static_cast<AnyWorkspace*>(w)->insertAny(coordinates, v);                                   \
  }
#define TCC_COMMA ,
TCC_ISM_USER_INSERT(1, int c0, c0)
TCC_ISM_USER_INSERT(2, int c0 TCC_COMMA int c1, c0, c1)
TCC_ISM_USER_INSERT(3, int c0 TCC_COMMA int c1 TCC_COMMA int c2, c0, c1, c2)
TCC_ISM_USER_INSERT(4, int c0 TCC_COMMA int c1 TCC_COMMA int c2 TCC_COMMA int c3, c0, c1, c2, c3)
#undef TCC_COMMA
#undef TCC_ISM_USER_INSERT

extern "C" int tcc_ism_kernel_drain(void* w) {
  tcc::rt::clearVectorUpperState();
  try {
    if (w == nullptr) throw std::invalid_argument("ism: drain with a null workspace");
    static_cast<AnyWorkspace*>(w)->drain();
    return 0;
  } catch (const std::exception& error) {
    kernel::lastError() = error.what();
    return 1;
  }
}

extern "C" int tcc_ism_kernel_status(void* w) {
  std::string failure = static_cast<AnyWorkspace*>(w)->failed();
  if (failure.empty()) return 0;
  kernel::lastError() = failure;
  return 1;
}

extern "C" long long* tcc_ism_kernel_drained_pos(void* w, int level) {
  auto* workspace = static_cast<AnyWorkspace*>(w);
  if (level < 0 || level >= workspace->order()) return nullptr;
  return reinterpret_cast<long long*>(workspace->drained.pos[level].data());
}

extern "C" int* tcc_ism_kernel_drained_crd(void* w, int level) {
  auto* workspace = static_cast<AnyWorkspace*>(w);
  if (level < 0 || level >= workspace->order()) return nullptr;
  return workspace->drained.crd[level].data();
}

extern "C" double* tcc_ism_kernel_drained_vals(void* w) { return static_cast<AnyWorkspace*>(w)->drained.vals.data(); }

extern "C" void tcc_ism_kernel_destroy(void* w) { delete static_cast<AnyWorkspace*>(w); }

extern "C" const char* tcc_ism_kernel_last_error(void) { return kernel::lastError().c_str(); }
