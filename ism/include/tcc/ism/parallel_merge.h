// Merging the sorted, deduplicated all arrays of several workspaces (one per
// thread of a parallel producer) into one, in parallel: the first level's
// coordinates are cut into ranges of about equal work, each range is merged
// by one thread (a k-way merge that adds equal coordinates), and the ranges
// are concatenated in order, or each compressed straight into its slice of
// the output (parallel_compress.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <utility>
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

// A k-way merge that adds equal coordinates (in run order, so the sums do
// not depend on how the ranges are cut), over a heap of the runs' heads
// ordered by coordinates, then run. Between ties it copies a whole block of
// the run with the smallest head: everything below the next smallest head,
// so runs that do not overlap (threads that own ranges) merge at the speed
// of a copy.
template <int N>
void mergeRange(const std::vector<const AllArray<N>*>& runs, const std::vector<std::size_t>& begin,
                const std::vector<std::size_t>& end, CooBuffer<N>& out) {
  std::vector<std::size_t> at = begin;
  std::size_t total = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) total += end[r] - begin[r];
  out.crd.reserve(total);
  out.vals.reserve(total);
  auto head = [&](int r) -> const Coordinates<N>& { return runs[r]->coordinates()[at[r]]; };
  // std::push_heap keeps the largest on top: "after" puts the smallest there.
  auto after = [&](int a, int b) {
    if (lessThan<N>(head(b), head(a))) return true;
    if (lessThan<N>(head(a), head(b))) return false;
    return a > b;
  };
  std::vector<int> heap;
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (at[r] < end[r]) heap.push_back(static_cast<int>(r));
  std::make_heap(heap.begin(), heap.end(), after);
  auto pop = [&] {
    std::pop_heap(heap.begin(), heap.end(), after);
    int r = heap.back();
    heap.pop_back();
    return r;
  };
  auto pushIfLeft = [&](int r) {
    if (at[r] == end[r]) return;
    heap.push_back(r);
    std::push_heap(heap.begin(), heap.end(), after);
  };
  while (!heap.empty()) {
    int smallest = pop();
    const auto& crd = runs[smallest]->coordinates();
    const auto& vals = runs[smallest]->values();
    std::size_t& position = at[smallest];
    if (heap.empty()) {  // the last run left: the rest of it
      out.crd.insert(out.crd.end(), crd.begin() + position, crd.begin() + end[smallest]);
      out.vals.insert(out.vals.end(), vals.begin() + position, vals.begin() + end[smallest]);
      position = end[smallest];
      continue;
    }
    if (sameCoordinates<N>(crd[position], head(heap.front()))) {
      // Equal heads come off the heap in run order.
      const Coordinates<N> c = crd[position];
      double sum = 0;
      sum += vals[position++];
      pushIfLeft(smallest);
      while (!heap.empty() && sameCoordinates<N>(head(heap.front()), c)) {
        int r = pop();
        sum += runs[r]->values()[at[r]++];
        pushIfLeft(r);
      }
      out.push(c, sum);
      continue;
    }
    const Coordinates<N> limit = head(heap.front());
    std::size_t stop = position + 1;
    while (stop < end[smallest] && lessThan<N>(crd[stop], limit)) ++stop;
    out.crd.insert(out.crd.end(), crd.begin() + position, crd.begin() + stop);
    out.vals.insert(out.vals.end(), vals.begin() + position, vals.begin() + stop);
    position = stop;
    pushIfLeft(smallest);
  }
}

}  // namespace detail

// How a merge of sorted runs is cut: ranges [cuts[r], cuts[r + 1]) of
// first coordinates, about equal in work, each merged on its own.
template <int N>
struct MergePlan {
  std::vector<const AllArray<N>*> runs;  // in level order
  std::vector<int32_t> cuts;
  std::size_t ranges() const { return cuts.size() - 1; }
};

// At most `parts` ranges; `firstLevelDim` bounds the runs' first
// coordinates. The cuts are first coordinates at quantiles of all runs
// together (each run sampled evenly, each sample weighted by the
// components it stands for), so ranges are about equal in work whether the
// runs overlap or lie side by side.
template <int N>
MergePlan<N> planMerge(std::vector<const AllArray<N>*> runs, int32_t firstLevelDim, int parts) {
  std::size_t total = 0;
  for (const auto* run : runs) total += run->size();
  parts = std::max(1, std::min<int>(parts, static_cast<int>(total / 4096) + 1));
  MergePlan<N> plan{std::move(runs), {0}};
  if (parts > 1) {
    std::vector<std::pair<int32_t, double>> samples;  // first coordinate, weight
    const std::size_t perRun = 16 * static_cast<std::size_t>(parts);
    for (const auto* run : plan.runs) {
      std::size_t size = run->size();
      if (size == 0) continue;
      std::size_t count = std::min(size, perRun);
      for (std::size_t s = 0; s < count; ++s)
        samples.emplace_back(run->coordinates()[size * s / count][0], static_cast<double>(size) / count);
    }
    std::sort(samples.begin(), samples.end());
    double seen = 0;
    int next = 1;
    for (const auto& [first, weight] : samples) {
      while (next < parts && seen >= static_cast<double>(total) * next / parts) {
        if (first > plan.cuts.back()) plan.cuts.push_back(first);
        ++next;
      }
      seen += weight;
    }
  }
  plan.cuts.push_back(firstLevelDim);
  return plan;
}

// Range `range` of the plan in place, when at most one run holds components
// there (threads that own ranges of the first level: their runs are
// disjoint and each range is most often one thread's), so that it needs no
// merge and no copy; false when several runs do. `sole`, when given, is
// set to the run's index (-1 when the range is empty).
template <int N>
bool soleRunOfRange(const MergePlan<N>& plan, std::size_t range, CooSpan<N>& span, int* sole = nullptr) {
  span = CooSpan<N>{};
  if (sole) *sole = -1;
  bool found = false;
  for (std::size_t r = 0; r < plan.runs.size(); ++r) {
    const auto* run = plan.runs[r];
    std::size_t begin = detail::lowerBoundOfFirst(*run, plan.cuts[range]);
    std::size_t end = detail::lowerBoundOfFirst(*run, plan.cuts[range + 1]);
    if (begin == end) continue;
    if (found) {
      if (sole) *sole = -1;
      return false;
    }
    found = true;
    if (sole) *sole = static_cast<int>(r);
    span = {run->coordinates().data() + begin, run->values().data() + begin, end - begin};
  }
  return true;
}

// Merges range `range` of the plan into `out` (safe on distinct ranges at once).
template <int N>
void mergePlannedRange(const MergePlan<N>& plan, std::size_t range, CooBuffer<N>& out) {
  std::vector<std::size_t> begin, end;
  for (const auto* run : plan.runs) {
    begin.push_back(detail::lowerBoundOfFirst(*run, plan.cuts[range]));
    end.push_back(detail::lowerBoundOfFirst(*run, plan.cuts[range + 1]));
  }
  detail::mergeRange(plan.runs, begin, end, out);
}

// The merged ranges, in order, as one all array (emptying `merged`).
template <int N>
AllArray<N> concatenateRanges(std::vector<CooBuffer<N>>& merged) {
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

// `runs` in level order; `firstLevelDim` bounds their first coordinates.
// The ranges are merged on `threads` std::threads (callers with threads of
// their own, such as OpenMP kernels, use the three steps above instead).
template <int N>
AllArray<N> mergeSortedRuns(const std::vector<const AllArray<N>*>& runs, int32_t firstLevelDim, int threads) {
  MergePlan<N> plan = planMerge<N>(runs, firstLevelDim, threads);
  std::vector<CooBuffer<N>> merged(plan.ranges());
  std::vector<std::exception_ptr> errors(plan.ranges());
  auto mergeOne = [&](std::size_t range) {
    try {
      mergePlannedRange(plan, range, merged[range]);
    } catch (...) {
      errors[range] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t range = 1; range < plan.ranges(); ++range) workers.emplace_back(mergeOne, range);
  mergeOne(0);
  for (auto& worker : workers) worker.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  return concatenateRanges(merged);
}

}  // namespace tcc::ism
