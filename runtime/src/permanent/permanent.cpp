// The entry point generated kernels call, and the chunk driver: plan the
// chunks, resume from a checkpoint, run the rest on OpenMP threads, and add
// the chunks' partial sums in chunk order, compensated (so the result does
// not depend on the thread count, on how often the run was stopped and
// resumed, or on how many MPI ranks shared it: see mpi/).
#include "tcc/runtime/permanent.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "chunk_plan.h"
#include "distributed_sum.h"
#include "engine_driver.h"
#include "gray_code_ryser.h"
#include "interrupt.h"
#include "permanent_matrix.h"
#include "progress.h"
#include "tcc/runtime/upper_state.h"

namespace tcc::rt {

namespace {
thread_local const PermanentOptions* currentOptions = nullptr;
thread_local std::string lastError;
}  // namespace

PermanentOptionsScope::PermanentOptionsScope(PermanentOptions options)
    : previous_(currentOptions), options_(std::move(options)) {
  currentOptions = &options_;
}
PermanentOptionsScope::~PermanentOptionsScope() { currentOptions = previous_; }

namespace permanent {

const PermanentOptions& currentPermanentOptions() {
  static const PermanentOptions kDefaults;
  return currentOptions ? *currentOptions : kDefaults;
}

namespace {

constexpr double kCheckpointIntervalSeconds = 10;

// Runs the chunks of one mode and returns the sum of all partial sums.
template <typename Sum, typename RunChunk>
Sum sumOfChunks(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
                RunChunk&& runChunk) {
  const ChunkPlan plan = planChunks(matrix.n);
  std::vector<Sum> partials(plan.chunks, Sum(0));
  std::vector<std::atomic<uint8_t>> done(plan.chunks);
  int64_t doneBefore = 0;

  const std::string& path = options.checkpointPath;
  for (int64_t chunk : resumeFromCheckpoint(path, matrix, mode, plan, partials)) {
    done[chunk].store(1);
    ++doneBefore;
  }
  std::vector<int64_t> todo;
  for (int64_t chunk = 0; chunk < plan.chunks; ++chunk)
    if (!done[chunk].load()) todo.push_back(chunk);

  auto saveCheckpoint = [&] {
    if (path.empty()) return;
    Checkpoint checkpoint{matrix.fingerprint, mode, plan.chunks, {}};
    for (int64_t chunk = 0; chunk < plan.chunks; ++chunk)
      if (done[chunk].load(std::memory_order_acquire)) checkpoint.partials[chunk] = partialText(partials[chunk]);
    writeCheckpoint(path, checkpoint);
  };
  InterruptScope interrupt;
  saveCheckpoint();  // an unwritable path fails now, not after the work
  std::atomic<bool> stopRun{false};
  StopFlags stop{&stopRun, &InterruptScope::flag()};
  std::atomic<int64_t> completed{doneBefore};
  std::atomic<int64_t> completedThisRun{0};
  std::atomic<bool> overflow{false};
  std::mutex reportMutex;
  std::string saveError;
  ProgressReporter progress(options.progress, plan.chunks, plan.chunkSize, doneBefore);
  auto lastSave = std::chrono::steady_clock::now();

#ifdef _OPENMP
  // Below about a million steps (milliseconds), starting threads costs more than they save.
  constexpr uint64_t kSerialBelow = uint64_t{1} << 20;
  const int threads = plan.iterations < kSerialBelow ? 1
                      : options.threads > 0         ? options.threads
                                                    : omp_get_max_threads();
#endif
  const auto todoCount = static_cast<int64_t>(todo.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t t = 0; t < todoCount; ++t) {
    if (stop.requested()) continue;
    const int64_t chunk = todo[t];
    const uint64_t begin = static_cast<uint64_t>(chunk) * plan.chunkSize;
    ChunkOutcome<Sum> outcome = runChunk(begin, begin + plan.chunkSize, stop);
    if (outcome.stopped) continue;
    if (outcome.overflow) {
      overflow.store(true);
      stopRun.store(true);
      continue;
    }
    partials[chunk] = outcome.sum;
    done[chunk].store(1, std::memory_order_release);
    const int64_t total = ++completed;
    if (options.chunkLimit > 0 && ++completedThisRun >= options.chunkLimit) stopRun.store(true);
    std::unique_lock lock(reportMutex, std::try_to_lock);
    if (!lock.owns_lock()) continue;
    progress.update(total);
    auto now = std::chrono::steady_clock::now();
    if (!path.empty() && std::chrono::duration<double>(now - lastSave).count() >= kCheckpointIntervalSeconds) {
      lastSave = now;
      try {
        saveCheckpoint();
      } catch (const PermanentError& error) {
        saveError = error.what();
        stopRun.store(true);
      }
    }
  }

  const int64_t finished = completed.load();
  const bool complete = finished == plan.chunks;
  progress.finish(finished, complete);
  if (overflow.load()) throw overflowError(matrix.n);
  if (!saveError.empty()) throw PermanentError(saveError);
  saveCheckpoint();
  if (!complete) throw unfinishedRunError(finished, plan.chunks, path);
  return addInChunkOrder(partials, matrix.n);
}

// The sum over every chunk: on this process alone, or, under mpirun with
// more than one rank, over all of them.
template <typename Sum>
Sum sumOverChunks(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
                  RangeSum<Sum> rangeSum) {
  if (distributedRunActive())
    return distributedSumOfChunks<Sum>(matrix, mode, options, *engineForThisRank<Sum>(rangeSum, options));
  return sumOfChunks<Sum>(matrix, mode, options, rangeSum);
}

struct FloatEngineOverride {
  std::string mode;
  FloatEngineFactory makeEngine;
};
FloatEngineOverride& floatEngineOverride() {
  static FloatEngineOverride engine;
  return engine;
}

double floatPermanent(SortedColumnMatrix matrix, const PermanentOptions& options) {
  if (const FloatEngineOverride& engine = floatEngineOverride(); !engine.mode.empty())
    return floatPermanentOnEngine(std::move(matrix), engine.mode, options, engine.makeEngine);
  if (matrix.n == 0) return 1;
  if (!hasPerfectMatching(matrix)) return 0;
  const int exponent = equilibrateByPowersOfTwo(matrix);
  RyserTables<double> tables = floatTables(matrix);
  double sum = sumOverChunks<double>(matrix, "float", options, [&](uint64_t begin, uint64_t end, StopFlags stop) {
    return floatChunk(tables, begin, end, stop);
  });
  return std::ldexp((matrix.n % 2 == 1 ? 2.0 : -2.0) * sum, exponent);
}

Int128 exactPermanent(const SortedColumnMatrix& matrix, const PermanentOptions& options) {
  if (matrix.n == 0) return 1;
  RyserTables<int64_t> tables = exactTables(matrix);  // checks the entries first
  if (!hasPerfectMatching(matrix)) return 0;
  const bool checked = !exactSumCannotOverflow(matrix);
  Int128 sum = sumOverChunks<Int128>(matrix, "exact", options, [&](uint64_t begin, uint64_t end, StopFlags stop) {
    return exactChunk(tables, begin, end, stop, checked);
  });
  // sum = (-1)^(n-1) perm * 2^(n-1): the doubled row sums scale each product by 2^n.
  const Int128 scale = Int128(1) << (matrix.n - 1);
  if (sum % scale != 0)
    throw PermanentError("perm: internal error: the exact sum is not a multiple of 2^(n-1)");
  Int128 result = sum / scale;
  return matrix.n % 2 == 1 ? result : -result;
}

template <typename T>
void storeExact(tcc_tensor& result, Int128 value) {
  if (value < Int128(std::numeric_limits<T>::min()) || value > Int128(std::numeric_limits<T>::max()))
    throw PermanentError("perm: the exact permanent " + int128Text(value) + " overflows the result's " +
                         (sizeof(T) == 8 ? "int64" : "int32") + " type");
  *static_cast<T*>(result.vals) = static_cast<T>(value);
}

void computeInto(tcc_tensor& result, const tcc_tensor& tensor) {
  const PermanentOptions& options = currentPermanentOptions();
  if (result.order != 0 || !result.vals) throw PermanentError("perm: the result must be a scalar");
  SortedColumnMatrix matrix = readSortedColumnMatrix(tensor);
  switch (result.datatype) {
    case TCC_FLOAT64: *static_cast<double*>(result.vals) = floatPermanent(matrix, options); break;
    case TCC_FLOAT32: *static_cast<float*>(result.vals) = static_cast<float>(floatPermanent(matrix, options)); break;
    case TCC_INT64: storeExact<int64_t>(result, exactPermanent(matrix, options)); break;
    case TCC_INT32: storeExact<int32_t>(result, exactPermanent(matrix, options)); break;
    default: throw PermanentError("perm: the result's element type has no arithmetic (float16 is storage only)");
  }
}

}  // namespace

void overrideFloatEngine(std::string mode, FloatEngineFactory makeEngine) {
  floatEngineOverride() = FloatEngineOverride{std::move(mode), std::move(makeEngine)};
}

}  // namespace permanent
}  // namespace tcc::rt

extern "C" int tcc_permanent(tcc_tensor* result, const tcc_tensor* matrix) {
  using namespace tcc::rt;
  clearVectorUpperState();
  return permanentStatusOf(lastError, [&] { permanent::computeInto(*result, *matrix); });
}

extern "C" const char* tcc_permanent_last_error(void) { return tcc::rt::lastError.c_str(); }
