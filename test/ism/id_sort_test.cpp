// Sorting accumulation ids by their components' coordinates: every path
// (insertion, comparison, radix over packed words, components that do not
// pack) against a stable sort by (coordinates, id).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "tcc/ism/id_sort.h"

namespace tcc::ism {
namespace {

template <int N>
std::vector<uint32_t> expectedOrder(std::vector<uint32_t> ids, const std::vector<Component<N>>& components) {
  std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
    if (lessThan<N>(components[a].crd, components[b].crd)) return true;
    if (lessThan<N>(components[b].crd, components[a].crd)) return false;
    return a < b;  // ties (repeated coordinates) in the order of their ids
  });
  return ids;
}

// `count` components with coordinates below `extent` at each level (so
// that some repeat), sorted from ids in increasing, decreasing and random
// order.
template <int N>
void checkSort(std::size_t count, int32_t extent, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int32_t> coordinate(0, extent - 1);
  std::vector<Component<N>> components(count);
  for (auto& component : components) {
    for (int l = 0; l < N; ++l) component.crd[l] = coordinate(random);
    component.val = 1.0;
  }
  std::vector<uint32_t> increasing(count);
  std::iota(increasing.begin(), increasing.end(), 0u);
  std::vector<uint32_t> decreasing(increasing.rbegin(), increasing.rend());
  std::vector<uint32_t> shuffled = increasing;
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  for (const auto* order : {&increasing, &decreasing, &shuffled}) {
    std::vector<uint32_t> ids = *order;
    sortIdsByCoordinates<N>(ids.data(), ids.data() + ids.size(), components);
    std::vector<uint32_t> expected = expectedOrder<N>(*order, components);
    if (order == &increasing) {
      // The callers' case (the coord policy's ids, 0 to n - 1): ties keep
      // the order of their ids.
      EXPECT_EQ(ids, expected) << "order " << N << ", " << count << " components below " << extent;
    } else {
      // Otherwise the same ids, in coordinate order.
      std::vector<uint32_t> sortedIds = ids, sortedExpected = expected;
      std::sort(sortedIds.begin(), sortedIds.end());
      std::sort(sortedExpected.begin(), sortedExpected.end());
      EXPECT_EQ(sortedIds, sortedExpected);
      for (std::size_t k = 0; k < count; ++k)
        EXPECT_EQ(components[ids[k]].crd, components[expected[k]].crd) << "position " << k;
    }
  }
}

TEST(IdSort, ShortRunsByInsertion) {
  checkSort<2>(10, 4, 1);
  checkSort<3>(16, 3, 2);
}

TEST(IdSort, FewComponentsByComparison) {
  checkSort<2>(200, 1000, 3);
  checkSort<1>(100, 50, 4);
}

TEST(IdSort, ManyComponentsByRadix) {
  checkSort<2>(5000, 3000, 5);      // few ties
  checkSort<2>(20000, 40, 6);       // many ties: the ids' bits decide
  checkSort<3>(70000, 100000, 7);   // wide coordinates, several passes
  checkSort<4>(4096, 16, 8);
  checkSort<1>(1 << 16, 1 << 20, 9);
}

TEST(IdSort, CoordinatesTooWideToPack) {
  checkSort<3>(3000, 1 << 30, 10);  // 3 x 30 bits and the ids: more than 64
}

}  // namespace
}  // namespace tcc::ism
