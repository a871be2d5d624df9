// The Bucket policy's flag array: for each coordinate inserted since the
// last merge, whether it is present and at which accumulation id. A dense
// flag array over every coordinate (Gustavson's, along j) would cost the
// dense workspace's memory, so it is hashed: open addressing over 2^k
// slots, at most half full, keyed by the row-major linear index. Runs of
// eight consecutive keys (neighbouring j of one row, as a sparse row
// produces them) share one scattered block of slots: cache lines are
// reused, and structured key sets do not pile up into long probe runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tcc/ism/component.h"
#include "tcc/ism/memory_counter.h"
#include "tcc/ism/policy.h"

namespace tcc::ism {

template <int N>
class FlagIndex {
 public:
  void reset(std::size_t capacity) {
    slots_.assign(nextPowerOfTwo(std::max<std::size_t>(2 * capacity, 16)), -1);
    mask_ = slots_.size() - 1;
    int bits = 0;
    while ((std::size_t{1} << bits) < slots_.size()) ++bits;
    blockShift_ = 64 - (bits - kBlockBits);
  }
  void clear() { std::fill(slots_.begin(), slots_.end(), -1); }

  // The slot of `crd`: holds its id when present, -1 when it is not (then
  // the caller may store a new id there).
  template <class ComponentVector>
  int32_t& find(uint64_t key, const Coordinates<N>& crd, const ComponentVector& components) {
    uint64_t block = ((key >> kBlockBits) * 0x9E3779B97F4A7C15ull) >> blockShift_;
    std::size_t slot = static_cast<std::size_t>((block << kBlockBits) | (key & kBlockMask)) & mask_;
    for (;;) {
      int32_t& id = slots_[slot];
      if (id < 0 || sameCoordinates<N>(components[id].crd, crd)) return id;
      slot = (slot + 1) & mask_;
    }
  }

 private:
  static constexpr int kBlockBits = 3;
  static constexpr uint64_t kBlockMask = (1u << kBlockBits) - 1;
  std::vector<int32_t, CountingAllocator<int32_t>> slots_;
  std::size_t mask_ = 0;
  int blockShift_ = 63;
};

}  // namespace tcc::ism
