// Compress in parts (parallel_compress.h) builds the arrays compress()
// builds, bit for bit, for every level chain and any cut of the first
// level; the parallel merge (parallel_merge.h) gives the single
// workspace's components wherever its ranges are cut; and per-thread
// workspaces finished through the kernel entry points, step by step on
// several threads, give the single workspace's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "reference.h"
#include "tcc/ism/ism.h"
#include "tcc/ism/kernel_api.h"
#include "tcc/ism/parallel_compress.h"
#include "tcc/ism/parallel_merge.h"
#include "tcc/runtime/abi.h"

namespace tcc::ism {
namespace {

using testing::Duplication;

template <int N>
AllArray<N> allArrayOf(const testing::Stream<N>& stream) {
  Workspace<HashPolicy, N> workspace(stream.shape);
  for (std::size_t k = 0; k < stream.values.size(); ++k) workspace.insert(stream.coordinates[k], stream.values[k]);
  const AllArray<N>& all = workspace.finish();
  CooBuffer<N> copy;
  copy.crd.assign(all.coordinates().begin(), all.coordinates().end());
  copy.vals.assign(all.values().begin(), all.values().end());
  return AllArray<N>::fromSorted(std::move(copy));
}

// Compresses `all` in parts cut at `cuts` (first-level coordinates, from 0
// to the first level's size), filling the parts in reverse order.
template <int N>
CompressedTensor compressInParts(const AllArray<N>& all, const Shape<N>& shape, const std::vector<LevelSpec>& levels,
                                 const std::vector<int32_t>& cuts) {
  std::size_t partCount = cuts.size() - 1;
  std::vector<CooBuffer<N>> parts(partCount);
  for (std::size_t k = 0; k < all.size(); ++k) {
    int32_t first = all.coordinates()[k][0];
    std::size_t p = std::upper_bound(cuts.begin(), cuts.end(), first) - cuts.begin() - 1;
    parts[p].push(all.coordinates()[k], all.values()[k]);
  }
  std::vector<LevelPositions<N>> counts;
  for (std::size_t p = 0; p < partCount; ++p)
    counts.push_back(countPartPositions<N>(parts[p], cuts[p], cuts[p + 1], shape, levels));
  LevelPositions<N> totals;
  std::vector<LevelPositions<N>> offsets = partOffsets<N>(counts, totals);
  CompressedTensor out;
  out.levels.resize(N);
  OutputArrays<N, double> arrays;
  for (int l = 0; l < N; ++l) {
    CompressedLevel& level = out.levels[l];
    level.spec = levels[l];
    level.dimension = shape.levelDim(l);
    int64_t parents = l == 0 ? 1 : totals[l - 1];
    // Garbage where the parts must write, so that a slot left out shows.
    if (levels[l].kind == LevelKind::Compressed) level.pos.assign(parents + 1, -7);
    if (levels[l].kind != LevelKind::Dense) level.crd.assign(totals[l], -7);
    arrays.pos[l] = level.pos.data();
    arrays.crd[l] = level.crd.data();
  }
  out.vals.assign(totals[N - 1], -7.0);
  arrays.vals = out.vals.data();
  fillSharedPos<N>(levels, totals, arrays);
  for (std::size_t p = partCount; p-- > 0;)
    fillPart<N>(parts[p], cuts[p], shape, levels, counts[p], offsets[p], arrays, false);
  return out;
}

// An empty two-level output of the given level kinds for the ISM's kernel
// entry points to fill.
tcc_tensor emptyOutput(const std::array<int32_t, 2>& dims, std::array<int, 2> kinds, int datatype) {
  tcc_tensor output{};
  output.order = 2;
  output.datatype = datatype;
  for (int l = 0; l < 2; ++l) {
    output.dims[l] = output.levels[l].size = dims[l];
    output.mode_ordering[l] = l;
    output.levels[l].kind = kinds[l];
  }
  return output;
}

// Two compressed/compressed float64 outputs hold the same arrays, bit for bit.
void expectSameOutputs(const tcc_tensor& actual, const tcc_tensor& expected) {
  ASSERT_EQ(actual.vals_size, expected.vals_size);
  EXPECT_EQ(0, std::memcmp(actual.vals, expected.vals, expected.vals_size * sizeof(double)));
  for (int l = 0; l < 2; ++l) {
    ASSERT_EQ(actual.levels[l].pos_capacity, expected.levels[l].pos_capacity);
    ASSERT_EQ(actual.levels[l].crd_capacity, expected.levels[l].crd_capacity);
    EXPECT_EQ(0, std::memcmp(actual.levels[l].pos, expected.levels[l].pos,
                             expected.levels[l].pos_capacity * sizeof(long long)));
    EXPECT_EQ(0, std::memcmp(actual.levels[l].crd, expected.levels[l].crd,
                             expected.levels[l].crd_capacity * sizeof(int)));
  }
}

void freeOutput(tcc_tensor& output) {
  for (int l = 0; l < 2; ++l) {
    std::free(output.levels[l].pos);
    std::free(output.levels[l].crd);
  }
  std::free(output.vals);
}

template <int N>
void expectSameArrays(const CompressedTensor& actual, const CompressedTensor& expected) {
  for (int l = 0; l < N; ++l) {
    EXPECT_EQ(actual.levels[l].pos, expected.levels[l].pos) << "pos of level " << l;
    EXPECT_EQ(actual.levels[l].crd, expected.levels[l].crd) << "crd of level " << l;
  }
  ASSERT_EQ(actual.vals.size(), expected.vals.size());
  EXPECT_EQ(0, std::memcmp(actual.vals.data(), expected.vals.data(), actual.vals.size() * sizeof(double)));
}

template <int N>
std::vector<std::vector<LevelSpec>> chainsOfOrder() {
  std::vector<std::vector<LevelSpec>> out{chains::dense(N), chains::coo(N), chains::csf(N)};
  if (N >= 2) {
    std::vector<LevelSpec> denseThenCompressed = chains::dense(N);
    denseThenCompressed[N - 1] = LevelSpec::compressed();
    out.push_back(denseThenCompressed);  // CSR for N = 2
    std::vector<LevelSpec> compressedThenDense = chains::csf(N);
    compressedThenDense[N - 1] = LevelSpec::dense();
    out.push_back(compressedThenDense);
    std::vector<LevelSpec> nonUniqueThenCompressed = chains::csf(N);
    nonUniqueThenCompressed[0] = LevelSpec::compressed(false);
    out.push_back(nonUniqueThenCompressed);
  }
  return out;
}

template <int N>
void sweepCuts(bool transposed) {
  for (Duplication duplication : {Duplication::Light, Duplication::Heavy}) {
    auto stream = testing::randomStream<N>(N <= 2 ? 20000 : 4000, duplication, 40 + N, transposed);
    if (duplication == Duplication::Light && N >= 3) continue;  // dense chains of 256^3 and up
    AllArray<N> all = allArrayOf(stream);
    int32_t firstDim = stream.shape.levelDim(0);
    std::mt19937 rng(N);
    std::vector<std::vector<int32_t>> cutSets{{0, firstDim}};
    for (int parts : {2, 5, 37}) {
      std::vector<int32_t> cuts{0};
      for (int p = 1; p < parts; ++p) cuts.push_back(static_cast<int32_t>(rng() % firstDim));
      cuts.push_back(firstDim);
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      cutSets.push_back(cuts);
    }
    std::vector<int32_t> everyCoordinate;
    for (int32_t c = 0; c <= std::min(firstDim, 300); ++c) everyCoordinate.push_back(c);
    if (everyCoordinate.back() != firstDim) everyCoordinate.push_back(firstDim);
    cutSets.push_back(everyCoordinate);  // many empty parts
    for (const auto& levels : chainsOfOrder<N>()) {
      if (levels[0].kind == LevelKind::Dense && duplication == Duplication::Light && N == 2 &&
          levels[1].kind == LevelKind::Dense)
        continue;  // 4096 x 4096 dense
      CompressedTensor expected = compress(all, stream.shape, levels);
      for (const auto& cuts : cutSets) {
        SCOPED_TRACE("order " + std::to_string(N) + ", " + std::to_string(cuts.size() - 1) + " parts, first level " +
                     toString(levels[0]) + ", last " + toString(levels[N - 1]));
        expectSameArrays<N>(compressInParts<N>(all, stream.shape, levels, cuts), expected);
      }
    }
  }
}

TEST(ParallelCompress, PartsBuildTheArraysOfTheWholeForEveryChain) {
  sweepCuts<1>(false);
  sweepCuts<2>(false);
  sweepCuts<2>(true);
  sweepCuts<3>(false);
  sweepCuts<4>(true);
}

// Runs of several workspaces, overlapping or owning ranges of the first
// level, merged by planned parts: the components of one workspace, with
// sums equal to the bit (values are small integers, so no rounding).
TEST(ParallelMerge, PlannedPartsGiveTheComponentsOfOneWorkspace) {
  auto stream = testing::randomStream<2>(60000, Duplication::Light, 7);
  for (double& v : stream.values) v = std::round(v * 8) + 9;
  AllArray<2> whole = allArrayOf(stream);
  for (bool owned : {false, true}) {
    for (int runCount : {1, 3, 16}) {
      SCOPED_TRACE(std::string(owned ? "owned ranges" : "overlapping") + ", " + std::to_string(runCount) + " runs");
      std::vector<std::unique_ptr<Workspace<HashPolicy, 2>>> workspaces;
      for (int r = 0; r < runCount; ++r) workspaces.push_back(std::make_unique<Workspace<HashPolicy, 2>>(stream.shape));
      for (std::size_t k = 0; k < stream.values.size(); ++k) {
        // Owned: ranges of 100 rows, dealt round-robin.
        int r = owned ? (stream.coordinates[k][0] / 100) % runCount : static_cast<int>(k % runCount);
        workspaces[r]->insert(stream.coordinates[k], stream.values[k]);
      }
      std::vector<const AllArray<2>*> runs;
      for (auto& w : workspaces) runs.push_back(&w->finish());
      for (int parts : {1, 4, 64}) {
        MergePlan<2> plan = planMerge<2>(runs, stream.shape.levelDim(0), parts);
        EXPECT_LE(plan.ranges(), static_cast<std::size_t>(parts));
        if (parts > 1) EXPECT_GT(plan.ranges(), 1u);
        std::vector<CooBuffer<2>> merged(plan.ranges());
        for (std::size_t p = 0; p < plan.ranges(); ++p) mergePlannedRange(plan, p, merged[p]);
        std::size_t largest = 0;
        for (const auto& part : merged) largest = std::max(largest, part.size());
        // Quantiles over all runs: no part holds much more than its share.
        if (plan.ranges() > 1) EXPECT_LE(largest, 2 * whole.size() / plan.ranges() + 200);
        // A range that one run alone holds is read in place, and is what
        // its merge gives; with owned ranges most ranges are.
        std::size_t inPlace = 0;
        for (std::size_t p = 0; p < plan.ranges(); ++p) {
          CooSpan<2> span;
          if (!soleRunOfRange(plan, p, span)) continue;
          ++inPlace;
          ASSERT_EQ(span.size(), merged[p].size());
          for (std::size_t k = 0; k < span.size(); ++k) {
            EXPECT_EQ(span.crd[k], merged[p].crd[k]);
            EXPECT_EQ(span.vals[k], merged[p].vals[k]);
          }
        }
        if (runCount == 1) EXPECT_EQ(inPlace, plan.ranges());
        if (!owned && runCount > 1) EXPECT_EQ(inPlace, 0u);
        if (owned) {
          // Cut where the owned ranges are (tcc_ism_kernel_owned_ranges):
          // every part lies in one run and is read in place.
          MergePlan<2> ownedPlan{runs, {}};
          for (int32_t first = 0; first < stream.shape.levelDim(0); first += 100) ownedPlan.cuts.push_back(first);
          ownedPlan.cuts.push_back(stream.shape.levelDim(0));
          std::vector<CooBuffer<2>> ownedParts(ownedPlan.ranges());
          for (std::size_t p = 0; p < ownedPlan.ranges(); ++p) {
            CooSpan<2> span;
            ASSERT_TRUE(soleRunOfRange(ownedPlan, p, span)) << "range " << p;
            for (std::size_t k = 0; k < span.size(); ++k) ownedParts[p].push(span.crd[k], span.vals[k]);
          }
          AllArray<2> fromSpans = concatenateRanges(ownedParts);
          EXPECT_TRUE(fromSpans.coordinates() == whole.coordinates());
          EXPECT_TRUE(fromSpans.values() == whole.values());
        }
        AllArray<2> all = concatenateRanges(merged);
        ASSERT_EQ(all.size(), whole.size());
        EXPECT_TRUE(all.coordinates() == whole.coordinates());
        EXPECT_TRUE(all.values() == whole.values());
      }
    }
  }
}

// Equal coordinates are summed in run order, whatever the cut: 1e16, -1e16
// and 1 in runs 0, 1, 2 sum to 1, where the reverse order gives 0
// (1 - 1e16 rounds to -1e16).
TEST(ParallelMerge, EqualCoordinatesAreSummedInRunOrder) {
  Shape<2> shape = Shape<2>::rowMajor({20000, 3});
  const double values[3] = {1e16, -1e16, 1.0};
  std::vector<std::unique_ptr<Workspace<CoordPolicy, 2>>> workspaces;
  for (int r = 0; r < 3; ++r) {
    workspaces.push_back(std::make_unique<Workspace<CoordPolicy, 2>>(shape));
    for (int32_t i = 0; i < 20000; ++i) workspaces[r]->insert({i, (i + r) % 3}, i % 2 ? values[r] : 1.0);
  }
  std::vector<const AllArray<2>*> runs;
  for (auto& w : workspaces) runs.push_back(&w->finish());
  for (int parts : {1, 7}) {
    MergePlan<2> plan = planMerge<2>(runs, 20000, parts);
    std::vector<CooBuffer<2>> merged(plan.ranges());
    for (std::size_t p = 0; p < plan.ranges(); ++p) mergePlannedRange(plan, p, merged[p]);
    AllArray<2> all = concatenateRanges(merged);
    ASSERT_EQ(all.size(), 60000u);  // each run's coordinates differ in their second level
    std::size_t k = 0;
    for (int32_t i = 0; i < 20000; ++i)
      for (int32_t j = 0; j < 3; ++j, ++k) {
        ASSERT_EQ(all.coordinates()[k], (Coordinates<2>{i, j}));
        // Row i holds one component of each run: (i, (i + r) % 3).
        int r = (j - i % 3 + 3) % 3;
        ASSERT_EQ(all.values()[k], i % 2 ? values[r] : 1.0);
      }
  }
  // The same coordinates in every run: the sums.
  std::vector<std::unique_ptr<Workspace<CoordPolicy, 2>>> same;
  for (int r = 0; r < 3; ++r) {
    same.push_back(std::make_unique<Workspace<CoordPolicy, 2>>(shape));
    for (int32_t i = 0; i < 20000; ++i) same[r]->insert({i, 1}, values[r]);
  }
  runs.clear();
  for (auto& w : same) runs.push_back(&w->finish());
  for (int parts : {1, 7}) {
    MergePlan<2> plan = planMerge<2>(runs, 20000, parts);
    std::vector<CooBuffer<2>> merged(plan.ranges());
    for (std::size_t p = 0; p < plan.ranges(); ++p) mergePlannedRange(plan, p, merged[p]);
    AllArray<2> all = concatenateRanges(merged);
    ASSERT_EQ(all.size(), 20000u);
    for (std::size_t k = 0; k < all.size(); ++k) ASSERT_EQ(all.values()[k], 1.0) << "at " << k;
  }
}

// The kernel entry points a parallel kernel calls, each step's calls on
// several threads at once, into CSR, DCSR and COO outputs (float64 and
// float32): the arrays of one workspace finished into the same output.
TEST(PerThreadKernelWorkspaces, StepsOnThreadsGiveTheOutputOfOneWorkspace) {
  auto stream = testing::randomStream<2>(200000, Duplication::Light, 3);
  const int threads = 8;
  struct Case {
    int kinds[2];
    int uniqueMask;
    int datatype;
  };
  for (Case c : {Case{{TCC_LEVEL_DENSE, TCC_LEVEL_COMPRESSED}, 3, TCC_FLOAT64},
                 Case{{TCC_LEVEL_COMPRESSED, TCC_LEVEL_COMPRESSED}, 3, TCC_FLOAT32},
                 Case{{TCC_LEVEL_COMPRESSED, TCC_LEVEL_SINGLETON}, 2, TCC_FLOAT64}}) {
    SCOPED_TRACE("level kinds " + std::to_string(c.kinds[0]) + ", " + std::to_string(c.kinds[1]));
    auto makeOutput = [&] { return emptyOutput(stream.shape.modeDims, {c.kinds[0], c.kinds[1]}, c.datatype); };
    int levelOrder[2] = {0, 1};
    void* single = tcc_ism_kernel_create(2, stream.shape.modeDims.data(), levelOrder, 1, 0, 0, 0);
    void* perThread = tcc_ism_kernel_create_per_thread(threads, 2, stream.shape.modeDims.data(), levelOrder, 1, 0, 0, 0);
    ASSERT_NE(single, nullptr);
    ASSERT_NE(perThread, nullptr);
    // Each thread inserts the rows it owns (ranges of 64 rows, round-robin).
    for (std::size_t k = 0; k < stream.values.size(); ++k) {
      const auto& crd = stream.coordinates[k];
      tcc_ism_insert_hash_2(single, crd[0], crd[1], stream.values[k]);
      tcc_ism_insert_hash_2(tcc_ism_kernel_thread_handle(perThread, (crd[0] / 64) % threads), crd[0], crd[1],
                            stream.values[k]);
    }
    auto onThreads = [&](int count, auto step) {
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
          for (int k = t; k < count; k += threads) step(k);
        });
      for (auto& worker : workers) worker.join();
    };
    tcc_tensor expected = makeOutput(), actual = makeOutput();
    ASSERT_EQ(tcc_ism_kernel_finish(single, &expected, c.uniqueMask), 0) << tcc_ism_kernel_last_error();
    onThreads(tcc_ism_kernel_thread_count(perThread), [&](int t) { tcc_ism_kernel_finish_thread(perThread, t); });
    int parts = tcc_ism_kernel_merge_parts(perThread, &actual, c.uniqueMask);
    EXPECT_GT(parts, threads);  // more parts than threads, to balance
    onThreads(parts, [&](int p) { tcc_ism_kernel_merge_part(perThread, p); });
    tcc_ism_kernel_allocate_output(perThread);
    onThreads(parts, [&](int p) { tcc_ism_kernel_fill_part(perThread, p); });
    ASSERT_EQ(tcc_ism_kernel_finish(perThread, &actual, c.uniqueMask), 0) << tcc_ism_kernel_last_error();
    // Rows are owned by one thread each: the sums are the single workspace's,
    // up to where its accumulation array was flushed.
    ASSERT_EQ(actual.vals_size, expected.vals_size);
    for (int l = 0; l < 2; ++l) {
      ASSERT_EQ(actual.levels[l].pos_capacity, expected.levels[l].pos_capacity);
      ASSERT_EQ(actual.levels[l].crd_capacity, expected.levels[l].crd_capacity);
      for (long long p = 0; p < actual.levels[l].pos_capacity; ++p)
        ASSERT_EQ(actual.levels[l].pos[p], expected.levels[l].pos[p]) << "pos of level " << l << " at " << p;
      for (long long p = 0; p < actual.levels[l].crd_capacity; ++p)
        ASSERT_EQ(actual.levels[l].crd[p], expected.levels[l].crd[p]) << "crd of level " << l << " at " << p;
    }
    for (long long p = 0; p < actual.vals_size; ++p) {
      double a = c.datatype == TCC_FLOAT32 ? static_cast<float*>(actual.vals)[p] : static_cast<double*>(actual.vals)[p];
      double e = c.datatype == TCC_FLOAT32 ? static_cast<float*>(expected.vals)[p] : static_cast<double*>(expected.vals)[p];
      ASSERT_NEAR(a, e, 1e-12 * (1 + std::abs(e))) << "value at " << p;
    }
    freeOutput(expected);
    freeOutput(actual);
    tcc_ism_kernel_destroy(single);
    tcc_ism_kernel_destroy(perThread);
  }
}

// A kernel that leaves the steps to finish (no threads of its own): the
// same output, the steps run on the workspace's own threads.
TEST(PerThreadKernelWorkspaces, FinishAloneRunsTheStepsItself) {
  auto stream = testing::randomStream<2>(50000, Duplication::Light, 5);
  for (double& v : stream.values) v = std::round(v * 8) + 9;  // integers: sums exact in any order
  int levelOrder[2] = {0, 1};
  void* single = tcc_ism_kernel_create(2, stream.shape.modeDims.data(), levelOrder, 0, 0, 0, 0);
  void* perThread = tcc_ism_kernel_create_per_thread(5, 2, stream.shape.modeDims.data(), levelOrder, 0, 0, 0, 0);
  for (std::size_t k = 0; k < stream.values.size(); ++k) {
    const auto& crd = stream.coordinates[k];
    tcc_ism_insert_bucket_2(single, crd[0], crd[1], stream.values[k]);
    tcc_ism_insert_bucket_2(tcc_ism_kernel_thread_handle(perThread, static_cast<int>(k % 5)), crd[0], crd[1],
                            stream.values[k]);
  }
  tcc_tensor outputs[2];
  for (tcc_tensor& output : outputs)
    output = emptyOutput(stream.shape.modeDims, {TCC_LEVEL_COMPRESSED, TCC_LEVEL_COMPRESSED}, TCC_FLOAT64);
  ASSERT_EQ(tcc_ism_kernel_finish(single, &outputs[0], 3), 0) << tcc_ism_kernel_last_error();
  ASSERT_EQ(tcc_ism_kernel_finish(perThread, &outputs[1], 3), 0) << tcc_ism_kernel_last_error();
  expectSameOutputs(outputs[1], outputs[0]);
  for (tcc_tensor& output : outputs) freeOutput(output);
  tcc_ism_kernel_destroy(single);
  tcc_ism_kernel_destroy(perThread);
}

// Create flag 4: the output's arrays of 4 MB and more in 2 MB pages
// (2 MB-aligned, tcc/runtime/array_alloc.h), from one workspace (copied
// out) and from per-thread ones (allocated for their parts), holding what
// they hold without the flag.
TEST(PerThreadKernelWorkspaces, Flag4PutsLargeOutputArraysIn2MBPages) {
  auto stream = testing::randomStream<2>(1300000, Duplication::Light, 9);
  for (double& v : stream.values) v = std::round(v * 8) + 9;  // integers: sums exact in any order
  int levelOrder[2] = {0, 1};
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % (uintptr_t(2) << 20) == 0; };
  std::vector<tcc_tensor> outputs;
  for (int flags : {0, 4})
    for (int threads : {0, 4}) {
      void* w = threads == 0 ? tcc_ism_kernel_create(2, stream.shape.modeDims.data(), levelOrder, 0, flags, 0, 0)
                             : tcc_ism_kernel_create_per_thread(threads, 2, stream.shape.modeDims.data(), levelOrder, 0,
                                                                flags, 0, 0);
      ASSERT_NE(w, nullptr) << tcc_ism_kernel_last_error();
      for (std::size_t k = 0; k < stream.values.size(); ++k) {
        const auto& crd = stream.coordinates[k];
        void* into = threads == 0 ? w : tcc_ism_kernel_thread_handle(w, static_cast<int>(k % threads));
        tcc_ism_insert_bucket_2(into, crd[0], crd[1], stream.values[k]);
      }
      tcc_tensor output =
          emptyOutput(stream.shape.modeDims, {TCC_LEVEL_COMPRESSED, TCC_LEVEL_COMPRESSED}, TCC_FLOAT64);
      ASSERT_EQ(tcc_ism_kernel_finish(w, &output, 3), 0) << tcc_ism_kernel_last_error();
      tcc_ism_kernel_destroy(w);
      ASSERT_GE(output.levels[1].crd_capacity * 4, 4LL << 20);  // the values twice that
      if (flags == 4) {
        EXPECT_TRUE(aligned(output.vals)) << threads << " threads";
        EXPECT_TRUE(aligned(output.levels[1].crd)) << threads << " threads";
      }
      outputs.push_back(output);
    }
  for (const tcc_tensor& output : outputs) expectSameOutputs(output, outputs[0]);
  for (tcc_tensor& output : outputs) freeOutput(output);
}

}  // namespace
}  // namespace tcc::ism
