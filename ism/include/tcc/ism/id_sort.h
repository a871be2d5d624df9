// Accumulation indexing (§5.1): sorting and deduplication move 32-bit ids
// into the accumulation array, never the component structs themselves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tcc/ism/component.h"
#include "tcc/ism/memory_counter.h"

namespace tcc::ism {

using IdVector = std::vector<uint32_t, CountingAllocator<uint32_t>>;

template <int N, class ComponentVector>
void sortIdsByCoordinates(uint32_t* first, uint32_t* last, const ComponentVector& components) {
  auto less = [&](uint32_t a, uint32_t b) {
    return lessThan<N>(components[a].crd, components[b].crd);
  };
  if (last - first <= 16) {
    for (uint32_t* i = first + 1; i < last; ++i) {  // insertion sort
      uint32_t id = *i;
      uint32_t* j = i;
      for (; j > first && less(id, *(j - 1)); --j) *j = *(j - 1);
      *j = id;
    }
    return;
  }
  std::sort(first, last, less);
}

// Given ids sorted by coordinates, sums the values of equal coordinates
// into the first id of each run and drops the others.
template <int N, class ComponentVector>
void reduceSortedIds(IdVector& ids, ComponentVector& components) {
  if (ids.empty()) return;
  std::size_t kept = 0;
  for (std::size_t k = 1; k < ids.size(); ++k) {
    auto& head = components[ids[kept]];
    const auto& next = components[ids[k]];
    if (sameCoordinates<N>(head.crd, next.crd)) {
      head.val += next.val;
    } else {
      ids[++kept] = ids[k];
    }
  }
  ids.resize(kept + 1);
}

}  // namespace tcc::ism
