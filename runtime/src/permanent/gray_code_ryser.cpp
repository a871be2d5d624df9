#include "gray_code_ryser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace tcc::rt::permanent {
namespace {

constexpr uint64_t kStopCheckInterval = uint64_t{1} << 16;  // iterations between looks at the stop flags

std::string shortText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::vector<double> rowSums(const SortedColumnMatrix& matrix) {
  std::vector<double> sums(matrix.n, 0.0);
  for (int64_t k = 0; k < matrix.nonzeros; ++k) sums[matrix.rows[k]] += matrix.values[k];
  return sums;
}

// The product of `blocks` blocks of four row sums, in four independent
// chains, which keeps the multiplier busy where one chain would wait on
// each multiplication.
inline double productOfBlocks(const double* x, int blocks) {
  double p0 = 1, p1 = 1, p2 = 1, p3 = 1;
  for (int b = 0; b < blocks; ++b, x += 4) {
    p0 *= x[0];
    p1 *= x[1];
    p2 *= x[2];
    p3 *= x[3];
  }
  return (p0 * p1) * (p2 * p3);
}

struct UncheckedProduct {
  static bool product(const int64_t* x, int n, Int128 p, Int128& result) {
    for (int i = 0; i < n; ++i) p *= x[i];
    result = p;
    return true;
  }
  static bool add(Int128& sum, Int128 value, bool negate) {
    sum += negate ? -value : value;
    return true;
  }
};

struct CheckedProduct {
  static bool product(const int64_t* x, int n, Int128 p, Int128& result) {
    for (int i = 0; i < n; ++i)
      if (__builtin_mul_overflow(p, static_cast<Int128>(x[i]), &p)) return false;
    result = p;
    return true;
  }
  static bool add(Int128& sum, Int128 value, bool negate) {
    return negate ? !__builtin_sub_overflow(sum, value, &sum) : !__builtin_add_overflow(sum, value, &sum);
  }
};

// The chunk loop shared by both modes. accumulate(g, restStale) adds
// (-1)^g prod x, where restStale says whether the rows after the frequent
// ones changed since the last call; it returns false on overflow.
template <typename Value, typename Accumulate>
bool walkChunk(const RyserTables<Value>& tables, uint64_t begin, uint64_t end, StopFlags stop, bool& stopped,
               Value* x, Accumulate&& accumulate) {
  const int n = tables.n;
  const int32_t* columnStart = tables.columnStart;
  const int32_t* rows = tables.rows.data();
  const Value* step = tables.step.data();
  const int width = tables.width;
  for (int i = 0; i < width; ++i) x[i] = tables.start[i];
  const uint64_t gray = begin ^ (begin >> 1);
  for (int column = 0; column + 1 < n; ++column) {
    if (!((gray >> column) & 1)) continue;
    for (int32_t k = columnStart[column]; k < columnStart[column + 1]; ++k) x[rows[k]] += step[k];
  }
  int zeros = 0;
  for (int i = 0; i < width; ++i) zeros += x[i] == 0;
  bool restStale = true;
  if (zeros == 0) {
    if (!accumulate(begin, true)) return false;
    restStale = false;
  }
  for (uint64_t g = begin + 1; g < end; ++g) {
    if ((g & (kStopCheckInterval - 1)) == 0 && stop.requested()) {
      stopped = true;
      return true;
    }
    const int column = __builtin_ctzll(g);
    const bool added = ((g ^ (g >> 1)) >> column) & 1;
    for (int32_t k = columnStart[column]; k < columnStart[column + 1]; ++k) {
      Value& entry = x[rows[k]];
      const bool wasZero = entry == 0;
      entry += added ? step[k] : -step[k];
      zeros += (entry == 0) - wasZero;
    }
    restStale |= column >= tables.frequentColumns;
    if (zeros == 0) {
      if (!accumulate(g, restStale)) return false;
      restStale = false;
    }
  }
  return true;
}

template <typename Policy>
ChunkOutcome<Int128> exactChunkWith(const RyserTables<int64_t>& tables, uint64_t begin, uint64_t end,
                                    StopFlags stop) {
  ChunkOutcome<Int128> outcome;
  int64_t x[kMaxWidth];
  Int128 sum = 0, rest = 1;
  const int frequent = tables.frequentWidth;
  bool ok = walkChunk(tables, begin, end, stop, outcome.stopped, x, [&](uint64_t g, bool restStale) {
    Int128 product;
    if (restStale && !Policy::product(x + frequent, tables.width - frequent, 1, rest)) return false;
    return Policy::product(x, frequent, rest, product) && Policy::add(sum, product, g & 1);
  });
  outcome.overflow = !ok;
  outcome.sum = sum;
  return outcome;
}

// Picks how many leading columns count as frequent (minimising the
// expected multiplications per step: the frequent rows' every step, the
// others' after one of the 2^-c steps that flip a later column), then
// renumbers the rows those columns touch to the front.
template <typename Value>
void renumberRowsByFrequentColumns(const SortedColumnMatrix& matrix, RyserTables<Value>& tables) {
  const int n = matrix.n;
  std::vector<char> touched(n, 0);
  int touchedCount = 0, bestColumns = 0;
  double bestCost = n;
  for (int columns = 1; columns < n && columns <= 30; ++columns) {
    for (int32_t k = matrix.columnStart[columns - 1]; k < matrix.columnStart[columns]; ++k)
      if (!touched[matrix.rows[k]]) touched[matrix.rows[k]] = 1, ++touchedCount;
    double cost = touchedCount + (n - touchedCount) * std::ldexp(1.0, -columns);
    if (cost < bestCost) bestCost = cost, bestColumns = columns;
  }
  std::vector<char> frequent(n, 0);
  for (int32_t k = 0; k < matrix.columnStart[bestColumns]; ++k) frequent[matrix.rows[k]] = 1;
  std::vector<int32_t> newIndex(n);
  int next = 0;
  for (int pass = 1; pass >= 0; --pass)
    for (int row = 0; row < n; ++row)
      if (frequent[row] == pass) newIndex[row] = next++;
  const int frequentRows = static_cast<int>(std::count(frequent.begin(), frequent.end(), 1));
  auto roundUp = [](int count) { return (count + 3) / 4 * 4; };
  tables.frequentColumns = bestColumns;
  tables.frequentWidth = roundUp(frequentRows);
  tables.width = tables.frequentWidth + roundUp(n - frequentRows);
  for (int row = 0; row < n; ++row)
    if (!frequent[row]) newIndex[row] += tables.frequentWidth - frequentRows;
  tables.rows.resize(matrix.nonzeros);
  for (int64_t k = 0; k < matrix.nonzeros; ++k) tables.rows[k] = newIndex[matrix.rows[k]];
  std::vector<Value> start(tables.width, Value(1));
  for (int row = 0; row < n; ++row) start[newIndex[row]] = tables.start[row];
  tables.start = std::move(start);
}

// Float mode with the frequent rows' product unrolled: FrequentBlocks is
// frequentWidth / 4, known at compile time.
template <int FrequentBlocks>
ChunkOutcome<double> floatChunkWith(const RyserTables<double>& tables, uint64_t begin, uint64_t end,
                                    StopFlags stop) {
  ChunkOutcome<double> outcome;
  double x[kMaxWidth];
  double sum = 0, rest = 1;
  constexpr int frequent = 4 * FrequentBlocks;
  const int restBlocks = (tables.width - frequent) / 4;
  walkChunk(tables, begin, end, stop, outcome.stopped, x, [&](uint64_t g, bool restStale) {
    if (restStale) rest = productOfBlocks(x + frequent, restBlocks);
    double product = productOfBlocks(x, FrequentBlocks) * rest;
    sum += (g & 1) ? -product : product;
    return true;
  });
  outcome.sum = sum;
  return outcome;
}

using FloatChunkFunction = ChunkOutcome<double> (*)(const RyserTables<double>&, uint64_t, uint64_t, StopFlags);

template <int... Blocks>
constexpr std::array<FloatChunkFunction, sizeof...(Blocks)> floatChunkTable(std::integer_sequence<int, Blocks...>) {
  return {&floatChunkWith<Blocks>...};
}

}  // namespace

RyserTables<double> floatTables(const SortedColumnMatrix& matrix) {
  RyserTables<double> tables;
  tables.n = matrix.n;
  tables.columnStart = matrix.columnStart.data();
  std::vector<double> sums = rowSums(matrix);
  tables.start.resize(matrix.n);
  for (int i = 0; i < matrix.n; ++i) tables.start[i] = -0.5 * sums[i];
  if (matrix.n > 0) {
    const int last = matrix.n - 1;
    for (int32_t k = matrix.columnStart[last]; k < matrix.columnStart[last + 1]; ++k)
      tables.start[matrix.rows[k]] += matrix.values[k];
  }
  tables.step = matrix.values;
  renumberRowsByFrequentColumns(matrix, tables);
  return tables;
}

RyserTables<int64_t> exactTables(const SortedColumnMatrix& matrix) {
  constexpr double kLargestExact = 9007199254740992.0;  // 2^53
  RyserTables<int64_t> tables;
  tables.n = matrix.n;
  tables.columnStart = matrix.columnStart.data();
  tables.step.resize(matrix.nonzeros);
  tables.start.assign(matrix.n, 0);
  for (int column = 0; column < matrix.n; ++column) {
    for (int32_t k = matrix.columnStart[column]; k < matrix.columnStart[column + 1]; ++k) {
      double value = matrix.values[k];
      if (value != std::trunc(value) || std::abs(value) > kLargestExact)
        throw PermanentError("perm: an exact permanent (integer result) needs integer entries up to 2^53, but entry (" +
                             std::to_string(matrix.rows[k] + 1) + ", " +
                             std::to_string(matrix.originalColumn[column] + 1) + ") is " + shortText(value));
      auto integer = static_cast<int64_t>(value);
      tables.step[k] = 2 * integer;  // |row sums| <= 64 * 2^54: no int64 overflow
      tables.start[matrix.rows[k]] += column == matrix.n - 1 ? integer : -integer;
    }
  }
  renumberRowsByFrequentColumns(matrix, tables);
  return tables;
}

bool exactSumCannotOverflow(const SortedColumnMatrix& matrix) {
  // |X_i| <= sum_j |a_ij| at every g, and 2^(n-1) products are summed.
  std::vector<double> absoluteRowSums(matrix.n, 0.0);
  for (int64_t k = 0; k < matrix.nonzeros; ++k) absoluteRowSums[matrix.rows[k]] += std::abs(matrix.values[k]);
  double bits = matrix.n;  // log2(2^(n-1)) plus one bit of slack
  for (double sum : absoluteRowSums) bits += std::log2(std::max(sum, 1.0));
  return bits < 126;
}

ChunkOutcome<double> floatChunk(const RyserTables<double>& tables, uint64_t begin, uint64_t end, StopFlags stop) {
  static constexpr auto kChunks = floatChunkTable(std::make_integer_sequence<int, kMaxWidth / 4 + 1>());
  return kChunks[tables.frequentWidth / 4](tables, begin, end, stop);
}

ChunkOutcome<Int128> exactChunk(const RyserTables<int64_t>& tables, uint64_t begin, uint64_t end, StopFlags stop,
                                bool checked) {
  return checked ? exactChunkWith<CheckedProduct>(tables, begin, end, stop)
                 : exactChunkWith<UncheckedProduct>(tables, begin, end, stop);
}

}  // namespace tcc::rt::permanent
