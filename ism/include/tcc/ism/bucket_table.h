// Chained buckets over the accumulation array, shared by the Bucket and
// Hash policies (§5.2): L buckets, a map h from coordinates to [0, L), a
// head per bucket (-1 is the flag "empty"), and a next link per component.
// insert() deduplicates by walking the chain of h(crd); insertAbsent() leaves
// deduplication to its caller.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tcc/ism/component.h"
#include "tcc/ism/id_sort.h"
#include "tcc/ism/memory_counter.h"

namespace tcc::ism {

template <int N>
class BucketTable {
 public:
  using ComponentVector = std::vector<Component<N>, CountingAllocator<Component<N>>>;

  void reset(std::size_t bucketCount, std::size_t capacity) {
    head_.assign(bucketCount, -1);
    touched_.clear();
    components_.clear();
    next_.clear();
    capacity_ = capacity;
    components_.reserve(capacity);
    next_.reserve(capacity);
  }

  bool insert(std::size_t bucket, const Coordinates<N>& crd, double value) {
    int32_t& head = head_[bucket];
    for (int32_t id = head; id >= 0; id = next_[id]) {
      if (sameCoordinates<N>(components_[id].crd, crd)) {
        components_[id].val += value;
        return true;
      }
    }
    if (components_.size() >= capacity_) return false;
    if (head < 0) touched_.push_back(static_cast<uint32_t>(bucket));
    next_.push_back(head);
    head = static_cast<int32_t>(components_.size());
    components_.push_back({crd, value});
    return true;
  }

  // Appends a component known to be absent (its caller deduplicates).
  bool insertAbsent(std::size_t bucket, const Coordinates<N>& crd, double value) {
    if (components_.size() >= capacity_) return false;
    int32_t& head = head_[bucket];
    if (head < 0) touched_.push_back(static_cast<uint32_t>(bucket));
    next_.push_back(head);
    head = static_cast<int32_t>(components_.size());
    components_.push_back({crd, value});
    return true;
  }

  void clear() {
    if (touched_.size() * 8 < head_.size()) {
      for (uint32_t b : touched_) head_[b] = -1;
    } else {
      std::fill(head_.begin(), head_.end(), -1);
    }
    touched_.clear();
    components_.clear();
    next_.clear();
  }

  // Appends the ids of each touched bucket, buckets in increasing order,
  // each bucket's ids sorted by coordinates: a bucket sort, valid as a full
  // sort when h is monotone in the coordinates' order.
  void appendIdsByBucket(IdVector& out) {
    if (touched_.size() * 16 < head_.size()) {
      std::sort(touched_.begin(), touched_.end());
      for (uint32_t b : touched_) appendBucket(b, out);
    } else {
      for (std::size_t b = 0; b < head_.size(); ++b) {
        if (head_[b] >= 0) appendBucket(b, out);
      }
    }
  }

  std::size_t size() const { return components_.size(); }
  std::size_t capacity() const { return capacity_; }
  std::size_t bucketCount() const { return head_.size(); }
  const ComponentVector& components() const { return components_; }
  ComponentVector& components() { return components_; }

 private:
  void appendBucket(std::size_t bucket, IdVector& out) {
    std::size_t begin = out.size();
    for (int32_t id = head_[bucket]; id >= 0; id = next_[id]) out.push_back(static_cast<uint32_t>(id));
    sortIdsByCoordinates<N>(out.data() + begin, out.data() + out.size(), components_);
  }

  std::vector<int32_t, CountingAllocator<int32_t>> head_;
  std::vector<uint32_t, CountingAllocator<uint32_t>> touched_;
  std::vector<int32_t, CountingAllocator<int32_t>> next_;
  ComponentVector components_;
  std::size_t capacity_ = 0;
};

}  // namespace tcc::ism
