// Property tests: every policy under every optimization setting yields the
// same all array as a std::map reference, over random component streams of
// orders 1 to 4, heavy and light duplication, capacities from 1 to 10^6.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "reference.h"
#include "tcc/ism/ism.h"

namespace tcc::ism {
namespace {

using testing::Duplication;

enum class PolicyId { Bucket, ChainedBucket, Hash, Coord, Map, Vector };

std::string nameOf(PolicyId policy) {
  switch (policy) {
    case PolicyId::Bucket: return "Bucket";
    case PolicyId::ChainedBucket: return "ChainedBucket";
    case PolicyId::Hash: return "Hash";
    case PolicyId::Coord: return "Coord";
    case PolicyId::Map: return "Map";
    case PolicyId::Vector: return "Vector";
  }
  return "?";
}

template <template <int> class Policy, int N>
void checkStream(const testing::Stream<N>& stream, const WorkspaceOptions& options) {
  auto reference = testing::referenceOf(stream);
  Workspace<Policy, N> workspace(stream.shape, options);
  for (std::size_t k = 0; k < stream.values.size(); ++k) {
    workspace.insert(stream.coordinates[k], stream.values[k]);
  }
  testing::expectAllArrayMatches(workspace.finish(), reference);
}

template <int N>
void checkPolicy(PolicyId policy, const testing::Stream<N>& stream, const WorkspaceOptions& options) {
  switch (policy) {
    case PolicyId::Bucket: return checkStream<BucketPolicy, N>(stream, options);
    case PolicyId::ChainedBucket: return checkStream<ChainedBucketPolicy, N>(stream, options);
    case PolicyId::Hash: return checkStream<HashPolicy, N>(stream, options);
    case PolicyId::Coord: return checkStream<CoordPolicy, N>(stream, options);
    case PolicyId::Map: return checkStream<MapPolicy, N>(stream, options);
    case PolicyId::Vector: return checkStream<VectorPolicy, N>(stream, options);
  }
}

std::string settingName(const ::testing::TestParamInfo<std::tuple<PolicyId, bool, bool>>& info) {
  return nameOf(std::get<0>(info.param)) + (std::get<1>(info.param) ? "_Pipelined" : "_Serial") +
         (std::get<2>(info.param) ? "_DoubleBuffered" : "_SingleBuffered");
}

class PolicyProperty : public ::testing::TestWithParam<std::tuple<PolicyId, bool, bool>> {
 protected:
  template <int N>
  void sweepOrder() {
    auto [policy, pipelining, doubleBuffering] = GetParam();
    uint32_t seed = 17 * N;
    for (Duplication duplication : {Duplication::Light, Duplication::Heavy}) {
      for (bool transposed : {false, true}) {
        // Capacity 1 with growth off merges after every distinct component,
        // so its stream is short; the others grow as the heuristic says.
        struct Case {
          std::size_t capacity;
          bool grow;
          std::size_t components;
        };
        for (Case c : {Case{1, false, 600}, Case{1, true, 6000}, Case{7, false, 3000},
                       Case{1000, true, 20000}, Case{1000000, true, 20000}}) {
          SCOPED_TRACE("order " + std::to_string(N) + ", " +
                       (duplication == Duplication::Heavy ? "heavy" : "light") +
                       " duplication, capacity " + std::to_string(c.capacity) +
                       (c.grow ? " growing" : " fixed") + (transposed ? ", reversed levels" : ""));
          auto stream = testing::randomStream<N>(c.components, duplication, seed++, transposed);
          WorkspaceOptions options;
          options.pipelining = pipelining;
          options.doubleBuffering = doubleBuffering;
          options.capacity = c.capacity;
          options.growCapacity = c.grow;
          options.nnzHint = c.components / 4;
          checkPolicy<N>(policy, stream, options);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
};

TEST_P(PolicyProperty, Order1MatchesMapReference) { sweepOrder<1>(); }
TEST_P(PolicyProperty, Order2MatchesMapReference) { sweepOrder<2>(); }
TEST_P(PolicyProperty, Order3MatchesMapReference) { sweepOrder<3>(); }
TEST_P(PolicyProperty, Order4MatchesMapReference) { sweepOrder<4>(); }

INSTANTIATE_TEST_SUITE_P(
    AllPoliciesAndOptimizations, PolicyProperty,
    ::testing::Combine(::testing::Values(PolicyId::Bucket, PolicyId::ChainedBucket, PolicyId::Hash, PolicyId::Coord,
                                         PolicyId::Map, PolicyId::Vector),
                       ::testing::Bool(), ::testing::Bool()),
    settingName);

TEST(WorkspaceErrors, RejectsCoordinatesOutsideTheShape) {
  Workspace<BucketPolicy, 2> workspace(Shape<2>::rowMajor({3, 4}));
  EXPECT_THROW(workspace.insert({3, 0}, 1.0), std::out_of_range);
  EXPECT_THROW(workspace.insert({0, -1}, 1.0), std::out_of_range);
  workspace.insert({2, 3}, 1.0);
  EXPECT_EQ(workspace.finish().size(), 1u);
  EXPECT_THROW(workspace.insert({0, 0}, 1.0), std::logic_error);
}

TEST(WorkspaceErrors, RejectsBadShapes) {
  Shape<2> shape = Shape<2>::rowMajor({3, 0});
  EXPECT_THROW((Workspace<HashPolicy, 2>(shape)), std::invalid_argument);
  shape = Shape<2>::rowMajor({3, 3});
  shape.levelOrder = {1, 1};
  EXPECT_THROW((Workspace<HashPolicy, 2>(shape)), std::invalid_argument);
}

TEST(WorkspaceErrors, RejectsCapacitiesBeyondThirtyTwoBitIds) {
  WorkspaceOptions options;
  options.capacity = std::size_t{1} << 31;
  EXPECT_THROW((Workspace<BucketPolicy, 2>(Shape<2>::rowMajor({3, 3}), options)),
               std::invalid_argument);
}

TEST(WorkspaceMemory, CountsAllocationsAndReleasesThem) {
  int64_t before = memoryCounter().currentBytes();
  memoryCounter().resetPeak();
  {
    auto stream = testing::randomStream<2>(50000, Duplication::Light, 5);
    WorkspaceOptions options;
    options.capacity = 1024;
    options.doubleBuffering = true;
    Workspace<CoordPolicy, 2> workspace(stream.shape, options);
    for (std::size_t k = 0; k < stream.values.size(); ++k) {
      workspace.insert(stream.coordinates[k], stream.values[k]);
    }
    const auto& all = workspace.finish();
    // The all array alone holds 16 bytes per distinct component.
    EXPECT_GE(memoryCounter().peakBytes() - before, static_cast<int64_t>(all.size() * 16));
    EXPECT_GT(workspace.merges(), 1u);
  }
  EXPECT_EQ(memoryCounter().currentBytes(), before);
}

TEST(WorkspaceMemory, DoubleBufferingAvoidsAPerMergeTemporaryButKeepsASpare) {
  // Same stream and capacity; both settings give the same result, and the
  // counter sees both the temporaries and the spare buffers.
  auto stream = testing::randomStream<2>(40000, Duplication::Light, 9);
  auto reference = testing::referenceOf(stream);
  for (bool doubleBuffering : {false, true}) {
    WorkspaceOptions options;
    options.capacity = 512;
    options.growCapacity = false;
    options.doubleBuffering = doubleBuffering;
    Workspace<HashPolicy, 2> workspace(stream.shape, options);
    for (std::size_t k = 0; k < stream.values.size(); ++k) {
      workspace.insert(stream.coordinates[k], stream.values[k]);
    }
    testing::expectAllArrayMatches(workspace.finish(), reference);
  }
}

}  // namespace
}  // namespace tcc::ism
