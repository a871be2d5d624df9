// The Map policy: the "map" extreme of Fig. 21. Every insert goes into one
// ordered map (sorted and deduplicated per insert, an accumulation array of
// size one in effect); it never fills, so Sort has nothing left to do.
#pragma once

#include <cstddef>
#include <map>

#include "tcc/ism/memory_counter.h"
#include "tcc/ism/policy.h"

namespace tcc::ism {

template <int N>
class MapPolicy {
 public:
  MapPolicy(const Shape<N>&, const PolicyParams&) {}

  bool insert(const Coordinates<N>& crd, double value) {
    auto [it, inserted] = map_.try_emplace(crd, value);
    if (!inserted) it->second += value;
    return true;
  }
  void sort() {}
  template <class Visit>
  void visitSorted(Visit&& visit) const {
    for (const auto& [crd, value] : map_) visit(crd, value);
  }
  void clear() { map_.clear(); }
  std::size_t size() const { return map_.size(); }
  std::size_t capacity() const { return kUnbounded; }
  void reserve(std::size_t) {}

 private:
  struct Less {
    bool operator()(const Coordinates<N>& a, const Coordinates<N>& b) const {
      return lessThan<N>(a, b);
    }
  };
  std::map<Coordinates<N>, double, Less,
           CountingAllocator<std::pair<const Coordinates<N>, double>>>
      map_;
};

}  // namespace tcc::ism
