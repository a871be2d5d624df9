#include "gpu_intrinsic_nm_spmm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "nm_spmm_tuning.h"

namespace tcc::detail {

namespace {

namespace cuda = rt::cuda;
using lowering::NmSpmmPlan;

struct Operands {
  const float* a;
  const float* b;
  const int* d;
  float* c;
  int m, n, k, w, q;
};

// The fastest (bench/nm_spmm/RESULTS.md: rounds 22-23 for the zeroing,
// round 30 for the graph).
constexpr NmSpmmLaunchPath kDefaultLaunchPath = NmSpmmLaunchPath::Graph;

constexpr std::pair<NmSpmmLaunchPath, const char*> kLaunchPathNames[] = {
    {NmSpmmLaunchPath::Uncached, "uncached"},     {NmSpmmLaunchPath::Scalar, "scalar"},
    {NmSpmmLaunchPath::Vector, "vector"},         {NmSpmmLaunchPath::Memset, "memset"},
    {NmSpmmLaunchPath::Overlapped, "overlapped"}, {NmSpmmLaunchPath::OverlappedLean, "lean"},
    {NmSpmmLaunchPath::Chained, "chained"},        {NmSpmmLaunchPath::Graph, "graph"},
};

std::atomic<int>& launchPathSetting() {
  static std::atomic<int> path = [] {
    const char* text = std::getenv("TCC_NM_SPMM_LAUNCH");
    if (text && *text) {
      if (auto named = nmSpmmLaunchPathNamed(text)) return static_cast<int>(*named);
      std::fprintf(stderr, "TCC_NM_SPMM_LAUNCH=%s names no launch path (uncached, scalar, vector, memset, "
                   "overlapped, lean, chained, graph); the default, %s, is used\n", text,
                   nmSpmmLaunchPathName(kDefaultLaunchPath));
    }
    return static_cast<int>(kDefaultLaunchPath);
  }();
  return path;
}

cuda::LaunchShape launchShape(const NmSpmmPlan& plan) {
  cuda::LaunchShape shape;
  std::copy(plan.grid, plan.grid + 3, shape.grid);
  shape.block[0] = static_cast<unsigned>(plan.threads);
  shape.sharedBytes = static_cast<unsigned>(plan.sharedBytes);
  shape.cluster[2] = static_cast<unsigned>(plan.cluster);
  return shape;
}

// Sets a kernel's dynamic shared-memory limit once: to the most any plan
// prepared for it asks (per module; a function of another module is
// another key).
void allowSharedMemory(const cuda::Module& module, void* kernel, int bytes) {
  static SharedMemoryLimits limits;
  if (limits.raise(module.id(), kernel, bytes)) cuda::allowDynamicSharedMemory(kernel, bytes);
}

// How many of a cluster plan's clusters the device holds at once (0: none
// fit, or this driver has no cluster launches).
int activeClusters(const GpuIntrinsicRun& run, const NmSpmmPlan& plan) {
  void* kernel = run.module.function(lowering::nmSpmmKernelName(run.call.prefix, plan));
  allowSharedMemory(run.module, kernel, plan.sharedBytes);
  return cuda::maxActiveClusters(kernel, launchShape(plan));
}

// The k-major copy of a row-major A that plans with transposeA run on:
// one scratch buffer per statement (module id and prefix) and host thread,
// allocated at its first such launch, grown when a larger A comes, and
// reused by every launch after; the last few statements' buffers are kept.
float* transposeScratch(const GpuIntrinsicRun& run, size_t floats) {
  struct Scratch {
    uint64_t module;
    std::string prefix;
    std::thread::id thread;
    cuda::DeviceBuffer buffer;
  };
  constexpr size_t kKept = 8;
  // Never destroyed: device memory outlives no driver shutdown this way.
  static auto* mutex = new std::mutex;
  static auto* kept = new std::deque<Scratch>;
  std::lock_guard<std::mutex> lock(*mutex);
  const auto thread = std::this_thread::get_id();
  auto found = std::find_if(kept->begin(), kept->end(), [&](const Scratch& scratch) {
    return scratch.module == run.module.id() && scratch.prefix == run.call.prefix && scratch.thread == thread;
  });
  if (found == kept->end()) {
    kept->push_front(Scratch{run.module.id(), run.call.prefix, thread, {}});
    if (kept->size() > kKept) kept->pop_back();
    found = kept->begin();
  }
  if (found->buffer.size() < sizeof(float) * floats) found->buffer = cuda::DeviceBuffer(sizeof(float) * floats);
  return static_cast<float*>(found->buffer.get());
}

// Launches the statement's transpose of A (`transpose`, its kernel) into its
// scratch buffer (k x m) and returns the buffer.
const float* transposedA(const GpuIntrinsicRun& run, void* transpose, const Operands& x) {
  const float* a = x.a;
  float* t = transposeScratch(run, std::max<size_t>(size_t(x.m) * size_t(x.k), 1));
  int m = x.m, k = x.k;
  constexpr int tile = lowering::kNmSpmmTransposeTile;
  cuda::LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(std::max(1, (k + tile - 1) / tile));
  shape.grid[1] = static_cast<unsigned>(std::max(1, (m + tile - 1) / tile));
  shape.block[0] = lowering::kNmSpmmTransposeThreads;
  if (k > 0) cuda::launch(transpose, shape, {&a, &t, &m, &k});
  return t;
}

// A plan's launches as a warm call makes them: the kernels looked up, the
// shared-memory limit set, the shapes worked out.
struct PreparedLaunch {
  NmSpmmPlan plan;
  void* kernel = nullptr;
  cuda::LaunchShape shape;
  int64_t zeroFrom = 0;                // C's rows from here on are zeroed first (m: none)
  void* zero = nullptr;                // prefix_zero: one float per thread
  void* zero4 = nullptr;               // prefix_zero4: 16-byte stores
  void* transpose = nullptr;           // prefix_transpose_a (plans with transposeA)
  cuda::LaunchShape scalarZero, vectorZero, leanZero;
};

PreparedLaunch prepare(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& problem, const NmSpmmPlan& plan) {
  PreparedLaunch prepared;
  prepared.plan = plan;
  prepared.kernel = run.module.function(lowering::nmSpmmKernelName(run.call.prefix, plan));
  allowSharedMemory(run.module, prepared.kernel, plan.sharedBytes);
  prepared.shape = launchShape(plan);
  prepared.zeroFrom = lowering::nmSpmmZeroedFrom(problem, plan);
  if (plan.transposeA)
    prepared.transpose = run.module.function(lowering::nmSpmmTransposeKernelName(run.call.prefix));
  if (prepared.zeroFrom < problem.m) {
    prepared.zero = run.module.function(run.call.prefix + "_zero");
    prepared.zero4 = run.module.function(run.call.prefix + "_zero4");
    const long long count = static_cast<long long>(problem.m - prepared.zeroFrom) * problem.n;
    const int sms = cuda::device().multiprocessors;
    prepared.scalarZero.grid[0] = static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535));
    prepared.scalarZero.block[0] = 256;
    // One 16-byte store per thread, at most a wave of 8 blocks per SM (grid-stride beyond).
    prepared.vectorZero.grid[0] = static_cast<unsigned>(std::clamp<long long>((count / 4 + 255) / 256, 1, 8LL * sms));
    prepared.vectorZero.block[0] = 256;
    // One block of two warps per SM: beside a tile kernel's CTA of up to 248
    // registers for 256 threads, so the tile kernel's CTAs start at once.
    prepared.leanZero.grid[0] = static_cast<unsigned>(sms);
    prepared.leanZero.block[0] = 64;
  }
  return prepared;
}

// The host step as it was before the launches were kept (NmSpmmLaunchPath::Uncached).
void launchUncached(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& problem, const NmSpmmPlan& plan,
                    Operands& x) {
  const std::string& prefix = run.call.prefix;
  if (int64_t from = lowering::nmSpmmZeroedFrom(problem, plan); from < x.m) {
    long long count = static_cast<long long>(x.m - from) * x.n;
    float* rows = x.c + from * x.n;
    cuda::LaunchShape zero;
    zero.grid[0] = static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535));
    zero.block[0] = 256;
    cuda::launch(run.module.function(prefix + "_zero"), zero, {&rows, &count});
  }
  void* kernel = run.module.function(lowering::nmSpmmKernelName(prefix, plan));
  if (plan.sharedBytes > 48 * 1024) cuda::allowDynamicSharedMemory(kernel, plan.sharedBytes);
  cuda::LaunchShape shape = launchShape(plan);
  int tilesPerSplit = plan.tilesPerSplit, atomic = lowering::nmSpmmLaunchFlag(plan);
  const float* a =
      plan.transposeA ? transposedA(run, run.module.function(lowering::nmSpmmTransposeKernelName(prefix)), x) : x.a;
  cuda::launch(kernel, shape, {&a, &x.b, &x.d, &x.c, &x.m, &x.n, &x.k, &x.w, &x.q, &tilesPerSplit, &atomic});
}

// A plan's launches by `path` (not Uncached or Graph).
void launchSteps(const GpuIntrinsicRun& run, const PreparedLaunch& prepared, Operands& x, NmSpmmLaunchPath path) {
  cuda::LaunchShape shape = prepared.shape;
  // A's transpose before the zeroing: a tile kernel that overlaps the
  // zeroing kernel reads A before it waits (unless it runs on the
  // transpose: those wait first).
  const float* a = prepared.plan.transposeA ? transposedA(run, prepared.transpose, x) : x.a;
  // The kernel after the transpose overlaps it (it waits for the transpose before it reads it).
  const bool chained = path == NmSpmmLaunchPath::Chained && prepared.plan.transposeA;
  // Split-K and stream-K add into C: its rows from the first tile they add into on are zeroed first.
  if (prepared.zeroFrom < x.m) {
    long long count = static_cast<long long>(x.m - prepared.zeroFrom) * x.n;
    float* rows = x.c + prepared.zeroFrom * x.n;
    void* arguments[] = {&rows, &count};
    switch (path) {
      case NmSpmmLaunchPath::Scalar:
        cuda::launch(prepared.zero, prepared.scalarZero, arguments);
        break;
      case NmSpmmLaunchPath::Memset:
        cuda::zeroFloatsAsync(rows, static_cast<size_t>(count));
        break;
      case NmSpmmLaunchPath::OverlappedLean:
        cuda::launch(prepared.zero4, prepared.leanZero, arguments);
        shape.overlapsPrevious = true;
        break;
      case NmSpmmLaunchPath::Overlapped:
      case NmSpmmLaunchPath::Chained: {
        // The tile kernel then reads A, B' and D before the zeroing kernel
        // has finished: whatever writes them must come before that kernel.
        shape.overlapsPrevious = true;
        // Overlapping the transpose, the zeroing ends after it.
        cuda::LaunchShape zero = prepared.vectorZero;
        zero.overlapsPrevious = chained;
        cuda::launch(prepared.zero4, zero, arguments);
        break;
      }
      default:
        cuda::launch(prepared.zero4, prepared.vectorZero, arguments);
    }
  }
  if (chained) shape.overlapsPrevious = true;
  int tilesPerSplit = prepared.plan.tilesPerSplit, atomic = lowering::nmSpmmLaunchFlag(prepared.plan);
  void* arguments[] = {&a, &x.b, &x.d, &x.c, &x.m, &x.n, &x.k, &x.w, &x.q, &tilesPerSplit, &atomic};
  cuda::launch(prepared.kernel, shape, arguments);
}

// A plan's launches by the current path, one by one (Graph: as Chained).
void launchPlan(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& problem, const PreparedLaunch& prepared,
                Operands& x) {
  switch (const NmSpmmLaunchPath path = nmSpmmLaunchPath()) {
    case NmSpmmLaunchPath::Uncached:
      return launchUncached(run, problem, prepared.plan, x);
    case NmSpmmLaunchPath::Graph:
      return launchSteps(run, prepared, x, NmSpmmLaunchPath::Chained);
    default:
      return launchSteps(run, prepared, x, path);
  }
}

// Whether this driver failed to record a launch graph (the graph path then
// launches one by one).
std::atomic<bool>& graphsUnrecordable() {
  static std::atomic<bool> unrecordable{false};
  return unrecordable;
}

// The scratch buffer a plan's launches on these operands use (null: none).
const float* scratchOf(const GpuIntrinsicRun& run, const PreparedLaunch& prepared, const Operands& x) {
  return prepared.plan.transposeA ? transposeScratch(run, std::max<size_t>(size_t(x.m) * size_t(x.k), 1)) : nullptr;
}

// What a recorded graph of a plan's launches depends on: the module, the
// plan's kernel and launch, the operands' pointers (the transpose's scratch
// buffer among them) and the shape.
using GraphKey = std::tuple<uint64_t, const void*, int64_t, int, int, const float*, const float*, const float*,
                            const int*, float*, int, int, int, unsigned, unsigned, unsigned>;

GraphKey graphKey(const GpuIntrinsicRun& run, const PreparedLaunch& prepared, const Operands& x) {
  return GraphKey{run.module.id(), prepared.kernel, prepared.zeroFrom, prepared.plan.tilesPerSplit,
                  lowering::nmSpmmLaunchFlag(prepared.plan), x.a, scratchOf(run, prepared, x), x.b, x.d, x.c, x.m, x.n,
                  x.k, prepared.shape.grid[0], prepared.shape.grid[1], prepared.shape.grid[2]};
}

// The graphs the calls replay, the most recent first (an empty graph: its
// launches seen once); the last few are kept.
struct KeptGraphs {
  static constexpr size_t kKept = 16;
  std::mutex mutex;
  std::deque<std::pair<GraphKey, cuda::LaunchGraph>> entries;

  // (Callers hold the mutex.)
  auto find(const GraphKey& key) {
    return std::find_if(entries.begin(), entries.end(), [&](const auto& entry) { return entry.first == key; });
  }
  // Puts `graph` first, dropping the oldest past kKept.
  void push(const GraphKey& key, cuda::LaunchGraph graph) {
    entries.emplace_front(key, std::move(graph));
    if (entries.size() > kKept) entries.pop_back();
  }
};

KeptGraphs& keptGraphs() {
  static auto* kept = new KeptGraphs;  // never destroyed: graphs outlive no driver shutdown this way
  return *kept;
}

// Chained's launches of a plan on these operands, recorded into a graph;
// empty where the driver cannot record (said once).
cuda::LaunchGraph recordLaunches(const GpuIntrinsicRun& run, const PreparedLaunch& prepared, Operands& x) {
  scratchOf(run, prepared, x);  // (allocated before the recording, which allows no allocation)
  cuda::LaunchGraph graph([&] { launchSteps(run, prepared, x, NmSpmmLaunchPath::Chained); });
  if (!graph && !graphsUnrecordable().exchange(true))
    std::fprintf(stderr, "tcc: this CUDA driver records no launch graph; the N:M kernels launch one by one\n");
  return graph;
}

// A call's launches of a plan by the current path; NmSpmmLaunchPath::Graph:
// Chained's launches recorded into a graph the second time a call makes
// them with the same module, plan and operands (their pointers, and the
// transpose's scratch buffer), and replayed by one launch from then on (a
// call with operands seen once launches one by one, so operands that
// change from call to call cost no recording; the autotuner hands over the
// graph it timed its choice by); the last few operands seen are kept.
void launchCall(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& problem, const PreparedLaunch& prepared,
                Operands& x) {
  if (nmSpmmLaunchPath() != NmSpmmLaunchPath::Graph || graphsUnrecordable().load(std::memory_order_relaxed))
    return launchPlan(run, problem, prepared, x);
  const GraphKey key = graphKey(run, prepared, x);
  KeptGraphs& kept = keptGraphs();
  auto oneByOne = [&] { launchSteps(run, prepared, x, NmSpmmLaunchPath::Chained); };
  std::lock_guard<std::mutex> lock(kept.mutex);
  auto found = kept.find(key);
  if (found == kept.entries.end()) {
    kept.push(key, cuda::LaunchGraph());
    return oneByOne();
  }
  if (!found->second) {
    found->second = recordLaunches(run, prepared, x);
    if (!found->second) return oneByOne();
  }
  found->second.replay();
}

// Keeps `graph`, recorded for these launches, for the calls to replay.
void keepGraph(const GpuIntrinsicRun& run, const PreparedLaunch& prepared, const Operands& x,
               cuda::LaunchGraph graph) {
  const GraphKey key = graphKey(run, prepared, x);
  KeptGraphs& kept = keptGraphs();
  std::lock_guard<std::mutex> lock(kept.mutex);
  if (auto found = kept.find(key); found != kept.entries.end()) kept.entries.erase(found);
  kept.push(key, std::move(graph));
}

// The plans the autotuner ranked per statement and shape (nmSpmmTunedPlans).
KeptByShape<std::vector<NmSpmmPlan>>& tunedRankings() {
  static KeptByShape<std::vector<NmSpmmPlan>> rankings;
  return rankings;
}

// The fastest candidate of a shape, measured once per module (kernels of
// another statement or program are other functions).
PreparedLaunch tunedPlan(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& shape, Operands& x) {
  std::vector<NmSpmmPlan> candidates = lowering::nmSpmmCandidatePlans(shape, cuda::device().multiprocessors);
  // TCC_NM_SPMM_SKIP=<plan>,... (say _sk,large_mbar_hy): candidates whose
  // label (nmSpmmPlanLabel) is one of them, or ends with one that starts with '_', are
  // not measured (the default plan always is), for comparing kernels in one run.
  static const std::vector<std::string> skipped = [] {
    std::vector<std::string> names;
    const char* text = std::getenv("TCC_NM_SPMM_SKIP");
    std::istringstream list(text ? text : "");
    for (std::string name; std::getline(list, name, ',');)
      if (!name.empty()) names.push_back(name);
    return names;
  }();
  auto skip = [&](const NmSpmmPlan& plan) {
    std::string name = lowering::nmSpmmPlanLabel(plan);
    for (const std::string& entry : skipped)
      if (name == entry || (entry[0] == '_' && name.size() >= entry.size() &&
                            name.compare(name.size() - entry.size(), entry.size(), entry) == 0))
        return true;
    return false;
  };
  candidates.erase(std::remove_if(candidates.begin() + 1, candidates.end(), skip), candidates.end());
  // Cluster plans whose clusters the device cannot hold (too much shared
  // memory per SM, or no cluster launches in this driver) are not measured,
  // nor those that take more waves than their CTAs would without clusters
  // (a GPC's SMs left over by whole clusters stay idle: on an H100, 30
  // clusters of 4 at once, not 33, so 32 tiles of C split 4 ways take two).
  std::string clusterReport;  // (verbose) each cluster plan's clusters at once
  candidates.erase(std::remove_if(candidates.begin() + 1, candidates.end(),
                                  [&](const NmSpmmPlan& plan) {
                                    if (plan.cluster <= 1) return false;
                                    const int clusters = activeClusters(run, plan);
                                    const int64_t count = int64_t(plan.grid[0]) * plan.grid[1],
                                                  slots = int64_t(cuda::device().multiprocessors) *
                                                          lowering::nmSpmmCtasPerSm(lowering::nmSpmmTiles()[plan.tile]);
                                    const int64_t waves = (count * plan.cluster + slots - 1) / slots;
                                    clusterReport += ' ';  // piece by piece (GCC 12's -Wrestrict, below)
                                    clusterReport += std::to_string(plan.cluster);
                                    clusterReport += ':';
                                    clusterReport += std::to_string(clusters);
                                    return clusters < 1 || (count + clusters - 1) / clusters > waves;
                                  }),
                   candidates.end());
  // TCC_NM_SPMM_VERBOSE set: each candidate's time goes to stderr (=2: with
  // its screens, samples and final rounds); TCC_NM_SPMM_TUNER: nm_spmm_tuning.h.
  static const char* verbosity = std::getenv("TCC_NM_SPMM_VERBOSE");
  static const bool verbose = verbosity != nullptr, detailed = verbose && std::strcmp(verbosity, "2") == 0;
  static const NmSpmmTuning tuning = nmSpmmTuningNamed(std::getenv("TCC_NM_SPMM_TUNER"));
  // On the graph path each candidate is timed as a call launches it: by
  // replaying a graph of its launches, recorded when it is first prepared
  // (one launch from the host instead of one to three, and the device's
  // gaps between them those of a graph); the chosen one's graph is kept
  // for the calls, the others are dropped with the tuning.
  const bool graphs = tuning.timeGraphs && nmSpmmLaunchPath() == NmSpmmLaunchPath::Graph;
  std::vector<PreparedLaunch> prepared(candidates.size());
  std::vector<cuda::LaunchGraph> recorded(candidates.size());
  double recordingSeconds = 0;
  auto launchCandidate = [&](size_t i) {
    if (recorded[i])
      recorded[i].replay();
    else
      launchPlan(run, shape, prepared[i], x);
  };
  cuda::EventTimer timer;
  const auto started = std::chrono::steady_clock::now();
  const NmSpmmTuned tuned = tuneNmSpmm(
      candidates.size(),
      [&](size_t i, int launches) {
        if (!prepared[i].kernel) {
          prepared[i] = prepare(run, shape, candidates[i]);
          if (graphs && !graphsUnrecordable().load(std::memory_order_relaxed)) {
            const auto recording = std::chrono::steady_clock::now();
            recorded[i] = recordLaunches(run, prepared[i], x);
            recordingSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - recording).count();
            // A driver that cannot record: every candidate launch by launch, alike.
            if (!recorded[i])
              for (cuda::LaunchGraph& graph : recorded) graph = cuda::LaunchGraph();
          }
        }
        // Untimed; the timed launches queue behind them.
        for (int launch = 0; launch < launches; ++launch) launchCandidate(i);
      },
      [&](size_t i, int launches) {
        timer.start();
        for (int launch = 0; launch < launches; ++launch) launchCandidate(i);
        return timer.stopSeconds() / launches;
      },
      tuning);
  bool timedAsGraphs = false;
  for (const cuda::LaunchGraph& graph : recorded) timedAsGraphs = timedAsGraphs || static_cast<bool>(graph);
  std::vector<NmSpmmPlan> ranking;
  for (size_t i : nmSpmmRanking(tuned)) ranking.push_back(candidates[i]);
  tunedRankings().keep(run.module.id(), run.call.prefix, shape, std::move(ranking));
  if (verbose) {
    const double tuningMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    auto label = [&](size_t i) {
      return lowering::nmSpmmPlanLabel(candidates[i]) + "x" + std::to_string(candidates[i].splits);
    };
    auto milliseconds = [](const std::vector<double>& seconds) {
      std::string text;
      char number[32];
      for (double value : seconds) {
        std::snprintf(number, sizeof number, " %.4f", value * 1e3);
        text += number;
      }
      return text;
    };
    std::string report;
    for (size_t i = 0; i < candidates.size(); ++i) {
      char time[32];
      std::snprintf(time, sizeof time, "=%.4f", tuned.candidates[i].seconds * 1e3);
      report += ' ';  // appended piece by piece: GCC 12 warns (-Wrestrict) on " " + std::string
      report += label(i);
      report += time;
    }
    char timedBy[64] = "launch by launch";
    if (timedAsGraphs) std::snprintf(timedBy, sizeof timedBy, "graphs, recorded in %.1f ms", recordingSeconds * 1e3);
    std::fprintf(stderr,
                 "nm_spmm %lldx%lldx%lld nm(%d,%d,%d) ms:%s -> %s x%d (tuned in %.0f ms, %lld launches, timed as %s)\n",
                 (long long)shape.m, (long long)shape.n, (long long)shape.k, shape.N, shape.M, shape.L, report.c_str(),
                 lowering::nmSpmmPlanLabel(candidates[tuned.chosen]).c_str(), candidates[tuned.chosen].splits,
                 tuningMs, tuned.launches, timedBy);
    for (size_t i = 0; detailed && i < candidates.size(); ++i) {
      const NmSpmmCandidateTimes& times = tuned.candidates[i];
      std::fprintf(stderr, "nm_spmm   %s screens%s samples%s rounds%s\n", label(i).c_str(),
                   milliseconds(times.screens).c_str(), milliseconds(times.samples).c_str(),
                   milliseconds(times.rounds).c_str());
    }
  }
  if (verbose && !clusterReport.empty()) std::fprintf(stderr, "nm_spmm clusters at once (size:count):%s\n", clusterReport.c_str());
  if (recorded[tuned.chosen]) keepGraph(run, prepared[tuned.chosen], x, std::move(recorded[tuned.chosen]));
  return std::move(prepared[tuned.chosen]);
}

// The launch a call of the statement makes for its shape: chosen (and
// prepared) by the first call of that shape in the module, kept for the
// later ones.
const PreparedLaunch& launchFor(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& shape, Operands& x) {
  static KeptByShape<PreparedLaunch> kept;
  if (const PreparedLaunch* found = kept.find(run.module.id(), run.call.prefix, shape)) return *found;
  // TCC_NM_SPMM_TILE=<plan> (say xwide_deep_mbar, wide_packed or large_mbar_hy): that
  // candidate (unsplit where the shape has one) instead of the autotuner's
  // choice, for measuring and profiling one kernel; <plan>x<splits> (say
  // tallwide_deepx4, as the autotuner's report names it): the candidate
  // split that many ways. Shapes without it are planned as usual.
  // (Read when a module first plans the shape: a test forces one plan after
  // another, each in a module of its own.)
  const char* forced = std::getenv("TCC_NM_SPMM_TILE");
  std::optional<NmSpmmPlan> chosen;
  if (forced && *forced) {
    for (const auto& candidate : lowering::nmSpmmCandidatePlans(shape, cuda::device().multiprocessors))
      if (lowering::nmSpmmPlanLabel(candidate) == forced ||
          lowering::nmSpmmPlanLabel(candidate) + "x" + std::to_string(candidate.splits) == forced) {
        chosen = candidate;
        break;
      }
  }
  double flops = 2.0 * shape.m * shape.n * shape.k * shape.N / shape.M;
  PreparedLaunch launch;
  if (chosen)
    launch = prepare(run, shape, *chosen);
  else if (flops >= lowering::kNmSpmmAutotuneFlops)
    launch = tunedPlan(run, shape, x);
  else
    launch = prepare(run, shape, lowering::nmSpmmDefaultPlan(shape, cuda::device().multiprocessors));
  return kept.keep(run.module.id(), run.call.prefix, shape, std::move(launch));
}

// The call's shape and operands; a status other than 0 (bad shapes, or
// nothing to compute: -1) where there is nothing to launch.
int32_t operandsOf(const GpuIntrinsicRun& run, lowering::NmSpmmShape& shape, Operands& x) {
  const auto& op = *run.call.op;
  tcc_tensor* C = run.tensors.at(op.tensors[0]);
  tcc_tensor* A = run.tensors.at(op.tensors[1]);
  tcc_tensor* B = run.tensors.at(op.tensors[2]);
  auto argument = [&](size_t index) { return static_cast<int>(op.args.at(index).as<ir::imp::IntImm>()->value); };
  // A's dims are in mode order (m, k) whichever way it is stored; the
  // fourth argument says it is stored k-major, the fifth that the
  // statement runs on tensor cores (tensorcore()).
  shape = lowering::NmSpmmShape{A->dims[0], B->dims[1], A->dims[1], argument(0), argument(1), argument(2),
                                op.args.size() > 3 && argument(3) != 0, op.args.size() > 4 && argument(4) != 0};
  if (B->dims[0] != A->dims[1] || C->dims[0] != A->dims[0] || C->dims[1] != B->dims[1]) return 3;
  if (shape.m == 0 || shape.n == 0) return -1;
  x = Operands{static_cast<const float*>(A->vals), static_cast<const float*>(B->vals), B->levels[1].crd,
               static_cast<float*>(C->vals), A->dims[0], B->dims[1], A->dims[1], 0, 0};
  x.w = static_cast<int>((shape.k + shape.M - 1) / shape.M * shape.N);
  x.q = static_cast<int>((shape.n + shape.L - 1) / shape.L);
  return 0;
}

}  // namespace

int32_t runNmSpmm(const GpuIntrinsicRun& run) {
  lowering::NmSpmmShape shape;
  Operands x{};
  if (int32_t status = operandsOf(run, shape, x)) return status < 0 ? 0 : status;
  launchCall(run, shape, launchFor(run, shape, x), x);
  return 0;
}

int32_t runNmSpmmPlan(const GpuIntrinsicRun& run, const lowering::NmSpmmPlan& plan) {
  lowering::NmSpmmShape shape;
  Operands x{};
  if (int32_t status = operandsOf(run, shape, x)) return status < 0 ? 0 : status;
  launchCall(run, shape, prepare(run, shape, plan), x);
  return 0;
}

std::vector<lowering::NmSpmmPlan> nmSpmmTunedPlans(const GpuIntrinsicRun& run) {
  lowering::NmSpmmShape shape;
  Operands x{};
  if (operandsOf(run, shape, x)) return {};
  const std::vector<NmSpmmPlan>* ranking = tunedRankings().find(run.module.id(), run.call.prefix, shape);
  return ranking ? *ranking : std::vector<NmSpmmPlan>{};
}

void setNmSpmmLaunchPath(NmSpmmLaunchPath path) { launchPathSetting() = static_cast<int>(path); }

NmSpmmLaunchPath nmSpmmLaunchPath() { return static_cast<NmSpmmLaunchPath>(launchPathSetting().load()); }

const char* nmSpmmLaunchPathName(NmSpmmLaunchPath path) {
  for (const auto& [entry, name] : kLaunchPathNames)
    if (entry == path) return name;
  return "?";
}

std::optional<NmSpmmLaunchPath> nmSpmmLaunchPathNamed(const std::string& name) {
  for (const auto& [entry, text] : kLaunchPathNames)
    if (name == text) return entry;
  return std::nullopt;
}

}  // namespace tcc::detail
