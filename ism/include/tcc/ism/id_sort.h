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

// Sorts packed words by their bits [low, high) with a least-significant-
// digit radix sort (stable), 8 bits a pass; a pass where every word has
// the same digit is skipped. `scratch` holds as many words.
inline void radixSortWords(uint64_t* words, uint64_t* scratch, std::size_t n, int low, int high) {
  constexpr int kDigitBits = 8;
  constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;
  uint64_t* from = words;
  uint64_t* to = scratch;
  for (int shift = low; shift < high; shift += kDigitBits) {
    std::size_t count[kDigits] = {};
    for (std::size_t k = 0; k < n; ++k) ++count[(from[k] >> shift) & (kDigits - 1)];
    if (count[(from[0] >> shift) & (kDigits - 1)] == n) continue;
    std::size_t start = 0;
    for (std::size_t d = 0; d < kDigits; ++d) {
      std::size_t c = count[d];
      count[d] = start;
      start += c;
    }
    for (std::size_t k = 0; k < n; ++k) to[count[(from[k] >> shift) & (kDigits - 1)]++] = from[k];
    std::swap(from, to);
  }
  if (from != words) std::copy(from, from + n, words);
}

// Sorts ids by their components' coordinates. Short runs by insertion;
// otherwise, when every coordinate and id fit in 64 bits together (each
// level and the ids take as many bits as their largest value needs), each
// id is packed below its coordinates into one word and the words are
// sorted directly: no comparison then loads a component, and ties (the
// coord policy's repeated coordinates) keep the order of their ids. Many
// words are sorted by a radix sort over their coordinate bits (and over
// the id bits too unless the ids arrive in increasing order, which a
// stable sort then keeps for ties), few by comparison. Ids whose
// coordinates do not fit are sorted through the components.
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
  bool idsIncrease = true;
  for (const uint32_t* id = first; id < last; ++id) {
    largestId = std::max<uint64_t>(largestId, *id);
    if (id > first && *id < *(id - 1)) idsIncrease = false;
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
  const std::size_t n = static_cast<std::size_t>(last - first);
  std::vector<uint64_t, CountingAllocator<uint64_t>> words(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto& crd = components[first[k]].crd;
    uint64_t word = 0;
    for (int l = 0; l < N; ++l) word = bits[l] == 0 ? word : (word << bits[l]) | static_cast<uint32_t>(crd[l]);
    words[k] = idBits == 0 ? word : (word << idBits) | first[k];
  }
  // A radix pass costs about two reads and a write of every word and a
  // pass over 256 counters; comparison sorting log2(n) compares a word.
  const int passes = (total - (idsIncrease ? idBits : 0) + 7) / 8;
  if (n >= 256 && 3 * passes < bitWidth(n)) {
    std::vector<uint64_t, CountingAllocator<uint64_t>> scratch(n);
    radixSortWords(words.data(), scratch.data(), n, idsIncrease ? idBits : 0, total);
  } else {
    std::sort(words.begin(), words.end());
  }
  const uint64_t idMask = idBits == 0 ? 0 : (~uint64_t{0} >> (64 - idBits));
  for (std::size_t k = 0; k < n; ++k) first[k] = static_cast<uint32_t>(words[k] & idMask);
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
