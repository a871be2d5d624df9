// The accumulation-policy interface: how a user plugs a policy of their own
// into the ISM template at compile time.
//
// A policy is a class template over the order N that owns one accumulation
// array and implements the Insert and Sort stages; the workspace (workspace.h)
// drives it and owns Merge, Compress, pipelining and double buffering:
//
//   template <int N>
//   class MyPolicy {
//    public:
//     MyPolicy(const Shape<N>& shape, const PolicyParams& params);
//     // Insert stage. Adds `value` at `crd` (level order). Returns false,
//     // changing nothing, when the array is full and `crd` is not already
//     // present; the workspace then sorts, merges, clears and retries.
//     bool insert(const Coordinates<N>& crd, double value);
//     // Sort stage: afterwards visitSorted yields each distinct coordinate
//     // once, in strictly increasing lexicographic order, values summed.
//     void sort();
//     template <class Visit>  // Visit: void(const Coordinates<N>&, double)
//     void visitSorted(Visit&& visit) const;
//     void clear();                       // empty again, capacity kept
//     std::size_t size() const;           // components held (any duplicates count)
//     std::size_t capacity() const;       // kUnbounded when it never fills
//     void reserve(std::size_t capacity); // called empty; may be ignored
//   };
//
// Allocate through CountingAllocator so peak-memory reports include the
// policy. sort() and visitSorted() of one policy object may run on the
// pipelining thread while another object of the same class takes inserts,
// so policies must not share mutable state between objects. Then:
//
//   tcc::ism::Workspace<MyPolicy, 2> ws(shape, options);
#pragma once

#include <concepts>
#include <cstddef>
#include <limits>

#include "tcc/ism/component.h"

namespace tcc::ism {

inline constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

struct PolicyParams {
  std::size_t capacity = 1024;  // components before the array is full
  std::size_t nnzHint = 0;      // expected result nonzeros; 0 when unknown
};

template <int N>
struct VisitNothing {
  void operator()(const Coordinates<N>&, double) const {}
};

template <class P, int N>
concept AccumulationPolicy =
    std::constructible_from<P, const Shape<N>&, const PolicyParams&> &&
    requires(P policy, const P& constPolicy, const Coordinates<N>& crd, double value,
             std::size_t capacity) {
      { policy.insert(crd, value) } -> std::same_as<bool>;
      policy.sort();
      constPolicy.visitSorted(VisitNothing<N>{});
      policy.clear();
      { constPolicy.size() } -> std::convertible_to<std::size_t>;
      { constPolicy.capacity() } -> std::convertible_to<std::size_t>;
      policy.reserve(capacity);
    };

inline std::size_t nextPowerOfTwo(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace tcc::ism
