// Merging the sorted, deduplicated all arrays of several workspaces (one per
// thread of a parallel producer) into one, in parallel: the first level's
// coordinates are cut into ranges of about equal work, each range is merged
// by one thread (a k-way merge that adds equal coordinates), and the ranges
// are concatenated in order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#include "tcc/ism/all_array.h"

namespace tcc::ism {

namespace detail {

// The position of the first component of `run` whose first coordinate is at
// least `first`.
template <int N>
std::size_t lowerBoundOfFirst(const AllArray<N>& run, int32_t first) {
  const auto& crd = run.coordinates();
  return static_cast<std::size_t>(
    std::lower_bound(crd.begin(), crd.end(), first, [](const Coordinates<N>& c, int32_t v) { return c[0] < v; }) -
    crd.begin());
}

template <int N>
void mergeRange(const std::vector<const AllArray<N>*>& runs, const std::vector<std::size_t>& begin,
                const std::vector<std::size_t>& end, CooBuffer<N>& out) {
  std::vector<std::size_t> at = begin;
  std::size_t total = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) total += end[r] - begin[r];
  out.crd.reserve(total);
  out.vals.reserve(total);
  while (true) {
    int smallest = -1;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (at[r] == end[r]) continue;
      if (smallest < 0 || lessThan<N>(runs[r]->coordinates()[at[r]], runs[smallest]->coordinates()[at[smallest]]))
        smallest = static_cast<int>(r);
    }
    if (smallest < 0) return;
    Coordinates<N> c = runs[smallest]->coordinates()[at[smallest]];
    double sum = 0;
    for (std::size_t r = 0; r < runs.size(); ++r)
      if (at[r] < end[r] && sameCoordinates<N>(runs[r]->coordinates()[at[r]], c)) sum += runs[r]->values()[at[r]++];
    out.push(c, sum);
  }
}

}  // namespace detail

// `runs` in level order; `firstLevelDim` bounds their first coordinates.
template <int N>
AllArray<N> mergeSortedRuns(const std::vector<const AllArray<N>*>& runs, int32_t firstLevelDim, int threads) {
  std::size_t total = 0;
  const AllArray<N>* largest = nullptr;
  for (const auto* run : runs) {
    total += run->size();
    if (!largest || run->size() > largest->size()) largest = run;
  }
  int parts = std::max(1, std::min<int>(threads, static_cast<int>(total / 4096) + 1));
  // Cut points: first coordinates at the quantiles of the largest run.
  std::vector<int32_t> cuts{0};
  for (int p = 1; p < parts; ++p) {
    int32_t cut = largest->coordinates()[largest->size() * p / parts][0];
    if (cut > cuts.back()) cuts.push_back(cut);
  }
  cuts.push_back(firstLevelDim);
  std::size_t ranges = cuts.size() - 1;
  std::vector<CooBuffer<N>> merged(ranges);
  std::vector<std::exception_ptr> errors(ranges);
  auto mergeOne = [&](std::size_t range) {
    try {
      std::vector<std::size_t> begin, end;
      for (const auto* run : runs) {
        begin.push_back(detail::lowerBoundOfFirst(*run, cuts[range]));
        end.push_back(detail::lowerBoundOfFirst(*run, cuts[range + 1]));
      }
      detail::mergeRange(runs, begin, end, merged[range]);
    } catch (...) {
      errors[range] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t range = 1; range < ranges; ++range) workers.emplace_back(mergeOne, range);
  mergeOne(0);
  for (auto& worker : workers) worker.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  CooBuffer<N> all;
  std::size_t size = 0;
  for (const auto& part : merged) size += part.size();
  all.crd.reserve(size);
  all.vals.reserve(size);
  for (auto& part : merged) {
    all.crd.insert(all.crd.end(), part.crd.begin(), part.crd.end());
    all.vals.insert(all.vals.end(), part.vals.begin(), part.vals.end());
    part = CooBuffer<N>();
  }
  return AllArray<N>::fromSorted(std::move(all));
}

}  // namespace tcc::ism
