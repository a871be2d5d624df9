// The bigger sweep (label `slow`): two-million-component streams through
// every policy and optimization at capacities up to 10^6.
#include <gtest/gtest.h>

#include "reference.h"
#include "tcc/ism/ism.h"

namespace tcc::ism {
namespace {

using testing::Duplication;

template <template <int> class Policy>
void sweep() {
  for (Duplication duplication : {Duplication::Light, Duplication::Heavy}) {
    auto stream = testing::randomStream<2>(2000000, duplication, 101);
    auto reference = testing::referenceOf(stream);
    for (std::size_t capacity : {1000ul, 100000ul, 1000000ul}) {
      for (int flags = 0; flags < 4; ++flags) {
        SCOPED_TRACE("capacity " + std::to_string(capacity) + " flags " + std::to_string(flags));
        WorkspaceOptions options;
        options.capacity = capacity;
        options.pipelining = flags & 1;
        options.doubleBuffering = flags & 2;
        Workspace<Policy, 2> workspace(stream.shape, options);
        for (std::size_t k = 0; k < stream.values.size(); ++k) {
          workspace.insert(stream.coordinates[k], stream.values[k]);
        }
        testing::expectAllArrayMatches(workspace.finish(), reference);
      }
    }
  }
}

TEST(LargeStreams, Bucket) { sweep<BucketPolicy>(); }
TEST(LargeStreams, Hash) { sweep<HashPolicy>(); }
TEST(LargeStreams, Coord) { sweep<CoordPolicy>(); }
TEST(LargeStreams, Vector) { sweep<VectorPolicy>(); }
TEST(LargeStreams, Map) { sweep<MapPolicy>(); }

}  // namespace
}  // namespace tcc::ism
