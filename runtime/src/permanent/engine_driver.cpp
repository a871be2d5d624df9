#include "engine_driver.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <vector>

#include "checkpoint.h"
#include "chunk_plan.h"
#include "distributed_sum.h"
#include "interrupt.h"
#include "progress.h"

namespace tcc::rt::permanent {
namespace {

constexpr double kCheckpointIntervalSeconds = 10;

}  // namespace

double sumOfChunksOnEngine(const SortedColumnMatrix& matrix, const std::string& mode, const PermanentOptions& options,
                           RangeEngine<double>& engine) {
  const ChunkPlan plan = planChunks(matrix.n);
  std::vector<double> partials(plan.chunks, 0.0);
  std::vector<uint8_t> done(plan.chunks, 0);
  int64_t doneBefore = 0;
  const std::string& path = options.checkpointPath;
  for (int64_t chunk : resumeFromCheckpoint(path, matrix, mode.c_str(), plan, partials)) {
    done[chunk] = 1;
    ++doneBefore;
  }
  std::vector<int64_t> todo;
  for (int64_t chunk = 0; chunk < plan.chunks; ++chunk)
    if (!done[chunk]) todo.push_back(chunk);

  std::mutex doneMutex;  // guards partials and done against the engine's threads
  auto saveCheckpoint = [&] {
    if (path.empty()) return;
    Checkpoint checkpoint{matrix.fingerprint, mode, plan.chunks, {}};
    std::lock_guard lock(doneMutex);
    for (int64_t chunk = 0; chunk < plan.chunks; ++chunk)
      if (done[chunk]) checkpoint.partials[chunk] = partialText(partials[chunk]);
    writeCheckpoint(path, checkpoint);
  };
  InterruptScope interrupt;
  saveCheckpoint();  // an unwritable path fails now, not after the work
  std::atomic<bool> stopRun{false};
  StopFlags stop{&stopRun, &InterruptScope::flag()};
  int64_t completed = doneBefore, completedThisRun = 0;
  ProgressReporter progress(options.progress, plan.chunks, plan.chunkSize, doneBefore);
  auto lastSave = std::chrono::steady_clock::now();

  const int64_t batch = std::max<int64_t>(1, engine.parallelism());
  for (size_t next = 0; next < todo.size() && !stop.requested();) {
    int64_t count = std::min<int64_t>(batch, static_cast<int64_t>(todo.size() - next));
    if (options.chunkLimit > 0) count = std::min(count, options.chunkLimit - completedThisRun);
    std::span<const int64_t> chunks(todo.data() + next, static_cast<size_t>(count));
    next += static_cast<size_t>(count);
    engine.sumChunks(chunks, plan.chunkSize, stop, [&](int64_t chunk, const ChunkOutcome<double>& outcome) {
      std::lock_guard lock(doneMutex);
      if (outcome.stopped || done[chunk]) return;
      partials[chunk] = outcome.sum;
      done[chunk] = 1;
      ++completed;
      ++completedThisRun;
    });
    if (options.chunkLimit > 0 && completedThisRun >= options.chunkLimit) stopRun.store(true);
    progress.update(completed);
    auto now = std::chrono::steady_clock::now();
    if (!path.empty() && std::chrono::duration<double>(now - lastSave).count() >= kCheckpointIntervalSeconds) {
      lastSave = now;
      saveCheckpoint();
    }
  }

  const bool complete = completed == plan.chunks;
  progress.finish(completed, complete);
  saveCheckpoint();
  if (!complete) throw unfinishedRunError(completed, plan.chunks, path);
  return addInChunkOrder(partials, matrix.n);
}

double floatPermanentOnEngine(SortedColumnMatrix matrix, const std::string& mode, const PermanentOptions& options,
                              const FloatEngineFactory& makeEngine) {
  if (matrix.n == 0) return 1;
  if (!hasPerfectMatching(matrix)) return 0;
  const int exponent = equilibrateByPowersOfTwo(matrix);
  std::unique_ptr<RangeEngine<double>> engine = makeEngine(matrix);
  // Under mpirun with several ranks, each rank's engine takes the batches
  // its rank is granted (every rank builds its own, e.g. on its GPU).
  const double sum = distributedRunActive() ? distributedSumOfChunks<double>(matrix, mode.c_str(), options, *engine)
                                            : sumOfChunksOnEngine(matrix, mode, options, *engine);
  return std::ldexp((matrix.n % 2 == 1 ? 2.0 : -2.0) * sum, exponent);
}

}  // namespace tcc::rt::permanent
