// One chunk of Nijenhuis and Wilf's Gray-code form of Ryser's formula:
//
//   perm(A) = (-1)^(n-1) 2 sum_{g=0}^{2^(n-1)-1} (-1)^g prod_i x_i(g),
//   x_i(g) = a_{i,n-1} - (1/2) sum_j a_ij + sum_{j in gray(g)} a_ij,
//
// gray(g) = g ^ (g >> 1) naming a subset of the columns 0..n-2. Step g
// flips column ctz(g) in or out, so only that column's nonzeros change x.
// A chunk is a range [begin, end) of g; it sets x up for `begin` from
// scratch, so chunks run independently. While any x_i is zero (counted as
// entries change) the product is skipped.
//
// Exact mode runs on X = 2x, integers when A's entries are: the products
// are 2^n times too large, which the caller divides out at the end.
//
// Column c flips at every 2^(c+1)-th step, so the first (sparsest, after
// the degree sort) columns change x almost always and the rest rarely. The
// rows are renumbered so that those the first `frequentColumns` columns
// touch come first: the product of the other rows' x is kept from step to
// step and recomputed only after a later column flipped (the CPU form of
// Elbek and Kaya's register/global split).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "permanent_matrix.h"

namespace tcc::rt::permanent {

using Int128 = __int128;

// The x vector at g = 0 and the column values one step adds, in the value
// type of a mode (double, or int64 for exact mode's doubled integers).
template <typename Value>
struct RyserTables {
  int n = 0;
  // x holds the frequent rows in [0, frequentWidth), the others from
  // frequentWidth on, each part padded with ones to a multiple of 4 so the
  // products run in whole blocks of four; width is the padded length.
  int frequentColumns = 0;    // columns 0..frequentColumns-1 touch only the frequent rows
  int frequentWidth = 0, width = 0;
  const int32_t* columnStart = nullptr;
  std::vector<int32_t> rows;  // per nonzero of the sorted CSC, renumbered
  std::vector<Value> start;   // x(0), `width` entries
  std::vector<Value> step;    // per nonzero of the sorted CSC
};

inline constexpr int kMaxWidth = kMaxOrder + 8;

RyserTables<double> floatTables(const SortedColumnMatrix& matrix);
// Throws PermanentError naming an entry that is not an integer (or whose
// magnitude is beyond 2^53).
RyserTables<int64_t> exactTables(const SortedColumnMatrix& matrix);
// Whether every product and partial sum of exact mode provably fits in a
// signed 128-bit integer, so the chunks need no overflow checks.
bool exactSumCannotOverflow(const SortedColumnMatrix& matrix);

// Stops a chunk early: the run's own flag (a chunk limit, another chunk's
// error) or the process-wide interrupt flag that SIGINT sets.
struct StopFlags {
  const std::atomic<bool>* run;
  const std::atomic<bool>* interrupt;
  bool requested() const {
    return run->load(std::memory_order_relaxed) || interrupt->load(std::memory_order_relaxed);
  }
};

template <typename Sum>
struct ChunkOutcome {
  Sum sum = 0;            // sum of (-1)^g prod_i x_i(g) over the chunk
  bool stopped = false;   // left unfinished: sum is meaningless
  bool overflow = false;  // exact mode: beyond 128 bits
};

ChunkOutcome<double> floatChunk(const RyserTables<double>& tables, uint64_t begin, uint64_t end, StopFlags stop);
// checked: test every product and sum for 128-bit overflow.
ChunkOutcome<Int128> exactChunk(const RyserTables<int64_t>& tables, uint64_t begin, uint64_t end, StopFlags stop,
                                bool checked);

}  // namespace tcc::rt::permanent
