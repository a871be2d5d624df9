#include "gpu_engine.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../chunk_plan.h"
#include "kernel_source.h"
#include "tcc/runtime/cuda.h"

namespace tcc::rt::permanent::gpu {
namespace {

namespace cuda = rt::cuda;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

template <typename T>
cuda::DeviceBuffer uploaded(const std::vector<T>& host) {
  cuda::DeviceBuffer buffer(std::max<size_t>(1, host.size()) * sizeof(T));
  buffer.upload(host.data(), host.size() * sizeof(T));
  return buffer;
}

}  // namespace

std::string gpuCheckpointMode(GpuPermanentVariant variant) {
  return std::string("float-gpu-") + gpuPermanentVariantName(variant);
}

namespace {

// Tuning knobs for measurements:
// TCC_PERMANENT_GPU_UNROLL=2|4|...|32 sets the unrolled block (default 32;
// blocks of 1 step only where slices are 1 step long);
// TCC_PERMANENT_GPU_BLOCK_PRODUCT=0 makes Hybrid multiply every register
// row at every step, as the paper's Hybrid does; TCC_PERMANENT_GPU_LEVELS=0
// keeps the block product but multiplies all the block's rows each step;
// TCC_PERMANENT_GPU_PAIRS=0 makes Hybrid run every step (column 0 not
// summed out in pairs), =2 pairs without column 0's second sums in registers; TCC_PERMANENT_GPU_MIN_BLOCKS=B compiles Hybrid for B
// resident blocks per SM (registers capped at 65536 / (256 B));
// TCC_PERMANENT_GPU_CHAIN=0 picks the block's last flip by a switch, not
// by if-tests (most frequent column first).
// The bench's --ablation measures them.

// Every thread's slice has this many steps, whatever the occupancy (launch_plan.h).
// Spills a Hybrid kernel may have without being planned again (bytes per thread).
constexpr int kTolerableSpillBytes = 64;

uint64_t sliceFor(const SortedColumnMatrix& matrix) {
  return planLaunch(planChunks(matrix.n).chunkSize, 1).iterationsPerThread;
}

int unrollFor(const SortedColumnMatrix& matrix) {
  int unroll = kDefaultUnroll;
  if (const char* knob = std::getenv("TCC_PERMANENT_GPU_UNROLL"); knob && std::atoi(knob) >= 2)
    unroll = std::min(kMaxUnroll, static_cast<int>(std::bit_floor(static_cast<unsigned>(std::atoi(knob)))));
  return static_cast<int>(std::min<uint64_t>(unroll, sliceFor(matrix)));
}

int intKnob(const char* name, int fallback) {
  const char* knob = std::getenv(name);
  return knob && *knob ? std::atoi(knob) : fallback;
}

bool knobOn(const char* name) {
  const char* knob = std::getenv(name);
  return !(knob && std::string(knob) == "0");
}

}  // namespace

namespace {

// Hybrid's plan again after its kernel spilled: blocks of at most maxUnroll
// steps, or no register cap.
struct Replan {
  int maxUnroll = kMaxUnroll;
  bool uncapped = false;
};

GeneratedPermanentKernel generateKernel(const SortedColumnMatrix& matrix, GpuPermanentVariant variant,
                                        const CostModel& model, const Replan& replan) {
  GeneratedPermanentKernel kernel;
  switch (variant) {
    case GpuPermanentVariant::Baseline:
      kernel.problem = degreeSortedProblem(matrix);
      kernel.source = baselineKernelSource();
      break;
    case GpuPermanentVariant::PureReg:
      kernel.problem = degreeSortedProblem(matrix);
      kernel.partition.registerColumns = std::max(0, matrix.n - 1);
      kernel.partition.registerRows = matrix.n;
      kernel.source =
          pureRegKernelSource(kernel.problem, unrollFor(matrix), intKnob("TCC_PERMANENT_GPU_CHAIN", 1) != 0);
      if (matrix.n >= 2) {
        const KernelCost cost =
            pureRegKernelCost(kernel.problem, unrollFor(matrix), std::countr_zero(sliceFor(matrix)));
        char numbers[200];
        std::snprintf(numbers, sizeof numbers,
                      "blocks of %d steps; model: %.1f adds + %.1f multiplications + 0 global accesses per step "
                      "(what the compiler shares between steps not counted)",
                      unrollFor(matrix), cost.additions, cost.multiplications);
        kernel.plan = numbers;
      }
      break;
    case GpuPermanentVariant::Hybrid: {
      kernel.problem = orderedProblem(matrix, permanentOrdering(matrix));
      bool knobs = false;
      for (const char* name : {"TCC_PERMANENT_GPU_UNROLL", "TCC_PERMANENT_GPU_BLOCK_PRODUCT", "TCC_PERMANENT_GPU_LEVELS",
                               "TCC_PERMANENT_GPU_PAIRS", "TCC_PERMANENT_GPU_MIN_BLOCKS",
                               "TCC_PERMANENT_GPU_REGISTER_COLUMNS", "TCC_PERMANENT_GPU_CHAIN"})
        if (const char* knob = std::getenv(name); knob && *knob) knobs = true;
      if (!knobs && matrix.n >= 2 && sliceFor(matrix) >= 4) {
        // The model's choice of partition, pairs, unroll and register cap.
        const int sliceBits = std::countr_zero(sliceFor(matrix));
        HybridPlan plan = planHybrid(
            kernel.problem, static_cast<int>(std::min<uint64_t>(std::min(kMaxUnroll, replan.maxUnroll), sliceFor(matrix))),
            sliceBits);
        if (replan.uncapped) plan.minBlocks = 0;
        kernel.partition = plan.partition;
        kernel.plan = plan.text();
        kernel.planned = true;
        kernel.unroll = plan.unroll;
        kernel.source = hybridKernelSource(kernel.problem, kernel.partition, plan.unroll, sliceBits, true, true,
                                           plan.pairs, plan.minBlocks, plan.chainDispatch);
        break;
      }
      // Set by the knobs: Algorithm 4's partition (with the block product) or
      // the one forced, the knobs' shape.
      const int unroll = unrollFor(matrix);
      const bool blockProduct = knobOn("TCC_PERMANENT_GPU_BLOCK_PRODUCT");
      const int sliceBits = std::countr_zero(sliceFor(matrix));
      CostModel costs = model;
      if (blockProduct) costs.unroll = unroll;
      costs.sliceBits = sliceBits;
      if (const int forced = intKnob("TCC_PERMANENT_GPU_REGISTER_COLUMNS", 0); forced >= 1 && forced < matrix.n)
        kernel.partition = evaluatePartition(kernel.problem, forced, costs);
      else if (matrix.n >= 2)
        kernel.partition = partitionRegisters(kernel.problem, costs);
      else
        kernel.partition.registerRows = matrix.n;
      kernel.source = hybridKernelSource(kernel.problem, kernel.partition, unroll, sliceBits, blockProduct,
                                         knobOn("TCC_PERMANENT_GPU_LEVELS"), intKnob("TCC_PERMANENT_GPU_PAIRS", kPairsKeepingSums),
                                         intKnob("TCC_PERMANENT_GPU_MIN_BLOCKS", 0),
                                         intKnob("TCC_PERMANENT_GPU_CHAIN", 1) != 0);
      kernel.plan = "k = " + std::to_string(kernel.partition.registerColumns) + " register columns, " +
                    std::to_string(kernel.partition.registerRows) + " register rows, blocks of " +
                    std::to_string(unroll) + " steps, set by TCC_PERMANENT_GPU_* knobs";
      if (blockProduct && knobOn("TCC_PERMANENT_GPU_LEVELS") && matrix.n >= 2) {
        const int pairs = intKnob("TCC_PERMANENT_GPU_PAIRS", kPairsKeepingSums);
        const KernelCost cost = hybridKernelCost(
            kernel.problem, kernel.partition, unroll, sliceBits,
            hybridUsesPairs(kernel.problem, kernel.partition, unroll, true, true) ? pairs : kNoPairs, 8);
        char numbers[160];
        std::snprintf(numbers, sizeof numbers, "; model: %.1f adds + %.1f multiplications + %.3f global accesses per step",
                      cost.additions, cost.multiplications, cost.globalAccesses);
        kernel.plan += numbers;
      }
      break;
    }
  }
  return kernel;
}

}  // namespace

GeneratedPermanentKernel generatePermanentKernel(const SortedColumnMatrix& matrix, GpuPermanentVariant variant,
                                                 const CostModel& model) {
  return generateKernel(matrix, variant, model, {});
}

std::string GpuEngineReport::text() const {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s on %s: n = %d, %d register rows (k = %d register columns), %d registers and %d B local "
                "memory per thread, %d threads per block, %d blocks per SM, %lld resident threads, 2^%d steps per "
                "thread; generated in %.3f s, compiled in %.3f s",
                gpuPermanentVariantTitle(variant), device.c_str(), n, registerRows, registerColumns, registers,
                localBytes, threadsPerBlock, blocksPerMultiprocessor, static_cast<long long>(residentThreads),
                static_cast<int>(__builtin_ctzll(launch.iterationsPerThread)), generateSeconds, compileSeconds);
  return plan.empty() ? std::string(line) : std::string(line) + "; plan: " + plan;
}

struct GpuRangeEngine::State {
  GpuEngineReport report;
  std::string source;
  std::unique_ptr<cuda::Module> module;
  void* sum = nullptr;
  void* reduce = nullptr;
  uint64_t chunkSize = 1;
  int n = 0;
  cuda::DeviceBuffer chunkIds, partials, chunkSums, globalRows;
  cuda::DeviceBuffer columnStart, rows, values, start;  // the baseline's CSC
  std::vector<int64_t> hostIds;
  std::vector<double> hostSums;
};

GpuRangeEngine::GpuRangeEngine(const SortedColumnMatrix& matrix, GpuPermanentVariant variant, uint64_t chunkSize)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  const cuda::DeviceInfo& device = cuda::device();
  s.chunkSize = chunkSize;
  s.n = matrix.n;
  GpuEngineReport& report = s.report;
  report.variant = variant;
  report.device = device.name;
  report.n = matrix.n;

  GeneratedPermanentKernel kernel;
  cuda::FunctionAttributes attributes;
  std::string spilled;
  // Hybrid's plan estimates its registers; where the compiled kernel spills
  // more than a few doubles (spills cost up to 2x on the H100), the plan is
  // made again for blocks half as long, then compiled without a register cap
  // (one block per SM runs such a kernel faster than its spills).
  Replan replan;
  for (int attempt = 0;; ++attempt) {
    auto generateStart = Clock::now();
    kernel = generateKernel(matrix, variant, {}, replan);
    report.generateSeconds += secondsSince(generateStart);
    auto compileStart = Clock::now();
    s.module = std::make_unique<cuda::Module>(cuda::compileToCubin(kernel.source, device.architecture(), "tcc_permanent.cu"));
    report.compileSeconds += secondsSince(compileStart);
    s.sum = s.module->function(kSumKernel);
    s.reduce = s.module->function(kReduceKernel);
    attributes = cuda::functionAttributes(s.sum);
    if (!kernel.planned || attributes.localBytes <= kTolerableSpillBytes || attempt == 2) break;
    spilled += "; planned with blocks of " + std::to_string(kernel.unroll) + (replan.uncapped ? " uncapped" : "") +
               ", it spilled " + std::to_string(attributes.localBytes) + " B";
    if (attempt == 0 && kernel.unroll > 8) replan.maxUnroll = kernel.unroll / 2;
    else replan.uncapped = true;
  }
  report.registerColumns = kernel.partition.registerColumns;
  report.registerRows = kernel.partition.registerRows;
  report.plan = kernel.plan + spilled;
  s.source = std::move(kernel.source);
  report.sourceBytes = s.source.size();
  report.registers = attributes.registers;
  report.localBytes = attributes.localBytes;

  const RyserProblem& problem = kernel.problem;
  const int nonzeros = problem.columnStart.back();
  if (variant == GpuPermanentVariant::Baseline) {
    // The block size that keeps the most threads resident with each
    // thread's x in shared memory.
    int bestThreads = 0;
    for (int threads : {64, 128, 256, 512, 1024}) {
      if (threads > attributes.maxThreadsPerBlock) break;
      const size_t shared = baselineSharedBytes(problem.n, nonzeros, threads);
      if (shared > 227 * 1024) break;
      cuda::allowDynamicSharedMemory(s.sum, static_cast<int>(shared));
      const int blocks = cuda::maxActiveBlocksPerMultiprocessor(s.sum, threads, shared);
      if (blocks * threads > bestThreads) {
        bestThreads = blocks * threads;
        report.threadsPerBlock = threads;
        report.blocksPerMultiprocessor = blocks;
        report.sharedBytesPerBlock = shared;
      }
    }
    if (bestThreads == 0)
      throw PermanentError("perm: the " + std::to_string(problem.n) + " x " + std::to_string(problem.n) +
                           " matrix does not fit the GPU baseline's shared memory; use the hybrid or purereg variant");
    cuda::allowDynamicSharedMemory(s.sum, static_cast<int>(report.sharedBytesPerBlock));
    s.columnStart = uploaded(problem.columnStart);
    s.rows = uploaded(problem.rows);
    s.values = uploaded(problem.values);
    s.start = uploaded(problem.start);
  } else {
    report.threadsPerBlock = kGeneratedThreadsPerBlock;
    report.blocksPerMultiprocessor = cuda::maxActiveBlocksPerMultiprocessor(s.sum, kGeneratedThreadsPerBlock, 0);
    if (report.blocksPerMultiprocessor == 0)
      throw PermanentError("perm: the generated kernel cannot be launched (" + std::to_string(attributes.registers) +
                           " registers per thread)");
  }
  report.residentThreads =
      static_cast<int64_t>(report.blocksPerMultiprocessor) * report.threadsPerBlock * device.multiprocessors;
  report.launch = planLaunch(chunkSize, report.residentThreads * kWavesPerLaunch);
  if (report.launch.iterationsPerThread != sliceFor(matrix))
    throw PermanentError("perm: internal error: the GPU kernel was generated for slices of another size");

  const int64_t threads = report.launch.threadsPerLaunch();
  s.chunkIds = cuda::DeviceBuffer(sizeof(int64_t) * report.launch.chunksPerLaunch);
  s.partials = cuda::DeviceBuffer(sizeof(double) * threads);
  s.chunkSums = cuda::DeviceBuffer(sizeof(double) * report.launch.chunksPerLaunch);
  const int globalRowCount = problem.n - report.registerRows;
  if (variant == GpuPermanentVariant::Hybrid && globalRowCount > 0)
    s.globalRows = cuda::DeviceBuffer(sizeof(double) * globalRowCount *
                                      ((threads + kGeneratedThreadsPerBlock - 1) / kGeneratedThreadsPerBlock) *
                                      kGeneratedThreadsPerBlock);
}

GpuRangeEngine::~GpuRangeEngine() = default;

std::string GpuRangeEngine::description() const { return "cuda, " + state_->report.text(); }

int64_t GpuRangeEngine::parallelism() const { return state_->report.launch.chunksPerLaunch; }

const GpuEngineReport& GpuRangeEngine::report() const { return state_->report; }
const std::string& GpuRangeEngine::source() const { return state_->source; }

void GpuRangeEngine::sumChunks(std::span<const int64_t> chunks, uint64_t chunkSize, StopFlags stop,
                               const ChunkDone& chunkDone) {
  State& s = *state_;
  if (chunkSize != s.chunkSize) throw PermanentError("perm: internal error: the GPU engine was planned for another chunk size");
  const LaunchPlan& plan = s.report.launch;
  for (size_t next = 0; next < chunks.size() && !stop.requested();) {
    const int64_t count = std::min<int64_t>(plan.chunksPerLaunch, static_cast<int64_t>(chunks.size() - next));
    s.hostIds.assign(chunks.begin() + next, chunks.begin() + next + count);
    s.chunkIds.upload(s.hostIds.data(), sizeof(int64_t) * count);
    unsigned long long size = chunkSize;
    int logThreadsPerChunk = plan.logThreadsPerChunk;
    long long threads = count << plan.logThreadsPerChunk;
    void* ids = s.chunkIds.get();
    void* partials = s.partials.get();
    void* globalRows = s.globalRows.get();
    void* columnStart = s.columnStart.get();
    void* rows = s.rows.get();
    void* values = s.values.get();
    void* start = s.start.get();
    int n = s.n;
    cuda::LaunchShape shape;
    shape.block[0] = static_cast<unsigned>(s.report.threadsPerBlock);
    shape.grid[0] = static_cast<unsigned>((threads + s.report.threadsPerBlock - 1) / s.report.threadsPerBlock);
    shape.sharedBytes = static_cast<unsigned>(s.report.sharedBytesPerBlock);
    cuda::launch(s.sum, shape,
                 {&ids, &size, &logThreadsPerChunk, &threads, &partials, &globalRows, &columnStart, &rows, &values,
                  &start, &n});
    int threadsPerChunk = 1 << plan.logThreadsPerChunk;
    long long chunkCount = count;
    void* sums = s.chunkSums.get();
    cuda::launch(s.reduce, (count + 127) / 128, 128, {&partials, &threadsPerChunk, &chunkCount, &sums});
    s.hostSums.resize(count);
    s.chunkSums.download(s.hostSums.data(), sizeof(double) * count);  // waits for both kernels
    for (int64_t k = 0; k < count; ++k) {
      ChunkOutcome<double> outcome;
      outcome.sum = s.hostSums[k];
      chunkDone(s.hostIds[k], outcome);
    }
    next += static_cast<size_t>(count);
  }
}

}  // namespace tcc::rt::permanent::gpu
