// On a GPU (label gpu): TCA-SpMM against a float64 reference computed from
// the float16 values the kernel sees, within the error of float32
// accumulation, and against the unrounded inputs within float16-input
// tolerance; random matrices (empty rows, single-nonzero rows, rows of
// 10^4 nonzeros), real ones, N from 1 to 256 (multiples of 8 and not).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "tcc/runtime/cuda.h"
#include "tcc/runtime/random.h"
#include "tcc/runtime/value_type.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::string matrixPath(const std::string& name) {
  const char* directory = std::getenv("TCC_MATRIX_DIR");
  return (directory ? std::string(directory) : std::string(TCC_SHARED_DATA_DIR) + "/matrices") + "/" + name + ".mtx";
}

constexpr const char* kTensorcore = R"(
tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float16
tensor B(J, K) : dense of float16
C(i, k) = A(i, j) * B(j, k)
schedule { tensorcore() }
target cuda
)";

// No schedule: TCA-SpMM by default for these types.
constexpr const char* kDefault = R"(
tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float16
tensor B(J, K) : dense of float16
C(i, k) = A(i, j) * B(j, k)
target cuda
)";

const Kernel& tensorcoreKernel() {
  static const Kernel kernel = compile(Program::fromText(kTensorcore));
  return kernel;
}

// rows x cols, each row's length drawn from `lengths` (cycled), columns
// random and distinct, values uniform in [-1, 1] (never all zero).
rt::Coo matrixWithRowLengths(int32_t rows, int32_t cols, const std::vector<int32_t>& lengths, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1, 1);
  rt::Coo coo = rt::Coo::ofShape({rows, cols});
  std::vector<int32_t> columns(cols);
  for (int32_t c = 0; c < cols; ++c) columns[c] = c;
  for (int32_t row = 0; row < rows; ++row) {
    int32_t length = std::min(lengths[row % lengths.size()], cols);
    for (int32_t k = 0; k < length; ++k) std::swap(columns[k], columns[k + random() % (cols - k)]);
    std::vector<int32_t> chosen(columns.begin(), columns.begin() + length);
    std::sort(chosen.begin(), chosen.end());
    for (int32_t column : chosen) {
      int32_t coordinate[2] = {row, column};
      double v = value(random);
      coo.push(coordinate, v == 0 ? 0.5 : v);
    }
  }
  return coo;
}

// Checks C = A * B for the tensors as given to the kernel (A, B float16).
void expectProduct(const Kernel& kernel, const rt::Coo& a, int32_t columns, uint64_t seed, const std::string& what) {
  SCOPED_TRACE(what + ", N = " + std::to_string(columns));
  const int32_t rows = a.dims[0], inner = a.dims[1];
  rt::Coo bCoo = rt::randomUniform({inner, columns}, 1.0, seed);
  Tensor aHalf = rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float16);
  Tensor bHalf = rt::pack(bCoo, rt::TensorFormat::dense(2), rt::ValueType::Float16);
  std::vector<double> got = rt::toDense(kernel.run({{"A", aHalf}, {"B", bHalf}}).at("C"));
  // The float16 values, exactly, and the unrounded ones.
  std::vector<double> aRounded = rt::toDense(aHalf), bRounded = rt::toDense(bHalf);
  std::vector<double> aExact = rt::toDense(a), bExact = rt::toDense(bCoo);
  ASSERT_EQ(got.size(), size_t(rows) * columns);
  std::vector<int64_t> rowLength(rows, 0);
  for (size_t k = 0; k < a.nnz(); ++k) ++rowLength[a.coords[0][k]];
  int failures = 0;
  double nonzeroOutputs = 0;
  for (int32_t i = 0; i < rows && failures < 5; ++i) {
    std::vector<double> rounded(columns, 0), exact(columns, 0), magnitude(columns, 0);
    for (int32_t k = 0; k < inner; ++k) {
      double s = aRounded[size_t(i) * inner + k], sExact = aExact[size_t(i) * inner + k];
      if (sExact == 0 && s == 0) continue;
      for (int32_t j = 0; j < columns; ++j) {
        double d = bRounded[size_t(k) * columns + j];
        rounded[j] += s * d;
        exact[j] += sExact * bExact[size_t(k) * columns + j];
        magnitude[j] += std::abs(s * d);
      }
    }
    // float32 accumulation: a few units in the last place per MMA step.
    double accumulation = std::ldexp(1.0, -22) * (double(rowLength[i]) / 8 + 4);
    for (int32_t j = 0; j < columns && failures < 5; ++j) {
      ASSERT_TRUE(std::isfinite(rounded[j])) << "the float16 inputs overflow: scale the matrix";
      double value = got[size_t(i) * columns + j];
      nonzeroOutputs += value != 0;
      // Written so that nan (never within a bound) fails.
      if (!std::isfinite(value) || !(std::abs(value - rounded[j]) <= accumulation * magnitude[j] + 1e-30)) {
        ++failures;
        ADD_FAILURE() << "C(" << i << "," << j << ") = " << value << ", expected " << rounded[j]
                      << " from the float16 inputs (row of " << rowLength[i] << " nonzeros)";
      } else if (!(std::abs(value - exact[j]) <= std::ldexp(1.0, -10) * (magnitude[j] + 1e-3))) {
        ++failures;
        ADD_FAILURE() << "C(" << i << "," << j << ") = " << value << ", expected " << exact[j]
                      << " within float16-input tolerance";
      }
    }
  }
  if (a.nnz() > 0) EXPECT_GT(nonzeroOutputs, 0) << "the product is all zero";
}

const std::vector<int32_t> kColumns = {1, 3, 8, 13, 16, 20, 32, 40, 64, 100, 128, 256};

TEST(TcaSpmmGpu, RandomRowsOfEveryClassAndEveryN) {
  // Row lengths around the class edges 8 / 16 / 32 / 64 units and beyond,
  // empty rows and single nonzeros among them.
  rt::Coo a = matrixWithRowLengths(300, 700, {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 300, 1, 0}, 1);
  for (int32_t columns : kColumns) expectProduct(tensorcoreKernel(), a, columns, 100 + columns, "class edges");
}

TEST(TcaSpmmGpu, RowsOfTenThousandNonzeros) {
  rt::Coo a = matrixWithRowLengths(40, 12000, {10000, 0, 1, 10000, 5000, 3}, 2);
  for (int32_t columns : {1, 8, 13, 32, 64, 128, 256}) expectProduct(tensorcoreKernel(), a, columns, 200 + columns, "long rows");
}

TEST(TcaSpmmGpu, SingleNonzeroRowsEmptyRowsAndAnEmptyMatrix) {
  expectProduct(tensorcoreKernel(), matrixWithRowLengths(1000, 50, {1, 0, 0, 1}, 3), 24, 301, "single nonzeros");
  expectProduct(tensorcoreKernel(), matrixWithRowLengths(1, 1, {1}, 4), 8, 302, "one entry");
  expectProduct(tensorcoreKernel(), rt::Coo::ofShape({70, 40}), 16, 303, "all rows empty");
}

TEST(TcaSpmmGpu, RandomUniformMatrices) {
  expectProduct(tensorcoreKernel(), rt::randomUniform({2000, 1500}, 0.01, 5), 64, 401, "2000 x 1500, 1%");
  expectProduct(tensorcoreKernel(), rt::randomUniform({513, 257}, 0.3, 6), 33, 402, "513 x 257, 30%");
}

// A real matrix as float16 holds it: bcsstk13's values reach 1e9, beyond
// float16's 65504 (they would be inf).
rt::Coo realMatrix(const std::string& name) {
  rt::Coo a = rt::readMatrixMarket(matrixPath(name));
  a.values = rt::heldByFloat16(std::move(a.values));
  return a;
}

TEST(TcaSpmmGpu, RealMatrices) {
  for (const char* name : {"494_bus", "cage5", "bcsstk13", "dwt_992", "Erdos971", "mbeacxc", "adder_dcop_05"}) {
    rt::Coo a = realMatrix(name);
    for (int32_t columns : {8, 33, 64, 128}) expectProduct(tensorcoreKernel(), a, columns, 500 + columns, name);
  }
}

TEST(TcaSpmmGpu, TheDefaultForFloat16IsTheSameKernel) {
  Kernel kernel = compile(Program::fromText(kDefault));
  expectProduct(kernel, realMatrix("bcsstk13"), 64, 601, "bcsstk13 by default");
}

// The preprocessing is cached per device allocation: repeated runs give the
// same result, and another matrix of the same shape is not answered with
// the first one's plan.
TEST(TcaSpmmGpu, RepeatedRunsAndAnotherMatrixOfTheSameShape) {
  const Kernel& kernel = tensorcoreKernel();
  rt::Coo first = matrixWithRowLengths(500, 400, {3, 70, 0, 20}, 7);
  rt::Coo second = matrixWithRowLengths(500, 400, {90, 1, 40, 0, 8}, 8);
  Tensor b = rt::pack(rt::randomUniform({400, 64}, 1.0, 9), rt::TensorFormat::dense(2), rt::ValueType::Float16);
  Tensor a = rt::pack(first, rt::TensorFormat::csr(), rt::ValueType::Float16);
  RunResult once = kernel.run({{"A", a}, {"B", b}}, RunOptions{1});
  RunResult many = kernel.run({{"A", a}, {"B", b}}, RunOptions{5});
  // Rows shared by several warps are summed with atomics, in any order:
  // the same result up to float32 rounding.
  std::vector<double> first1 = rt::toDense(once.tensors.at("C")), first5 = rt::toDense(many.tensors.at("C"));
  ASSERT_EQ(first1.size(), first5.size());
  double largest = 0;
  for (double v : first1) largest = std::max(largest, std::abs(v));
  EXPECT_GT(largest, 0.0);
  for (size_t k = 0; k < first1.size(); ++k) ASSERT_NEAR(first1[k], first5[k], 1e-5 * largest) << "entry " << k;
  for (double seconds : many.seconds) EXPECT_GT(seconds, 0.0);
  expectProduct(kernel, second, 64, 9, "a second matrix");
  expectProduct(kernel, first, 64, 9, "the first again");
}

}  // namespace
}  // namespace tcc::test
