// The Bucket policy (§5.2, "Bucket" of §7.1): L = the first level's
// dimension, h(crd) = crd[0]. Duplicates are summed on insert by walking
// the bucket's chain; Sort is a bucket sort (buckets in order, each bucket's
// few ids sorted by the remaining coordinates).
#pragma once

#include <cstddef>

#include "tcc/ism/bucket_table.h"
#include "tcc/ism/policy.h"

namespace tcc::ism {

template <int N>
class BucketPolicy {
 public:
  BucketPolicy(const Shape<N>& shape, const PolicyParams& params)
      : bucketCount_(static_cast<std::size_t>(shape.levelDim(0))) {
    table_.reset(bucketCount_, params.capacity);
  }

  bool insert(const Coordinates<N>& crd, double value) {
    return table_.insert(static_cast<uint32_t>(crd[0]), crd, value);
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
    sorted_.clear();
  }
  std::size_t size() const { return table_.size(); }
  std::size_t capacity() const { return table_.capacity(); }
  void reserve(std::size_t capacity) {
    if (capacity != table_.capacity()) table_.reset(bucketCount_, capacity);
  }

 private:
  std::size_t bucketCount_;
  BucketTable<N> table_;
  IdVector sorted_;
};

}  // namespace tcc::ism
