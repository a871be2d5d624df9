// The entry point generated kernels call, and the chunk driver: plan the
// chunks, resume from a checkpoint, run the rest on OpenMP threads, and add
// the chunks' partial sums in chunk order (so the result does not depend on
// the thread count or on how often the run was stopped and resumed).
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
#include "gray_code_ryser.h"
#include "interrupt.h"
#include "permanent_matrix.h"
#include "progress.h"

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
namespace {

constexpr double kCheckpointIntervalSeconds = 10;

// 2^(n-1) iterations in 2^chunkBits chunks of a power-of-two size: at least
// 4096 chunks (or one per iteration), more once a chunk would pass 2^23
// iterations, at most 65536.
struct ChunkPlan {
  uint64_t iterations = 1;
  int64_t chunks = 1;
  uint64_t chunkSize = 1;
};

ChunkPlan planChunks(int n) {
  ChunkPlan plan;
  int iterationBits = n - 1;
  int chunkBits = std::min(iterationBits, std::clamp(iterationBits - 23, 12, 16));
  plan.iterations = uint64_t{1} << iterationBits;
  plan.chunks = int64_t{1} << chunkBits;
  plan.chunkSize = plan.iterations >> chunkBits;
  return plan;
}

std::string int128Text(Int128 value) {
  if (value == 0) return "0";
  bool negative = value < 0;
  std::string digits;
  while (value != 0) {
    int digit = static_cast<int>(value % 10);
    digits.push_back(static_cast<char>('0' + (negative ? -digit : digit)));
    value /= 10;
  }
  if (negative) digits.push_back('-');
  return {digits.rbegin(), digits.rend()};
}

bool parseInt128(const std::string& text, Int128& value) {
  size_t k = text[0] == '-' ? 1 : 0;
  if (k == text.size()) return false;
  value = 0;
  for (; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9') return false;
    int digit = text[k] - '0';
    if (__builtin_mul_overflow(value, 10, &value) ||
        (text[0] == '-' ? __builtin_sub_overflow(value, digit, &value) : __builtin_add_overflow(value, digit, &value)))
      return false;
  }
  return true;
}

std::string partialText(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}
std::string partialText(Int128 value) { return int128Text(value); }

bool parsePartial(const std::string& text, double& value) {
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end && *end == '\0';
}
bool parsePartial(const std::string& text, Int128& value) { return parseInt128(text, value); }

// Runs the chunks of one mode and returns the sum of all partial sums.
template <typename Sum, typename RunChunk>
Sum sumOfChunks(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
                RunChunk&& runChunk) {
  const ChunkPlan plan = planChunks(matrix.n);
  std::vector<Sum> partials(plan.chunks, Sum(0));
  std::vector<std::atomic<uint8_t>> done(plan.chunks);
  int64_t doneBefore = 0;

  const std::string& path = options.checkpointPath;
  if (!path.empty()) {
    if (auto checkpoint = readCheckpoint(path)) {
      if (checkpoint->fingerprint != matrix.fingerprint || checkpoint->mode != mode ||
          checkpoint->chunks != plan.chunks)
        throw PermanentError("perm: checkpoint " + path + " belongs to another computation (" + checkpoint->mode +
                             " permanent of a different matrix); remove it or name another file");
      for (const auto& [chunk, text] : checkpoint->partials) {
        if (!parsePartial(text, partials[chunk]))
          throw PermanentError("perm: checkpoint " + path + ": bad partial sum '" + text + "' of chunk " +
                               std::to_string(chunk));
        done[chunk].store(1);
        ++doneBefore;
      }
    }
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
  if (overflow.load())
    throw PermanentError("perm: the exact permanent overflows 128-bit integer accumulation (n = " +
                         std::to_string(matrix.n) + "); declare the result float64 for a floating-point value");
  if (!saveError.empty()) throw PermanentError(saveError);
  saveCheckpoint();
  if (!complete) {
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.1f%%", 100.0 * double(finished) / double(plan.chunks));
    std::string why = InterruptScope::flag().load() ? "interrupted" : "stopped at the chunk limit";
    throw PermanentError("perm: " + why + " after " + std::to_string(finished) + " of " +
                         std::to_string(plan.chunks) + " chunks (" + percent + ")" +
                         (path.empty() ? "; run with a checkpoint file to keep the work done"
                                       : "; checkpoint saved to " + path + ", run again with it to resume"));
  }
  Sum sum = 0;
  for (const Sum& partial : partials) {
    if constexpr (std::is_same_v<Sum, Int128>) {
      if (__builtin_add_overflow(sum, partial, &sum))
        throw PermanentError("perm: the exact permanent overflows 128-bit integer accumulation (n = " +
                             std::to_string(matrix.n) + ")");
    } else {
      sum += partial;
    }
  }
  return sum;
}

double floatPermanent(SortedColumnMatrix matrix, const PermanentOptions& options) {
  if (matrix.n == 0) return 1;
  if (!hasPerfectMatching(matrix)) return 0;
  const int exponent = equilibrateByPowersOfTwo(matrix);
  RyserTables<double> tables = floatTables(matrix);
  double sum = sumOfChunks<double>(matrix, "float", options, [&](uint64_t begin, uint64_t end, StopFlags stop) {
    return floatChunk(tables, begin, end, stop);
  });
  return std::ldexp((matrix.n % 2 == 1 ? 2.0 : -2.0) * sum, exponent);
}

Int128 exactPermanent(const SortedColumnMatrix& matrix, const PermanentOptions& options) {
  if (matrix.n == 0) return 1;
  RyserTables<int64_t> tables = exactTables(matrix);  // checks the entries first
  if (!hasPerfectMatching(matrix)) return 0;
  const bool checked = !exactSumCannotOverflow(matrix);
  Int128 sum = sumOfChunks<Int128>(matrix, "exact", options, [&](uint64_t begin, uint64_t end, StopFlags stop) {
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
  static const PermanentOptions kDefaults;
  const PermanentOptions& options = currentOptions ? *currentOptions : kDefaults;
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
}  // namespace permanent
}  // namespace tcc::rt

extern "C" int tcc_permanent(tcc_tensor* result, const tcc_tensor* matrix) {
  using namespace tcc::rt;
  lastError.clear();
  try {
    permanent::computeInto(*result, *matrix);
    return 0;
  } catch (const std::exception& error) {
    lastError = error.what();
  } catch (...) {
    lastError = "perm: unknown failure";
  }
  return kPermanentFailedStatus;
}

extern "C" const char* tcc_permanent_last_error(void) { return tcc::rt::lastError.c_str(); }
