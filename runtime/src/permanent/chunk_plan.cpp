#include "chunk_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "interrupt.h"

namespace tcc::rt::permanent {
namespace {

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

}  // namespace

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

template <typename Sum>
std::vector<int64_t> resumeFromCheckpoint(const std::string& path, const SortedColumnMatrix& matrix,
                                          const char* mode, const ChunkPlan& plan, std::vector<Sum>& partials) {
  std::vector<int64_t> done;
  if (path.empty()) return done;
  auto checkpoint = readCheckpoint(path);
  if (!checkpoint) return done;
  if (checkpoint->fingerprint != matrix.fingerprint || checkpoint->mode != mode || checkpoint->chunks != plan.chunks)
    throw PermanentError("perm: checkpoint " + path + " belongs to another computation (" + checkpoint->mode +
                         " permanent of a different matrix); remove it or name another file");
  for (const auto& [chunk, text] : checkpoint->partials) {
    if (!parsePartial(text, partials[chunk]))
      throw PermanentError("perm: checkpoint " + path + ": bad partial sum '" + text + "' of chunk " +
                           std::to_string(chunk));
    done.push_back(chunk);
  }
  return done;
}

template std::vector<int64_t> resumeFromCheckpoint<double>(const std::string&, const SortedColumnMatrix&, const char*,
                                                           const ChunkPlan&, std::vector<double>&);
template std::vector<int64_t> resumeFromCheckpoint<Int128>(const std::string&, const SortedColumnMatrix&, const char*,
                                                           const ChunkPlan&, std::vector<Int128>&);

double addInChunkOrder(const std::vector<double>& partials, int) {
  // Neumaier's compensated sum: the partials alternate in sign and nearly
  // cancel, so plain addition would lose the low bits of the small total.
  double sum = 0, compensation = 0;
  for (double partial : partials) {
    double next = sum + partial;
    compensation += std::abs(sum) >= std::abs(partial) ? (sum - next) + partial : (partial - next) + sum;
    sum = next;
  }
  return sum + compensation;
}

Int128 addInChunkOrder(const std::vector<Int128>& partials, int n) {
  Int128 sum = 0;
  for (const Int128& partial : partials)
    if (__builtin_add_overflow(sum, partial, &sum)) throw overflowError(n);
  return sum;
}

PermanentError overflowError(int n) {
  return PermanentError("perm: the exact permanent overflows 128-bit integer accumulation (n = " + std::to_string(n) +
                        "); declare the result float64 for a floating-point value");
}

PermanentError unfinishedRunError(int64_t completed, int64_t chunks, const std::string& checkpointPath) {
  char percent[16];
  std::snprintf(percent, sizeof percent, "%.1f%%", 100.0 * double(completed) / double(chunks));
  std::string why = InterruptScope::flag().load() ? "interrupted" : "stopped at the chunk limit";
  return PermanentError("perm: " + why + " after " + std::to_string(completed) + " of " + std::to_string(chunks) +
                        " chunks (" + percent + ")" +
                        (checkpointPath.empty() ? "; run with a checkpoint file to keep the work done"
                                                : "; checkpoint saved to " + checkpointPath +
                                                    ", run again with it to resume"));
}

}  // namespace tcc::rt::permanent
