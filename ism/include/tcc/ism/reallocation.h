// The reallocation heuristic of the sparse-workspace paper (§5.1): capacity
// grows by a three-stage piecewise-linear function instead of doubling, so
// large arrays over-allocate by a quarter at most rather than by half.
//
//   next(c) = 2c                                   for c <  kSmall
//           = next(kSmall) + 1.5 (c - kSmall)      for kSmall <= c < kLarge
//           = next(kLarge) + 1.25 (c - kLarge)     for c >= kLarge
//
// The function is continuous and increasing; thresholds are in elements.
#pragma once

#include <algorithm>
#include <cstddef>

namespace tcc::ism {

inline constexpr std::size_t kReallocSmall = std::size_t{1} << 16;
inline constexpr std::size_t kReallocLarge = std::size_t{1} << 22;

inline std::size_t nextCapacity(std::size_t current) {
  if (current < kReallocSmall) return std::max<std::size_t>(2 * current, 16);
  std::size_t atSmall = 2 * kReallocSmall;
  if (current < kReallocLarge) return atSmall + (current - kReallocSmall) * 3 / 2;
  std::size_t atLarge = atSmall + (kReallocLarge - kReallocSmall) * 3 / 2;
  return atLarge + (current - kReallocLarge) * 5 / 4;
}

// The capacity to allocate when `required` elements must fit and
// `current` are allocated: grow along the heuristic until they fit.
inline std::size_t capacityFor(std::size_t required, std::size_t current) {
  if (required <= current) return current;
  std::size_t capacity = std::max<std::size_t>(current, 1);
  while (capacity < required) capacity = nextCapacity(capacity);
  return capacity;
}

}  // namespace tcc::ism
