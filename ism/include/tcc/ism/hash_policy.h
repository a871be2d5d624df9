// The Hash policy (§7.1): a bucket table with L = 2^ceil(log2 nnz) buckets
// and h(crd) = (row-major linear index) mod L, e.g. (i*J + j) mod L.
// Duplicates are summed on insert; since h does not follow the coordinate
// order, Sort is a lexicographic sort of the distinct ids.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "tcc/ism/bucket_table.h"
#include "tcc/ism/policy.h"

namespace tcc::ism {

template <int N>
class HashPolicy {
 public:
  HashPolicy(const Shape<N>& shape, const PolicyParams& params)
      : shape_(shape), nnzHint_(params.nnzHint) {
    reset(params.capacity);
  }

  bool insert(const Coordinates<N>& crd, double value) {
    return table_.insert(static_cast<std::size_t>(linearize<N>(crd, shape_) & mask_), crd, value);
  }
  void sort() {
    sorted_.resize(table_.size());
    std::iota(sorted_.begin(), sorted_.end(), 0u);
    sortIdsByCoordinates<N>(sorted_.data(), sorted_.data() + sorted_.size(), table_.components());
  }
  template <class Visit>
  void visitSorted(Visit&& visit) const {
    const auto& components = table_.components();
    for (uint32_t id : sorted_) visit(components[id].crd, components[id].val);
  }
  void clear() {
    table_.clear();
    sorted_.clear();
  }
  std::size_t size() const { return table_.size(); }
  std::size_t capacity() const { return table_.capacity(); }
  void reserve(std::size_t capacity) {
    if (capacity != table_.capacity()) reset(capacity);
  }

 private:
  void reset(std::size_t capacity) {
    std::size_t buckets = nextPowerOfTwo(std::max<std::size_t>({nnzHint_, capacity, 1}));
    mask_ = buckets - 1;
    table_.reset(buckets, capacity);
  }

  Shape<N> shape_;
  std::size_t nnzHint_;
  uint64_t mask_ = 0;
  BucketTable<N> table_;
  IdVector sorted_;
};

}  // namespace tcc::ism
