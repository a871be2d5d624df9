// The Compress stage in parts, on several threads at once. A sorted,
// deduplicated result cut into parts by ranges of its first level's
// coordinates (parallel_merge.h) holds, at every level, a contiguous run of
// the output's positions of its own. So each part counts its positions per
// level (countPartPositions), a prefix sum over the parts gives each part
// its offsets (partOffsets), and each part writes its slice of every pos,
// crd and vals array (fillPart), with no part touching another's: the same
// arrays compress() builds from the whole, bit for bit.
//
// What the parts share is the first entry (0) of every compressed level's
// pos, and the first level's whole pos when it is compressed (0 and the
// total): the caller writes those once (fillSharedPos).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tcc/ism/all_array.h"
#include "tcc/ism/component.h"
#include "tcc/ism/level_format.h"

namespace tcc::ism {

template <int N>
using LevelPositions = std::array<int64_t, N>;

namespace detail {

// The first level at which two coordinates differ (N when equal).
template <int N>
inline int firstDifference(const Coordinates<N>& a, const Coordinates<N>& b) {
  for (int l = 0; l < N; ++l)
    if (a[l] != b[l]) return l;
  return N;
}

// A compressed level's position is fresh at component k when k starts the
// part, when the prefix up to it changed, or when it or a level above is
// not unique (every component then has a parent of its own): that last
// case, per level.
template <int N>
std::array<bool, N> freshAtEveryComponent(const std::vector<LevelSpec>& levels) {
  std::array<bool, N> fresh{};
  bool anyNonUnique = false;
  for (int l = 0; l < N; ++l) {
    anyNonUnique = anyNonUnique || (levels[l].kind == LevelKind::Compressed && !levels[l].unique);
    fresh[l] = anyNonUnique;
  }
  return fresh;
}

}  // namespace detail

// Positions at each level of the part holding first-level coordinates
// [firstBegin, firstEnd), sorted and distinct (the rule of compress()).
// A part is a CooBuffer or a CooSpan (all_array.h): crd[k], vals[k], size().
template <int N, class Part>
LevelPositions<N> countPartPositions(const Part& part, int32_t firstBegin, int32_t firstEnd,
                                     const Shape<N>& shape, const std::vector<LevelSpec>& levels) {
  LevelPositions<N> count{};
  const auto& crd = part.crd;
  const std::size_t size = part.size();
  const std::array<bool, N> alwaysFresh = detail::freshAtEveryComponent<N>(levels);
  for (std::size_t k = 0; k < size; ++k) {
    int first = k == 0 ? 0 : detail::firstDifference<N>(crd[k - 1], crd[k]);
    for (int l = 0; l < N; ++l)
      if (levels[l].kind == LevelKind::Compressed && (alwaysFresh[l] || first <= l)) ++count[l];
  }
  for (int l = 0; l < N; ++l) {
    int64_t parents = l == 0 ? 1 : count[l - 1];
    if (levels[l].kind == LevelKind::Dense)
      count[l] = l == 0 ? int64_t{firstEnd} - firstBegin : parents * shape.levelDim(l);
    else if (levels[l].kind == LevelKind::Singleton)
      count[l] = parents;
  }
  return count;
}

// Each part's first position at each level (an exclusive prefix sum), and
// the totals (the output's sizes) in `totals`.
template <int N>
std::vector<LevelPositions<N>> partOffsets(const std::vector<LevelPositions<N>>& counts, LevelPositions<N>& totals) {
  std::vector<LevelPositions<N>> offsets(counts.size());
  totals = LevelPositions<N>{};
  for (std::size_t p = 0; p < counts.size(); ++p) {
    offsets[p] = totals;
    for (int l = 0; l < N; ++l) totals[l] += counts[p][l];
  }
  return offsets;
}

// The output's arrays in level order: pos of compressed levels (positions
// of the level above + 1 entries), crd of compressed and singleton levels,
// and one value per position of the last level, in the element type T.
template <int N, class T>
struct OutputArrays {
  int64_t* pos[N] = {};
  int32_t* crd[N] = {};
  T* vals = nullptr;
};

// The entries of the pos arrays that belong to no part.
template <int N, class T>
void fillSharedPos(const std::vector<LevelSpec>& levels, const LevelPositions<N>& totals, OutputArrays<N, T>& out) {
  for (int l = 0; l < N; ++l)
    if (levels[l].kind == LevelKind::Compressed) out.pos[l][0] = 0;
  if (levels[0].kind == LevelKind::Compressed) out.pos[0][1] = totals[0];
}

// Writes the part's slice of every array. Where dense levels leave
// positions that no component fills, their values are cleared first unless
// `valuesArriveZeroed`.
template <int N, class Part, class T>
void fillPart(const Part& part, int32_t firstBegin, const Shape<N>& shape, const std::vector<LevelSpec>& levels,
              const LevelPositions<N>& count, const LevelPositions<N>& offset, OutputArrays<N, T>& out,
              bool valuesArriveZeroed) {
  const auto& crd = part.crd;
  const auto& vals = part.vals;
  const std::size_t size = part.size();
  const std::array<bool, N> alwaysFresh = detail::freshAtEveryComponent<N>(levels);
  for (int l = 0; l < N; ++l) {
    // Counts per parent go into pos[parent + 1], summed below.
    if (levels[l].kind == LevelKind::Compressed && l > 0)
      for (int64_t p = 1; p <= count[l - 1]; ++p) out.pos[l][offset[l - 1] + p] = 0;
  }
  if (!valuesArriveZeroed && count[N - 1] != static_cast<int64_t>(size))
    for (int64_t p = 0; p < count[N - 1]; ++p) out.vals[offset[N - 1] + p] = T(0);
  LevelPositions<N> fresh{};  // positions taken so far, per compressed level
  for (std::size_t k = 0; k < size; ++k) {
    int first = k == 0 ? 0 : detail::firstDifference<N>(crd[k - 1], crd[k]);
    int64_t parent = 0;  // the part's own position at the level above
    for (int l = 0; l < N; ++l) {
      int64_t position = 0;
      switch (levels[l].kind) {
        case LevelKind::Dense:
          position = l == 0 ? int64_t{crd[k][0]} - firstBegin : parent * shape.levelDim(l) + crd[k][l];
          break;
        case LevelKind::Compressed:
          if (alwaysFresh[l] || first <= l) {
            out.crd[l][offset[l] + fresh[l]] = crd[k][l];
            if (l > 0) ++out.pos[l][offset[l - 1] + parent + 1];
            ++fresh[l];
          }
          position = fresh[l] - 1;
          break;
        case LevelKind::Singleton:
          position = parent;
          out.crd[l][offset[l] + parent] = crd[k][l];
          break;
      }
      parent = position;
    }
    out.vals[offset[N - 1] + parent] = static_cast<T>(vals[k]);
  }
  for (int l = 1; l < N; ++l) {
    if (levels[l].kind != LevelKind::Compressed) continue;
    int64_t running = offset[l];
    for (int64_t p = 1; p <= count[l - 1]; ++p) {
      running += out.pos[l][offset[l - 1] + p];
      out.pos[l][offset[l - 1] + p] = running;
    }
  }
}

}  // namespace tcc::ism
