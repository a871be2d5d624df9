// The runtime's permanent kernel (tcc_permanent) against the definition
// (a sum over all permutations), closed forms and the permanent's
// invariances, in float and exact mode, for every storage format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "permanent_test_support.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/tensor_format.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;

const std::vector<rt::TensorFormat> kFormats = {rt::TensorFormat::csc(), rt::TensorFormat::csr(),
                                                rt::TensorFormat::dense(2), rt::TensorFormat::coo(2),
                                                rt::TensorFormat::dcsr(), rt::TensorFormat::dcsc()};

std::string errorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(PermanentKernel, MatchesTheSumOverAllPermutations) {
  int checked = 0;
  for (int n = 1; n <= 9; ++n) {
    for (double density : {0.3, 0.6, 1.0}) {
      Matrix matrix = randomSparse(n, density, 1000 * n + static_cast<int>(density * 10));
      double expected = test::permanentByPermutations(toDenseArray(matrix));
      for (const auto& format : kFormats) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", density " + std::to_string(density) + ", " + format.toString());
        EXPECT_NEAR(floatPermanent(toTensor(matrix, format)), expected, ryserTolerance(matrix));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 9 * 3 * 6);
}

TEST(PermanentKernel, ExactModeMatchesTheSumOverAllPermutationsOnIntegerMatrices) {
  for (int n = 1; n <= 9; ++n) {
    Matrix matrix = randomSparse(n, 0.7, 77 + n, /*integers=*/true);
    double expected = test::permanentByPermutations(toDenseArray(matrix));  // exact: small integers
    SCOPED_TRACE("n = " + std::to_string(n));
    EXPECT_EQ(exactPermanent(toTensor(matrix, rt::TensorFormat::csc())), static_cast<int64_t>(expected));
    EXPECT_EQ(exactPermanent(toTensor(matrix, rt::TensorFormat::coo(2))), static_cast<int64_t>(expected));
  }
}

TEST(PermanentKernel, AllOnesGivesNFactorial) {
  double factorial = 1;
  for (int n = 1; n <= 20; ++n) {
    factorial *= n;
    rt::Tensor ones = toTensor(allOnes(n), rt::TensorFormat::csr());
    EXPECT_EQ(exactPermanent(ones), static_cast<int64_t>(factorial)) << "n = " << n;
    if (n <= 14) EXPECT_EQ(floatPermanent(ones), factorial) << "n = " << n;
  }
}

TEST(PermanentKernel, OnesMinusIdentityGivesDerangementNumbers) {
  int64_t previous = 1, current = 0;  // D(0), D(1)
  for (int n = 2; n <= 18; ++n) {
    int64_t next = (n - 1) * (current + previous);
    previous = current;
    current = next;
    rt::Tensor derangements = toTensor(onesMinusIdentity(n), rt::TensorFormat::csc());
    EXPECT_EQ(exactPermanent(derangements), current) << "n = " << n;
    EXPECT_NEAR(floatPermanent(derangements), static_cast<double>(current), 1e-12 * current) << "n = " << n;
  }
}

TEST(PermanentKernel, BlockDiagonalGivesTheProductOfTheBlocksPermanents) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::vector<Matrix> blocks;
    double expected = 1;
    for (int size : {3, 5, 2, 6}) {
      Matrix block = randomSparse(size, 0.8, 31 * seed + size);
      expected *= test::permanentByPermutations(toDenseArray(block));
      blocks.push_back(block);
    }
    Matrix matrix = blockDiagonal(blocks);
    EXPECT_NEAR(floatPermanent(toTensor(matrix, rt::TensorFormat::csc())), expected, ryserTolerance(matrix))
        << "seed " << seed;
  }
}

TEST(PermanentKernel, InvariantUnderRowAndColumnPermutations) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Matrix matrix = randomSparse(15, 0.35, seed);
    double original = floatPermanent(toTensor(matrix, rt::TensorFormat::csc()));
    ASSERT_NE(original, 0.0) << "seed " << seed << " drew a structurally singular matrix";
    for (uint64_t shuffle = 1; shuffle <= 3; ++shuffle) {
      Matrix permuted = randomlyPermuted(matrix, 100 * seed + shuffle);
      EXPECT_NEAR(floatPermanent(toTensor(permuted, rt::TensorFormat::csr())), original, ryserTolerance(matrix));
    }
    Matrix integers = randomSparse(15, 0.35, seed, /*integers=*/true);
    int64_t exact = exactPermanent(toTensor(integers, rt::TensorFormat::csc()));
    EXPECT_EQ(exactPermanent(toTensor(randomlyPermuted(integers, seed), rt::TensorFormat::csc())), exact);
  }
}

TEST(PermanentKernel, StructurallySingularMatricesGiveExactlyZero) {
  // Rows 0..2 have nonzeros only in columns 0 and 1: no perfect matching.
  Matrix hall = randomSparse(12, 0.9, 5);
  for (int row = 0; row < 3; ++row)
    for (int column = 2; column < 12; ++column) hall.at(row, column) = 0;
  Matrix emptyRow = randomSparse(10, 0.9, 6);
  for (int column = 0; column < 10; ++column) emptyRow.at(4, column) = 0;
  Matrix emptyColumn = randomSparse(8, 0.9, 7);
  for (int row = 0; row < 8; ++row) emptyColumn.at(row, 2) = 0;
  for (const Matrix* matrix : {&hall, &emptyRow, &emptyColumn}) {
    EXPECT_EQ(floatPermanent(toTensor(*matrix, rt::TensorFormat::csc())), 0.0);
    if (matrix->n <= 10) EXPECT_EQ(test::permanentByPermutations(toDenseArray(*matrix)), 0.0);
  }
  Matrix integerHall = randomSparse(12, 0.9, 8, /*integers=*/true);
  for (int row = 0; row < 3; ++row)
    for (int column = 2; column < 12; ++column) integerHall.at(row, column) = 0;
  EXPECT_EQ(exactPermanent(toTensor(integerHall, rt::TensorFormat::csc())), 0);
}

TEST(PermanentKernel, ExactModeEqualsFloatModeOnZeroOneMatrices) {
  for (int n : {12, 16, 20, 22}) {
    Matrix pattern = randomPattern(n, 0.25, n);
    rt::Tensor tensor = toTensor(pattern, rt::TensorFormat::csc());
    int64_t exact = exactPermanent(tensor);
    EXPECT_GT(exact, 0);
    double floating = floatPermanent(tensor);
    if (n <= 12) EXPECT_EQ(floating, static_cast<double>(exact)) << "n = " << n;
    EXPECT_NEAR(floating, static_cast<double>(exact), 1e-10 * static_cast<double>(exact)) << "n = " << n;
    if (n <= 20) EXPECT_EQ(test::permanent(toDenseArray(pattern)), static_cast<double>(exact)) << "n = " << n;
  }
}

TEST(PermanentKernel, TheSmallestMatrices) {
  EXPECT_EQ(floatPermanent(toTensor(zeros(0), rt::TensorFormat::csc())), 1.0);
  EXPECT_EQ(exactPermanent(toTensor(zeros(0), rt::TensorFormat::csc())), 1);
  Matrix single = zeros(1);
  single.at(0, 0) = -7;
  EXPECT_EQ(floatPermanent(toTensor(single, rt::TensorFormat::csc())), -7.0);
  EXPECT_EQ(exactPermanent(toTensor(single, rt::TensorFormat::csc())), -7);
  Matrix two = zeros(2);
  two.values = {1, 2, 3, 4};
  EXPECT_EQ(floatPermanent(toTensor(two, rt::TensorFormat::dense(2))), 10.0);
}

TEST(PermanentKernel, ExactOverflowIsAnErrorNotAWrappedResult) {
  // 21! > 2^63: fits the 128-bit sum, not the int64 result.
  EXPECT_THAT(errorOf([] { exactPermanent(toTensor(allOnes(21), rt::TensorFormat::csc())); }),
              HasSubstr("overflows the result's int64 type"));
  // 13! > 2^31.
  EXPECT_THAT(errorOf([] { exactPermanent32(toTensor(allOnes(13), rt::TensorFormat::csc())); }),
              HasSubstr("overflows the result's int32 type"));
  EXPECT_EQ(exactPermanent32(toTensor(allOnes(12), rt::TensorFormat::csc())), 479001600);
  // Entries of 2^50: the doubled row sums' products pass 2^127.
  Matrix huge = allOnes(3);
  for (double& entry : huge.values) entry = std::ldexp(1.0, 50);
  EXPECT_THAT(errorOf([&] { exactPermanent(toTensor(huge, rt::TensorFormat::csc())); }),
              HasSubstr("overflows 128-bit integer accumulation"));
}

TEST(PermanentKernel, RefusesWhatItCannotComputeRight) {
  Matrix half = allOnes(3);
  half.at(1, 2) = 0.5;
  EXPECT_THAT(errorOf([&] { exactPermanent(toTensor(half, rt::TensorFormat::csc())); }),
              HasSubstr("needs integer entries up to 2^53, but entry (2, 3) is 0.5"));
  EXPECT_THAT(errorOf([] { floatPermanent(toTensor(onesMinusIdentity(65), rt::TensorFormat::csc())); }),
              HasSubstr("handles n <= 64"));
  rt::Tensor wide = rt::fromDense(std::vector<double>(12, 1.0), {3, 4}, rt::TensorFormat::csr());
  EXPECT_THAT(errorOf([&] { floatPermanent(wide); }), HasSubstr("expects a square matrix, got 3 x 4"));
}

TEST(PermanentKernel, TheResultDoesNotDependOnTheThreadCount) {
  Matrix matrix = randomSparse(21, 0.3, 11);
  rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csc());
  rt::PermanentOptions one, two;
  one.threads = 1;
  two.threads = 2;
  double serial = floatPermanent(tensor, one);
  EXPECT_EQ(floatPermanent(tensor, two), serial);  // chunks are summed in chunk order
  EXPECT_NEAR(serial, test::permanent(toDenseArray(matrix)), ryserTolerance(matrix));
}

}  // namespace
}  // namespace tcc::permanent_test
