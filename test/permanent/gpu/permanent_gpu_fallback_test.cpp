// An MPI rank without a GPU in a cuda-target run: the OpenMP CPU kernel
// over the GPU kernel's column order sums, chunk for chunk, what the GPU
// kernel sums (checked against a plain Gray-code walk over the very
// problem the kernel is generated for), its permanent is the permanent, and
// its checkpoints carry the GPU variant's mode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <mutex>
#include <fstream>
#include <numeric>
#include <sstream>

#include "../permanent_test_support.h"
#include "chunk_plan.h"
#include "engine_driver.h"
#include "gpu/cpu_fallback.h"
#include "gpu/gpu_engine.h"
#include "ryser_reference.h"
#include "tcc/runtime/permanent_gpu.h"
#include "tcc/runtime/tensor_format.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;
namespace perm = rt::permanent;
namespace gpu = rt::permanent::gpu;

constexpr rt::GpuPermanentVariant kVariants[] = {rt::GpuPermanentVariant::Baseline, rt::GpuPermanentVariant::PureReg,
                                                 rt::GpuPermanentVariant::Hybrid};

Matrix withMatching(Matrix matrix) {
  for (int row = 0; row < matrix.n; ++row) matrix.at(row, (3 * row + 2) % matrix.n) = 0.625 + 0.125 * (row % 4);
  return matrix;
}

perm::SortedColumnMatrix equilibratedOf(const Matrix& matrix) {
  rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csc());
  perm::SortedColumnMatrix sorted = perm::readSortedColumnMatrix(tensor.abiView());
  perm::equilibrateByPowersOfTwo(sorted);
  return sorted;
}

// Per chunk: the sum of (-1)^g prod_i x_i(g) over the problem's Gray code,
// and the sum of the terms' magnitudes (the scale of its rounding).
struct ChunkReference {
  std::vector<double> sums, magnitudes;
};
ChunkReference chunksOfProblem(const gpu::RyserProblem& problem, const perm::ChunkPlan& plan) {
  ChunkReference reference{std::vector<double>(plan.chunks, 0.0), std::vector<double>(plan.chunks, 0.0)};
  forEachRyserTerm(problem, plan.iterations, [&](uint64_t g, double product) {
    const int64_t chunk = static_cast<int64_t>(g / plan.chunkSize);
    reference.sums[chunk] += (g & 1) ? -product : product;
    reference.magnitudes[chunk] += std::abs(product);
  });
  return reference;
}

std::vector<double> chunksOfEngine(perm::RangeEngine<double>& engine, const perm::ChunkPlan& plan) {
  std::vector<int64_t> all(plan.chunks);
  std::iota(all.begin(), all.end(), 0);
  std::vector<double> sums(plan.chunks, std::nan(""));
  std::atomic<bool> never{false};
  std::mutex mutex;
  engine.sumChunks(all, plan.chunkSize, perm::StopFlags{&never, &never},
                   [&](int64_t chunk, const perm::ChunkOutcome<double>& outcome) {
                     std::lock_guard lock(mutex);
                     sums[chunk] = outcome.sum;
                   });
  return sums;
}

TEST(GpuPermanentCpuFallback, SumsTheChunksOfTheGpuKernelsColumnOrder) {
  const Matrix matrix = withMatching(randomSparse(16, 0.3, 77));
  const perm::SortedColumnMatrix sorted = equilibratedOf(matrix);
  const perm::ChunkPlan plan = perm::planChunks(sorted.n);
  ASSERT_GT(plan.chunkSize, 1u);
  // The CPU kernel's own order (the degree sort), for contrast.
  const ChunkReference degreeSorted = chunksOfProblem(gpu::degreeSortedProblem(sorted), plan);
  for (auto variant : kVariants) {
    SCOPED_TRACE(rt::gpuPermanentVariantName(variant));
    const gpu::RyserProblem problem = gpu::generatePermanentKernel(sorted, variant).problem;
    const ChunkReference reference = chunksOfProblem(problem, plan);
    auto engine = gpu::makeCpuEngineInGpuOrder(sorted, variant, 2);
    const std::vector<double> sums = chunksOfEngine(*engine, plan);
    int differFromDegreeSort = 0;
    for (int64_t chunk = 0; chunk < plan.chunks; ++chunk) {
      const double tolerance = 1e-10 * reference.magnitudes[chunk] + 1e-300;
      ASSERT_NEAR(sums[chunk], reference.sums[chunk], tolerance) << "chunk " << chunk;
      differFromDegreeSort += std::abs(degreeSorted.sums[chunk] - reference.sums[chunk]) > 1e4 * tolerance;
    }
    // Hybrid orders the columns otherwise: its chunks are other sums, which
    // is why a rank without a GPU must follow the GPU's order.
    if (variant == rt::GpuPermanentVariant::Hybrid) {
      EXPECT_NE(problem.columnOf, gpu::degreeSortedProblem(sorted).columnOf);
      EXPECT_GT(differFromDegreeSort, plan.chunks / 2);
    }
  }
}

TEST(GpuPermanentCpuFallback, ItsPermanentIsThePermanentUnderTheGpuMode) {
  const Matrix matrix = withMatching(randomSparse(17, 0.35, 5));
  const rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csc());
  const double expected = floatPermanent(tensor);
  const auto path = std::filesystem::temp_directory_path() / ("tcc_gpu_fallback_" + std::to_string(::getpid()));
  std::filesystem::remove(path);

  // The cpu target's permanent, made to run as a rank without a GPU does.
  rt::computeCpuPermanentsInGpuOrder(rt::GpuPermanentVariant::Hybrid);
  rt::PermanentOptions options;
  options.progress = rt::ProgressMode::Off;
  options.checkpointPath = path.string();
  options.chunkLimit = 700;
  EXPECT_THAT(errorOf([&] { floatPermanent(tensor, options); }), HasSubstr("stopped at the chunk limit after 700"));
  std::stringstream saved;
  saved << std::ifstream(path).rdbuf();
  EXPECT_THAT(saved.str(), HasSubstr("mode float-gpu-hybrid"));
  options.chunkLimit = 0;
  const double resumed = floatPermanent(tensor, options);
  EXPECT_NEAR(resumed, expected, 1e-12 * std::abs(expected));
  EXPECT_NE(resumed, 0.0);

  // Restored: the CPU kernel's own order and mode, which the checkpoint is not.
  perm::overrideFloatEngine("", {});
  EXPECT_THAT(errorOf([&] { floatPermanent(tensor, options); }), HasSubstr("belongs to another computation"));
  std::filesystem::remove(path);
  EXPECT_EQ(floatPermanent(tensor), expected);
}

}  // namespace
}  // namespace tcc::permanent_test
