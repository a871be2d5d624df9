// The GPU permanent on a GPU (label gpu): each variant against the
// definition, closed forms, the permanent's invariances and the CPU kernel,
// checkpoints, and p = perm(A) through `tcc run --target cuda`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "../permanent_test_support.h"
#include "gpu/gpu_engine.h"
#include "tcc/runtime/permanent_gpu.h"
#include "tcc/runtime/tensor_format.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;
using rt::GpuPermanentVariant;

constexpr std::array<GpuPermanentVariant, 3> kVariants = {GpuPermanentVariant::Baseline, GpuPermanentVariant::PureReg,
                                                          GpuPermanentVariant::Hybrid};

rt::PermanentOptions quiet() {
  rt::PermanentOptions options;
  options.progress = rt::ProgressMode::Off;
  return options;
}

double gpuPermanent(const Matrix& matrix, GpuPermanentVariant variant, const rt::PermanentOptions& options = quiet()) {
  rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csc());
  return rt::gpuPermanent(tensor.abiView(), variant, options);
}

TEST(GpuPermanent, MatchesTheSumOverAllPermutations) {
  for (int n = 1; n <= 9; ++n)
    for (double density : {0.4, 1.0}) {
      Matrix matrix = randomSparse(n, density, 500 + 10 * n + static_cast<int>(density * 10));
      const double expected = test::permanentByPermutations(toDenseArray(matrix));
      for (auto variant : kVariants) {
        SCOPED_TRACE(std::string(rt::gpuPermanentVariantName(variant)) + ", n = " + std::to_string(n));
        EXPECT_NEAR(gpuPermanent(matrix, variant), expected, ryserTolerance(matrix));
      }
    }
}

TEST(GpuPermanent, AllOnesGivesNFactorial) {
  double factorial = 1;
  for (int n = 1; n <= 16; ++n) {
    factorial *= n;
    for (auto variant : kVariants)
      EXPECT_NEAR(gpuPermanent(allOnes(n), variant), factorial, 1e-12 * factorial)
          << rt::gpuPermanentVariantName(variant) << ", n = " << n;
  }
}

TEST(GpuPermanent, OnesMinusIdentityGivesDerangementNumbers) {
  double previous = 1, current = 0;
  for (int n = 2; n <= 18; ++n) {
    double next = (n - 1) * (current + previous);
    previous = current;
    current = next;
    for (auto variant : kVariants)
      EXPECT_NEAR(gpuPermanent(onesMinusIdentity(n), variant), current, 1e-11 * current)
          << rt::gpuPermanentVariantName(variant) << ", n = " << n;
  }
}

TEST(GpuPermanent, BlockDiagonalGivesTheProductOfTheBlocksPermanents) {
  Matrix a = randomSparse(7, 0.8, 1), b = randomSparse(9, 0.6, 2), c = randomSparse(6, 1.0, 3);
  const double expected = test::permanentByPermutations(toDenseArray(a)) *
                          test::permanentByPermutations(toDenseArray(b)) *
                          test::permanentByPermutations(toDenseArray(c));
  ASSERT_NE(expected, 0.0);
  for (auto variant : kVariants)
    EXPECT_NEAR(gpuPermanent(blockDiagonal({a, b, c}), variant), expected, 1e-9 * std::abs(expected))
        << rt::gpuPermanentVariantName(variant);
}

TEST(GpuPermanent, InvariantUnderRowAndColumnPermutations) {
  Matrix matrix = randomSparse(22, 0.3, 17);
  for (int row = 0; row < 22; ++row) matrix.at(row, (row + 5) % 22) = 0.5;
  const double expected = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  for (uint64_t seed : {1, 2, 3})
    for (auto variant : kVariants)
      EXPECT_NEAR(gpuPermanent(randomlyPermuted(matrix, seed), variant), expected, 1e-10 * std::abs(expected))
          << rt::gpuPermanentVariantName(variant) << ", seed " << seed;
}

TEST(GpuPermanent, AgreesWithTheCpuKernelWithin1e10Relative) {
  for (int n : {20, 26, 30})
    for (double density : {0.2, 0.4}) {
      Matrix matrix = randomSparse(n, density, 1000 * n + static_cast<int>(100 * density));
      for (int row = 0; row < n; ++row) matrix.at(row, (3 * row + 1) % n) = 0.25 + 0.01 * row;
      const double cpu = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
      ASSERT_NE(cpu, 0.0);
      for (auto variant : kVariants)
        EXPECT_NEAR(gpuPermanent(matrix, variant), cpu, 1e-10 * std::abs(cpu))
            << rt::gpuPermanentVariantName(variant) << ", n = " << n << ", density " << density;
    }
}

// Hybrid's kernel shapes on the device: column 0 summed out in pairs or
// not, blocks of 4, 8 or 16 steps, register caps, partitions forced.
TEST(GpuPermanent, HybridKernelShapesAgreeWithTheCpuKernel) {
  Matrix matrix = randomSparse(27, 0.3, 2727);
  for (int row = 0; row < 27; ++row) matrix.at(row, (5 * row + 2) % 27) = 0.375 + 0.01 * row;
  const double cpu = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  struct Knobs {
    const char* pairs;
    const char* unroll;
    const char* minBlocks;
    const char* registerColumns;
  };
  for (auto [pairs, unroll, minBlocks, registerColumns] :
       {Knobs{"1", "8", "", ""}, Knobs{"0", "8", "", ""}, Knobs{"1", "16", "", ""}, Knobs{"1", "4", "", ""},
        Knobs{"1", "8", "2", ""}, Knobs{"1", "8", "4", ""}, Knobs{"1", "16", "3", "5"}, Knobs{"1", "8", "", "2"},
        Knobs{"2", "8", "", ""}, Knobs{"2", "16", "2", ""}, Knobs{"1", "16", "3", "9"}}) {
    ::setenv("TCC_PERMANENT_GPU_PAIRS", pairs, 1);
    ::setenv("TCC_PERMANENT_GPU_UNROLL", unroll, 1);
    ::setenv("TCC_PERMANENT_GPU_MIN_BLOCKS", minBlocks, 1);
    ::setenv("TCC_PERMANENT_GPU_REGISTER_COLUMNS", registerColumns, 1);
    ::setenv("TCC_PERMANENT_GPU_CHAIN", std::string(registerColumns) == "9" ? "1" : "0", 1);
    EXPECT_NEAR(gpuPermanent(matrix, GpuPermanentVariant::Hybrid), cpu, 1e-10 * std::abs(cpu))
        << "pairs " << pairs << ", unroll " << unroll << ", min blocks " << minBlocks << ", k " << registerColumns;
  }
  for (const char* knob : {"TCC_PERMANENT_GPU_REGISTER_COLUMNS", "TCC_PERMANENT_GPU_UNROLL", "TCC_PERMANENT_GPU_PAIRS",
                           "TCC_PERMANENT_GPU_MIN_BLOCKS", "TCC_PERMANENT_GPU_CHAIN"})
    ::unsetenv(knob);
}

TEST(GpuPermanent, StructurallySingularGivesZero) {
  Matrix matrix = randomSparse(12, 0.5, 4);
  for (int row = 0; row < 12; ++row) matrix.at(row, 3) = 0, matrix.at(row, 8) = 0;  // two empty columns
  for (int row = 0; row < 12; ++row) matrix.at(row, (row + 1) % 12) = 1.0;
  for (int row = 0; row < 12; ++row) matrix.at(row, 3) = 0, matrix.at(row, 8) = 0;
  for (auto variant : kVariants) EXPECT_EQ(gpuPermanent(matrix, variant), 0.0) << rt::gpuPermanentVariantName(variant);
}

TEST(GpuPermanent, StopsAtTheChunkLimitAndResumesFromTheCheckpoint) {
  Matrix matrix = randomSparse(28, 0.3, 23);
  for (int row = 0; row < 28; ++row) matrix.at(row, (row + 2) % 28) = 0.5;
  const double cpu = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  for (auto variant : kVariants) {
    SCOPED_TRACE(rt::gpuPermanentVariantName(variant));
    const auto path = std::filesystem::temp_directory_path() /
                      ("tcc_gpu_perm_" + std::string(rt::gpuPermanentVariantName(variant)) + ".ckpt");
    std::filesystem::remove(path);
    rt::PermanentOptions options = quiet();
    options.checkpointPath = path.string();
    options.chunkLimit = 1000;
    EXPECT_THAT(errorOf([&] { gpuPermanent(matrix, variant, options); }), HasSubstr("stopped at the chunk limit"));
    EXPECT_TRUE(std::filesystem::exists(path));
    options.chunkLimit = 0;
    EXPECT_NEAR(gpuPermanent(matrix, variant, options), cpu, 1e-10 * std::abs(cpu));
    std::filesystem::remove(path);
  }
}

TEST(GpuPermanent, EngineReportsRegistersAndSpills) {
  Matrix matrix = randomPattern(40, 0.1, 5);
  rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csc());
  auto sorted = rt::permanent::readSortedColumnMatrix(tensor.abiView());
  for (auto variant : kVariants) {
    rt::permanent::gpu::GpuRangeEngine engine(sorted, variant, uint64_t{1} << 23);
    const auto& report = engine.report();
    std::printf("%s\n", report.text().c_str());
    EXPECT_GT(report.registers, 0);
    EXPECT_GT(report.residentThreads, 0);
    EXPECT_LT(report.generateSeconds + report.compileSeconds, 2.0);
  }
}

TEST(GpuPermanent, RunsThroughTheCudaTarget) {
  const auto directory = std::filesystem::temp_directory_path() / "tcc_gpu_perm_run";
  std::filesystem::create_directories(directory);
  Matrix matrix = randomSparse(14, 0.4, 31);
  for (int row = 0; row < 14; ++row) matrix.at(row, row) = 1.5;
  const double expected = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  {
    std::ofstream out(directory / "a.mtx");
    out << "%%MatrixMarket matrix coordinate real general\n";
    int count = 0;
    for (double value : matrix.values) count += value != 0;
    out << "14 14 " << count << "\n";
    out.precision(17);
    for (int row = 0; row < 14; ++row)
      for (int column = 0; column < 14; ++column)
        if (matrix.at(row, column) != 0) out << row + 1 << " " << column + 1 << " " << matrix.at(row, column) << "\n";
  }
  for (const char* variant : {"hybrid", "purereg", "baseline"}) {
    const std::string command = std::string("TCC_PERMANENT_GPU_VARIANT=") + variant + " " + TCC_EXECUTABLE + " run " +
                                TCC_SOURCE_DIR + "/examples/perm.tc --target cuda --in A=" +
                                (directory / "a.mtx").string() + " --print p 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buffer[512];
    while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
    EXPECT_EQ(pclose(pipe), 0) << output;
    const auto number = output.find_last_of("=:");
    const double printed = std::strtod(output.c_str() + (number == std::string::npos ? 0 : number + 1), nullptr);
    EXPECT_NEAR(printed, expected, 1e-9 * std::abs(expected)) << variant << ": " << output;
  }
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace tcc::permanent_test
