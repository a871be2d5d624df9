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

inline int bitWidth(uint64_t value) {
  int bits = 0;
  while (value >> bits) ++bits;
  return bits;
}

// Sorts ids by their components' coordinates. Short runs by insertion;
// otherwise, when every coordinate and id fit in 64 bits together (each
// level and the ids take as many bits as their largest value needs), each
// id is packed below its coordinates into one word and the words are
// sorted directly: no comparison then loads a component, and ties (the
// coord policy's repeated coordinates) keep the order of their ids. Ids
// whose coordinates do not fit are sorted through the components.
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
  uint64_t largest[N] = {};
  uint64_t largestId = 0;
  for (const uint32_t* id = first; id < last; ++id) {
    largestId = std::max<uint64_t>(largestId, *id);
    for (int l = 0; l < N; ++l)
      largest[l] = std::max<uint64_t>(largest[l], static_cast<uint32_t>(components[*id].crd[l]));
  }
  int bits[N];
  int total = bitWidth(largestId);
  const int idBits = total;
  for (int l = 0; l < N; ++l) total += bits[l] = bitWidth(largest[l]);
  if (total > 64) {
    std::sort(first, last, less);
    return;
  }
  std::vector<uint64_t, CountingAllocator<uint64_t>> words(static_cast<std::size_t>(last - first));
  for (std::size_t k = 0; k < words.size(); ++k) {
    const auto& crd = components[first[k]].crd;
    uint64_t word = 0;
    for (int l = 0; l < N; ++l) word = bits[l] == 0 ? word : (word << bits[l]) | static_cast<uint32_t>(crd[l]);
    words[k] = idBits == 0 ? word : (word << idBits) | first[k];
  }
  std::sort(words.begin(), words.end());
  const uint64_t idMask = idBits == 0 ? 0 : (~uint64_t{0} >> (64 - idBits));
  for (std::size_t k = 0; k < words.size(); ++k) first[k] = static_cast<uint32_t>(words[k] & idMask);
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
