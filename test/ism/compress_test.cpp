// Compress into level-format chains of order 1 to 4, checked by decoding
// the levels independently and by small hand-worked examples.
#include <gtest/gtest.h>

#include <map>

#include "reference.h"
#include "tcc/ism/ism.h"

namespace tcc::ism {
namespace {

using testing::Duplication;

template <int N>
void expectRoundTrip(const testing::Stream<N>& stream, const std::vector<LevelSpec>& levels) {
  auto reference = testing::referenceOf(stream);
  WorkspaceOptions options;
  options.capacity = 256;
  Workspace<HashPolicy, N> workspace(stream.shape, options);
  for (std::size_t k = 0; k < stream.values.size(); ++k) {
    workspace.insert(stream.coordinates[k], stream.values[k]);
  }
  CompressedTensor tensor = finishAndCompress(workspace, levels);
  auto decoded = testing::decode<N>(tensor);
  std::size_t nonzeros = 0;
  for (const auto& [crd, entry] : reference) {
    if (entry.value == 0.0) continue;
    ++nonzeros;
    auto it = decoded.find(crd);
    ASSERT_NE(it, decoded.end());
    EXPECT_TRUE(testing::closeEnough(it->second, entry));
  }
  EXPECT_EQ(decoded.size(), nonzeros);
  bool allSparse = true;
  for (const auto& level : levels) allSparse = allSparse && level.kind != LevelKind::Dense;
  if (allSparse) EXPECT_EQ(tensor.vals.size(), reference.size());
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
    std::vector<LevelSpec> mixed = chains::csf(N);
    mixed[0] = LevelSpec::dense();
    out.push_back(mixed);
  }
  return out;
}

template <int N>
void sweepChains() {
  for (Duplication duplication : {Duplication::Light, Duplication::Heavy}) {
    // Light duplication spreads over large dimensions; only orders 1 and 2
    // keep dense levels small enough to decode there.
    if (duplication == Duplication::Light && N > 2) continue;
    for (bool transposed : {false, true}) {
      auto stream = testing::randomStream<N>(N <= 2 ? 3000 : 800, duplication,
                                             31 * N + (transposed ? 1 : 0), transposed);
      for (const auto& levels : chainsOfOrder<N>()) {
        if (duplication == Duplication::Light && N == 2 && levels[0].kind == LevelKind::Dense &&
            levels[1].kind == LevelKind::Dense) {
          continue;  // a 4096 x 4096 dense result is not worth decoding here
        }
        std::string chain;
        for (const auto& l : levels) chain += toString(l) + " ";
        SCOPED_TRACE("order " + std::to_string(N) + (transposed ? " reversed" : "") + " chain " + chain);
        expectRoundTrip<N>(stream, levels);
      }
    }
  }
}

TEST(Compress, Order1Chains) { sweepChains<1>(); }
TEST(Compress, Order2Chains) { sweepChains<2>(); }
TEST(Compress, Order3Chains) { sweepChains<3>(); }
TEST(Compress, Order4Chains) { sweepChains<4>(); }

// A = [[1 0 2] [0 0 3] [4 0 0]] from components in outer-product order,
// with (0,2) arriving twice.
TEST(Compress, CsrByHand) {
  Workspace<BucketPolicy, 2> workspace(Shape<2>::rowMajor({3, 3}));
  for (auto [i, j, v] : std::vector<std::tuple<int, int, double>>{
           {2, 0, 4.0}, {0, 2, 1.5}, {1, 2, 3.0}, {0, 0, 1.0}, {0, 2, 0.5}}) {
    workspace.insert({i, j}, v);
  }
  CompressedTensor csr = finishAndCompress(workspace, chains::csr());
  EXPECT_TRUE(csr.levels[0].pos.empty());
  EXPECT_EQ(csr.levels[1].pos, (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(csr.levels[1].crd, (std::vector<int32_t>{0, 2, 2, 0}));
  EXPECT_EQ(csr.vals, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
}

TEST(Compress, CscAndCooByHand) {
  Shape<2> byColumns = Shape<2>::rowMajor({3, 3});
  byColumns.levelOrder = {1, 0};
  Workspace<CoordPolicy, 2> csc(byColumns);
  Workspace<CoordPolicy, 2> coo(Shape<2>::rowMajor({3, 3}));
  for (auto [i, j, v] : std::vector<std::tuple<int, int, double>>{
           {2, 0, 4.0}, {0, 2, 1.5}, {1, 2, 3.0}, {0, 0, 1.0}, {0, 2, 0.5}}) {
    csc.insert({i, j}, v);
    coo.insert({i, j}, v);
  }
  CompressedTensor cscArrays = finishAndCompress(csc, chains::csr());
  EXPECT_EQ(cscArrays.levels[1].pos, (std::vector<int64_t>{0, 2, 2, 4}));
  EXPECT_EQ(cscArrays.levels[1].crd, (std::vector<int32_t>{0, 2, 0, 1}));
  EXPECT_EQ(cscArrays.vals, (std::vector<double>{1.0, 4.0, 2.0, 3.0}));

  CompressedTensor cooArrays = finishAndCompress(coo, chains::coo(2));
  EXPECT_EQ(cooArrays.levels[0].pos, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(cooArrays.levels[0].crd, (std::vector<int32_t>{0, 0, 1, 2}));
  EXPECT_EQ(cooArrays.levels[1].crd, (std::vector<int32_t>{0, 2, 2, 0}));
  EXPECT_EQ(cooArrays.vals, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
}

TEST(Compress, DcsrSkipsEmptyRows) {
  Workspace<HashPolicy, 2> workspace(Shape<2>::rowMajor({5, 4}));
  workspace.insert({3, 1}, 2.0);
  workspace.insert({1, 3}, 1.0);
  workspace.insert({3, 0}, 5.0);
  CompressedTensor dcsr = finishAndCompress(workspace, chains::dcsr());
  EXPECT_EQ(dcsr.levels[0].pos, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(dcsr.levels[0].crd, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(dcsr.levels[1].pos, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(dcsr.levels[1].crd, (std::vector<int32_t>{3, 0, 1}));
  EXPECT_EQ(dcsr.vals, (std::vector<double>{1.0, 5.0, 2.0}));
}

TEST(Compress, EmptyWorkspaceGivesEmptyLevels) {
  Workspace<BucketPolicy, 2> workspace(Shape<2>::rowMajor({4, 4}));
  CompressedTensor csr = finishAndCompress(workspace, chains::csr());
  EXPECT_EQ(csr.levels[1].pos, (std::vector<int64_t>{0, 0, 0, 0, 0}));
  EXPECT_TRUE(csr.levels[1].crd.empty());
  EXPECT_TRUE(csr.vals.empty());
}

TEST(Compress, RejectsChainsThatCannotHoldTheTensor) {
  Workspace<BucketPolicy, 2> workspace(Shape<2>::rowMajor({4, 4}));
  workspace.insert({1, 1}, 1.0);
  EXPECT_THROW(finishAndCompress(workspace, chains::csf(3)), std::invalid_argument);
  EXPECT_THROW(finishAndCompress(workspace, (std::vector<LevelSpec>{LevelSpec::singleton(),
                                                                     LevelSpec::compressed()})),
               std::invalid_argument);
  EXPECT_THROW(finishAndCompress(workspace, (std::vector<LevelSpec>{LevelSpec::compressed(),
                                                                     LevelSpec::singleton()})),
               std::invalid_argument);
  // The workspace is still usable after a rejected chain.
  EXPECT_EQ(finishAndCompress(workspace, chains::coo(2)).vals, (std::vector<double>{1.0}));
}

// drain() and restart(): a workspace reused for several rounds (one per
// iteration of a hoisted loop) gives each round's sum alone, under every
// option that keeps state between rounds.
TEST(DrainAndRestart, EachRoundHoldsItsOwnComponents) {
  Shape<2> shape;
  shape.modeDims = {13, 17};
  shape.levelOrder = {1, 0};
  for (bool pipelining : {false, true})
    for (bool doubleBuffering : {false, true}) {
      WorkspaceOptions options;
      options.capacity = 4;  // several merges per round
      options.pipelining = pipelining;
      options.doubleBuffering = doubleBuffering;
      Workspace<HashPolicy, 2> workspace(shape, options);
      for (int round = 0; round < 4; ++round) {
        std::map<std::pair<int32_t, int32_t>, double> expected;  // (level 0, level 1) coordinates
        for (int k = 0; k < 40 + 7 * round; ++k) {
          int32_t i = (k * 7 + round) % 13, j = (k * 5 + 3 * round) % 17;
          double value = 0.25 * (k % 5 + 1) * (round + 1);
          workspace.insert({i, j}, value);
          expected[{j, i}] += value;
        }
        const AllArray<2>& all = workspace.drain();
        ASSERT_EQ(all.size(), expected.size());
        std::size_t p = 0;
        for (const auto& [crd, value] : expected) {
          EXPECT_EQ(all.coordinates()[p][0], crd.first);
          EXPECT_EQ(all.coordinates()[p][1], crd.second);
          EXPECT_DOUBLE_EQ(all.values()[p], value);
          ++p;
        }
        workspace.restart();
      }
      workspace.finish();
      EXPECT_THROW(workspace.drain(), std::logic_error);
    }
}

}  // namespace
}  // namespace tcc::ism
