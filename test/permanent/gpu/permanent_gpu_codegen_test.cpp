// The GPU permanent's host side, on any machine: the orders and the
// register partition (Algorithms 3 and 4), the launch plan (Lemma 1), the
// generated kernels compiling with NVRTC (and nvcc where it is found), the
// chunk driver over an engine, and the refusals.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "../permanent_test_support.h"
#include "chunk_plan.h"
#include "engine_driver.h"
#include "gpu/gpu_engine.h"
#include "gpu/hybrid_plan.h"
#include "gpu/kernel_source.h"
#include "gpu/launch_plan.h"
#include "gpu/ryser_problem.h"
#include "ryser_reference.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/permanent_gpu.h"
#include "tcc/runtime/tensor_format.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace perm = rt::permanent;
namespace gpu = rt::permanent::gpu;

perm::SortedColumnMatrix sortedOf(const Matrix& matrix) {
  rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csc());
  return perm::readSortedColumnMatrix(tensor.abiView());
}

// What every kernel computes, on the host: (-1)^(n-1) 2 sum_g (-1)^g prod_i x_i(g)
// over the problem's order, plain Gray-code Ryser.
double permanentOfProblem(const gpu::RyserProblem& problem) {
  const int n = problem.n;
  double sum = 0;
  forEachRyserTerm(problem, uint64_t{1} << (n - 1),
                   [&](uint64_t g, double product) { sum += (g & 1) ? -product : product; });
  return (n % 2 == 1 ? 2.0 : -2.0) * sum;
}

bool isPermutation(std::vector<int> order, int n) {
  std::sort(order.begin(), order.end());
  std::vector<int> identity(n);
  std::iota(identity.begin(), identity.end(), 0);
  return order == identity;
}

TEST(GpuPermanentProblem, EveryOrderGivesThePermanent) {
  for (int n = 2; n <= 9; ++n) {
    Matrix matrix = randomSparse(n, 0.5, 40 + n);
    for (int row = 0; row < n; ++row) matrix.at(row, (row * 3 + 1) % n) = 0.75;  // a perfect matching
    const double expected = test::permanentByPermutations(toDenseArray(matrix));
    perm::SortedColumnMatrix sorted = sortedOf(matrix);
    SCOPED_TRACE("n = " + std::to_string(n));
    EXPECT_NEAR(permanentOfProblem(gpu::degreeSortedProblem(sorted)), expected, ryserTolerance(matrix));
    EXPECT_NEAR(permanentOfProblem(gpu::orderedProblem(sorted, gpu::permanentOrdering(sorted))), expected,
                ryserTolerance(matrix));
  }
}

TEST(GpuPermanentOrdering, TakesTheColumnWithFewestNewRowsAndOrdersItsRowsNext) {
  // Column 2 has one nonzero (row 3); then column 0 adds only row 1 (rows
  // 1 and 3); column 1 adds rows 0 and 2; column 3 adds nothing new.
  Matrix matrix = zeros(4);
  matrix.at(3, 2) = 1;
  matrix.at(1, 0) = 1, matrix.at(3, 0) = 1;
  matrix.at(0, 1) = 1, matrix.at(2, 1) = 1, matrix.at(3, 1) = 1;
  matrix.at(0, 3) = 1, matrix.at(1, 3) = 1, matrix.at(2, 3) = 1, matrix.at(3, 3) = 1;
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  gpu::Ordering ordering = gpu::permanentOrdering(sorted);
  std::vector<int> inputColumns;
  for (int c : ordering.columns) inputColumns.push_back(sorted.originalColumn[c]);
  EXPECT_EQ(inputColumns, (std::vector<int>{2, 0, 1, 3}));
  EXPECT_EQ(ordering.rows, (std::vector<int>{3, 1, 0, 2}));
}

TEST(GpuPermanentOrdering, FirstColumnsTouchOnlyTheFirstRows) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const int n = 10 + static_cast<int>(seed % 30);
    Matrix matrix = randomPattern(n, 0.15, seed);
    perm::SortedColumnMatrix sorted = sortedOf(matrix);
    gpu::Ordering ordering = gpu::permanentOrdering(sorted);
    ASSERT_TRUE(isPermutation(ordering.columns, n));
    ASSERT_TRUE(isPermutation(ordering.rows, n));
    gpu::RyserProblem problem = gpu::orderedProblem(sorted, ordering);
    // The rows of columns 0..k-1 are exactly rows 0..r_k-1, and r_k grows
    // slower than under the degree sort with rows in input order.
    gpu::RyserProblem sortedProblem = gpu::degreeSortedProblem(sorted);
    int orderedTotal = 0, sortedTotal = 0;
    for (int k = 1; k <= n; ++k) {
      std::set<int> touched(problem.rows.begin(), problem.rows.begin() + problem.columnStart[k]);
      EXPECT_EQ(static_cast<int>(touched.size()), problem.rowsTouchedBy(k)) << "k = " << k;
      orderedTotal += problem.rowsTouchedBy(k);
      sortedTotal += sortedProblem.rowsTouchedBy(k);
    }
    EXPECT_LT(orderedTotal, sortedTotal) << "seed " << seed;
  }
}

TEST(GpuPermanentPartition, TakesTheBestScoringSplit) {
  Matrix matrix = randomPattern(40, 0.1, 7);
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  gpu::RyserProblem problem = gpu::orderedProblem(sorted, gpu::permanentOrdering(sorted));
  const gpu::CostModel model;
  gpu::Partition best = gpu::partitionRegisters(problem, model);
  EXPECT_GE(best.registerColumns, 1);
  EXPECT_LT(best.registerColumns, 40);
  EXPECT_EQ(best.registerRows, problem.rowsTouchedBy(best.registerColumns));
  EXPECT_LT(best.registerRows, 40) << "the sparse 40 x 40 matrix keeps some rows out of registers";
  for (int k = 1; k < 40; ++k) EXPECT_LE(gpu::evaluatePartition(problem, k, model).score, best.score) << "k = " << k;
}

TEST(GpuPermanentPartition, CostModelTradesRegistersForGlobalAccesses) {
  Matrix matrix = randomPattern(32, 0.2, 3);
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  gpu::RyserProblem problem = gpu::orderedProblem(sorted, gpu::permanentOrdering(sorted));
  gpu::CostModel model;
  gpu::Partition few = gpu::evaluatePartition(problem, 1, model);
  gpu::Partition all = gpu::evaluatePartition(problem, 31, model);
  // More register columns: more registers, fewer resident threads; with
  // every row in registers there is no global work left.
  EXPECT_LE(few.estimatedRegisters, all.estimatedRegisters);
  EXPECT_GE(few.estimatedThreadsPerMultiprocessor, all.estimatedThreadsPerMultiprocessor);
  EXPECT_EQ(all.registerRows, 32);
  EXPECT_DOUBLE_EQ(all.stepCost, 33.0);
  // A costlier global memory pushes the split toward more register columns.
  model.globalAccessCost = 1000;
  const int expensive = gpu::partitionRegisters(problem, model).registerColumns;
  model.globalAccessCost = 0.01;
  const int cheap = gpu::partitionRegisters(problem, model).registerColumns;
  EXPECT_GE(expensive, cheap);
}

// The Hybrid plan: the shape with the fewest predicted cycles per step over
// every partition, pair mode and unroll; compiled for two blocks per SM
// where its registers allow; pairs cut the additions (column 0's flips).
TEST(GpuPermanentPlan, TakesTheShapeWithTheFewestPredictedCycles) {
  for (double density : {0.1, 0.3, 0.5}) {
    SCOPED_TRACE("density " + std::to_string(density));
    Matrix matrix = randomPattern(40, density, 40 + static_cast<int>(10 * density));
    perm::SortedColumnMatrix sorted = sortedOf(matrix);
    gpu::RyserProblem problem = gpu::orderedProblem(sorted, gpu::permanentOrdering(sorted));
    const gpu::HybridPlan plan = gpu::planHybrid(problem, 32, 13);
    for (int unroll : gpu::HybridModel{}.unrolls)
      for (int k = 1; k < 40 && unroll >= 2; ++k)
        for (int pairs : {gpu::kNoPairs, gpu::kPairsKeepingSums, gpu::kPairsFormingSums})
          EXPECT_GE(gpu::evaluateHybrid(problem, k, unroll, 13, pairs).predictedCycles, plan.predictedCycles - 1e-9)
              << "k " << k << ", unroll " << unroll << ", pairs " << pairs;
    EXPECT_NE(plan.pairs, gpu::kNoPairs);
    // Compiled for the blocks its registers allow, or uncapped at one block.
    EXPECT_EQ(plan.minBlocks, plan.estimatedBlocks >= 2 ? plan.estimatedBlocks : 0);
    EXPECT_LE(plan.estimatedRegisters * gpu::kGeneratedThreadsPerBlock * std::max(1, plan.minBlocks), 65536)
        << "registers for the blocks it is compiled for";
    if (density < 0.2) EXPECT_GE(plan.estimatedBlocks, 3) << "a sparse matrix keeps few rows in registers";
    EXPECT_THAT(plan.text(), HasSubstr("summed out in pairs"));
    // Keeping column 0's second sums: fewer additions, more doubles kept.
    const gpu::KernelCost none = gpu::hybridKernelCost(problem, plan.partition, 8, 13, gpu::kNoPairs, 8);
    const gpu::KernelCost kept = gpu::hybridKernelCost(problem, plan.partition, 8, 13, gpu::kPairsKeepingSums, 8);
    const gpu::KernelCost formed = gpu::hybridKernelCost(problem, plan.partition, 8, 13, gpu::kPairsFormingSums, 8);
    EXPECT_LT(kept.additions, none.additions);
    EXPECT_LT(kept.additions, formed.additions);
    EXPECT_GT(kept.liveDoubles, formed.liveDoubles);
    EXPECT_LE(kept.multiplications, none.multiplications);
  }
}

TEST(GpuPermanentLaunchPlan, ThreadsTakeAlignedPowerOfTwoSlices) {
  for (int n : {2, 9, 20, 32, 40, 49}) {
    const perm::ChunkPlan chunks = perm::planChunks(n);
    const gpu::LaunchPlan plan = gpu::planLaunch(chunks.chunkSize, 135168);
    EXPECT_EQ(plan.iterationsPerThread << plan.logThreadsPerChunk, chunks.chunkSize) << "n = " << n;
    EXPECT_EQ(plan.iterationsPerThread & (plan.iterationsPerThread - 1), 0u);
    EXPECT_LE(plan.iterationsPerThread, gpu::kIterationsPerThread);
    EXPECT_LE(plan.threadsPerLaunch(), std::max<int64_t>(135168, int64_t{1} << plan.logThreadsPerChunk));
  }
}

TEST(GpuPermanentLaunchPlan, WarpThreadsFlipTheSameColumnButAtTwoSteps) {
  // Lemma 1: 32 threads on consecutive aligned slices of 2^s steps run the
  // same column function at every local step but the first (each thread's
  // own set-up) and the middle one (column s - 1, in for some threads and
  // out for others).
  const uint64_t span = uint64_t{1} << 10;
  for (uint64_t local = 0; local < span; ++local) {
    std::set<std::pair<int, bool>> kernels;
    for (uint64_t thread = 0; thread < 32; ++thread) {
      const uint64_t g = (thread + 32 * 77) * span + local;
      if (g == 0) continue;
      const int column = __builtin_ctzll(g);
      kernels.insert({column, ((g ^ (g >> 1)) >> column) & 1});
    }
    if (local == span / 2) {
      EXPECT_EQ(kernels.size(), 2u);
      EXPECT_EQ(kernels.begin()->first, kernels.rbegin()->first);
    } else if (local >= 1) {
      EXPECT_EQ(kernels.size(), 1u) << "local step " << local;
    }
  }
}

TEST(GpuPermanentRefusal, ExactModeIsRefusedWithTheReason) {
  int64_t value = 0;
  tcc_tensor result{};
  result.datatype = TCC_INT64;
  result.vals = &value;
  rt::Tensor matrix = toTensor(allOnes(3), rt::TensorFormat::csc());
  tcc_tensor view = matrix.abiView();
  EXPECT_EQ(tcc_permanent_cuda(&result, &view), rt::kPermanentFailedStatus);
  EXPECT_THAT(tcc_permanent_cuda_last_error(), HasSubstr("exact mode"));
  EXPECT_THAT(tcc_permanent_cuda_last_error(), HasSubstr("cpu target"));
}

TEST(GpuPermanentRefusal, AnUnknownVariantNamesTheChoices) {
  ::setenv("TCC_PERMANENT_GPU_VARIANT", "fastest", 1);
  EXPECT_THAT(errorOf([] { rt::gpuPermanentVariantFromEnvironment(); }),
              HasSubstr("expected hybrid, purereg or baseline"));
  ::setenv("TCC_PERMANENT_GPU_VARIANT", "purereg", 1);
  EXPECT_EQ(rt::gpuPermanentVariantFromEnvironment(), rt::GpuPermanentVariant::PureReg);
  ::unsetenv("TCC_PERMANENT_GPU_VARIANT");
  EXPECT_EQ(rt::gpuPermanentVariantFromEnvironment(), rt::GpuPermanentVariant::Hybrid);
}

// `tcc` on the cuda target: explain names the variant and why; exact mode
// is refused at compile time with the reason.
std::string runTcc(const std::string& arguments, int& status) {
  const std::string command = std::string(TCC_EXECUTABLE) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[512];
  while (pipe && fgets(buffer, sizeof buffer, pipe)) output += buffer;
  status = pipe ? pclose(pipe) : -1;
  return output;
}

TEST(GpuPermanentCommand, ExplainNamesTheVariantAndWhy) {
  const std::string example = std::string(TCC_SOURCE_DIR) + "/examples/perm.tc";
  int status = 0;
  std::string output = runTcc("explain " + example + " --target cuda", status);
  EXPECT_EQ(status, 0) << output;
  EXPECT_THAT(output, HasSubstr("permanent intrinsic on the GPU"));
  EXPECT_THAT(output, HasSubstr("CodeGen-Hybrid, the default"));
  EXPECT_THAT(output, HasSubstr("permanent ordering"));
  EXPECT_THAT(output, HasSubstr("sums column 0 out in pairs of steps"));
  EXPECT_THAT(output, HasSubstr("prints the plan it chose"));
  output = runTcc("explain " + example + " --target cpu", status);
  EXPECT_THAT(output, HasSubstr("OpenMP chunks"));
  ::setenv("TCC_PERMANENT_GPU_VARIANT", "purereg", 1);
  output = runTcc("explain " + example + " --target cuda", status);
  ::unsetenv("TCC_PERMANENT_GPU_VARIANT");
  EXPECT_THAT(output, HasSubstr("CodeGen-PureReg, chosen by TCC_PERMANENT_GPU_VARIANT"));
}

TEST(GpuPermanentCommand, ExactModeOnTheCudaTargetIsRefusedWithTheReason) {
  int status = 0;
  const std::string output =
      runTcc("compile " + std::string(TCC_SOURCE_DIR) + "/examples/perm_exact.tc --target cuda", status);
  EXPECT_NE(status, 0);
  EXPECT_THAT(output, HasSubstr("exact permanent, which runs on the cpu target only"));
}

TEST(GpuPermanentEngineDriver, CpuEngineThroughTheDriverMatchesTheKernel) {
  Matrix matrix = randomSparse(18, 0.4, 5);
  const double expected = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  rt::PermanentOptions options;
  options.progress = rt::ProgressMode::Off;
  auto factory = [](const perm::SortedColumnMatrix& equilibrated) {
    auto tables = std::make_shared<perm::RyserTables<double>>(perm::floatTables(equilibrated));
    return perm::makeCpuEngine<double>(
        [tables](uint64_t begin, uint64_t end, perm::StopFlags stop) { return perm::floatChunk(*tables, begin, end, stop); },
        3);
  };
  EXPECT_NEAR(perm::floatPermanentOnEngine(sorted, "float-test", options, factory), expected,
              1e-12 * std::abs(expected));
}

TEST(GpuPermanentEngineDriver, StopsAtTheChunkLimitAndResumesFromTheCheckpoint) {
  Matrix matrix = randomSparse(16, 0.5, 9);
  const double expected = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  const auto path = std::filesystem::temp_directory_path() / ("tcc_gpu_driver_" + std::to_string(::getpid()) + ".ckpt");
  std::filesystem::remove(path);
  rt::PermanentOptions options;
  options.progress = rt::ProgressMode::Off;
  options.checkpointPath = path.string();
  options.chunkLimit = 1000;
  std::shared_ptr<perm::RyserTables<double>> tables;
  auto factory = [&](const perm::SortedColumnMatrix& equilibrated) {
    tables = std::make_shared<perm::RyserTables<double>>(perm::floatTables(equilibrated));
    auto held = tables;
    return perm::makeCpuEngine<double>(
        [held](uint64_t begin, uint64_t end, perm::StopFlags stop) { return perm::floatChunk(*held, begin, end, stop); }, 2);
  };
  EXPECT_THAT(errorOf([&] { perm::floatPermanentOnEngine(sorted, "float-test", options, factory); }),
              HasSubstr("stopped at the chunk limit after 1000 of"));
  EXPECT_THAT(errorOf([&] { perm::floatPermanentOnEngine(sorted, "float-other", options, factory); }),
              HasSubstr("belongs to another computation"));
  options.chunkLimit = 0;
  EXPECT_NEAR(perm::floatPermanentOnEngine(sorted, "float-test", options, factory), expected, 1e-12 * std::abs(expected));
  std::filesystem::remove(path);
}

// The generated sources compile: with NVRTC (no GPU needed) for sm_90, in
// under 2 s for a 40 x 40 matrix, and with nvcc where it is found.
TEST(GpuPermanentKernelSource, EveryVariantCompilesWithNvrtc) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  Matrix matrix = randomPattern(40, 0.1, 11);
  for (int row = 0; row < 40; ++row)
    for (int column = 0; column < 40; ++column)
      if (matrix.at(row, column) != 0) matrix.at(row, column) = 0.5 + 0.01 * (row + column);
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  for (auto variant : {rt::GpuPermanentVariant::Baseline, rt::GpuPermanentVariant::PureReg, rt::GpuPermanentVariant::Hybrid}) {
    SCOPED_TRACE(rt::gpuPermanentVariantName(variant));
    auto start = std::chrono::steady_clock::now();
    gpu::GeneratedPermanentKernel kernel = gpu::generatePermanentKernel(sorted, variant);
    std::string cubin = rt::cuda::compileToCubin(kernel.source, "sm_90", "tcc_permanent.cu");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(cubin.empty());
    EXPECT_LT(seconds, 2.0);
    if (variant != rt::GpuPermanentVariant::Baseline)
      EXPECT_THAT(kernel.source, HasSubstr("__device__ __forceinline__ void tcc_perm_c0_inc("));
    if (variant == rt::GpuPermanentVariant::PureReg) EXPECT_THAT(kernel.source, HasSubstr("if (column == 38)"));
    if (variant == rt::GpuPermanentVariant::Hybrid) {
      // Columns >= 13 flip only at a thread's start (slices of 2^13 steps).
      EXPECT_THAT(kernel.source, HasSubstr("tcc_perm_global_product"));
      EXPECT_THAT(kernel.source, HasSubstr("tcc_perm_frozen_product"));
      EXPECT_THAT(kernel.source, HasSubstr("if (column == 12)"));
      EXPECT_THAT(kernel.source, Not(HasSubstr("if (column == 13)")));
    }
  }
}

TEST(GpuPermanentKernelSource, GeneratedKernelsCompileWithNvcc) {
#ifndef TCC_NVCC
  GTEST_SKIP() << "nvcc not found";
#else
  Matrix matrix = randomSparse(12, 0.4, 2);
  for (int row = 0; row < 12; ++row) matrix.at(row, row) = 1.25;
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  const auto directory = std::filesystem::temp_directory_path() / ("tcc_perm_nvcc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  for (auto variant : {rt::GpuPermanentVariant::Baseline, rt::GpuPermanentVariant::PureReg, rt::GpuPermanentVariant::Hybrid}) {
    const auto source = directory / (std::string(rt::gpuPermanentVariantName(variant)) + ".cu");
    std::ofstream(source) << gpu::generatePermanentKernel(sorted, variant).source;
    const std::string command = std::string(TCC_NVCC) + " -arch=sm_90 -cubin -o " + (directory / "k.cubin").string() +
                                " " + source.string() + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::filesystem::remove_all(directory);
#endif
}

// The generated kernels run on the host: their source compiled as C++ with
// a few CUDA names defined, one simulated thread at a time, over every
// chunk of the chunk plan with the launch plan's slices, and the permanent
// they sum compared with the definition. Checks what the kernels compute
// (ordering, partition, unrolling, slices) where there is no GPU.
constexpr const char* kCudaOnHost = R"(#include <cmath>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__
#define __launch_bounds__(...)
#define __syncthreads()
#define __ffsll __builtin_ffsll
struct tcc_dim { unsigned x; };
extern "C" { tcc_dim blockIdx, threadIdx, blockDim; double tcc_shared[1 << 16]; }
using std::fabs;
)";

using SumKernel = void (*)(const long long*, unsigned long long, int, long long, double*, double*, const int*,
                           const int*, const double*, const double*, int);
using ReduceKernel = void (*)(const double*, int, long long, double*);

double permanentOnHost(const Matrix& matrix, rt::GpuPermanentVariant variant, const std::filesystem::path& directory,
                       int64_t residentThreads) {
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  const int exponent = perm::equilibrateByPowersOfTwo(sorted);
  gpu::GeneratedPermanentKernel kernel = gpu::generatePermanentKernel(sorted, variant);
  const std::string name = rt::gpuPermanentVariantName(variant);
  const auto source = directory / (name + ".cpp");
  const auto library = directory / (name + ".so");
  std::string text = kernel.source;
  // extern __shared__ double tcc_shared[] names the shim's array.
  for (size_t at; (at = text.find("extern __shared__ double tcc_shared[];")) != std::string::npos;)
    text.replace(at, 38, "");
  std::ofstream(source) << kCudaOnHost << text;
  const std::string command = std::string(TCC_HOST_CXX) + " -O1 -w -shared -fPIC -o " + library.string() + " " +
                              source.string() + " 2>&1";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("does not compile as C++: " + command);
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error(dlerror());
  auto sum = reinterpret_cast<SumKernel>(dlsym(handle, "tcc_perm_sum"));
  auto reduce = reinterpret_cast<ReduceKernel>(dlsym(handle, "tcc_perm_reduce"));
  auto* blockIdx = static_cast<unsigned*>(dlsym(handle, "blockIdx"));
  auto* threadIdx = static_cast<unsigned*>(dlsym(handle, "threadIdx"));
  auto* blockDim = static_cast<unsigned*>(dlsym(handle, "blockDim"));

  const gpu::RyserProblem& problem = kernel.problem;
  const perm::ChunkPlan chunks = perm::planChunks(sorted.n);
  const gpu::LaunchPlan plan = gpu::planLaunch(chunks.chunkSize, residentThreads);
  const int block = variant == rt::GpuPermanentVariant::Baseline ? 1 : gpu::kGeneratedThreadsPerBlock;
  std::vector<double> chunkSums(chunks.chunks);
  std::vector<double> globalRows;
  for (int64_t first = 0; first < chunks.chunks; first += plan.chunksPerLaunch) {
    const int64_t count = std::min(plan.chunksPerLaunch, chunks.chunks - first);
    std::vector<long long> ids(count);
    std::iota(ids.begin(), ids.end(), first);
    const long long threads = count << plan.logThreadsPerChunk;
    const long long blocks = (threads + block - 1) / block;
    std::vector<double> partials(threads);
    globalRows.assign(static_cast<size_t>(blocks * block) * problem.n, 0.0);
    *blockDim = block;
    for (long long t = 0; t < blocks * block; ++t) {
      *blockIdx = static_cast<unsigned>(t / block);
      *threadIdx = static_cast<unsigned>(t % block);
      sum(ids.data(), chunks.chunkSize, plan.logThreadsPerChunk, threads, partials.data(), globalRows.data(),
          problem.columnStart.data(), problem.rows.data(), problem.values.data(), problem.start.data(), problem.n);
    }
    *blockDim = 1;
    for (long long c = 0; c < count; ++c) {
      *blockIdx = static_cast<unsigned>(c);
      *threadIdx = 0;
      reduce(partials.data(), 1 << plan.logThreadsPerChunk, count, chunkSums.data() + first);
    }
  }
  dlclose(handle);
  return std::ldexp((sorted.n % 2 == 1 ? 2.0 : -2.0) * perm::addInChunkOrder(chunkSums, sorted.n), exponent);
}

TEST(GpuPermanentKernelSource, GeneratedKernelsComputeThePermanentWhenRunOnTheHost) {
  const auto directory = std::filesystem::temp_directory_path() / ("tcc_perm_host_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  struct Case {
    int n;
    double density;
    int64_t residentThreads;
  };
  // Slices of 1, 2, 4, ... steps (n small) up to full unrolled blocks and
  // several threads per chunk (n = 19: chunks of 64 steps; 4 threads each
  // when 4096 threads are resident, 64 when one chunk fills a launch).
  for (Case c : {Case{1, 1.0, 64}, Case{2, 1.0, 64}, Case{5, 0.6, 64}, Case{9, 0.5, 64}, Case{14, 0.4, 256},
                 Case{19, 0.3, 4096 * 16}, Case{19, 0.3, 64}}) {
    Matrix matrix = randomSparse(c.n, c.density, 300 + c.n);
    for (int row = 0; row < c.n; ++row) matrix.at(row, (2 * row + 1) % c.n) = 0.5 + 0.125 * (row % 3);
    const double expected = c.n <= 9 ? test::permanentByPermutations(toDenseArray(matrix))
                                     : floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
    for (auto variant : {rt::GpuPermanentVariant::Baseline, rt::GpuPermanentVariant::PureReg, rt::GpuPermanentVariant::Hybrid}) {
      SCOPED_TRACE(std::string(rt::gpuPermanentVariantName(variant)) + ", n = " + std::to_string(c.n) + ", " +
                   std::to_string(c.residentThreads) + " resident threads");
      EXPECT_NEAR(permanentOnHost(matrix, variant, directory, c.residentThreads), expected,
                  std::max(ryserTolerance(matrix), 1e-11 * std::abs(expected)));
    }
  }
  // The measurement knobs: smaller unrolled blocks, Hybrid without the block product.
  Matrix matrix = randomSparse(19, 0.3, 319);
  for (int row = 0; row < 19; ++row) matrix.at(row, (2 * row + 1) % 19) = 0.5;
  const double expected = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  struct Knobs {
    const char* blockProduct;
    const char* levels;
    const char* unroll;
  };
  for (auto [blockProduct, levels, unroll] :
       {Knobs{"0", "1", "8"}, Knobs{"1", "0", "8"}, Knobs{"1", "1", "4"}, Knobs{"1", "1", "2"}}) {
    ::setenv("TCC_PERMANENT_GPU_BLOCK_PRODUCT", blockProduct, 1);
    ::setenv("TCC_PERMANENT_GPU_LEVELS", levels, 1);
    ::setenv("TCC_PERMANENT_GPU_UNROLL", unroll, 1);
    for (auto variant : {rt::GpuPermanentVariant::PureReg, rt::GpuPermanentVariant::Hybrid})
      EXPECT_NEAR(permanentOnHost(matrix, variant, directory, 64), expected, 1e-11 * std::abs(expected))
          << rt::gpuPermanentVariantName(variant) << ", block product " << blockProduct << ", levels " << levels
          << ", unroll " << unroll;
  }
  ::unsetenv("TCC_PERMANENT_GPU_BLOCK_PRODUCT");
  ::unsetenv("TCC_PERMANENT_GPU_LEVELS");
  ::unsetenv("TCC_PERMANENT_GPU_UNROLL");
  std::filesystem::remove_all(directory);
}

// Hybrid with column 0 summed out in pairs of steps (its default where the
// levels apply), across partitions, unrolled blocks and register caps: the
// same permanent, on the host, as the definition; and the kernels that do
// not pair (knob off, or too few register columns) still agree.
TEST(GpuPermanentKernelSource, PairedHybridComputesThePermanentWhenRunOnTheHost) {
  const auto directory = std::filesystem::temp_directory_path() / ("tcc_perm_pairs_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  Matrix matrix = randomSparse(20, 0.3, 2020);
  for (int row = 0; row < 20; ++row) matrix.at(row, (3 * row + 2) % 20) = 0.625 + 0.0625 * (row % 5);
  const double expected = floatPermanent(toTensor(matrix, rt::TensorFormat::csr()));
  perm::SortedColumnMatrix sorted = sortedOf(matrix);
  perm::equilibrateByPowersOfTwo(sorted);
  struct Knobs {
    const char* registerColumns;
    const char* unroll;
    const char* pairs;
    const char* minBlocks;
  };
  int paired = 0, unpaired = 0;
  for (auto [registerColumns, unroll, pairs, minBlocks] :
       {Knobs{"", "8", "1", ""}, Knobs{"5", "8", "1", "3"}, Knobs{"", "16", "1", "4"}, Knobs{"9", "16", "1", ""}, Knobs{"5", "4", "1", "2"},
        Knobs{"2", "8", "1", ""}, Knobs{"6", "8", "0", ""}, Knobs{"", "8", "2", ""}, Knobs{"7", "16", "2", "2"}}) {
    ::setenv("TCC_PERMANENT_GPU_REGISTER_COLUMNS", registerColumns, 1);
    ::setenv("TCC_PERMANENT_GPU_UNROLL", unroll, 1);
    ::setenv("TCC_PERMANENT_GPU_PAIRS", pairs, 1);
    ::setenv("TCC_PERMANENT_GPU_MIN_BLOCKS", minBlocks, 1);
    // One case picks the block's last flip by if-tests.
    ::setenv("TCC_PERMANENT_GPU_CHAIN", std::string(minBlocks) == "4" ? "1" : "0", 1);
    gpu::GeneratedPermanentKernel kernel = gpu::generatePermanentKernel(sorted, rt::GpuPermanentVariant::Hybrid);
    const bool pairsExpected = std::string(pairs) != "0" &&
                               gpu::hybridUsesPairs(kernel.problem, kernel.partition, std::atoi(unroll), true, true);
    SCOPED_TRACE(std::string("k ") + registerColumns + ", unroll " + unroll + ", pairs " + pairs + ", min blocks " +
                 minBlocks);
    EXPECT_EQ(kernel.source.find("// steps 0, 1") != std::string::npos, pairsExpected);
    EXPECT_EQ(kernel.source.find("switch (column)") == std::string::npos, std::string(minBlocks) == "4");
    // Column 0's second sums in registers only when kept.
    EXPECT_EQ(kernel.source.find("double z") != std::string::npos, pairsExpected && std::string(pairs) == "1");
    if (*minBlocks) EXPECT_THAT(kernel.source, HasSubstr(std::string("__launch_bounds__(256, ") + minBlocks + ")"));
    (pairsExpected ? paired : unpaired) += 1;
    EXPECT_NEAR(permanentOnHost(matrix, rt::GpuPermanentVariant::Hybrid, directory, 64), expected,
                1e-11 * std::abs(expected));
  }
  EXPECT_GE(paired, 5);
  EXPECT_GE(unpaired, 2);
  for (const char* knob : {"TCC_PERMANENT_GPU_REGISTER_COLUMNS", "TCC_PERMANENT_GPU_UNROLL", "TCC_PERMANENT_GPU_PAIRS",
                           "TCC_PERMANENT_GPU_MIN_BLOCKS", "TCC_PERMANENT_GPU_CHAIN"})
    ::unsetenv(knob);
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace tcc::permanent_test
