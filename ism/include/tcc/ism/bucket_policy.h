// The Bucket policy (§5.2, "Bucket" of §7.1): L = the first level's
// dimension, h(crd) = crd[0], a flag array, deduplication on insert, and a
// bucket sort (touched buckets in order, each bucket's ids sorted by the
// remaining coordinates).
//
// BucketPolicy finds duplicates through a hashed flag array (flag_index.h)
// in O(1). ChainedBucketPolicy is the paper's text taken literally: it
// walks the bucket's list, O(row length) per insert, which loses to both
// extremes on matrices with long rows (bench/ism/RESULTS.md).
#pragma once

#include <cstddef>

#include "tcc/ism/bucket_table.h"
#include "tcc/ism/flag_index.h"
#include "tcc/ism/policy.h"

namespace tcc::ism {

template <int N, bool Chained>
class BucketSortPolicy {
 public:
  BucketSortPolicy(const Shape<N>& shape, const PolicyParams& params)
      : shape_(shape), bucketCount_(static_cast<std::size_t>(shape.levelDim(0))) {
    reset(params.capacity);
  }

  bool insert(const Coordinates<N>& crd, double value) {
    std::size_t bucket = static_cast<uint32_t>(crd[0]);
    if constexpr (Chained) {
      return table_.insert(bucket, crd, value);
    } else {
      int32_t& flag = flags_.find(linearize<N>(crd, shape_), crd, table_.components());
      if (flag >= 0) {
        table_.components()[flag].val += value;
        return true;
      }
      if (!table_.insertAbsent(bucket, crd, value)) return false;
      flag = static_cast<int32_t>(table_.size() - 1);
      return true;
    }
  }
  void sort() {
    sorted_.clear();
    sorted_.reserve(table_.size());
    table_.appendIdsByBucket(sorted_);
  }
  template <class Visit>
  void visitSorted(Visit&& visit) const {
    const auto& components = table_.components();
    for (uint32_t id : sorted_) visit(components[id].crd, components[id].val);
  }
  void clear() {
    table_.clear();
    if constexpr (!Chained) flags_.clear();
    sorted_.clear();
  }
  std::size_t size() const { return table_.size(); }
  std::size_t capacity() const { return table_.capacity(); }
  void reserve(std::size_t capacity) {
    if (capacity != table_.capacity()) reset(capacity);
  }

 private:
  void reset(std::size_t capacity) {
    table_.reset(bucketCount_, capacity);
    if constexpr (!Chained) flags_.reset(capacity);
  }

  Shape<N> shape_;
  std::size_t bucketCount_;
  BucketTable<N> table_;
  FlagIndex<N> flags_;
  IdVector sorted_;
};

template <int N>
using BucketPolicy = BucketSortPolicy<N, false>;
template <int N>
using ChainedBucketPolicy = BucketSortPolicy<N, true>;

}  // namespace tcc::ism
