#include "tcc/runtime/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "test_support.h"

namespace tcc::rt {
namespace {

// Distinct, in-range coordinates and nonzero values.
void expectWellFormed(const Coo& coo) {
  std::set<std::vector<int32_t>> seen;
  for (size_t k = 0; k < coo.nnz(); ++k) {
    std::vector<int32_t> coordinate;
    for (int mode = 0; mode < coo.order(); ++mode) {
      int32_t c = coo.coords[mode][k];
      ASSERT_GE(c, 0);
      ASSERT_LT(c, coo.dims[mode]);
      coordinate.push_back(c);
    }
    ASSERT_TRUE(seen.insert(coordinate).second) << "repeated coordinate";
    ASSERT_GE(std::abs(coo.values[k]), 0.5);
    ASSERT_LT(std::abs(coo.values[k]), 2.0);
  }
}

TEST(Random, UniformHasTheRequestedCountInAnyOrder) {
  for (const auto& dims : std::vector<std::vector<int32_t>>{{1000}, {40, 50}, {10, 12, 14}, {5, 6, 7, 8}}) {
    for (double density : {0.01, 0.2, 0.9}) {
      Coo coo = randomUniform(dims, density, 42);
      double cells = 1;
      for (int32_t d : dims) cells *= d;
      EXPECT_EQ(coo.nnz(), static_cast<size_t>(std::llround(density * cells)));
      expectWellFormed(coo);
    }
  }
}

TEST(Random, SameSeedSameTensorOtherSeedOtherTensor) {
  Coo a = randomUniform({30, 30}, 0.1, 9), b = randomUniform({30, 30}, 0.1, 9), c = randomUniform({30, 30}, 0.1, 10);
  EXPECT_EQ(a.coords, b.coords);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NE(a.coords, c.coords);
  Coo p = randomPowerLaw(100, 80, 5, 1.1, 3), q = randomPowerLaw(100, 80, 5, 1.1, 3);
  EXPECT_EQ(p.coords, q.coords);
}

TEST(Random, PerRowAndPerColumnCountsAreExact) {
  Coo rows = randomPerRow(50, 40, 7, 1);
  expectWellFormed(rows);
  std::vector<int> perRow(50, 0);
  for (int32_t r : rows.coords[0]) ++perRow[r];
  for (int count : perRow) EXPECT_EQ(count, 7);
  Coo cols = randomPerColumn(30, 60, 4, 2);
  expectWellFormed(cols);
  EXPECT_EQ(cols.dims, (std::vector<int32_t>{30, 60}));
  std::vector<int> perColumn(60, 0);
  for (int32_t c : cols.coords[1]) ++perColumn[c];
  for (int count : perColumn) EXPECT_EQ(count, 4);
  EXPECT_EQ(randomPerRow(3, 5, 9, 1).nnz(), 15u);  // capped at the row length
}

TEST(Random, ErdosRenyiDensityIsNearTheProbability) {
  Coo coo = randomErdosRenyi(400, 0.05, 8);
  expectWellFormed(coo);
  double expected = 400.0 * 400 * 0.05, deviation = std::sqrt(expected * 0.95);
  EXPECT_NEAR(static_cast<double>(coo.nnz()), expected, 5 * deviation);
  EXPECT_EQ(randomErdosRenyi(20, 1.0, 1).nnz(), 400u);
  EXPECT_EQ(randomErdosRenyi(20, 0.0, 1).nnz(), 0u);
}

TEST(Random, PowerLawRowsAreSkewed) {
  Coo coo = randomPowerLaw(2000, 1000, 10, 1.0, 5);
  expectWellFormed(coo);
  std::vector<int> perRow(2000, 0);
  for (int32_t r : coo.coords[0]) ++perRow[r];
  std::sort(perRow.rbegin(), perRow.rend());
  EXPECT_NEAR(static_cast<double>(coo.nnz()) / 2000, 10, 1.0);
  EXPECT_GT(perRow[0], 20 * perRow[1000] + 20);  // the heaviest row dwarfs the median
  Coo tensor = randomPowerLawTensor({50, 20, 20}, 2000, 1.0, 6);
  expectWellFormed(tensor);
  EXPECT_NEAR(static_cast<double>(tensor.nnz()), 2000, 100);
}

TEST(Random, BadArgumentsAreRefused) {
  EXPECT_THROW(randomUniform({3, 3}, 1.5, 1), std::invalid_argument);
  EXPECT_THROW(randomUniform({-3, 3}, 0.5, 1), std::invalid_argument);
  EXPECT_THROW(randomErdosRenyi(5, -0.1, 1), std::invalid_argument);
  EXPECT_THROW(randomPerRow(-1, 5, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace tcc::rt
