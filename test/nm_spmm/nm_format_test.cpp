// The {dense, nm(N,M,L)} storage: pruning keeps the N vectors of the largest
// norm per window, padding, unpacking, conversions and the checks that
// refuse broken storage and bad parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/nm.h"
#include "tcc/runtime/pack.h"

namespace tcc::rt {
namespace {

TensorFormat nmFormat(int N, int M, int L) { return TensorFormat({LevelSpec::dense(), LevelSpec::nm(N, M, L)}); }

std::vector<double> randomDense(int rows, int cols, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> values(size_t(rows) * cols);
  for (double& value : values) value = unit(random);
  return values;
}

// The pruning as the paper states it, written plainly: per window of M rows
// and group of L columns, keep the N rows of largest squared norm (ties to
// the lower row), zero the others.
std::vector<double> prunedReference(const std::vector<double>& dense, int rows, int cols, int N, int M, int L) {
  std::vector<double> result(dense.size(), 0.0);
  for (int w0 = 0; w0 < rows; w0 += M)
    for (int c0 = 0; c0 < cols; c0 += L) {
      std::vector<std::pair<double, int>> norms;
      for (int r = w0; r < std::min(rows, w0 + M); ++r) {
        double norm = 0;
        for (int c = c0; c < std::min(cols, c0 + L); ++c) norm += dense[size_t(r) * cols + c] * dense[size_t(r) * cols + c];
        norms.push_back({-norm, r});
      }
      std::sort(norms.begin(), norms.end());
      for (int t = 0; t < N && t < static_cast<int>(norms.size()); ++t)
        for (int c = c0; c < std::min(cols, c0 + L); ++c)
          result[size_t(norms[t].second) * cols + c] = dense[size_t(norms[t].second) * cols + c];
    }
  return result;
}

TEST(NmFormat, PruningKeepsTheLargestVectorsOfEachWindowAndGroup) {
  // 4 rows (one window of M = 4), 4 columns (two groups of L = 2), N = 2.
  std::vector<double> dense = {
      1, 1, 9, 9,  //
      5, 5, 0, 1,  //
      2, 2, 8, 0,  //
      9, 0, 0, 0,  //
  };
  Tensor b = nmPruneAndPack(dense, 4, 4, nmFormat(2, 4, 2), ValueType::Float64);
  NmLayout layout = nmLayout(b);
  EXPECT_EQ(layout.keptRows, 2);
  EXPECT_EQ(layout.groups, 2);
  // Group 0 norms: 2, 50, 8, 81 -> rows 1 and 3; group 1: 162, 1, 64, 0 -> rows 0 and 2.
  EXPECT_EQ(std::vector<int32_t>(b.crd(1).begin(), b.crd(1).end()), (std::vector<int32_t>{1, 0, 3, 2}));
  EXPECT_EQ(std::vector<double>(b.values<double>().begin(), b.values<double>().end()),
            (std::vector<double>{5, 5, 9, 9, 9, 0, 8, 0}));
  EXPECT_EQ(nmUnpack(b), (std::vector<double>{0, 0, 9, 9, 5, 5, 0, 0, 0, 0, 8, 0, 9, 0, 0, 0}));
  EXPECT_EQ(b.valueAt({3, 0}), 9);
  EXPECT_EQ(b.valueAt({0, 0}), 0);
  EXPECT_NO_THROW(b.validate());
}

TEST(NmFormat, RandomMatricesPruneAsTheReferenceDoesWithPadding) {
  struct Case {
    int rows, cols, N, M, L;
  };
  for (const Case& c : {Case{64, 64, 16, 32, 32}, Case{37, 41, 2, 4, 4}, Case{100, 70, 3, 8, 16},
                        Case{5, 3, 1, 4, 8}, Case{33, 65, 4, 32, 32}, Case{10, 10, 5, 5, 1}}) {
    SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols) + " nm(" + std::to_string(c.N) + "," +
                 std::to_string(c.M) + "," + std::to_string(c.L) + ")");
    std::vector<double> dense = randomDense(c.rows, c.cols, c.rows * 7 + c.cols);
    Tensor b = nmPruneAndPack(dense, c.rows, c.cols, nmFormat(c.N, c.M, c.L), ValueType::Float64);
    EXPECT_NO_THROW(b.validate());
    NmLayout layout = nmLayout(b);
    EXPECT_EQ(layout.keptRows, (c.rows + c.M - 1) / c.M * c.N);
    EXPECT_EQ(layout.paddedCols, (c.cols + c.L - 1) / c.L * c.L);
    EXPECT_EQ(nmUnpack(b), prunedReference(dense, c.rows, c.cols, c.N, c.M, c.L));
    // Conversions go through the same pruning, and back to dense.
    Tensor viaConvert = convert(fromDense(dense, {c.rows, c.cols}, TensorFormat::dense(2)), nmFormat(c.N, c.M, c.L));
    EXPECT_EQ(toDense(viaConvert), nmUnpack(b));
    EXPECT_EQ(toDense(convert(b, TensorFormat::csr())), nmUnpack(b));
    Tensor viaPack = pack(unpack(fromDense(dense, {c.rows, c.cols}, TensorFormat::dense(2))), nmFormat(c.N, c.M, c.L));
    EXPECT_EQ(toDense(viaPack), nmUnpack(b));
  }
}

TEST(NmFormat, FloatStorageRoundsAndKeepsTheSamePattern) {
  std::vector<double> dense = randomDense(64, 96, 5);
  Tensor b = nmPruneAndPack(dense, 64, 96, nmFormat(8, 32, 32), ValueType::Float32);
  EXPECT_EQ(b.valueType(), ValueType::Float32);
  std::vector<double> expected = prunedReference(dense, 64, 96, 8, 32, 32);
  std::vector<double> actual = nmUnpack(b);
  for (size_t e = 0; e < expected.size(); ++e) EXPECT_FLOAT_EQ(actual[e], static_cast<float>(expected[e]));
  EXPECT_EQ(b.describe(), "{dense, nm(8,32,32)} float32 64x96, 1536 stored");
}

TEST(NmFormat, BadParametersAndPlacementsAreRefused) {
  auto message = [](const TensorFormat& format) {
    try {
      Tensor tensor({8, 8}, format);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(nmFormat(5, 4, 1)), "nm(5,4,1): N vectors are kept of every M, so 1 <= N <= M is needed");
  EXPECT_EQ(message(nmFormat(0, 4, 1)), "nm(0,4,1): N vectors are kept of every M, so 1 <= N <= M is needed");
  EXPECT_EQ(message(nmFormat(2, 4, 0)), "nm(2,4,0): the vector length L must be 1..65536");
  EXPECT_EQ(message(nmFormat(2, 8192, 4)), "nm(2,8192,4): M is at most 4096");
  EXPECT_EQ(message(TensorFormat({LevelSpec::nm(2, 4, 4), LevelSpec::dense()})),
            "format {nm(2,4,4), dense}: an nm level must be the second level of a matrix stored {dense, nm(N,M,L)} "
            "in mode order (the rows are pruned in windows of M)");
  EXPECT_EQ(message(TensorFormat({LevelSpec::dense(), LevelSpec::nm(2, 4, 4)}, {1, 0})),
            "format {dense, nm(2,4,4)} order (1,0): an nm level must be the second level of a matrix stored "
            "{dense, nm(N,M,L)} in mode order (the rows are pruned in windows of M)");
  EXPECT_THROW(Tensor({2, 2, 2}, TensorFormat({LevelSpec::dense(), LevelSpec::dense(), LevelSpec::nm(1, 2, 1)})),
               std::invalid_argument);
  EXPECT_THROW(convert(fromDense(std::vector<double>(8, 1.0), {8}, TensorFormat::dense(1)), nmFormat(1, 2, 1)),
               std::invalid_argument);
  EXPECT_THROW(nmPruneAndPack(std::vector<double>(5, 1.0), 2, 3, nmFormat(1, 2, 1)), std::invalid_argument);
}

TEST(NmFormat, BrokenStorageIsCaughtByValidate) {
  std::vector<double> dense = randomDense(8, 6, 9);  // windows of 4 rows, groups of 4 columns (padding: 6 -> 8)
  Tensor good = nmPruneAndPack(dense, 8, 6, nmFormat(2, 4, 4), ValueType::Float64);
  ASSERT_NO_THROW(good.validate());

  Tensor outside = good;
  outside.levelStorage(1).crd[0] = 4;
  EXPECT_THROW(
      {
        try {
          outside.validate();
        } catch (const std::invalid_argument& error) {
          EXPECT_STREQ(error.what(), "level 1 (nm(2,4,4)): index D[0][0] = 4 is outside 0..3");
          throw;
        }
      },
      std::invalid_argument);

  Tensor repeated = good;
  repeated.levelStorage(1).crd[2] = repeated.crd(1)[0];  // D[1][0] = D[0][0]
  EXPECT_THROW(repeated.validate(), std::invalid_argument);

  Tensor padding = good;
  padding.setValueAtPosition(7, 1.0);  // row 0 of B', column 7 is padding (n = 6)
  EXPECT_THROW(
      {
        try {
          padding.validate();
        } catch (const std::invalid_argument& error) {
          EXPECT_STREQ(error.what(),
                       "level 1 (nm(2,4,4)): padding entry B'[0][7] (outside the 8x6 matrix) is not zero");
          throw;
        }
      },
      std::invalid_argument);
}

TEST(NmFormat, AnEmptyTensorKeepsTheFirstRowsOfEachWindow) {
  Tensor empty({10, 9}, nmFormat(3, 4, 4));
  EXPECT_NO_THROW(empty.validate());
  EXPECT_EQ(nmLayout(empty).indexCount(), 9 * 3);
  EXPECT_EQ(nmUnpack(empty), std::vector<double>(90, 0.0));
}

TEST(NmFormat, TheAbiViewCarriesNMAndL) {
  Tensor b = nmPruneAndPack(randomDense(8, 8, 1), 8, 8, nmFormat(2, 4, 4), ValueType::Float32);
  tcc_tensor view = b.abiView();
  EXPECT_EQ(view.levels[1].kind, TCC_LEVEL_NM);
  EXPECT_EQ(view.levels[1].nm_n, 2);
  EXPECT_EQ(view.levels[1].nm_m, 4);
  EXPECT_EQ(view.levels[1].nm_l, 4);
  EXPECT_EQ(view.vals_size, 4 * 8);
  EXPECT_EQ(view.levels[1].crd, b.crd(1).data());
}

}  // namespace
}  // namespace tcc::rt
