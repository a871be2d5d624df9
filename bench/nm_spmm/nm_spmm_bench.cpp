// The N:M SpMM intrinsic (C = A * B, B in nm(N,M,L), float32) against
// cuBLAS SGEMM on the dense equivalent of the pruned B (CUBLAS_PEDANTIC_MATH:
// no TF32), in the same run, on the N:M SpMM paper's shapes: m in {256, 512,
// 1024, 2048, 4096} x 20 (n, k) pairs of Llama linear layers, at 50, 62.5,
// 75 and 87.5% sparsity (M = L = 32), and 4096^3 with other L.
//
//   tcc_bench_nm_spmm [--quick] [--csv FILE] [--svg FILE] [--repeats R] [--budget SECONDS]
//                     [--shape MxNxK]... [--nm N]... [--a row|kmajor|both] [--launch PATH,...]
//                     [--passes P] [--no-other-l] [--alternate] [--runner-up]
//
// --a: A's layout (row-major by default; kmajor: A declared {dense, dense}
// order (1,0), stored column by column, and cuBLAS given the same buffer
// with its transpose flag; both: each measurement in either layout).
// --launch: the host step's launch paths to time against each other
// (uncached, scalar, vector, memset, overlapped, lean; see
// gpu_intrinsic_nm_spmm.h): each shape's tcc runs alternate between them
// (one row each, the same plan and cuBLAS time), and each path's result is
// checked on a C filled with NaN before its run; without it, the
// library's default path (or TCC_NM_SPMM_LAUNCH's).
// --host-costs MxNxK: instead, the host's share of a call at that shape,
// step by step (the library call, the intrinsic's host step alone, the
// driver's launches), for each sparsity and launch path.
// --quick: m in {256, 1024, 4096} x 4 pairs. --shape: that shape alone (no
// other L; repeatable: those shapes); --nm N: only the sparsity N:32 (repeatable). TCC_NM_SPMM_TILE
// (see the intrinsic's host step) times one kernel instead of the autotuned plan; TCC_NM_SPMM_SKIP
// (kernel suffixes, comma-separated) leaves those kernels out of the autotuner's candidates. --budget: no shape is started
// after that many seconds of measuring (shapes go in a strided order, so a
// cut leaves an even sample; the summary says how many were left out).
// --passes P: after the sweep, P - 1 more sweeps of the same shapes, on the
// plans the first chose (no tuning), each row marked with its pass, and the
// summary per pass, with each later pass's times over the first's (a plan
// that is slow in both passes is the plan's doing; a shape slow in one pass
// only, the run's state then). --no-other-l: 4096^3 at other L left out.
// Each row gives the shape's first call (the autotuner's measurements).
// cuBLAS's timed runs come after tcc's, at a shape's first sparsity only
// (the later sparsities use that time); --alternate: tcc's and cuBLAS's
// runs in turns, cuBLAS timed at every sparsity (round 32 measured it
// against this order: tcc's calls after cuBLAS's took longer on the host,
// and two sweeps agreed no better; bench/nm_spmm/RESULTS.md).
// tcc's side is the library's own path: the program is lowered by tcc, its
// kernels compiled by NVRTC, and the statement's host step (the intrinsic's
// planner and autotuner) launches them on device tensors. Inputs are random
// (uniform in [-1, 1]; the indices a random N of M per window and group),
// made on the device. Each shape: one warm-up (the autotuner's measurements)
// then R timed runs of each, CUDA events, medians: each run is one library
// call (tcc) or one cublasSgemm between its own two events, so both carry
// their host work; "host" is the call's own time on the host (median).
// That is the scored time ("wall"). After those runs, R more of each time
// the device alone ("device"): each call queued behind a busy kernel of
// 100 us (one block spinning on the clock) launched first, so that the
// host's work for the call is done while that kernel runs, with the events
// right around the call; a run whose host work outlasted the busy kernel
// is counted as late (its time may hold part of the host's). The summary
// gives the medians of both speedups.
// --runner-up: then the autotuner's choice and its runner-up (the next of
// its ranking: nmSpmmTunedPlans) timed against each other in the bench's
// own steady state: three turns each, in turn, each turn about 2 ms of that
// plan's calls untimed, then about 1 ms of them back to back between two
// events (device time per call); the runner-up's result is checked too.
// Every result is checked against cuBLAS's: max |C - C_ref| / max |C_ref|.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gpu_intrinsic_nm_spmm.h"
#include "gpu_launch.h"
#include "tcc/runtime/cuda.h"
#include "tcc/tcc.h"
#include "../common/cuda_check.h"
#include "../common/cublas_check.h"
#include "../common/stats.h"

namespace {

constexpr double kFp32Peak = 64.1e12;  // FP32 FMA ceiling measured on this H100

// Data on the device: random values, random N-of-M indices, the pruned B
// scattered densely for cuBLAS, and the error of a result.
constexpr const char* kHelpers = R"(
__device__ unsigned mix(unsigned long long x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return (unsigned)x;
}
extern "C" __global__ void fill_uniform(float* x, long long count, unsigned seed) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < count; e += (long long)gridDim.x * blockDim.x)
    x[e] = (mix(((unsigned long long)seed << 40) ^ e) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}
// For each window and column group, N distinct offsets of M, increasing.
extern "C" __global__ void random_indices(int* D, long long windows, int q, int N, int M, unsigned seed) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < windows * q;
       e += (long long)gridDim.x * blockDim.x) {
    long long window = e / q; int g = (int)(e % q);
    unsigned long long chosen = 0;  // M <= 64
    int picked = 0; unsigned long long h = e * 0x9e3779b97f4a7c15ULL + seed;
    while (picked < N) {
      int r = mix(h++) % M;
      if (!(chosen >> r & 1ULL)) { chosen |= 1ULL << r; ++picked; }
    }
    int t = 0;
    for (int r = 0; r < M; ++r)
      if (chosen >> r & 1ULL) D[(window * N + t++) * q + g] = r;
  }
}
extern "C" __global__ void scatter_dense(const float* Bp, const int* D, float* Bd, int k, int n, int q, int N, int M,
                                         int L, long long w) {
  long long np = (long long)q * L;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < w * n;
       e += (long long)gridDim.x * blockDim.x) {
    long long u = e / n; int j = (int)(e % n);
    long long row = (u / N) * M + D[u * q + j / L];
    if (row < k) Bd[row * n + j] = Bp[u * np + j];
  }
}
// Busy for `nanoseconds` on one block: the device's work that a timed call
// is queued behind, so that the host's work for the call overlaps it.
extern "C" __global__ void spin(unsigned long long nanoseconds) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}
// Kernels that do nothing, for the host cost of a launch (--host-costs).
extern "C" __global__ void empty2(float*, long long) {}
extern "C" __global__ void empty11(const float*, const float*, const int*, float*, int, int, int, int, int, int, int) {}
extern "C" __global__ void max_abs(const float* c, const float* ref, long long count, unsigned* out) {
  float diff = 0.f, scale = 0.f;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < count; e += (long long)gridDim.x * blockDim.x) {
    float d = fabsf(c[e] - ref[e]);
    diff = fmaxf(diff, d != d ? 3.0e38f : d);
    scale = fmaxf(scale, fabsf(ref[e]));
  }
  atomicMax(out, __float_as_uint(diff));
  atomicMax(out + 1, __float_as_uint(scale));
}
)";

struct Helpers {
  tcc::rt::cuda::Module module;
  explicit Helpers(const std::string& architecture)
      : module(tcc::rt::cuda::compileToCubin(kHelpers, architecture, "nm_bench_helpers.cu")) {}
  void run(const char* name, std::vector<void*> arguments, long long work) {
    tcc::rt::cuda::LaunchShape shape;
    shape.grid[0] = static_cast<unsigned>(std::clamp<long long>((work + 255) / 256, 1, 65535));
    shape.block[0] = 256;
    tcc::rt::cuda::launch(module.function(name), shape, std::move(arguments));
  }
  // One warp busy for `seconds`.
  void spin(double seconds) {
    unsigned long long nanoseconds = static_cast<unsigned long long>(seconds * 1e9);
    tcc::rt::cuda::LaunchShape shape;
    shape.block[0] = 32;
    void* arguments[] = {&nanoseconds};
    tcc::rt::cuda::launch(module.function("spin"), shape, arguments);
  }
};

struct Shape {
  int m, n, k;
};
struct Sparsity {
  int N, M, L;
  double value() const { return 1.0 - static_cast<double>(N) / M; }
};

struct Row {
  Shape shape;
  Sparsity sparsity;
  bool aKMajor;
  double tccSeconds, cublasSeconds, error;
  std::string launch;  // the host step's launch path
  double hostSeconds;  // the library call's time on the host (median)
  double firstCallSeconds = 0;  // the shape's first call (the autotuner's measurements; none in a later pass)
  int pass = 1;
  // The device alone (the calls queued behind a busy kernel): medians, and
  // how many of tcc's and cuBLAS's runs had host work that outlasted it.
  double tccDeviceSeconds = 0, cublasDeviceSeconds = 0;
  int lateRuns = 0;
  std::string plan, runnerUp;  // the autotuner's choice and runner-up (empty: not tuned)
  // --runner-up: device time per call of each, in turns in the bench's steady state (0: not timed).
  double recheckChosenSeconds = 0, recheckRunnerUpSeconds = 0;
  double speedup() const { return cublasSeconds / tccSeconds; }
  double deviceSpeedup() const { return cublasDeviceSeconds / tccDeviceSeconds; }
  bool rechecked() const { return recheckChosenSeconds > 0 && recheckRunnerUpSeconds > 0; }
  double runnerUpOverChosen() const { return recheckRunnerUpSeconds / recheckChosenSeconds; }
  double sparseFlops() const { return 2.0 * shape.m * shape.n * shape.k * sparsity.N / sparsity.M; }
};

// --tensor-cores: the statements are scheduled tensorcore() (the 3xTF32 tiles).
bool scheduledOnTensorCores = false;

std::string programText(const Sparsity& s, bool aKMajor) {
  return std::string("tensor A(I, K) : ") + (aKMajor ? "{dense, dense} order (1, 0)" : "dense") +
         " of float32\ntensor B(K, J) : nm(" + std::to_string(s.N) + ", " + std::to_string(s.M) +
         ", " + std::to_string(s.L) + ") of float32\ntensor C(I, J) : dense of float32\nC(i, j) = A(i, k) * B(k, j)\n" +
         (scheduledOnTensorCores ? "schedule {\n  tensorcore()\n}\n" : "") + "target cuda\n";
}

tcc_tensor denseView(float* values, int rows, int cols) {
  tcc_tensor t{};
  t.order = 2;
  t.datatype = TCC_FLOAT32;
  t.dims[0] = rows;
  t.dims[1] = cols;
  t.mode_ordering[0] = 0;
  t.mode_ordering[1] = 1;
  t.levels[0].kind = TCC_LEVEL_DENSE;
  t.levels[0].size = rows;
  t.levels[1].kind = TCC_LEVEL_DENSE;
  t.levels[1].size = cols;
  t.vals = values;
  t.vals_size = static_cast<long long>(rows) * cols;
  return t;
}

// A (rows x cols) stored column by column: {dense, dense} order (1,0).
tcc_tensor kMajorView(float* values, int rows, int cols) {
  tcc_tensor t = denseView(values, rows, cols);
  t.mode_ordering[0] = 1;
  t.mode_ordering[1] = 0;
  t.levels[0].size = cols;
  t.levels[1].size = rows;
  return t;
}

tcc_tensor nmView(float* values, int* indices, int k, int n, const Sparsity& s) {
  tcc_tensor t = denseView(values, k, n);
  long long w = (k + s.M - 1) / s.M * static_cast<long long>(s.N), q = (n + s.L - 1) / s.L;
  t.levels[1].kind = TCC_LEVEL_NM;
  t.levels[1].crd = indices;
  t.levels[1].nm_n = s.N;
  t.levels[1].nm_m = s.M;
  t.levels[1].nm_l = s.L;
  t.vals_size = w * q * s.L;
  return t;
}

class Bench {
 public:
  static constexpr double kSpinSeconds = 100e-6;  // the busy kernel before a device-only run

  Bench(int repeats, bool alternate, bool runnerUp, std::vector<tcc::detail::NmSpmmLaunchPath> paths, size_t maxA,
        size_t maxB, size_t maxC)
      : repeats_(repeats),
        alternate_(alternate),
        runnerUp_(runnerUp),
        paths_(std::move(paths)),
        architecture_(tcc::rt::cuda::device().architecture()),
        helpers_(architecture_) {
    CHECK_CUDA(cudaMalloc(&a_, sizeof(float) * maxA));
    CHECK_CUDA(cudaMalloc(&bPruned_, sizeof(float) * maxB));
    CHECK_CUDA(cudaMalloc(&bDense_, sizeof(float) * maxB * 2));
    CHECK_CUDA(cudaMalloc(&d_, sizeof(int) * maxB));
    CHECK_CUDA(cudaMalloc(&c_, sizeof(float) * maxC));
    CHECK_CUDA(cudaMalloc(&cRef_, sizeof(float) * maxC));
    CHECK_CUDA(cudaMalloc(&error_, sizeof(unsigned) * 2));
    CHECK_CUBLAS(cublasCreate(&cublas_));
    CHECK_CUBLAS(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH));
    CHECK_CUDA(cudaEventCreate(&start_));
    CHECK_CUDA(cudaEventCreate(&stop_));
  }

  // Compiles the program of one N, M, L and A layout (NVRTC, once).
  const tcc::Lowered& program(const Sparsity& s, bool aKMajor) {
    std::string key = programText(s, aKMajor);
    auto found = programs_.find(key);
    if (found != programs_.end()) return found->second.lowered;
    Compiled& compiled = programs_[key];
    auto start = std::chrono::steady_clock::now();
    compiled.lowered = tcc::lowerProgram(tcc::Program::fromText(key));
    compiled.module = tcc::detail::loadCudaKernels(compiled.lowered, architecture_, true);
    std::fprintf(stderr, "compiled nm(%d,%d,%d) in %.1f s\n", s.N, s.M, s.L,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return compiled.lowered;
  }

  // Compiles the programs of several N, M, L at once: lowered one after the
  // other, their kernels compiled by NVRTC on threads of their own (each
  // program's kernels take seconds to compile; the cubins go to the cache
  // that loading them here, on the thread that holds the context, reads).
  void programs(const std::vector<Sparsity>& sparsities, const std::vector<bool>& layouts) {
    std::vector<std::pair<Sparsity, Compiled*>> fresh;
    for (bool aKMajor : layouts)
    for (const Sparsity& s : sparsities) {
      std::string key = programText(s, aKMajor);
      if (programs_.count(key)) continue;
      Compiled& compiled = programs_[key];
      compiled.lowered = tcc::lowerProgram(tcc::Program::fromText(key));
      fresh.emplace_back(s, &compiled);
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> failures(fresh.size());
    for (size_t i = 0; i < fresh.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          tcc::detail::cubinFor(fresh[i].second->lowered.cudaKernels, architecture_, true);
        } catch (...) {
          failures[i] = std::current_exception();
        }
      });
    for (auto& thread : threads) thread.join();
    for (auto& failure : failures)
      if (failure) std::rethrow_exception(failure);
    for (auto& entry : fresh)
      entry.second->module = tcc::detail::loadCudaKernels(entry.second->lowered, architecture_, true);
    std::fprintf(stderr, "compiled %zu programs in %.1f s\n", fresh.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  // aKMajor: the same random A buffer read as A stored k-major (m x k with
  // A(i, kk) at kk * m + i), by tcc and by cuBLAS.
  std::vector<Row> measure(const Shape& shape, const Sparsity& s, bool aKMajor, bool timeCublas) {
    const Compiled& compiled = (program(s, aKMajor), programs_.at(programText(s, aKMajor)));
    long long windows = (shape.k + s.M - 1) / s.M, q = (shape.n + s.L - 1) / s.L, w = windows * s.N;
    long long np = q * s.L;
    unsigned seed = static_cast<unsigned>(shape.m * 31 + shape.n * 17 + shape.k * 7 + s.N);
    long long countA = static_cast<long long>(shape.m) * shape.k, countB = w * np, countC = (long long)shape.m * shape.n;
    helpers_.run("fill_uniform", {&a_, &countA, &seed}, countA);
    unsigned seedB = seed + 1, seedD = seed + 2;
    helpers_.run("fill_uniform", {&bPruned_, &countB, &seedB}, countB);
    int qi = static_cast<int>(q), N = s.N, M = s.M, L = s.L, k = shape.k, n = shape.n;
    helpers_.run("random_indices", {&d_, &windows, &qi, &N, &M, &seedD}, windows * q);
    CHECK_CUDA(cudaMemset(bDense_, 0, sizeof(float) * shape.k * static_cast<size_t>(shape.n)));
    helpers_.run("scatter_dense", {&bPruned_, &d_, &bDense_, &k, &n, &qi, &N, &M, &L, &w}, w * shape.n);

    tcc_tensor a = aKMajor ? kMajorView(a_, shape.m, shape.k) : denseView(a_, shape.m, shape.k),
               b = nmView(bPruned_, d_, shape.k, shape.n, s),
               c = denseView(c_, shape.m, shape.n);
    std::map<std::string, tcc_tensor*> byName = {{"A", &a}, {"B", &b}, {"C", &c}};
    std::vector<tcc_tensor*> tensors;  // in the order of the statement's parameters
    for (const auto& parameter : compiled.lowered.statements[0].parameters) tensors.push_back(byName.at(parameter.name()));
    const auto& function = compiled.lowered.gpuFunctions[0];
    auto runTcc = [&] {
      if (int status = tcc::detail::launchGpuFunction(function, *compiled.module, tensors)) {
        std::fprintf(stderr, "tcc's kernel failed with status %d\n", status);
        std::exit(1);
      }
    };
    auto runCublas = [&] {
      float one = 1, zero = 0;
      // C^T (n x m, column-major) = B^T A^T: A row-major is A^T column-major
      // (k x m, leading dimension k); A k-major is A column-major (m x k,
      // leading dimension m), transposed by the flag.
      if (aKMajor)
        CHECK_CUBLAS(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_T, shape.n, shape.m, shape.k, &one, bDense_, shape.n,
                                 a_, shape.m, &zero, cRef_, shape.n));
      else
        CHECK_CUBLAS(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, shape.n, shape.m, shape.k, &one, bDense_, shape.n,
                                 a_, shape.k, &zero, cRef_, shape.n));
    };
    // Runs `run` between two events: (device seconds, host seconds).
    auto timeOnce = [&](auto&& run) {
      CHECK_CUDA(cudaEventRecord(start_));
      auto host = std::chrono::steady_clock::now();
      run();
      double hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - host).count();
      CHECK_CUDA(cudaEventRecord(stop_));
      CHECK_CUDA(cudaEventSynchronize(stop_));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
      return std::make_pair(ms * 1e-3, hostSeconds);
    };
    // Runs `run` queued behind the busy kernel, the events right around it:
    // (device seconds, whether the host's work outlasted the busy kernel).
    auto timeDevice = [&](auto&& run) {
      auto host = std::chrono::steady_clock::now();
      helpers_.spin(kSpinSeconds);
      CHECK_CUDA(cudaEventRecord(start_));
      run();
      CHECK_CUDA(cudaEventRecord(stop_));
      const bool late = std::chrono::duration<double>(std::chrono::steady_clock::now() - host).count() > kSpinSeconds;
      CHECK_CUDA(cudaEventSynchronize(stop_));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
      return std::make_pair(ms * 1e-3, late);
    };
    tcc::detail::setNmSpmmLaunchPath(paths_[0]);
    CHECK_CUDA(cudaDeviceSynchronize());
    const auto firstCall = std::chrono::steady_clock::now();
    runTcc();  // warm-up: the autotuner measures its candidates here (in the shape's first pass)
    CHECK_CUDA(cudaDeviceSynchronize());
    const double firstCallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - firstCall).count();
    runCublas();
    CHECK_CUDA(cudaDeviceSynchronize());
    // The paths' runs alternate (path 0, 1, ..., 0, 1, ...), so that drift
    // in the GPU's clock falls on all of them alike. alternate_: cuBLAS's
    // runs too (path 0, 1, ..., cuBLAS, path 0, ...), at every sparsity;
    // else cuBLAS's runs come after tcc's, at a shape's first sparsity only.
    std::vector<std::vector<double>> seconds(paths_.size()), hostSeconds(paths_.size());
    for (size_t p = 0; p < paths_.size(); ++p) {  // each path once untimed (its first launches)
      tcc::detail::setNmSpmmLaunchPath(paths_[p]);
      runTcc();
    }
    std::string key = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k) +
                      (aKMajor ? " k-major" : "");
    const bool timeCublasAfter = !alternate_ && (timeCublas || !cublasSeconds_.count(key));
    std::vector<double> cublasTimes;
    for (int r = 0; r < repeats_; ++r) {
      for (size_t p = 0; p < paths_.size(); ++p) {
        tcc::detail::setNmSpmmLaunchPath(paths_[p]);
        auto [device, host] = timeOnce(runTcc);
        seconds[p].push_back(device);
        hostSeconds[p].push_back(host);
      }
      if (alternate_) cublasTimes.push_back(timeOnce(runCublas).first);
    }
    if (timeCublasAfter)
      for (int r = 0; r < repeats_; ++r) cublasTimes.push_back(timeOnce(runCublas).first);
    if (!cublasTimes.empty()) cublasSeconds_[key] = median(cublasTimes);
    // The device alone, after the scored runs (which stay as they were),
    // in the same order: tcc's paths in turn (and cuBLAS with them when
    // alternating), then cuBLAS's where its runs came after tcc's.
    std::vector<std::vector<double>> deviceSeconds(paths_.size());
    std::vector<int> tccLate(paths_.size(), 0);
    std::vector<double> cublasDeviceTimes;
    int cublasLate = 0;
    for (int r = 0; r < repeats_; ++r) {
      for (size_t p = 0; p < paths_.size(); ++p) {
        tcc::detail::setNmSpmmLaunchPath(paths_[p]);
        auto [device, late] = timeDevice(runTcc);
        deviceSeconds[p].push_back(device);
        tccLate[p] += late;
      }
      if (alternate_) {
        auto [device, late] = timeDevice(runCublas);
        cublasDeviceTimes.push_back(device);
        cublasLate += late;
      }
    }
    if (timeCublasAfter)
      for (int r = 0; r < repeats_; ++r) {
        auto [device, late] = timeDevice(runCublas);
        cublasDeviceTimes.push_back(device);
        cublasLate += late;
      }
    if (!cublasDeviceTimes.empty()) {
      cublasDeviceSeconds_[key] = median(cublasDeviceTimes);
      cublasLateRuns_[key] = cublasLate;
    }
    tcc::detail::setNmSpmmLaunchPath(paths_[0]);
    // The autotuner's ranking of the shape's plans (empty: not tuned).
    const tcc::detail::GpuIntrinsicRun intrinsic{function.intrinsics.at(0), *compiled.module, byName};
    const std::vector<tcc::lowering::NmSpmmPlan> ranked = tcc::detail::nmSpmmTunedPlans(intrinsic);
    auto label = [](const tcc::lowering::NmSpmmPlan& plan) {
      return tcc::lowering::nmSpmmPlanLabel(plan) + "x" + std::to_string(plan.splits);
    };
    // --runner-up: the choice and the runner-up in turns, each turn a lead-in
    // of its own calls, then a batch of them between two events.
    double recheckChosen = 0, recheckRunnerUp = 0, runnerUpError = 0;
    if (runnerUp_ && ranked.size() >= 2) {
      auto runPlan = [&](const tcc::lowering::NmSpmmPlan& plan) {
        if (int status = tcc::detail::runNmSpmmPlan(intrinsic, plan)) {
          std::fprintf(stderr, "tcc's plan %s failed with status %d\n", label(plan).c_str(), status);
          std::exit(1);
        }
      };
      const double perCall = median(seconds[0]);
      const int lead = static_cast<int>(std::clamp(std::ceil(2e-3 / perCall), 1.0, 200.0));
      const int batch = static_cast<int>(std::clamp(std::ceil(1e-3 / perCall), 1.0, 64.0));
      std::vector<double> turns[2];
      for (int plan = 0; plan < 2; ++plan)  // (by the graph path: launched one by one, then recorded)
        for (int call = 0; call < 2; ++call) runPlan(ranked[plan]);
      for (int turn = 0; turn < 6; ++turn) {
        const tcc::lowering::NmSpmmPlan& plan = ranked[turn % 2];
        for (int call = 0; call < lead; ++call) runPlan(plan);
        CHECK_CUDA(cudaEventRecord(start_));
        for (int call = 0; call < batch; ++call) runPlan(plan);
        CHECK_CUDA(cudaEventRecord(stop_));
        CHECK_CUDA(cudaEventSynchronize(stop_));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
        turns[turn % 2].push_back(ms * 1e-3 / batch);
      }
      recheckChosen = median(turns[0]);
      recheckRunnerUp = median(turns[1]);
      CHECK_CUDA(cudaMemset(c_, 0xff, sizeof(float) * static_cast<size_t>(countC)));
      runPlan(ranked[1]);
      runnerUpError = errorAgainstReference(countC);
    }
    // Each path's result on a C filled with NaN before its run (so that
    // rows a split plan adds into and its zeroing missed show), against
    // cuBLAS's reference in C_ref.
    std::vector<Row> rows;
    for (size_t p = 0; p < paths_.size(); ++p) {
      tcc::detail::setNmSpmmLaunchPath(paths_[p]);
      CHECK_CUDA(cudaMemset(c_, 0xff, sizeof(float) * static_cast<size_t>(countC)));
      runTcc();
      const double error = std::max(errorAgainstReference(countC), runnerUpError);
      Row row{shape, s, aKMajor, median(seconds[p]), cublasSeconds_[key], error,
              tcc::detail::nmSpmmLaunchPathName(paths_[p]), median(hostSeconds[p]), firstCallSeconds};
      row.tccDeviceSeconds = median(deviceSeconds[p]);
      row.cublasDeviceSeconds = cublasDeviceSeconds_[key];
      row.lateRuns = tccLate[p] + cublasLateRuns_[key];
      if (!ranked.empty()) row.plan = label(ranked[0]);
      if (ranked.size() >= 2) row.runnerUp = label(ranked[1]);
      row.recheckChosenSeconds = recheckChosen;
      row.recheckRunnerUpSeconds = recheckRunnerUp;
      rows.push_back(row);
    }
    tcc::detail::setNmSpmmLaunchPath(paths_[0]);
    return rows;
  }

  // max |C - C_ref| / max |C_ref| of the result in C (C_ref: cuBLAS's).
  double errorAgainstReference(long long countC) {
    CHECK_CUDA(cudaMemset(error_, 0, sizeof(unsigned) * 2));
    helpers_.run("max_abs", {&c_, &cRef_, &countC, &error_}, countC);
    unsigned bits[2];
    CHECK_CUDA(cudaMemcpy(bits, error_, sizeof bits, cudaMemcpyDeviceToHost));
    float diff, scale;
    std::memcpy(&diff, &bits[0], 4);
    std::memcpy(&scale, &bits[1], 4);
    return scale > 0 ? diff / scale : diff;
  }

  // The host's share of a call, step by step (median microseconds of
  // `iterations` calls, each after the device has finished the one
  // before): the library call, the intrinsic's host step alone (without
  // the statement's host part around it), and the driver's launches and an
  // event record by themselves.
  void hostCosts(const Shape& shape, const Sparsity& s, int iterations) {
    measure(shape, s, false, true);  // plans the shape, fills the operands
    const Compiled& compiled = programs_.at(programText(s, false));
    tcc_tensor a = denseView(a_, shape.m, shape.k), b = nmView(bPruned_, d_, shape.k, shape.n, s),
               c = denseView(c_, shape.m, shape.n);
    std::map<std::string, tcc_tensor*> byName = {{"A", &a}, {"B", &b}, {"C", &c}};
    std::vector<tcc_tensor*> tensors;
    for (const auto& parameter : compiled.lowered.statements[0].parameters)
      tensors.push_back(byName.at(parameter.name()));
    const auto& function = compiled.lowered.gpuFunctions[0];
    const tcc::detail::GpuIntrinsicRun run{function.intrinsics.at(0), *compiled.module, byName};
    long long count = 1;
    int i = 1;
    float* f = c_;
    const int* d = d_;
    void* two[] = {&f, &count};
    void* eleven[] = {&a_, &a_, &d, &f, &i, &i, &i, &i, &i, &i, &i};
    tcc::rt::cuda::LaunchShape one, overlapping;
    overlapping.overlapsPrevious = true;
    void* empty2 = helpers_.module.function("empty2");
    void* empty11 = helpers_.module.function("empty11");
    auto cost = [&](const char* what, auto&& call) {
      std::vector<double> micros;
      for (int r = 0; r < iterations; ++r) {
        CHECK_CUDA(cudaDeviceSynchronize());
        auto start = std::chrono::steady_clock::now();
        call();
        micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
      CHECK_CUDA(cudaDeviceSynchronize());
      std::printf("  %-62s %6.2f us\n", what, median(micros));
    };
    std::printf("\nhost cost per call, %d x %d x %d at %.1f%% (median of %d, the device idle before each):\n", shape.m,
                shape.n, shape.k, 100 * s.value(), iterations);
    for (auto path : paths_) {
      tcc::detail::setNmSpmmLaunchPath(path);
      const std::string name = tcc::detail::nmSpmmLaunchPathName(path);
      cost(("library call (" + name + ")").c_str(),
           [&] { tcc::detail::launchGpuFunction(function, *compiled.module, tensors); });
      cost(("the intrinsic's host step alone (" + name + ")").c_str(), [&] { tcc::detail::runNmSpmm(run); });
    }
    tcc::detail::setNmSpmmLaunchPath(paths_[0]);
    cost("cuLaunchKernel, empty kernel, 2 arguments", [&] { tcc::rt::cuda::launch(empty2, one, two); });
    cost("cuLaunchKernel, empty kernel, 11 arguments", [&] { tcc::rt::cuda::launch(empty11, one, eleven); });
    cost("cuLaunchKernelEx (dependent launch), empty kernel, 11 arguments",
         [&] { tcc::rt::cuda::launch(empty11, overlapping, eleven); });
    cost("two cuLaunchKernel, empty kernels, 2 and 11 arguments", [&] {
      tcc::rt::cuda::launch(empty2, one, two);
      tcc::rt::cuda::launch(empty11, one, eleven);
    });
    cost("cudaEventRecord", [&] { CHECK_CUDA(cudaEventRecord(start_)); });
  }

 private:
  struct Compiled {
    tcc::Lowered lowered;
    std::shared_ptr<const tcc::rt::cuda::Module> module;
  };
  int repeats_;
  bool alternate_;
  bool runnerUp_;
  std::vector<tcc::detail::NmSpmmLaunchPath> paths_;
  std::string architecture_;
  Helpers helpers_;
  float *a_ = nullptr, *bPruned_ = nullptr, *bDense_ = nullptr, *c_ = nullptr, *cRef_ = nullptr;
  int* d_ = nullptr;
  unsigned* error_ = nullptr;
  cublasHandle_t cublas_{};
  cudaEvent_t start_{}, stop_{};
  std::map<std::string, Compiled> programs_;
  std::map<std::string, double> cublasSeconds_, cublasDeviceSeconds_;
  std::map<std::string, int> cublasLateRuns_;
};

// One panel per sparsity: speedup over cuBLAS per shape (sorted), the
// median, the paper's A100 figure (the issue's target).
void writeSvg(const std::string& path, const std::vector<Row>& rows, const std::vector<Sparsity>& sparsities,
              const std::vector<double>& targets, const std::string& device) {
  const int panelWidth = 300, panelHeight = 260, left = 45, top = 30;
  std::ofstream out(path);
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << panelWidth * sparsities.size() + 20 << "' height='"
      << panelHeight + 70 << "' font-family='sans-serif' font-size='11'>\n"
      << "<text x='10' y='16' font-size='13'>tcc N:M SpMM speedup over cuBLAS SGEMM (float32, " << device
      << "), M = L = 32; shapes sorted by speedup</text>\n";
  double yMax = 8;
  for (const Row& row : rows) yMax = std::max(yMax, std::ceil(row.speedup()));
  for (size_t p = 0; p < sparsities.size(); ++p) {
    std::vector<double> speedups;
    for (const Row& row : rows)
      if (row.sparsity.N == sparsities[p].N && row.sparsity.M == sparsities[p].M && row.sparsity.L == 32)
        speedups.push_back(row.speedup());
    std::sort(speedups.begin(), speedups.end());
    int x0 = static_cast<int>(p) * panelWidth + left, y0 = top + 10, w = panelWidth - left - 10, h = panelHeight - 30;
    auto y = [&](double value) { return y0 + h - value / yMax * h; };
    out << "<rect x='" << x0 << "' y='" << y0 << "' width='" << w << "' height='" << h
        << "' fill='none' stroke='#888'/>\n";
    for (int tick = 0; tick <= yMax; tick += 1)
      out << "<text x='" << x0 - 5 << "' y='" << y(tick) + 4 << "' text-anchor='end'>" << tick << "</text>\n"
          << "<line x1='" << x0 << "' x2='" << x0 + w << "' y1='" << y(tick) << "' y2='" << y(tick)
          << "' stroke='#eee'/>\n";
    for (size_t i = 0; i < speedups.size(); ++i) {
      double x = x0 + (i + 0.5) * w / speedups.size();
      out << "<circle cx='" << x << "' cy='" << y(speedups[i]) << "' r='2' fill='#1f77b4'/>\n";
    }
    double med = speedups.empty() ? 0 : median(speedups);
    out << "<line x1='" << x0 << "' x2='" << x0 + w << "' y1='" << y(med) << "' y2='" << y(med)
        << "' stroke='#1f77b4' stroke-dasharray='4,2'/>\n"
        << "<line x1='" << x0 << "' x2='" << x0 + w << "' y1='" << y(targets[p]) << "' y2='" << y(targets[p])
        << "' stroke='#d62728'/>\n"
        << "<line x1='" << x0 << "' x2='" << x0 + w << "' y1='" << y(1) << "' y2='" << y(1) << "' stroke='#000'/>\n";
    char title[160];
    std::snprintf(title, sizeof title, "%.1f%% sparse: median %.2fx (target %.1fx), %zu shapes",
                  100 * sparsities[p].value(), med, targets[p], speedups.size());
    out << "<text x='" << x0 << "' y='" << y0 - 5 << "'>" << title << "</text>\n";
  }
  out << "<text x='10' y='" << panelHeight + 60
      << "'>blue dots: shapes; dashed blue: median; red: the paper's A100 speedup (target); black: 1x</text>\n"
      << "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int repeats = 5;
  int passes = 1;         // --passes: the shapes measured again, on the plans the first pass chose
  bool noOtherL = false;  // --no-other-l: 4096^3 at other L left out
  bool alternate = false;  // --alternate: tcc's and cuBLAS's timed runs in turns, cuBLAS at every sparsity
  bool runnerUp = false;   // --runner-up: the tuner's choice and runner-up timed in turns after each shape
  double budget = 1e9;  // seconds of measuring before no new shape is started
  std::string csvPath, svgPath;
  std::vector<Shape> onlyShapes;
  std::vector<int> onlyN;
  std::vector<bool> layouts = {false};  // A k-major?
  std::vector<tcc::detail::NmSpmmLaunchPath> paths = {tcc::detail::nmSpmmLaunchPath()};
  Shape hostCostsShape{0, 0, 0};
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument == "--quick") quick = true;
    else if (argument == "--shape" && i + 1 < argc) {
      int m = 0, n = 0, k = 0;
      if (std::sscanf(argv[++i], "%dx%dx%d", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
        std::fprintf(stderr, "--shape takes MxNxK, say 4096x4096x4096\n");
        return 2;
      }
      onlyShapes.push_back({m, n, k});
    } else if (argument == "--nm" && i + 1 < argc) {
      int N = std::atoi(argv[++i]);
      if (N != 16 && N != 12 && N != 8 && N != 4) {
        std::fprintf(stderr, "--nm takes 16, 12, 8 or 4 (N of N:32)\n");
        return 2;
      }
      onlyN.push_back(N);
    }
    else if (argument == "--launch" && i + 1 < argc) {
      paths.clear();
      std::istringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) {
        auto path = tcc::detail::nmSpmmLaunchPathNamed(name);
        if (!path) {
          std::fprintf(stderr, "--launch takes launch paths separated by commas: uncached, scalar, vector, memset, "
                               "overlapped, lean (not '%s')\n", name.c_str());
          return 2;
        }
        paths.push_back(*path);
      }
      if (paths.empty()) {
        std::fprintf(stderr, "--launch takes at least one launch path\n");
        return 2;
      }
    }
    else if (argument == "--host-costs" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%dx%dx%d", &hostCostsShape.m, &hostCostsShape.n, &hostCostsShape.k) != 3) {
        std::fprintf(stderr, "--host-costs takes MxNxK\n");
        return 2;
      }
    }
    else if (argument == "--csv" && i + 1 < argc) csvPath = argv[++i];
    else if (argument == "--svg" && i + 1 < argc) svgPath = argv[++i];
    else if (argument == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (argument == "--passes" && i + 1 < argc) passes = std::max(1, std::atoi(argv[++i]));
    else if (argument == "--no-other-l") noOtherL = true;
    else if (argument == "--alternate") alternate = true;
    else if (argument == "--runner-up") runnerUp = true;
    else if (argument == "--tensor-cores") scheduledOnTensorCores = true;
    else if (argument == "--budget" && i + 1 < argc) budget = std::atof(argv[++i]);
    else if (argument == "--a" && i + 1 < argc) {
      const std::string layout = argv[++i];
      if (layout != "row" && layout != "kmajor" && layout != "both") {
        std::fprintf(stderr, "--a takes row, kmajor or both (A's layout)\n");
        return 2;
      }
      layouts = layout == "row" ? std::vector<bool>{false} : layout == "kmajor" ? std::vector<bool>{true}
                                                                                 : std::vector<bool>{false, true};
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--csv FILE] [--svg FILE] [--repeats R] [--budget SECONDS] [--shape MxNxK] "
                   "[--nm N]... [--a row|kmajor|both] [--launch PATH,...] [--passes P] [--no-other-l] "
                   "[--alternate] [--runner-up] [--tensor-cores]\n",
                   argv[0]);
      return 2;
    }
  }
  if (hostCostsShape.m > 0) onlyShapes = {hostCostsShape};
  std::vector<std::pair<int, int>> pairs = {
      {2048, 2048},  {6144, 2048},  {2048, 5632},  {5632, 2048},  {4096, 4096},  {12288, 4096}, {4096, 11008},
      {11008, 4096}, {5120, 5120},  {15360, 5120}, {5120, 13824}, {13824, 5120}, {6656, 6656},  {19968, 6656},
      {6656, 17920}, {17920, 6656}, {8192, 8192},  {24576, 8192}, {8192, 22016}, {22016, 8192}};
  std::vector<int> ms = {256, 512, 1024, 2048, 4096};
  if (quick) {
    pairs = {{2048, 2048}, {4096, 4096}, {11008, 4096}, {8192, 8192}};
    ms = {256, 1024, 4096};
  }
  std::vector<Sparsity> sparsities = {{16, 32, 32}, {12, 32, 32}, {8, 32, 32}, {4, 32, 32}};
  std::vector<double> targets = {1.8, 2.4, 3.5, 6.3};
  std::vector<int> otherL = quick ? std::vector<int>{} : std::vector<int>{16, 128};
  if (!onlyShapes.empty()) otherL.clear();
  if (!onlyN.empty()) {
    std::vector<Sparsity> kept;
    std::vector<double> keptTargets;
    for (size_t p = 0; p < sparsities.size(); ++p)
      if (std::find(onlyN.begin(), onlyN.end(), sparsities[p].N) != onlyN.end()) {
        kept.push_back(sparsities[p]);
        keptTargets.push_back(targets[p]);
      }
    sparsities = kept;
    targets = keptTargets;
  }

  try {
    size_t maxA = 0, maxB = 0, maxC = 0;
    std::vector<Shape> shapes = onlyShapes;
    if (shapes.empty())
      for (int m : ms)
        for (auto [n, k] : pairs) shapes.push_back({m, n, k});
    for (const Shape& shape : shapes) {
      maxA = std::max(maxA, size_t(shape.m) * shape.k);
      maxB = std::max(maxB, size_t(shape.k) * shape.n);
      maxC = std::max(maxC, size_t(shape.m) * shape.n);
    }
    maxA = std::max(maxA, size_t(4096) * 4096);
    maxB = std::max(maxB, size_t(4096) * 4096);
    maxC = std::max(maxC, size_t(4096) * 4096);
    Bench bench(repeats, alternate, runnerUp, paths, maxA, maxB, maxC);
    std::printf("device: %s\n", tcc::rt::cuda::device().name.c_str());
    printCudaVersions();
    if (const char* tile = std::getenv("TCC_NM_SPMM_TILE"); tile && *tile)
      std::printf("TCC_NM_SPMM_TILE=%s: that kernel where the shape has it, not the autotuned plan\n", tile);
    if (const char* skip = std::getenv("TCC_NM_SPMM_SKIP"); skip && *skip)
      std::printf("TCC_NM_SPMM_SKIP=%s: those kernels are not among the autotuner's candidates\n", skip);
    if (scheduledOnTensorCores)
      std::printf("--tensor-cores: every statement scheduled tensorcore() (the 3xTF32 tensor-core tiles); cuBLAS "
                  "stays float32 FMA (pedantic)\n");
    std::vector<Row> rows;
    auto start = std::chrono::steady_clock::now();
    bench.programs(sparsities, layouts);
    if (hostCostsShape.m > 0) {
      for (const Sparsity& s : sparsities) bench.hostCosts(hostCostsShape, s, 200);
      return 0;
    }
    // Shapes in a strided order (every m and pair early), each at every
    // sparsity, so that a budget cut leaves an even sample; 4096^3 first.
    std::vector<Shape> ordered;
    for (size_t stride = 7, start = 0; ordered.size() < shapes.size(); ++start)
      for (size_t i = start; i < shapes.size(); i += stride)
        if (std::none_of(ordered.begin(), ordered.end(), [&](const Shape& s) {
              return s.m == shapes[i].m && s.n == shapes[i].n && s.k == shapes[i].k;
            }))
          ordered.push_back(shapes[i]);
    std::stable_partition(ordered.begin(), ordered.end(),
                          [](const Shape& s) { return s.m == 4096 && s.n == 4096 && s.k == 4096; });
    auto spent = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    size_t skipped = 0;
    for (int pass = 1; pass <= passes; ++pass)
    for (const Shape& shape : ordered) {
      if (spent() > budget) {
        skipped += sparsities.size();
        continue;
      }
      for (const Sparsity& s : sparsities)
      for (bool aKMajor : layouts) {  // (a cut by the budget leaves both layouts of a sparsity)
        for (Row row : bench.measure(shape, s, aKMajor, &s == &sparsities[0])) {
          row.pass = pass;
          rows.push_back(row);
          std::printf("%5d x %5d x %5d  %4.1f%%  %s  tcc %8.4f ms  cuBLAS %8.4f ms  %5.3fx  err %.1e  %-10s "
                      "host %5.1f us  first call %7.1f ms  device: tcc %8.4f cuBLAS %8.4f %5.3fx late %d  %s",
                      shape.m, shape.n, shape.k, 100 * s.value(), aKMajor ? "A k-major" : "A row   ",
                      row.tccSeconds * 1e3, row.cublasSeconds * 1e3, row.speedup(), row.error, row.launch.c_str(),
                      row.hostSeconds * 1e6, row.firstCallSeconds * 1e3, row.tccDeviceSeconds * 1e3,
                      row.cublasDeviceSeconds * 1e3, row.deviceSpeedup(), row.lateRuns,
                      row.plan.empty() ? "(untuned)" : row.plan.c_str());
          if (row.rechecked())
            std::printf("  runner-up %s: %8.4f / %8.4f ms = %5.3f", row.runnerUp.c_str(),
                        row.recheckRunnerUpSeconds * 1e3, row.recheckChosenSeconds * 1e3, row.runnerUpOverChosen());
          std::printf(passes > 1 ? "  pass %d\n" : "\n", pass);
        }
        std::fflush(stdout);
      }
    }
    for (int L : noOtherL ? std::vector<int>{} : otherL)
      for (bool aKMajor : layouts)
      for (const Sparsity& s : sparsities) {
        if (spent() > budget) break;
        for (const Row& row : bench.measure({4096, 4096, 4096}, {s.N, s.M, L}, aKMajor, false)) rows.push_back(row);
      }
    double elapsed = spent();
    if (skipped) std::printf("budget of %.0f s reached: %zu of %zu shape x sparsity measurements left out\n", budget,
                             skipped, shapes.size() * sparsities.size());

    if (!csvPath.empty()) {
      std::ofstream csv(csvPath);
      csv << "m,n,k,N,M,L,sparsity,tcc_ms,cublas_ms,speedup,tcc_tflops,fp32_roofline_percent,rel_error"
          << (layouts.size() > 1 || layouts[0] ? ",a_kmajor" : "") << ",launch,tcc_host_us,first_call_ms"
          << ",tcc_device_ms,cublas_device_ms,device_speedup,device_late_runs,plan,runner_up,recheck_chosen_ms,"
             "recheck_runner_up_ms"
          << (passes > 1 ? ",pass\n" : "\n");
      for (const Row& row : rows) {
        csv << row.shape.m << "," << row.shape.n << "," << row.shape.k << "," << row.sparsity.N << ","
            << row.sparsity.M << "," << row.sparsity.L << "," << row.sparsity.value() << ","
            << row.tccSeconds * 1e3 << "," << row.cublasSeconds * 1e3 << "," << row.speedup() << ","
            << row.sparseFlops() / row.tccSeconds * 1e-12 << ","
            << 100 * row.sparseFlops() / row.tccSeconds / kFp32Peak << "," << row.error
            << (layouts.size() > 1 || layouts[0] ? (row.aKMajor ? ",1" : ",0") : "") << "," << row.launch << ","
            << row.hostSeconds * 1e6 << "," << row.firstCallSeconds * 1e3 << "," << row.tccDeviceSeconds * 1e3
            << "," << row.cublasDeviceSeconds * 1e3 << "," << row.deviceSpeedup() << "," << row.lateRuns << ","
            << row.plan << "," << row.runnerUp << "," << row.recheckChosenSeconds * 1e3 << ","
            << row.recheckRunnerUpSeconds * 1e3;
        if (passes > 1) csv << "," << row.pass;
        csv << "\n";
      }
    }
    if (!svgPath.empty()) {  // the first launch path's rows
      std::vector<Row> first;
      for (const Row& row : rows)
        if (row.launch == tcc::detail::nmSpmmLaunchPathName(paths[0]) && row.pass == 1) first.push_back(row);
      writeSvg(svgPath, first, sparsities, targets, tcc::rt::cuda::device().name);
    }

    double worstError = 0;
    for (const Row& row : rows) worstError = std::max(worstError, row.error);
    std::printf("\n== N:M SpMM (tcc nm_spmm intrinsic%s) vs cuBLAS SGEMM on the pruned B, float32, no TF32, %s ==\n",
                scheduledOnTensorCores ? " on tensor cores, 3xTF32" : "", tcc::rt::cuda::device().name.c_str());
    std::printf("%zu measurements in %.0f s, %d timed runs each (medians of CUDA-event times, after one warm-up run\n"
                "in which tcc's autotuner measures its candidate plans); largest relative error vs cuBLAS %.2e (%s)\n",
                rows.size(), elapsed, repeats, worstError, worstError <= 1e-5 ? "<= 1e-5: ok" : "ABOVE 1e-5");
    std::printf("speedup = cuBLAS time / tcc time per shape; target = the paper's A100 median speedup\n");
    std::printf("\n%-9s %-9s %-8s %-10s %8s %8s %8s %8s  %-6s %s\n", "sparsity", "nm", "A", "launch", "median", "min",
                "max", "target", "shapes", "median by m");
    for (int pass = 1; pass <= passes; ++pass)
    for (bool aKMajor : layouts)
    for (size_t p = 0; p < sparsities.size(); ++p)
    for (auto path : paths) {
      const std::string launch = tcc::detail::nmSpmmLaunchPathName(path);
      auto chosen = [&](const Row& row) {
        return row.sparsity.N == sparsities[p].N && row.sparsity.L == 32 && row.aKMajor == aKMajor &&
               row.launch == launch && row.pass == pass;
      };
      std::vector<double> speedups;
      std::map<int, std::vector<double>> byM;
      for (const Row& row : rows)
        if (chosen(row)) speedups.push_back(row.speedup()), byM[row.shape.m].push_back(row.speedup());
      if (speedups.empty()) continue;
      std::string perM;
      for (const auto& [m, values] : byM)
        perM += " " + std::to_string(m) + ": " + std::to_string(median(values)).substr(0, 5);
      std::printf("%-9.1f (%d,%d,%d) %-8s %-10s %8.3f %8.2f %8.2f %8.1f  %-6zu%s%s\n", 100 * sparsities[p].value(),
                  sparsities[p].N, sparsities[p].M, sparsities[p].L, aKMajor ? "k-major" : "row", launch.c_str(),
                  median(speedups), *std::min_element(speedups.begin(), speedups.end()),
                  *std::max_element(speedups.begin(), speedups.end()), targets[p], speedups.size(), perM.c_str(),
                  passes > 1 ? ("  (pass " + std::to_string(pass) + ")").c_str() : "");
    }
    // The same rows timed on the device alone (the calls queued behind a busy
    // kernel): the speedups' medians beside the scored ones, and each side's
    // device time over its wall time, shape by shape.
    std::printf("\ndevice alone (each call queued behind a %.0f us busy kernel, events around the call only) beside "
                "the scored wall time:\n%-9s %-9s %-8s %-10s %8s %8s %10s %10s %9s  %s\n",
                Bench::kSpinSeconds * 1e6, "sparsity", "nm", "A", "launch", "wall", "device", "tcc d/w", "cuBLAS d/w",
                "late", "device median by m");
    for (int pass = 1; pass <= passes; ++pass)
    for (bool aKMajor : layouts)
    for (size_t p = 0; p < sparsities.size(); ++p)
    for (auto path : paths) {
      const std::string launch = tcc::detail::nmSpmmLaunchPathName(path);
      std::vector<double> wall, device, tccRatio, cublasRatio;
      std::map<int, std::vector<double>> byM;
      int late = 0;
      for (const Row& row : rows)
        if (row.sparsity.N == sparsities[p].N && row.sparsity.L == 32 && row.aKMajor == aKMajor &&
            row.launch == launch && row.pass == pass) {
          wall.push_back(row.speedup());
          device.push_back(row.deviceSpeedup());
          byM[row.shape.m].push_back(row.deviceSpeedup());
          tccRatio.push_back(row.tccDeviceSeconds / row.tccSeconds);
          cublasRatio.push_back(row.cublasDeviceSeconds / row.cublasSeconds);
          late += row.lateRuns;
        }
      if (wall.empty()) continue;
      std::string perM;
      for (const auto& [m, values] : byM)
        perM += " " + std::to_string(m) + ": " + std::to_string(median(values)).substr(0, 5);
      std::printf("%-9.1f (%d,%d,%d) %-8s %-10s %8.3f %8.3f %10.4f %10.4f %9d %s%s\n", 100 * sparsities[p].value(),
                  sparsities[p].N, sparsities[p].M, sparsities[p].L, aKMajor ? "k-major" : "row", launch.c_str(),
                  median(wall), median(device), median(tccRatio), median(cublasRatio), late, perM.c_str(),
                  passes > 1 ? ("  (pass " + std::to_string(pass) + ")").c_str() : "");
    }
    // --runner-up: the choice against the next plan of the tuner's ranking,
    // in the bench's steady state.
    for (size_t p = 0; p < sparsities.size(); ++p) {
      std::vector<double> ratios, wallBest, deviceBest;
      int faster1 = 0, faster3 = 0;
      for (const Row& row : rows) {
        if (row.sparsity.N != sparsities[p].N || row.sparsity.L != 32 || row.pass != 1 || row.launch != rows[0].launch)
          continue;
        const double gain = row.rechecked() ? std::min(1.0, row.runnerUpOverChosen()) : 1.0;
        wallBest.push_back(row.speedup() / gain);
        deviceBest.push_back(row.deviceSpeedup() / gain);
        if (!row.rechecked()) continue;
        ratios.push_back(row.runnerUpOverChosen());
        faster1 += row.runnerUpOverChosen() < 0.99;
        faster3 += row.runnerUpOverChosen() < 0.97;
      }
      if (ratios.empty()) continue;
      std::printf("%.1f%%: runner-up / choice in turns, %zu shapes: %.3f [%.3f, %.3f]; runner-up faster by over 1%% "
                  "on %d, over 3%% on %d; the medians, had the faster of the two run: wall %.3f, device %.3f\n",
                  100 * sparsities[p].value(), ratios.size(), median(ratios),
                  *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
                  faster1, faster3, median(wallBest), median(deviceBest));
    }
    // The first call of each shape (the autotuner's measurements where the product is large enough), and
    // with --passes, each later pass's times over the first pass's, shape by shape.
    for (size_t p = 0; p < sparsities.size(); ++p) {
      std::vector<double> firstCalls;
      std::map<std::tuple<int, int, int, bool, std::string>, const Row*> firstPass;
      for (const Row& row : rows)
        if (row.sparsity.N == sparsities[p].N && row.sparsity.L == 32 && row.pass == 1) {
          firstCalls.push_back(row.firstCallSeconds * 1e3);
          firstPass[{row.shape.m, row.shape.n, row.shape.k, row.aKMajor, row.launch}] = &row;
        }
      if (firstCalls.empty()) continue;
      double total = 0;
      for (double ms : firstCalls) total += ms;
      std::printf("%.1f%%: first call of a shape (tuning) %.0f ms median, %.0f ms max, %.1f s in all\n",
                  100 * sparsities[p].value(), median(firstCalls),
                  *std::max_element(firstCalls.begin(), firstCalls.end()), total * 1e-3);
      for (int pass = 2; pass <= passes; ++pass) {
        std::vector<double> tcc, cublas;
        for (const Row& row : rows) {
          auto found = firstPass.find({row.shape.m, row.shape.n, row.shape.k, row.aKMajor, row.launch});
          if (row.pass != pass || row.sparsity.N != sparsities[p].N || found == firstPass.end()) continue;
          tcc.push_back(row.tccSeconds / found->second->tccSeconds);
          cublas.push_back(row.cublasSeconds / found->second->cublasSeconds);
        }
        if (tcc.empty()) continue;
        std::printf("  pass %d over pass 1, per shape: tcc %.3f [%.3f, %.3f], cuBLAS %.3f [%.3f, %.3f]\n", pass,
                    median(tcc), *std::min_element(tcc.begin(), tcc.end()), *std::max_element(tcc.begin(), tcc.end()),
                    median(cublas), *std::min_element(cublas.begin(), cublas.end()),
                    *std::max_element(cublas.begin(), cublas.end()));
      }
    }
    if (paths.size() > 1) {
      // Per shape and sparsity, the first path's tcc time over each path's (above 1: that path is faster).
      std::printf("\ntcc time, %s over each path (median over shape x sparsity [min, max]); host us per call "
                  "(median):\n",
                  tcc::detail::nmSpmmLaunchPathName(paths[0]));
      for (auto path : paths) {
        const std::string launch = tcc::detail::nmSpmmLaunchPathName(path);
        std::vector<double> ratios, host;
        for (size_t r = 0; r < rows.size(); r += paths.size())
          for (size_t q = 0; q < paths.size(); ++q)
            if (rows[r + q].launch == launch) {
              ratios.push_back(rows[r].tccSeconds / rows[r + q].tccSeconds);
              host.push_back(rows[r + q].hostSeconds * 1e6);
            }
        if (ratios.empty()) continue;
        std::printf("  %-10s %6.3f [%5.3f, %5.3f]  host %5.1f us\n", launch.c_str(), median(ratios),
                    *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
                    median(host));
      }
    }
    std::printf("\n4096^3 (TFLOP/s counts the kept work, 2mnk N/M; roofline%% = that / 64.1 TFLOP/s, the FP32 FMA\n"
                "ceiling measured on the H100 (the same SMs and clock on the H200); the paper's public kernels reach "
                "1.84/2.47/3.53/5.98x on the H100):\n");
    std::printf("%-9s %5s %-8s %10s %10s %8s %10s %10s\n", "sparsity", "L", "A", "tcc ms", "cuBLAS ms", "speedup",
                "TFLOP/s", "roofline%");
    for (const Row& row : rows)
      if (row.shape.m == 4096 && row.shape.n == 4096 && row.shape.k == 4096 && row.pass == 1)
        std::printf("%-9.1f %5d %-8s %10.3f %10.3f %8.2f %10.1f %10.1f\n", 100 * row.sparsity.value(), row.sparsity.L,
                    row.aKMajor ? "k-major" : "row",
                    row.tccSeconds * 1e3, row.cublasSeconds * 1e3, row.speedup(),
                    row.sparseFlops() / row.tccSeconds * 1e-12, 100 * row.sparseFlops() / row.tccSeconds / kFp32Peak);
    return worstError <= 1e-5 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tcc_bench_nm_spmm: %s\n", error.what());
    return 1;
  }
}
