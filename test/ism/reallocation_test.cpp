// The three-stage piecewise-linear reallocation heuristic.
#include <gtest/gtest.h>

#include "tcc/ism/reallocation.h"

namespace tcc::ism {
namespace {

TEST(Reallocation, GrowsStrictlyAndContinuously) {
  std::size_t previous = nextCapacity(1);
  for (std::size_t c = 2; c < (std::size_t{1} << 24); c += c / 7 + 1) {
    std::size_t next = nextCapacity(c);
    EXPECT_GT(next, c);
    EXPECT_GE(next, previous);
    previous = next;
  }
  // Continuous at both thresholds: one more element adds at most two.
  EXPECT_LE(nextCapacity(kReallocSmall) - nextCapacity(kReallocSmall - 1), 2u);
  EXPECT_LE(nextCapacity(kReallocLarge) - nextCapacity(kReallocLarge - 1), 2u);
}

TEST(Reallocation, SlopesFallFromTwoToFiveQuarters) {
  std::size_t small = 1000, middle = 1 << 20, large = std::size_t{1} << 26;
  EXPECT_EQ(nextCapacity(small), 2 * small);
  // Marginal slopes of the three stages.
  EXPECT_EQ(nextCapacity(middle + 2) - nextCapacity(middle), 3u);
  EXPECT_EQ(nextCapacity(large + 4) - nextCapacity(large), 5u);
  // Large arrays over-allocate by well under doubling.
  EXPECT_LT(static_cast<double>(nextCapacity(large)) / large, 1.4);
}

TEST(Reallocation, CapacityForReachesTheRequirement) {
  EXPECT_EQ(capacityFor(10, 100), 100u);
  for (std::size_t required : {1ul, 17ul, 70000ul, 5000000ul}) {
    std::size_t capacity = capacityFor(required, 16);
    EXPECT_GE(capacity, required);
    EXPECT_LT(capacity, 2 * required + 16);
  }
}

}  // namespace
}  // namespace tcc::ism
