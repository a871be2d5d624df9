// On a GPU (label gpu): the N:M SpMM kernels against cuBLAS SGEMM (pedantic
// math, no TF32) on the dense equivalent of the pruned B: every launch plan
// of the generated kernels (every tile, split-K, the simple kernel) on
// shapes that need padding and on benchmark shapes, for several N, M, L;
// and the library's path (compile, bind a dense B, run) that the
// autotuner drives. Relative error: max |C - C_ref| / max |C_ref| <= 1e-5.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "gpu_intrinsic_nm_spmm.h"
#include "gpu_launch.h"
#include "tcc/lowering/nm_spmm.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/nm.h"
#include "tcc/runtime/pack.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

namespace cuda = rt::cuda;
using lowering::NmSpmmPlan;
using lowering::NmSpmmShape;

constexpr double kTolerance = 1e-5;

std::vector<double> randomValues(size_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> values(count);
  // Values exact in float32, so the reference and the kernels read the same.
  for (double& value : values) value = static_cast<float>(unit(random));
  return values;
}

std::vector<float> toFloat(const std::vector<double>& values) { return {values.begin(), values.end()}; }

// cuBLAS's C = A * B for row-major A (m x k), B (k x n): C^T = B^T A^T.
std::vector<float> cublasProduct(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k) {
  cuda::DeviceBuffer da(sizeof(float) * std::max<size_t>(a.size(), 1)), db(sizeof(float) * std::max<size_t>(b.size(), 1)),
      dc(sizeof(float) * std::max<size_t>(size_t(m) * n, 1));
  if (!a.empty()) da.upload(a.data(), sizeof(float) * a.size());
  if (!b.empty()) db.upload(b.data(), sizeof(float) * b.size());
  dc.zero();
  cublasHandle_t handle;
  EXPECT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), CUBLAS_STATUS_SUCCESS);
  float one = 1, zero = 0;
  if (k > 0)
    EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, static_cast<float*>(db.get()), n,
                          static_cast<float*>(da.get()), k, &zero, static_cast<float*>(dc.get()), n),
              CUBLAS_STATUS_SUCCESS);
  cublasDestroy(handle);
  std::vector<float> c(size_t(m) * n);
  if (!c.empty()) dc.download(c.data(), sizeof(float) * c.size());
  return c;
}

double relativeError(const std::vector<float>& actual, const std::vector<float>& expected) {
  double worst = 0, scale = 0;
  for (size_t e = 0; e < expected.size(); ++e) {
    scale = std::max(scale, std::abs(double(expected[e])));
    const double error = std::abs(double(actual[e]) - double(expected[e]));
    if (std::isnan(error)) return INFINITY;  // std::max would drop a NaN
    worst = std::max(worst, error);
  }
  return scale == 0 ? worst : worst / scale;
}

rt::TensorFormat nmFormat(int N, int M, int L) {
  return rt::TensorFormat({rt::LevelSpec::dense(), rt::LevelSpec::nm(N, M, L)});
}

struct Problem {
  int m, n, k;
  std::vector<float> a, prunedDense, reference;
  rt::Tensor b;  // nm
};

Problem makeProblem(int m, int n, int k, int N, int M, int L, uint64_t seed) {
  Problem p{m, n, k, {}, {}, {}, {}};
  p.a = toFloat(randomValues(size_t(m) * k, seed));
  std::vector<double> b = randomValues(size_t(k) * n, seed + 1);
  p.b = rt::nmPruneAndPack(b, k, n, nmFormat(N, M, L), rt::ValueType::Float32);
  p.prunedDense = toFloat(rt::nmUnpack(p.b));
  p.reference = cublasProduct(p.a, p.prunedDense, m, n, k);
  return p;
}

// A (m x k, row-major) stored k-major: A(i, kk) at kk * m + i.
std::vector<float> kMajor(const std::vector<float>& a, int m, int k) {
  std::vector<float> t(a.size());
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) t[size_t(kk) * m + i] = a[size_t(i) * k + kk];
  return t;
}

// Every plan the kernels have for a shape (and A's layout), the simple kernel included.
std::vector<NmSpmmPlan> everyPlan(const NmSpmmShape& shape) {
  std::vector<NmSpmmPlan> plans = lowering::nmSpmmCandidatePlans(shape, cuda::device().multiprocessors);
  // Each tile's kernels for A as stored, and for a row-major A the k-major
  // ones of the tiles that run on its transpose (transposeA).
  auto builds = [&](const lowering::NmSpmmTile& t) {
    std::vector<bool> transposed;
    if (t.tensorCores != shape.tensorCores || !lowering::nmSpmmTileFits(t, shape.N, shape.M, shape.L))
      return transposed;
    if (lowering::nmSpmmTileTakesA(t, shape.aKMajor)) transposed.push_back(false);
    if (!shape.aKMajor && lowering::nmSpmmTileTransposesA(t, shape.N, shape.M, shape.L)) transposed.push_back(true);
    return transposed;
  };
  for (int tile = 0; tile < static_cast<int>(lowering::nmSpmmTiles().size()); ++tile)
    for (bool transposeA : builds(lowering::nmSpmmTiles()[tile]))
    for (int splits : {1, 3, 5})
    for (bool packed : {false, true}) {
      if (packed && !lowering::nmSpmmTilePacks(lowering::nmSpmmTiles()[tile], shape.N, shape.M)) continue;
      // Each tile forced, with and without split-K (the candidates keep to
      // the sensible ones; 5 splits as the wave-fitted candidates choose for
      // 52 tiles of C, the last split shorter than the others).
      NmSpmmPlan forced;
      const auto& t = lowering::nmSpmmTiles()[tile];
      int64_t windows = (shape.k + shape.M - 1) / shape.M;
      const int tileWindows = lowering::nmSpmmTileWindows(t, shape.N, shape.M);
      int64_t kTiles = std::max<int64_t>((windows + tileWindows - 1) / tileWindows, 1);
      forced.tile = tile;
      int s = static_cast<int>(std::min<int64_t>(splits, kTiles));
      forced.tilesPerSplit = static_cast<int>((kTiles + s - 1) / s);
      forced.splits = static_cast<int>((kTiles + forced.tilesPerSplit - 1) / forced.tilesPerSplit);
      forced.grid[0] = static_cast<unsigned>(std::max<int64_t>((shape.n + t.cols() - 1) / t.cols(), 1));
      forced.grid[1] = static_cast<unsigned>(std::max<int64_t>((shape.m + t.rows() - 1) / t.rows(), 1));
      forced.grid[2] = static_cast<unsigned>(forced.splits);
      forced.threads = t.threads();
      forced.packed = packed;
      forced.transposeA = transposeA;
      forced.sharedBytes = lowering::nmSpmmSharedBytes(t, shape.N, shape.M, shape.L, packed);
      plans.push_back(forced);
    }
  // Split-K summed in a thread block cluster, on each tile that has it
  // (2, 3 and 8 CTAs per cluster where the k-tiles give that many).
  for (int tile = 0; tile < static_cast<int>(lowering::nmSpmmTiles().size()); ++tile) {
    const auto& t = lowering::nmSpmmTiles()[tile];
    if (!lowering::nmSpmmTileClusters(t) || shape.tensorCores) continue;
    for (bool transposeA : builds(t))
      for (int splits : {2, 3, 8}) {
        NmSpmmPlan plan = lowering::nmSpmmClusterPlan(shape, tile, splits);
        plan.transposeA = transposeA;
        if (plan.cluster == splits) plans.push_back(plan);
      }
  }
  // Stream-K on each mbarrier tile: one CTA per SM, and a few CTAs that
  // each take several tiles, most of them in part.
  for (int tile = 0; tile < static_cast<int>(lowering::nmSpmmTiles().size()); ++tile) {
    const auto& t = lowering::nmSpmmTiles()[tile];
    if (!t.mbarriers || shape.tensorCores) continue;
    for (bool transposeA : builds(t))
      for (int64_t ctas : {int64_t(cuda::device().multiprocessors), int64_t(7)})
        for (auto kind : {lowering::NmSpmmStreamK::Steps, lowering::NmSpmmStreamK::Hybrid}) {
          plans.push_back(lowering::nmSpmmStreamKPlan(shape, tile, ctas, kind));
          plans.back().transposeA = transposeA;
        }
  }
  NmSpmmPlan simple;
  simple.grid[0] = static_cast<unsigned>(std::min<int64_t>((int64_t(shape.m) * shape.n + 255) / 256 + 1, 65535));
  simple.threads = 256;
  plans.push_back(simple);
  return plans;
}

std::string describe(const NmSpmmPlan& plan) {
  return lowering::nmSpmmPlanLabel(plan) + (plan.streamK ? " on " + std::to_string(plan.grid[0]) + " CTAs"
                                                          : " x" + std::to_string(plan.splits)) +
         (plan.cluster > 1 ? " in clusters of " + std::to_string(plan.cluster) : "");
}

struct Config {
  int N, M, L;
  bool aKMajor = false;      // A stored k-major (the kernels' 16-byte copies of its columns)
  bool tensorCores = false;  // the tensor-core tiles (tensorcore())
};

class NmSpmmKernels : public ::testing::TestWithParam<Config> {};

TEST_P(NmSpmmKernels, EveryPlanMatchesCublasOnThePrunedMatrix) {
  const Config config = GetParam();
  std::string code =
      lowering::nmSpmmDeviceCode(config.N, config.M, config.L, "nm_test", config.aKMajor, config.tensorCores);
  cuda::Module module(cuda::compileToCubin(code, cuda::device().architecture(), "nm_test.cu"));
  struct Size {
    int m, n, k;
  };
  // Padding in k and n, one row, fewer rows than a tile, several k-tiles;
  // whole tiles of C with a last k-tile past k (spread fills, then one at once).
  // (For a k-major A, m not a multiple of 4 takes 4-byte copies; 100 and
  // 260 rows, the 16-byte ones with the last tile of rows part empty.)
  // A row-major A's transpose (the plans that run on it): by floats where m
  // or k is not a multiple of 4, else by float4, whole and part-filled
  // 64 x 64 tiles.
  std::vector<Size> sizes = {{1, 37, 64},     {100, 300, 257},  {513, 129, 1000},
                             {64, 1000, 40},  {256, 1024, 1024}, {384, 512, 1000}};
  if (config.aKMajor || lowering::nmSpmmDeviceCode(config.N, config.M, config.L, "nm_test").find("_transpose_a(") !=
                            std::string::npos)
    sizes.push_back({260, 768, 1024});
  for (const Size& size : sizes) {
    SCOPED_TRACE("m, n, k = " + std::to_string(size.m) + ", " + std::to_string(size.n) + ", " +
                 std::to_string(size.k));
    Problem p = makeProblem(size.m, size.n, size.k, config.N, config.M, config.L, 7 + size.m);
    rt::NmLayout layout = rt::nmLayout(p.b);
    if (config.aKMajor) p.a = kMajor(p.a, size.m, size.k);  // (the reference was computed from the row-major A)
    cuda::DeviceBuffer da(sizeof(float) * p.a.size() + 16), db(sizeof(float) * layout.valueCount() + 16),
        dd(sizeof(int) * layout.indexCount() + 16), dc(sizeof(float) * size_t(size.m) * size.n + 16);
    da.upload(p.a.data(), sizeof(float) * p.a.size());
    db.upload(p.b.valuesData(), sizeof(float) * layout.valueCount());
    dd.upload(p.b.crd(1).data(), sizeof(int) * layout.indexCount());
    NmSpmmShape shape{size.m, size.n, size.k, config.N, config.M, config.L, config.aKMajor, config.tensorCores};
    // The transpose's scratch buffer (k x m), NaN before each transpose.
    cuda::DeviceBuffer dt(sizeof(float) * p.a.size() + 16);
    const std::vector<float> expectedTranspose = kMajor(p.a, size.m, size.k),
                             unset(p.a.size(), std::numeric_limits<float>::quiet_NaN());
    for (const NmSpmmPlan& plan : everyPlan(shape)) {
      SCOPED_TRACE("plan " + describe(plan));
      // Split-K and stream-K add into C's rows from nmSpmmZeroedFrom on,
      // zeroed before; the kernels must overwrite the others (NaN before).
      std::vector<float> before(size_t(size.m) * size.n, std::numeric_limits<float>::quiet_NaN());
      std::fill(before.begin() + lowering::nmSpmmZeroedFrom(shape, plan) * size.n, before.end(), 0.f);
      dc.upload(before.data(), sizeof(float) * before.size());
      void* kernel = module.function(lowering::nmSpmmKernelName("nm_test", plan));
      if (plan.sharedBytes > 48 * 1024) cuda::allowDynamicSharedMemory(kernel, plan.sharedBytes);
      cuda::LaunchShape launch;
      std::copy(plan.grid, plan.grid + 3, launch.grid);
      launch.block[0] = static_cast<unsigned>(plan.threads);
      launch.sharedBytes = static_cast<unsigned>(plan.sharedBytes);
      launch.cluster[2] = static_cast<unsigned>(plan.cluster);
      if (plan.cluster > 1) ASSERT_GE(cuda::maxActiveClusters(kernel, launch), 1) << "no cluster fits";
      const float* a = static_cast<const float*>(da.get());
      if (plan.transposeA) {
        // The statement's transpose into the scratch buffer, checked whole,
        // then the tile's k-major kernel on it.
        ASSERT_FALSE(config.aKMajor);
        float* t = static_cast<float*>(dt.get());
        dt.upload(unset.data(), sizeof(float) * unset.size());
        int m = size.m, k = size.k;
        cuda::LaunchShape transpose;
        constexpr int tile = lowering::kNmSpmmTransposeTile;
        transpose.grid[0] = static_cast<unsigned>((k + tile - 1) / tile);
        transpose.grid[1] = static_cast<unsigned>((m + tile - 1) / tile);
        transpose.block[0] = lowering::kNmSpmmTransposeThreads;
        cuda::launch(module.function(lowering::nmSpmmTransposeKernelName("nm_test")), transpose, {&a, &t, &m, &k});
        std::vector<float> transposed(p.a.size());
        dt.download(transposed.data(), sizeof(float) * transposed.size());
        EXPECT_EQ(transposed, expectedTranspose);
        a = t;
      }
      const float* b = static_cast<const float*>(db.get());
      const int* d = static_cast<const int*>(dd.get());
      float* c = static_cast<float*>(dc.get());
      int m = size.m, n = size.n, k = size.k, w = static_cast<int>(layout.keptRows),
          q = static_cast<int>(layout.groups), tilesPerSplit = plan.tilesPerSplit,
          atomic = lowering::nmSpmmLaunchFlag(plan);
      cuda::launch(kernel, launch, {&a, &b, &d, &c, &m, &n, &k, &w, &q, &tilesPerSplit, &atomic});
      cuda::synchronize();
      std::vector<float> result(size_t(size.m) * size.n);
      dc.download(result.data(), sizeof(float) * result.size());
      EXPECT_LE(relativeError(result, p.reference), kTolerance);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(NmL, NmSpmmKernels,
                         ::testing::Values(Config{16, 32, 32}, Config{12, 32, 32}, Config{8, 32, 32}, Config{4, 32, 32}, Config{2, 4, 4},
                                           Config{3, 5, 8}, Config{16, 32, 256}, Config{16, 32, 16}, Config{2, 4, 6}, Config{8, 256, 32}),
                         [](const auto& info) {
                           return "N" + std::to_string(info.param.N) + "M" + std::to_string(info.param.M) + "L" +
                                  std::to_string(info.param.L);
                         });
// Tensor cores (tensorcore()): the 3xTF32 tiles, each forced with and
// without split-K, at the four sparsities, L of 8, 16, 32 and 64 (one, two
// or four column groups a warp), odd windows (M = 5) and small ones (M = 4).
INSTANTIATE_TEST_SUITE_P(NmLTensorCores, NmSpmmKernels,
                         ::testing::Values(Config{16, 32, 32, false, true}, Config{12, 32, 32, false, true},
                                           Config{8, 32, 32, false, true}, Config{4, 32, 32, false, true},
                                           Config{16, 32, 16, false, true}, Config{8, 32, 8, false, true},
                                           Config{16, 32, 64, false, true}, Config{3, 5, 8, false, true},
                                           Config{2, 4, 8, false, true}),
                         [](const auto& info) {
                           return "N" + std::to_string(info.param.N) + "M" + std::to_string(info.param.M) + "L" +
                                  std::to_string(info.param.L) + "TensorCores";
                         });
// A k-major: the deep 16-row tile at 50-75%, packing at 87.5%, odd N, M, L.
INSTANTIATE_TEST_SUITE_P(NmLKMajor, NmSpmmKernels,
                         ::testing::Values(Config{16, 32, 32, true}, Config{12, 32, 32, true}, Config{8, 32, 32, true},
                                           Config{4, 32, 32, true}, Config{2, 4, 6, true}, Config{3, 5, 8, true},
                                           Config{16, 32, 16, true}),
                         [](const auto& info) {
                           return "N" + std::to_string(info.param.N) + "M" + std::to_string(info.param.M) + "L" +
                                  std::to_string(info.param.L) + "KMajor";
                         });

std::string programText(int N, int M, int L, bool aKMajor = false, bool tensorCores = false) {
  return std::string("tensor A(I, K) : ") + (aKMajor ? "{dense, dense} order (1, 0)" : "dense") +
         " of float32\ntensor B(K, J) : nm(" + std::to_string(N) + ", " + std::to_string(M) +
         ", " + std::to_string(L) + ") of float32\ntensor C(I, J) : dense of float32\nC(i, j) = A(i, k) * B(k, j)\n" +
         (tensorCores ? "schedule {\n  tensorcore()\n}\n" : "") + "target cuda\n";
}

struct LibraryCase {
  int N, M, L, m, n, k;
};

// Through the library: a dense B bound to the nm tensor is pruned, the
// intrinsic's host step plans (autotuning the large shapes) and launches,
// with A declared and bound in aFormat (row-major, or k-major: the host step
// plans the tiles that take it); A's and B's values drawn from seed, seed + 1.
void checkLibraryPath(const rt::TensorFormat& aFormat, const std::vector<LibraryCase>& cases, uint64_t seed,
                      bool tensorCores = false) {
  const bool aKMajor = aFormat.modeOrdering == std::vector<int>{1, 0};
  for (const LibraryCase& c : cases) {
    const std::string text = programText(c.N, c.M, c.L, aKMajor, tensorCores);
    SCOPED_TRACE(text + " m, n, k = " + std::to_string(c.m) + ", " + std::to_string(c.n) + ", " + std::to_string(c.k));
    Kernel kernel = compile(Program::fromText(text));
    std::vector<double> a = randomValues(size_t(c.m) * c.k, seed), b = randomValues(size_t(c.k) * c.n, seed + 1);
    std::map<std::string, Tensor> inputs;
    inputs["A"] = rt::fromDense(a, {c.m, c.k}, aFormat, rt::ValueType::Float32);
    inputs["B"] = rt::fromDense(b, {c.k, c.n}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
    RunResult run = kernel.run(inputs, RunOptions{3});
    std::vector<float> result = toFloat(rt::toDense(run.tensors.at("C")));
    rt::Tensor pruned = rt::nmPruneAndPack(b, c.k, c.n, nmFormat(c.N, c.M, c.L), rt::ValueType::Float32);
    std::vector<float> reference = cublasProduct(toFloat(a), toFloat(rt::nmUnpack(pruned)), c.m, c.n, c.k);
    EXPECT_LE(relativeError(result, reference), kTolerance);
  }
}

TEST(NmSpmmLibrary, TheCompiledProgramMatchesCublas) {
  checkLibraryPath(rt::TensorFormat::dense(2),
                   {{16, 32, 32, 1024, 2048, 2048}, {4, 32, 32, 256, 2048, 2048}, {2, 4, 4, 37, 41, 43},
                    {12, 32, 32, 300, 700, 500}},
                   3);
}

// tensorcore(): the host step plans the tensor-core tiles (autotuned for
// the large shapes; split-K for few rows), padding in every dimension.
TEST(NmSpmmLibrary, TensorCoresMatchCublas) {
  checkLibraryPath(rt::TensorFormat::dense(2),
                   {{16, 32, 32, 1024, 2048, 2048}, {4, 32, 32, 256, 2048, 2048}, {12, 32, 32, 300, 700, 500},
                    {8, 32, 16, 129, 1000, 777}, {2, 4, 8, 37, 41, 43}},
                   5, true);
}

// tensorcore() on real matrices as A (densified; bcsstk13's entries span
// 1e-6 to 1e9, so the split into two TF32 values is tested across a wide
// range of exponents), B random and pruned, at 50% and 75% sparsity.
TEST(NmSpmmLibrary, TensorCoresOnRealMatricesMatchCublas) {
  for (int N : {16, 8}) {
    Kernel kernel = compile(Program::fromText(programText(N, 32, 32, false, true)));
    for (const char* name : {"494_bus", "dwt_992", "bcsstk13"}) {
      SCOPED_TRACE(std::string(name) + " at N = " + std::to_string(N));
      rt::Coo coo = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
      const int m = coo.dims[0], k = coo.dims[1], n = 520;
      std::vector<double> a(size_t(m) * k, 0.0);
      for (size_t e = 0; e < coo.nnz(); ++e) a[size_t(coo.coords[0][e]) * k + coo.coords[1][e]] += coo.values[e];
      std::vector<double> b = randomValues(size_t(k) * n, 11 + N);
      RunResult run = kernel.run({{"A", rt::fromDense(a, {m, k}, rt::TensorFormat::dense(2), rt::ValueType::Float32)},
                                  {"B", rt::fromDense(b, {k, n}, rt::TensorFormat::dense(2), rt::ValueType::Float32)}},
                                 RunOptions{2});
      rt::Tensor pruned = rt::nmPruneAndPack(b, k, n, nmFormat(N, 32, 32), rt::ValueType::Float32);
      std::vector<float> reference = cublasProduct(toFloat(a), toFloat(rt::nmUnpack(pruned)), m, n, k);
      EXPECT_LE(relativeError(toFloat(rt::toDense(run.tensors.at("C"))), reference), kTolerance);
    }
  }
}

// An infinite entry of A reaches the entries of C its row computes as NaN
// on tensor cores (the split's small part is inf - inf), as the explain
// text says; the other rows are as without it.
TEST(NmSpmmLibrary, TensorCoresTurnAnInfiniteEntryIntoNaNInItsRow) {
  const int m = 70, n = 96, k = 128;
  Kernel kernel = compile(Program::fromText(programText(16, 32, 32, false, true)));
  std::vector<double> a = randomValues(size_t(m) * k, 21), b = randomValues(size_t(k) * n, 22);
  a[size_t(5) * k + 3] = std::numeric_limits<double>::infinity();
  RunResult run = kernel.run({{"A", rt::fromDense(a, {m, k}, rt::TensorFormat::dense(2), rt::ValueType::Float32)},
                              {"B", rt::fromDense(b, {k, n}, rt::TensorFormat::dense(2), rt::ValueType::Float32)}},
                             RunOptions{1});
  std::vector<float> c = toFloat(rt::toDense(run.tensors.at("C")));
  rt::Tensor pruned = rt::nmPruneAndPack(b, k, n, nmFormat(16, 32, 32), rt::ValueType::Float32);
  std::vector<float> bDense = toFloat(rt::nmUnpack(pruned));
  for (int j = 0; j < n; ++j) {
    // Column j reads A's column 3 where B's row 3 kept it (nonzero there).
    if (bDense[size_t(3) * n + j] != 0.f) EXPECT_TRUE(std::isnan(c[size_t(5) * n + j])) << "column " << j;
    for (int i : {0, 4, 6, m - 1}) EXPECT_TRUE(std::isfinite(c[size_t(i) * n + j])) << i << ", " << j;
  }
}

// A row-major A through its transpose: every plan that transposes A,
// forced in turn (TCC_NM_SPMM_TILE, read when a module first plans a
// shape, so each forced plan runs in a module of its own), on shapes that
// take the transpose's float4 and float paths and part-filled tiles (and,
// for m not a multiple of 4, the k-major kernels' 4-byte copies); each
// program runs first on a smaller shape, then on the forced one (the
// statement's scratch buffer grows), three runs (it is reused).
TEST(NmSpmmLibrary, ARowMajorAThroughItsTransposeMatchesCublas) {
  struct Shape {
    int m, n, k;
  };
  for (int N : {16, 12, 8, 4}) {
    SCOPED_TRACE(programText(N, 32, 32));
    std::map<std::string, Tensor> small;
    small["A"] = rt::fromDense(randomValues(37 * 41, 9), {37, 41}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
    small["B"] = rt::fromDense(randomValues(41 * 64, 10), {41, 64}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
    std::string smallLabel;  // a plan of the small shape that transposes A (allocates the scratch buffer)
    for (const NmSpmmPlan& plan :
         lowering::nmSpmmCandidatePlans(NmSpmmShape{37, 64, 41, N, 32, 32}, cuda::device().multiprocessors))
      if (plan.transposeA && smallLabel.empty())
        smallLabel = lowering::nmSpmmPlanLabel(plan) + "x" + std::to_string(plan.splits);
    ASSERT_FALSE(smallLabel.empty());
    for (const Shape& s :
         {Shape{100, 300, 257}, Shape{257, 1000, 999}, Shape{512, 1024, 2048}, Shape{1024, 2048, 2048}}) {
      SCOPED_TRACE("m, n, k = " + std::to_string(s.m) + ", " + std::to_string(s.n) + ", " + std::to_string(s.k));
      std::vector<double> a = randomValues(size_t(s.m) * s.k, 11 + s.m), b = randomValues(size_t(s.k) * s.n, 12 + s.m);
      std::map<std::string, Tensor> inputs;
      inputs["A"] = rt::fromDense(a, {s.m, s.k}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
      inputs["B"] = rt::fromDense(b, {s.k, s.n}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
      rt::Tensor pruned = rt::nmPruneAndPack(b, s.k, s.n, nmFormat(N, 32, 32), rt::ValueType::Float32);
      std::vector<float> reference = cublasProduct(toFloat(a), toFloat(rt::nmUnpack(pruned)), s.m, s.n, s.k);
      // The labels as the host step matches them (the same candidates).
      NmSpmmShape shape{s.m, s.n, s.k, N, 32, 32};
      int forced = 0;
      for (const NmSpmmPlan& plan : lowering::nmSpmmCandidatePlans(shape, cuda::device().multiprocessors)) {
        if (!plan.transposeA) continue;
        const std::string label = lowering::nmSpmmPlanLabel(plan) + "x" + std::to_string(plan.splits);
        SCOPED_TRACE(label);
        ++forced;
        Kernel kernel = compile(Program::fromText(programText(N, 32, 32)));
        ASSERT_EQ(::setenv("TCC_NM_SPMM_TILE", smallLabel.c_str(), 1), 0);
        kernel.run(small);
        ASSERT_EQ(::setenv("TCC_NM_SPMM_TILE", label.c_str(), 1), 0);
        RunResult run = kernel.run(inputs, RunOptions{3});
        ::unsetenv("TCC_NM_SPMM_TILE");
        EXPECT_LE(relativeError(toFloat(rt::toDense(run.tensors.at("C"))), reference), kTolerance);
      }
      EXPECT_GT(forced, 0);
    }
  }
}

// A declared and bound k-major ({dense, dense} order (1,0)).
TEST(NmSpmmLibrary, AKMajorAMatchesCublas) {
  checkLibraryPath(rt::TensorFormat({rt::LevelSpec::dense(), rt::LevelSpec::dense()}, {1, 0}),
                   {{16, 32, 32, 1024, 2048, 2048}, {8, 32, 32, 2048, 1024, 1024}, {4, 32, 32, 256, 2048, 2048},
                    {2, 4, 4, 37, 41, 43}, {12, 32, 32, 300, 700, 500}},
                   5);
}

// The host step's launch paths (gpu_intrinsic_nm_spmm.h): each plan that
// adds into C (split-K, stream-K) launched by each path on a C filled with
// NaN, so that a row its zeroing misses (or zeroes after the tile kernel
// wrote it, were the overlapped launch not to wait) shows; and the library
// call by each path, three times (the first chooses and keeps the launch,
// the others find it; by the graph path the second records the launches
// and the third replays them), on a C filled with NaN before each.
TEST(NmSpmmLibrary, EveryLaunchPathOverwritesC) {
  struct Case {
    int N, M, L;
    bool aKMajor;
    int m, n, k;
  };
  const std::vector<Case> cases = {{4, 32, 32, false, 256, 2048, 2048},
                                   {16, 32, 32, false, 300, 700, 500},
                                   {8, 32, 32, true, 260, 768, 1024},
                                   {12, 32, 32, false, 100, 301, 257}};
  using detail::NmSpmmLaunchPath;
  const NmSpmmLaunchPath paths[] = {NmSpmmLaunchPath::Uncached, NmSpmmLaunchPath::Scalar,
                                    NmSpmmLaunchPath::Vector,   NmSpmmLaunchPath::Memset,
                                    NmSpmmLaunchPath::Overlapped, NmSpmmLaunchPath::OverlappedLean,
                                    NmSpmmLaunchPath::Chained, NmSpmmLaunchPath::Graph};
  const detail::NmSpmmLaunchPath before = detail::nmSpmmLaunchPath();
  for (const Case& c : cases) {
    SCOPED_TRACE(programText(c.N, c.M, c.L, c.aKMajor) + " m, n, k = " + std::to_string(c.m) + ", " +
                 std::to_string(c.n) + ", " + std::to_string(c.k));
    Lowered lowered = lowerProgram(Program::fromText(programText(c.N, c.M, c.L, c.aKMajor)));
    auto module = detail::loadCudaKernels(lowered, cuda::device().architecture(), true);
    const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
    ASSERT_EQ(function.intrinsics.size(), 1u);
    Problem p = makeProblem(c.m, c.n, c.k, c.N, c.M, c.L, 11 + c.m);
    rt::Tensor a = rt::fromDense(std::vector<double>(p.a.begin(), p.a.end()), {c.m, c.k},
                                 c.aKMajor ? rt::TensorFormat({rt::LevelSpec::dense(), rt::LevelSpec::dense()}, {1, 0})
                                           : rt::TensorFormat::dense(2),
                                 rt::ValueType::Float32);
    rt::Tensor output({c.m, c.n}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
    cuda::DeviceTensor da(a.abiView()), db(p.b.abiView()), dc(output.abiView());
    std::map<std::string, tcc_tensor*> operands = {{"A", &da.view()}, {"B", &db.view()}, {"C", &dc.view()}};
    std::vector<tcc_tensor*> parameters;  // in the entry point's order
    for (const auto& parameter : lowered.statements.at(0).parameters)
      parameters.push_back(operands.at(parameter.name()));
    const std::vector<float> nan(size_t(c.m) * c.n, std::numeric_limits<float>::quiet_NaN());
    auto result = [&] {
      cuda::synchronize();
      std::vector<float> values(nan.size());
      cuda::copyToHost(values.data(), dc.view().vals, sizeof(float) * values.size());
      return values;
    };
    const NmSpmmShape shape{c.m, c.n, c.k, c.N, c.M, c.L, c.aKMajor};
    const detail::GpuIntrinsicRun run{function.intrinsics[0], *module, operands};
    for (detail::NmSpmmLaunchPath path : paths) {
      SCOPED_TRACE(std::string("launch path ") + detail::nmSpmmLaunchPathName(path));
      detail::setNmSpmmLaunchPath(path);
      int added = 0;
      // (Graph: the first call with a plan and operands launches one by
      // one, the second records the launches and replays them.)
      const int calls = path == NmSpmmLaunchPath::Graph ? 2 : 1;
      for (const NmSpmmPlan& plan : everyPlan(shape)) {
        if (lowering::nmSpmmZeroedFrom(shape, plan) >= c.m) continue;
        ++added;
        SCOPED_TRACE("plan " + describe(plan));
        for (int call = 0; call < calls; ++call) {
          cuda::copyToDevice(dc.view().vals, nan.data(), sizeof(float) * nan.size());
          ASSERT_EQ(detail::runNmSpmmPlan(run, plan), 0);
          EXPECT_LE(relativeError(result(), p.reference), kTolerance) << "call " << call;
        }
      }
      EXPECT_GT(added, 0) << "no plan of this shape adds into C";
      for (int call = 0; call < 3; ++call) {
        cuda::copyToDevice(dc.view().vals, nan.data(), sizeof(float) * nan.size());
        ASSERT_EQ(detail::launchGpuFunction(function, *module, parameters), 0);
        EXPECT_LE(relativeError(result(), p.reference), kTolerance) << "call " << call;
      }
    }
  }
  detail::setNmSpmmLaunchPath(before);
}

// The kernels after A's transpose read this call's transpose, not the one
// before: every plan on the transpose (transposeA), by the paths that let
// the kernel after the transpose overlap it (and Overlapped), with A's
// values switched between two matrices from call to call in the same device
// buffer, so that a kernel reading the statement's scratch buffer before
// this call's transpose has written it reads the other matrix's transpose.
// A large A and a narrow B make the transpose long against the tile kernel.
// Graph: the first call of a plan launches one by one, the second records,
// the others replay.
TEST(NmSpmmLibrary, TheKernelAfterTheTransposeReadsThisCallsTranspose) {
  constexpr int N = 8, M = 32, L = 32, m = 2048, n = 128, k = 4096;
  Lowered lowered = lowerProgram(Program::fromText(programText(N, M, L)));
  auto module = detail::loadCudaKernels(lowered, cuda::device().architecture(), true);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.intrinsics.size(), 1u);
  Problem p = makeProblem(m, n, k, N, M, L, 29);
  const std::vector<float> other = toFloat(randomValues(size_t(m) * k, 31));
  const std::vector<float> otherReference = cublasProduct(other, p.prunedDense, m, n, k);
  rt::Tensor a = rt::fromDense(std::vector<double>(p.a.begin(), p.a.end()), {m, k}, rt::TensorFormat::dense(2),
                               rt::ValueType::Float32);
  rt::Tensor output({m, n}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
  cuda::DeviceTensor da(a.abiView()), db(p.b.abiView()), dc(output.abiView());
  std::map<std::string, tcc_tensor*> operands = {{"A", &da.view()}, {"B", &db.view()}, {"C", &dc.view()}};
  const NmSpmmShape shape{m, n, k, N, M, L, false};
  const detail::GpuIntrinsicRun run{function.intrinsics[0], *module, operands};
  const std::vector<float> nan(size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
  using detail::NmSpmmLaunchPath;
  const NmSpmmLaunchPath before = detail::nmSpmmLaunchPath();
  int plans = 0;
  for (NmSpmmLaunchPath path : {NmSpmmLaunchPath::Overlapped, NmSpmmLaunchPath::Chained, NmSpmmLaunchPath::Graph}) {
    SCOPED_TRACE(std::string("launch path ") + detail::nmSpmmLaunchPathName(path));
    detail::setNmSpmmLaunchPath(path);
    for (const NmSpmmPlan& plan : everyPlan(shape)) {
      if (!plan.transposeA) continue;
      ++plans;
      SCOPED_TRACE("plan " + describe(plan));
      for (int call = 0; call < 6; ++call) {
        const std::vector<float>& values = call % 2 ? other : p.a;
        cuda::copyToDevice(da.view().vals, values.data(), sizeof(float) * values.size());
        cuda::copyToDevice(dc.view().vals, nan.data(), sizeof(float) * nan.size());
        ASSERT_EQ(detail::runNmSpmmPlan(run, plan), 0);
        cuda::synchronize();
        std::vector<float> result(nan.size());
        cuda::copyToHost(result.data(), dc.view().vals, sizeof(float) * result.size());
        EXPECT_LE(relativeError(result, call % 2 ? otherReference : p.reference), kTolerance) << "call " << call;
      }
    }
  }
  EXPECT_GT(plans, 0) << "no plan of this shape runs on A's transpose";
  detail::setNmSpmmLaunchPath(before);
}

// On the graph launch path the autotuner times each candidate by replaying
// a graph recorded for it and hands its choice's graph to the calls: the
// first call (which tunes) and the later ones, with A's values switched
// from call to call in the same buffer, give this call's product on a C
// filled with NaN; so do the tuner's runner-up and the other finalists,
// each launched as a call would (nmSpmmTunedPlans), and the library call
// on another output buffer (another graph's operands).
TEST(NmSpmmLibrary, TheAutotunersGraphsGiveThisCallsProduct) {
  constexpr int N = 8, M = 32, L = 32, m = 512, n = 1024, k = 2048;
  Lowered lowered = lowerProgram(Program::fromText(programText(N, M, L)));
  auto module = detail::loadCudaKernels(lowered, cuda::device().architecture(), true);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.intrinsics.size(), 1u);
  Problem p = makeProblem(m, n, k, N, M, L, 41);
  ASSERT_GE(2.0 * m * n * k * N / M, lowering::kNmSpmmAutotuneFlops);  // the shape is tuned
  const std::vector<float> other = toFloat(randomValues(size_t(m) * k, 43));
  const std::vector<float> otherReference = cublasProduct(other, p.prunedDense, m, n, k);
  rt::Tensor a = rt::fromDense(std::vector<double>(p.a.begin(), p.a.end()), {m, k}, rt::TensorFormat::dense(2),
                               rt::ValueType::Float32);
  rt::Tensor output({m, n}, rt::TensorFormat::dense(2), rt::ValueType::Float32);
  cuda::DeviceTensor da(a.abiView()), db(p.b.abiView()), dc(output.abiView()), dc2(output.abiView());
  std::map<std::string, tcc_tensor*> operands = {{"A", &da.view()}, {"B", &db.view()}, {"C", &dc.view()}};
  std::vector<tcc_tensor*> parameters;  // in the entry point's order
  for (const auto& parameter : lowered.statements.at(0).parameters) parameters.push_back(operands.at(parameter.name()));
  const detail::GpuIntrinsicRun run{function.intrinsics[0], *module, operands};
  const std::vector<float> nan(size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
  auto product = [&](const tcc_tensor& c) {
    cuda::synchronize();
    std::vector<float> values(nan.size());
    cuda::copyToHost(values.data(), c.vals, sizeof(float) * values.size());
    return values;
  };
  auto withA = [&](int call) {
    const std::vector<float>& values = call % 2 ? other : p.a;
    cuda::copyToDevice(da.view().vals, values.data(), sizeof(float) * values.size());
    cuda::copyToDevice(dc.view().vals, nan.data(), sizeof(float) * nan.size());
    return call % 2 ? &otherReference : &p.reference;
  };
  using detail::NmSpmmLaunchPath;
  const NmSpmmLaunchPath before = detail::nmSpmmLaunchPath();
  detail::setNmSpmmLaunchPath(NmSpmmLaunchPath::Graph);
  EXPECT_TRUE(detail::nmSpmmTunedPlans(run).empty());  // not tuned yet
  for (int call = 0; call < 4; ++call) {
    const std::vector<float>* reference = withA(call);
    ASSERT_EQ(detail::launchGpuFunction(function, *module, parameters), 0);
    EXPECT_LE(relativeError(product(dc.view()), *reference), kTolerance) << "library call " << call;
  }
  const std::vector<NmSpmmPlan> ranked = detail::nmSpmmTunedPlans(run);
  ASSERT_GE(ranked.size(), 2u) << "the tuner ranked fewer than two plans";
  for (size_t r = 0; r < std::min<size_t>(ranked.size(), 3); ++r) {
    SCOPED_TRACE("ranked " + std::to_string(r) + ": plan " + describe(ranked[r]));
    for (int call = 0; call < 3; ++call) {  // one by one, recorded, replayed
      const std::vector<float>* reference = withA(call);
      ASSERT_EQ(detail::runNmSpmmPlan(run, ranked[r]), 0);
      EXPECT_LE(relativeError(product(dc.view()), *reference), kTolerance) << "call " << call;
    }
  }
  std::map<std::string, tcc_tensor*> elsewhere = operands;
  elsewhere["C"] = &dc2.view();
  std::vector<tcc_tensor*> otherParameters;
  for (const auto& parameter : lowered.statements.at(0).parameters)
    otherParameters.push_back(elsewhere.at(parameter.name()));
  for (int call = 0; call < 3; ++call) {
    const std::vector<float>* reference = withA(call);
    cuda::copyToDevice(dc2.view().vals, nan.data(), sizeof(float) * nan.size());
    ASSERT_EQ(detail::launchGpuFunction(function, *module, otherParameters), 0);
    EXPECT_LE(relativeError(product(dc2.view()), *reference), kTolerance) << "call on another C " << call;
  }
  detail::setNmSpmmLaunchPath(before);
}

}  // namespace
}  // namespace tcc::test
