// A policy written outside the library plugs into the template through the
// AccumulationPolicy interface (policy.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "reference.h"
#include "tcc/ism/ism.h"

namespace {

using namespace tcc::ism;

// Keeps its accumulation array sorted by binary-search insertion: dedup on
// insert, nothing left to do in Sort.
template <int N>
class SortedInsertPolicy {
 public:
  SortedInsertPolicy(const Shape<N>&, const PolicyParams& params) : capacity_(params.capacity) {}

  bool insert(const Coordinates<N>& crd, double value) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), crd,
                               [](const Component<N>& c, const Coordinates<N>& key) {
                                 return lessThan<N>(c.crd, key);
                               });
    if (it != entries_.end() && sameCoordinates<N>(it->crd, crd)) {
      it->val += value;
      return true;
    }
    if (entries_.size() >= capacity_) return false;
    entries_.insert(it, Component<N>{crd, value});
    return true;
  }
  void sort() {}
  template <class Visit>
  void visitSorted(Visit&& visit) const {
    for (const auto& c : entries_) visit(c.crd, c.val);
  }
  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }
  void reserve(std::size_t capacity) { capacity_ = capacity; }

 private:
  std::size_t capacity_;
  std::vector<Component<N>, CountingAllocator<Component<N>>> entries_;
};

template <int N>
struct MissingSort {
  MissingSort(const Shape<N>&, const PolicyParams&) {}
  bool insert(const Coordinates<N>&, double) { return true; }
  void clear() {}
  std::size_t size() const { return 0; }
  std::size_t capacity() const { return 0; }
  void reserve(std::size_t) {}
};

static_assert(AccumulationPolicy<SortedInsertPolicy<3>, 3>);
static_assert(AccumulationPolicy<BucketPolicy<2>, 2>);
static_assert(AccumulationPolicy<MapPolicy<4>, 4>);
static_assert(!AccumulationPolicy<MissingSort<2>, 2>);

TEST(UserPolicy, PlugsIntoTheTemplateWithEveryOptimization) {
  auto stream = tcc::ism::testing::randomStream<3>(20000, tcc::ism::testing::Duplication::Light, 3);
  auto reference = tcc::ism::testing::referenceOf(stream);
  for (bool pipelining : {false, true}) {
    for (bool doubleBuffering : {false, true}) {
      WorkspaceOptions options;
      options.capacity = 64;
      options.pipelining = pipelining;
      options.doubleBuffering = doubleBuffering;
      Workspace<SortedInsertPolicy, 3> workspace(stream.shape, options);
      for (std::size_t k = 0; k < stream.values.size(); ++k) {
        workspace.insert(stream.coordinates[k], stream.values[k]);
      }
      tcc::ism::testing::expectAllArrayMatches(workspace.finish(), reference);
      EXPECT_GT(workspace.merges(), 1u);
    }
  }
}

}  // namespace
