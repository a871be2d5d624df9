// The Coord policy (§5.2, coordinate sort): inserts append without
// deduplication; Sort is a lexicographic sort of the ids followed by a
// reduce-by-key. The Vector policy is the same array with no capacity
// limit: one sort at the very end (the "vector" extreme of Fig. 21).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <numeric>
#include <vector>

#include "tcc/ism/id_sort.h"
#include "tcc/ism/policy.h"

namespace tcc::ism {

template <int N, bool Unbounded>
class AppendSortPolicy {
 public:
  AppendSortPolicy(const Shape<N>&, const PolicyParams& params)
      : capacity_(Unbounded ? kUnbounded : params.capacity) {
    if (!Unbounded) components_.reserve(capacity_);
  }

  bool insert(const Coordinates<N>& crd, double value) {
    if constexpr (!Unbounded) {
      if (components_.size() >= capacity_) return false;
    } else {
      if (components_.size() == kMaxIds) {
        throw std::length_error("ism: the vector policy holds at most 2^32 - 1 components");
      }
    }
    components_.push_back({crd, value});
    return true;
  }
  void sort() {
    sorted_.resize(components_.size());
    std::iota(sorted_.begin(), sorted_.end(), 0u);
    sortIdsByCoordinates<N>(sorted_.data(), sorted_.data() + sorted_.size(), components_);
    reduceSortedIds<N>(sorted_, components_);
  }
  template <class Visit>
  void visitSorted(Visit&& visit) const {
    for (uint32_t id : sorted_) visit(components_[id].crd, components_[id].val);
  }
  void clear() {
    components_.clear();
    sorted_.clear();
  }
  std::size_t size() const { return components_.size(); }
  std::size_t capacity() const { return capacity_; }
  void reserve(std::size_t capacity) {
    if constexpr (!Unbounded) {
      capacity_ = capacity;
      components_.reserve(capacity);
    }
  }

 private:
  static constexpr std::size_t kMaxIds = std::numeric_limits<uint32_t>::max();
  std::size_t capacity_;
  std::vector<Component<N>, CountingAllocator<Component<N>>> components_;
  IdVector sorted_;
};

template <int N>
using CoordPolicy = AppendSortPolicy<N, false>;
template <int N>
using VectorPolicy = AppendSortPolicy<N, true>;

}  // namespace tcc::ism
