// The Compress stage (§4.3): builds any chain of dense, compressed and
// singleton levels from a sorted, deduplicated all array, level by level as
// in TACO's COO-to-format conversion. Each component carries its position
// at the level above; a level maps it to a position of its own:
//   dense:       parent * dimension + coordinate (missing ones read as 0)
//   compressed:  a new position when the prefix changes (always, when not
//                unique), counted into pos[parent + 1]
//   singleton:   the parent's position; its parent must be non-unique.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ism/all_array.h"
#include "tcc/ism/level_format.h"
#include "tcc/ism/memory_counter.h"

namespace tcc::ism {

// Throws std::invalid_argument when `levels` cannot store a tensor of
// order `order`, with the reason.
inline void validateLevels(const std::vector<LevelSpec>& levels, int order) {
  if (static_cast<int>(levels.size()) != order) {
    throw std::invalid_argument("ism: compress into " + std::to_string(levels.size()) +
                                " levels, but the workspace has order " + std::to_string(order));
  }
  for (int l = 0; l < order; ++l) {
    if (levels[l].kind != LevelKind::Singleton) continue;
    if (l == 0) throw std::invalid_argument("ism: level 0 cannot be singleton (it has no parent)");
    const LevelSpec& parent = levels[l - 1];
    if (parent.kind == LevelKind::Dense || parent.unique) {
      throw std::invalid_argument("ism: singleton level " + std::to_string(l) +
                                  " must follow a non-unique compressed or singleton level, not " +
                                  toString(parent));
    }
  }
}

template <int N>
CompressedTensor compress(const AllArray<N>& all, const Shape<N>& shape,
                          const std::vector<LevelSpec>& levels) {
  validateLevels(levels, N);
  const auto& crd = all.coordinates();
  const auto& vals = all.values();
  const std::size_t count = all.size();

  CompressedTensor out;
  out.levels.resize(N);
  std::vector<int64_t, CountingAllocator<int64_t>> position(count, 0);
  int64_t parentCount = 1;

  for (int l = 0; l < N; ++l) {
    CompressedLevel& level = out.levels[l];
    level.spec = levels[l];
    level.dimension = shape.levelDim(l);
    switch (levels[l].kind) {
      case LevelKind::Dense: {
        if (parentCount > std::numeric_limits<int64_t>::max() / level.dimension) {
          throw std::length_error("ism: dense level " + std::to_string(l) + " would hold more " +
                                  "positions than fit in 64 bits");
        }
        for (std::size_t k = 0; k < count; ++k) position[k] = position[k] * level.dimension + crd[k][l];
        parentCount *= level.dimension;
        break;
      }
      case LevelKind::Compressed: {
        level.pos.assign(static_cast<std::size_t>(parentCount) + 1, 0);
        level.crd.reserve(count);
        int64_t previousParent = -1;
        for (std::size_t k = 0; k < count; ++k) {
          int64_t parent = position[k];
          bool fresh = !levels[l].unique || k == 0 || parent != previousParent ||
                       crd[k][l] != crd[k - 1][l];
          if (fresh) {
            level.crd.push_back(crd[k][l]);
            ++level.pos[static_cast<std::size_t>(parent) + 1];
          }
          previousParent = parent;
          position[k] = static_cast<int64_t>(level.crd.size()) - 1;
        }
        for (std::size_t p = 1; p < level.pos.size(); ++p) level.pos[p] += level.pos[p - 1];
        parentCount = static_cast<int64_t>(level.crd.size());
        break;
      }
      case LevelKind::Singleton: {
        level.crd.assign(static_cast<std::size_t>(parentCount), 0);
        for (std::size_t k = 0; k < count; ++k) level.crd[static_cast<std::size_t>(position[k])] = crd[k][l];
        break;
      }
    }
  }
  out.vals.assign(static_cast<std::size_t>(parentCount), 0.0);
  for (std::size_t k = 0; k < count; ++k) out.vals[static_cast<std::size_t>(position[k])] = vals[k];
  return out;
}

// Finishes the workspace (if it is not finished yet) and compresses.
template <class Workspace>
CompressedTensor finishAndCompress(Workspace& workspace, const std::vector<LevelSpec>& levels) {
  return compress(workspace.finish(), workspace.shape(), levels);
}

}  // namespace tcc::ism
