#include "gpu_intrinsic_nm_spmm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tcc/lowering/nm_spmm.h"

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

cuda::LaunchShape launchShape(const NmSpmmPlan& plan) {
  cuda::LaunchShape shape;
  std::copy(plan.grid, plan.grid + 3, shape.grid);
  shape.block[0] = static_cast<unsigned>(plan.threads);
  shape.sharedBytes = static_cast<unsigned>(plan.sharedBytes);
  shape.cluster[2] = static_cast<unsigned>(plan.cluster);
  return shape;
}

// How many of a cluster plan's clusters the device holds at once (0: none
// fit, or this driver has no cluster launches).
int activeClusters(const GpuIntrinsicRun& run, const NmSpmmPlan& plan) {
  void* kernel = run.module.function(lowering::nmSpmmKernelName(run.call.prefix, plan));
  if (plan.sharedBytes > 48 * 1024) cuda::allowDynamicSharedMemory(kernel, plan.sharedBytes);
  return cuda::maxActiveClusters(kernel, launchShape(plan));
}

void launchPlan(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& problem, const NmSpmmPlan& plan,
                Operands& x) {
  const std::string& prefix = run.call.prefix;
  // Split-K and stream-K add into C: its rows from the first tile they add into on are zeroed first.
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
  cuda::launch(kernel, shape, {&x.a, &x.b, &x.d, &x.c, &x.m, &x.n, &x.k, &x.w, &x.q, &tilesPerSplit, &atomic});
}

// The fastest candidate of a shape, measured once per module (kernels of
// another statement or program are other functions).
NmSpmmPlan tunedPlan(const GpuIntrinsicRun& run, const lowering::NmSpmmShape& shape, Operands& x) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, std::string, int64_t, int64_t, int64_t, int, int, int>, NmSpmmPlan> chosen;
  auto key = std::make_tuple(static_cast<const void*>(&run.module), run.call.prefix, shape.m, shape.n, shape.k, shape.N,
                             shape.M, shape.L);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = chosen.find(key); found != chosen.end()) return found->second;
  }
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
  NmSpmmPlan best = candidates.front();
  double bestSeconds = std::numeric_limits<double>::infinity();
  cuda::EventTimer timer;
  // TCC_NM_SPMM_VERBOSE set: each candidate's time goes to stderr.
  static const bool verbose = std::getenv("TCC_NM_SPMM_VERBOSE") != nullptr;
  std::string report;
  for (const auto& plan : candidates) {
    launchPlan(run, shape, plan, x);  // warm-up (and the shared-memory opt-in)
    // One timed launch sets how many launches a sample takes (about 0.2 ms
    // of work, so that short kernels are not timed by the events' own
    // resolution); the candidate's time is the median of five samples, or
    // of three where a launch takes over a millisecond (steadier). A
    // candidate whose first launch is 25% slower than the best so far is
    // not sampled further.
    timer.start();
    launchPlan(run, shape, plan, x);
    double once = timer.stopSeconds();
    double seconds = once;
    if (once < 1.25 * bestSeconds) {
      int batch = static_cast<int>(std::clamp(2e-4 / std::max(once, 1e-7), 1.0, 32.0));
      int count = once > 1e-3 ? 3 : 5;
      double samples[5];
      samples[0] = once;
      for (int i = once > 1e-3 ? 1 : 0; i < count; ++i) {
        timer.start();
        for (int launch = 0; launch < batch; ++launch) launchPlan(run, shape, plan, x);
        samples[i] = timer.stopSeconds() / batch;
      }
      std::sort(samples, samples + count);
      seconds = samples[count / 2];
    }
    if (verbose) {  // appended piece by piece: GCC 12 warns (-Wrestrict) on " " + std::string
      report += ' ';
      report += lowering::nmSpmmPlanLabel(plan);
      report += 'x';
      report += std::to_string(plan.splits);
      report += '=';
      report += std::to_string(seconds * 1e3).substr(0, 6);
    }
    if (seconds < bestSeconds) bestSeconds = seconds, best = plan;
  }
  if (verbose)
    std::fprintf(stderr, "nm_spmm %lldx%lldx%lld nm(%d,%d,%d) ms:%s -> %s x%d\n", (long long)shape.m,
                 (long long)shape.n, (long long)shape.k, shape.N, shape.M, shape.L, report.c_str(),
                 lowering::nmSpmmPlanLabel(best).c_str(), best.splits);
  if (verbose && !clusterReport.empty()) std::fprintf(stderr, "nm_spmm clusters at once (size:count):%s\n", clusterReport.c_str());
  std::lock_guard<std::mutex> lock(mutex);
  chosen.emplace(key, best);
  return best;
}

}  // namespace

int32_t runNmSpmm(const GpuIntrinsicRun& run) {
  const auto& op = *run.call.op;
  tcc_tensor* C = run.tensors.at(op.tensors[0]);
  tcc_tensor* A = run.tensors.at(op.tensors[1]);
  tcc_tensor* B = run.tensors.at(op.tensors[2]);
  auto argument = [&](size_t index) { return static_cast<int>(op.args.at(index).as<ir::imp::IntImm>()->value); };
  // A's dims are in mode order (m, k) whichever way it is stored; the
  // fourth argument says it is stored k-major.
  lowering::NmSpmmShape shape{A->dims[0], B->dims[1], A->dims[1], argument(0), argument(1), argument(2),
                              op.args.size() > 3 && argument(3) != 0};
  if (B->dims[0] != A->dims[1] || C->dims[0] != A->dims[0] || C->dims[1] != B->dims[1]) return 3;
  if (shape.m == 0 || shape.n == 0) return 0;
  Operands x{static_cast<const float*>(A->vals), static_cast<const float*>(B->vals), B->levels[1].crd,
             static_cast<float*>(C->vals), A->dims[0], B->dims[1], A->dims[1], 0, 0};
  x.w = static_cast<int>((shape.k + shape.M - 1) / shape.M * shape.N);
  x.q = static_cast<int>((shape.n + shape.L - 1) / shape.L);
  // TCC_NM_SPMM_TILE=<plan> (say xwide_deep_mbar, wide_packed or large_mbar_hy): that
  // candidate (unsplit where the shape has one) instead of the autotuner's
  // choice, for measuring and profiling one kernel; <plan>x<splits> (say
  // tallwide_deepx4, as the autotuner's report names it): the candidate
  // split that many ways. Shapes without it are planned as usual.
  static const char* forced = std::getenv("TCC_NM_SPMM_TILE");
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
  NmSpmmPlan plan = chosen                                     ? *chosen
                    : flops >= lowering::kNmSpmmAutotuneFlops ? tunedPlan(run, shape, x)
                                                              : lowering::nmSpmmDefaultPlan(shape, cuda::device().multiprocessors);
  launchPlan(run, shape, plan, x);
  return 0;
}

}  // namespace tcc::detail
