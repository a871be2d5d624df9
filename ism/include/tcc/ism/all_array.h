// The all array (§4.2): every distinct result component so far, as COO in
// level order, sorted and deduplicated. The Merge stage folds a sorted,
// deduplicated accumulation array into it out of place. Without double
// buffering only the suffix that the incoming components can interleave
// with (from the first incoming coordinate on, found by binary search) is
// merged into a temporary and copied back, so components that arrive in
// order (rows of a banded product, a thread's owned ranges) are appended
// rather than copying everything; with double buffering a second pair of
// buffers is kept and the two swap roles after each merge.
// Buffers grow by the reallocation heuristic, never by doubling.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "tcc/ism/component.h"
#include "tcc/ism/memory_counter.h"
#include "tcc/ism/reallocation.h"

namespace tcc::ism {

template <int N>
struct CooBuffer {
  std::vector<Coordinates<N>, CountingAllocator<Coordinates<N>>> crd;
  std::vector<double, CountingAllocator<double>> vals;

  std::size_t size() const { return vals.size(); }
  void reserveFor(std::size_t required) {
    std::size_t capacity = capacityFor(required, vals.capacity());
    crd.reserve(capacity);
    vals.reserve(capacity);
  }
  void clear() {
    crd.clear();
    vals.clear();
  }
  void push(const Coordinates<N>& c, double v) {
    crd.push_back(c);
    vals.push_back(v);
  }
};

// Components read in place: a slice of a CooBuffer or an all array.
template <int N>
struct CooSpan {
  const Coordinates<N>* crd = nullptr;
  const double* vals = nullptr;
  std::size_t count = 0;
  std::size_t size() const { return count; }
};

template <int N>
class AllArray {
 public:
  explicit AllArray(bool doubleBuffered = false) : doubleBuffered_(doubleBuffered) {}
  // An all array holding `sorted`, which must be sorted and deduplicated.
  static AllArray fromSorted(CooBuffer<N>&& sorted) {
    AllArray all;
    all.current_ = std::move(sorted);
    return all;
  }

  std::size_t size() const { return current_.size(); }
  const std::vector<Coordinates<N>, CountingAllocator<Coordinates<N>>>& coordinates() const {
    return current_.crd;
  }
  const std::vector<double, CountingAllocator<double>>& values() const { return current_.vals; }

  // Merge stage. `accumulation` is a policy after its Sort stage; its
  // visitSorted yields strictly increasing coordinates.
  template <class Policy>
  void merge(const Policy& accumulation) {
    std::size_t incoming = accumulation.size();
    if (incoming == 0) return;
    if (current_.size() == 0) {
      current_.reserveFor(incoming);
      accumulation.visitSorted([&](const Coordinates<N>& c, double v) { current_.push(c, v); });
      return;
    }
    if (doubleBuffered_) {
      spare_.clear();
      spare_.reserveFor(current_.size() + incoming);
      mergeInto(accumulation, spare_);
      std::swap(current_, spare_);
      return;
    }
    mergeSuffix(accumulation);
  }

  // Drops the second buffer once no merge is left (before Compress).
  void releaseSpare() { spare_ = CooBuffer<N>(); }

  // Empties it, keeping its buffers for the next round of merges.
  void clear() {
    current_.clear();
    spare_.clear();
  }

  // Releases everything (the workspace is done with its components).
  void release() {
    current_ = CooBuffer<N>();
    spare_ = CooBuffer<N>();
  }

 private:
  template <class Policy>
  void mergeInto(const Policy& accumulation, CooBuffer<N>& out) const {
    const auto& oldCrd = current_.crd;
    const auto& oldVals = current_.vals;
    std::size_t i = 0, n = oldVals.size();
    accumulation.visitSorted([&](const Coordinates<N>& c, double v) { mergeStep(current_, i, c, v, out); });
    for (; i < n; ++i) out.push(oldCrd[i], oldVals[i]);
  }

  // One incoming component of a merge: the old ones below it from position
  // i on go to `out` first, then it, summed with an old one of equal
  // coordinates.
  static void mergeStep(const CooBuffer<N>& old, std::size_t& i, const Coordinates<N>& c, double v,
                        CooBuffer<N>& out) {
    const auto& oldCrd = old.crd;
    const auto& oldVals = old.vals;
    const std::size_t n = oldVals.size();
    while (i < n && lessThan<N>(oldCrd[i], c)) {
      out.push(oldCrd[i], oldVals[i]);
      ++i;
    }
    if (i < n && sameCoordinates<N>(oldCrd[i], c)) {
      out.push(c, oldVals[i] + v);
      ++i;
    } else {
      out.push(c, v);
    }
  }

  // The merge without double buffering: components before the first
  // incoming coordinate stay where they are; the rest and the incoming ones
  // are merged into a temporary, which then replaces that suffix. Sums of
  // equal coordinates are those of a whole merge (old + incoming).
  template <class Policy>
  void mergeSuffix(const Policy& accumulation) {
    auto& oldCrd = current_.crd;
    auto& oldVals = current_.vals;
    const std::size_t n = oldVals.size();
    std::size_t start = n, i = n;
    bool first = true;
    CooBuffer<N> merged;
    accumulation.visitSorted([&](const Coordinates<N>& c, double v) {
      if (first) {
        first = false;
        start = i = static_cast<std::size_t>(
          std::lower_bound(oldCrd.begin(), oldCrd.end(), c,
                           [](const Coordinates<N>& a, const Coordinates<N>& b) { return lessThan<N>(a, b); }) -
          oldCrd.begin());
        merged.crd.reserve(n - start + accumulation.size());
        merged.vals.reserve(n - start + accumulation.size());
      }
      mergeStep(current_, i, c, v, merged);
    });
    for (; i < n; ++i) merged.push(oldCrd[i], oldVals[i]);
    current_.crd.resize(start);
    current_.vals.resize(start);
    current_.reserveFor(start + merged.size());
    current_.crd.insert(current_.crd.end(), merged.crd.begin(), merged.crd.end());
    current_.vals.insert(current_.vals.end(), merged.vals.begin(), merged.vals.end());
  }

  bool doubleBuffered_;
  CooBuffer<N> current_;
  CooBuffer<N> spare_;
};

}  // namespace tcc::ism
