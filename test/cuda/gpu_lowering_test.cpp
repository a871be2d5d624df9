// GPU schedules on the cuda target, without a GPU: what they lower to, the
// default mapping, and the schedules that are refused, located at their line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "gpu_host_part.h"
#include "gpu_launch.h"
#include "tcc/runtime/cuda.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

constexpr const char* kSpmv = R"(tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense

y(i) = A(i, j) * x(j)
)";

constexpr const char* kSpmm = R"(tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense

C(i, k) = A(i, j) * B(j, k)
)";

std::string withSchedule(const std::string& program, const std::string& schedule) {
  return program + "schedule {\n" + schedule + "\n}\n";
}

Lowered lowerForCuda(const std::string& dsl) {
  CompileOptions options;
  options.target = frontend::Target::Cuda;
  return lowerProgram(Program::fromText(dsl, "test.tc"), options);
}

std::string cudaErrorOf(const std::string& dsl) {
  try {
    lowerForCuda(dsl);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(CudaTarget, TheTargetLineSelectsTheCudaBackend) {
  Lowered lowered = lowerProgram(Program::fromText(std::string(kSpmv) + "target cuda(sm_90)\n", "test.tc"));
  EXPECT_EQ(lowered.target, frontend::Target::Cuda);
  EXPECT_TRUE(lowered.cpp.empty());
  EXPECT_EQ(count(lowered.cuda, "__global__ void"), 1u) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "extern \"C\" int32_t tcc_kernel_0(tcc_tensor** tcc_tensors)")) << lowered.cuda;
  // The NVRTC text carries the same kernel and no system header.
  EXPECT_EQ(count(lowered.cudaKernels, "__global__ void"), 1u);
  EXPECT_FALSE(contains(lowered.cudaKernels, "#include"));
}

TEST(CudaTarget, TheOptionOverridesTheTargetLine) {
  CompileOptions options;
  options.target = frontend::Target::Cpu;
  Lowered lowered = lowerProgram(Program::fromText(std::string(kSpmv) + "target cuda\n", "test.tc"), options);
  EXPECT_EQ(lowered.target, frontend::Target::Cpu);
  EXPECT_TRUE(contains(lowered.cpp, "tcc_kernel_0"));
}

TEST(DefaultMapping, CsrSpmvGivesEachRowAWarpAndSumsWithShuffles) {
  Lowered lowered = lowerForCuda(kSpmv);
  const auto& decisions = lowered.statements[0].decisions;
  std::string all;
  for (const auto& line : decisions) all += line + "\n";
  EXPECT_TRUE(contains(all, "default GPU mapping: one warp per row i, its lanes over j (partial sums added with warp "
                            "shuffles)")) << all;
  ASSERT_EQ(lowered.gpuFunctions.size(), 1u);
  ASSERT_EQ(lowered.gpuFunctions[0].kernels.size(), 1u);
  EXPECT_EQ(lowered.gpuFunctions[0].kernels[0].unit(), ir::imp::LoopKind::GpuWarp);
  EXPECT_TRUE(contains(lowered.cuda, "= tcc_warp_sum(")) << lowered.cuda;
  // After the warp sum one lane stores the row's result.
  EXPECT_TRUE(contains(lowered.cuda, "if (threadIdx.x % 32 == 0) {")) << lowered.cuda;
}

TEST(DefaultMapping, CsrSpmmPutsColumnTilesOnWarpsAndTwoColumnsOnEachLane) {
  Lowered lowered = lowerForCuda(kSpmm);
  std::string all;
  for (const auto& line : lowered.statements[0].decisions) all += line + "\n";
  EXPECT_TRUE(contains(all, "default GPU mapping: the dense k in tiles of 64 columns, one warp per row i and tile"))
      << all;
  EXPECT_TRUE(contains(all, "loop order after the schedule: ik_warp, k_lane, k_round, j")) << all;
  // One walk over the row's nonzeros feeds two sums per lane.
  EXPECT_TRUE(contains(lowered.cuda, "2 iterations at once (unroll and jam)")) << lowered.cuda;
  // The walk over the nonzeros: jammed, and as written for the rounds left over.
  EXPECT_EQ(count(lowered.cuda, "iterate j over A's level 2"), 2u) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "the iterations left over")) << lowered.cuda;
  for (const char* sum : {"tC_u0 +=", "tC_u1 +="})
    EXPECT_TRUE(contains(lowered.cuda, sum)) << sum << "\n" << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tC_u2")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tcc_warp_sum(t")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "atomicAdd")) << lowered.cuda;
}

TEST(CombineAtomics, AWarpsWalkOverNonzerosAddsOncePerRowSegment) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "reorder(i, j, k)\nfuse(i, j, f)\npos(f, fp, A(i, j))\n"
                                                     "split(fp, fw, fl, 64)\nreorder(fw, k, fl)\n"
                                                     "parallelize(fw, GPUWarp, Atomics)\n"
                                                     "parallelize(k, GPUThread, Atomics)"));
  // One atomic addition when the row changes, one when the walk ends.
  EXPECT_EQ(count(lowered.cuda, "atomicAdd(&C_vals[tcc_combined0_at], tcc_combined0);"), 2u) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "tcc_combined0 += ")) << lowered.cuda;
}

TEST(CombineAtomics, AtomicsOfAParallelLoopStayAsTheyAre) {
  Lowered lowered =
      lowerForCuda(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, Atomics)"));
  EXPECT_FALSE(contains(lowered.cuda, "tcc_combined")) << lowered.cuda;
}

TEST(UnrollAndJam, ALoopWhoseIterationsShareAnInnerLoopIsJammed) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "split(k, k0, k1, 32)\nreorder(i, k1, k0, j)\n"
                                                     "parallelize(i, GPUWarp, NoRaces)\n"
                                                     "parallelize(k1, GPUThread, NoRaces)\nunroll(k0, 3)"));
  EXPECT_TRUE(contains(lowered.cuda, "3 iterations at once (unroll and jam)")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "tC_u2 +=")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tC_u3")) << lowered.cuda;
  // Copies whose column is past N are predicated off; the rounds left
  // over (N / 32 not a multiple of 3) run as written.
  EXPECT_TRUE(contains(lowered.cuda, "if (tcc_live2) {")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "the iterations left over")) << lowered.cuda;
}

TEST(UnrollAndJam, ALoopWithoutAnInnerLoopIsOnlyUnrolled) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "reorder(i, k, j)\nsplit(k, k0, k1, 32)\n"
                                                     "parallelize(i, GPUWarp, NoRaces)\n"
                                                     "parallelize(k0, GPUThread, NoRaces)\nunroll(j, 4)"));
  EXPECT_FALSE(contains(lowered.cuda, "unroll and jam")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "#pragma unroll 4")) << lowered.cuda;
}

TEST(UnrollAndJam, ALoopThatAccumulatesIntoTheOutputIsNotJammed) {
  // k0 inside j: each iteration adds into C, whose order must stay.
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "split(k, k0, k1, 32)\nreorder(i, k1, j, k0)\n"
                                                     "parallelize(i, GPUWarp, NoRaces)\n"
                                                     "parallelize(k1, GPUThread, NoRaces)\nunroll(j, 2)"));
  EXPECT_FALSE(contains(lowered.cuda, "unroll and jam")) << lowered.cuda;
}

TEST(DefaultMapping, AStatementWithoutSparseRowsGetsAThreadPerIteration) {
  Lowered lowered = lowerForCuda("tensor y(I) : dense\ntensor x(I) : dense\ny(i) = x(i) * x(i)\n");
  EXPECT_EQ(lowered.gpuFunctions.at(0).kernels.at(0).unit(), ir::imp::LoopKind::GpuThread);
}

TEST(GpuSchedules, AtomicsBecomeAtomicAdds) {
  Lowered lowered =
      lowerForCuda(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(lowered.cuda, "atomicAdd(&y_vals[")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tcc_warp_sum(t")) << lowered.cuda;
}

TEST(GpuSchedules, AReductionOverABlocksThreadsGoesThroughSharedMemory) {
  Lowered lowered =
      lowerForCuda(withSchedule(kSpmv, "parallelize(i, GPUBlock, NoRaces)\nparallelize(j, GPUThread, Temporary)"));
  EXPECT_TRUE(contains(lowered.cuda, "= tcc_block_sum(")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "if (threadIdx.x == 0) {")) << lowered.cuda;
}

TEST(GpuSchedules, ASplitMapsBlocksAndThreadsWithTheSplitsBlockSize) {
  Lowered lowered = lowerForCuda(withSchedule(
      kSpmv, "split(i, i0, i1, 64)\nparallelize(i0, GPUBlock, NoRaces)\nparallelize(i1, GPUThread, NoRaces)"));
  const auto& kernel = lowered.gpuFunctions.at(0).kernels.at(0);
  EXPECT_EQ(kernel.unit(), ir::imp::LoopKind::GpuBlock);
  EXPECT_EQ(kernel.threadsPerBlock, 64);
  EXPECT_TRUE(contains(lowered.cuda, "(int32_t)(threadIdx.x); ")) << lowered.cuda;
}

TEST(GpuSchedules, AGpuUnitOnTheCpuTargetIsRefusedAtItsLine) {
  std::string message;
  try {
    compile(Program::fromText(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)"), "test.tc"));
  } catch (const std::exception& error) {
    message = error.what();
  }
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(i, GPUWarp, NoRaces): GPU parallel units need the "
                                "CUDA target")) << message;
}

TEST(GpuSchedules, UnitsNestedOutOfOrderAreRefusedAtTheirLine) {
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(i, GPUThread, NoRaces)\n"
                                                        "parallelize(j, GPUWarp, ParallelReduction)"));
  EXPECT_TRUE(contains(message, "test.tc:8:1: error: parallelize(j, GPUWarp, ParallelReduction): GPU units nest as "
                                "GPUBlock, then GPUWarp, then GPUThread")) << message;
}

TEST(GpuSchedules, ASparseOutputUnderAGpuLoopIsRefused) {
  std::string message = cudaErrorOf(withSchedule(
      "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) + C(i, j)\n",
      "parallelize(i, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:6:1: error: parallelize(i, GPUThread, NoRaces): output A is sparse")) << message;
}

TEST(GpuSchedules, ARaceWithoutAStrategyIsRefused) {
  std::string message =
      cudaErrorOf(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:8:1: error: parallelize(j, GPUThread, NoRaces): j is summed into y")) << message;
}

TEST(GpuSchedules, AReductionOverThreadsOutsideAWarpOrBlockIsRefused) {
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(j, GPUThread, ParallelReduction)"));
  EXPECT_TRUE(contains(message, "must be a GPUThread loop inside a GPUWarp or GPUBlock loop")) << message;
}

TEST(GpuSchedules, WorkOutsideTheGpuLoopsIsRefused) {
  // Rows to threads on the inner loop only: the row loop would run on the host.
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(j, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(message, "every loop must run inside a GPU loop")) << message;
}

TEST(GpuSchedules, ASumIntoAHostScalarIsRefusedNotLost) {
  std::string message = cudaErrorOf(withSchedule("tensor a : dense\ntensor x(I) : dense\na = x(i) * x(i)\n",
                                                 "parallelize(i, GPUThread, IgnoreRaces)"));
  EXPECT_TRUE(contains(message, "the GPU kernel updates")) << message;
}

TEST(GpuSchedules, CpuThreadsOnTheCudaTargetAreRefused) {
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(i, CPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(i, CPUThread, NoRaces): CPU parallel units need the "
                                "cpu target")) << message;
}

template <typename T> T argumentAs(const detail::KernelLaunch& launch, size_t k) {
  T value;
  std::memcpy(&value, launch.arguments.at(k).data(), sizeof value);
  return value;
}

// The host part of CSR SpMV on fake device tensors: one launch, with
// blocks for every row's warp and the tensors' own fields as arguments.
TEST(HostPart, LaunchesOneWarpPerRowWithTheTensorsFields) {
  Lowered lowered = lowerForCuda(kSpmv);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  long long pos[2] = {0, 0};
  int crd[1] = {0};
  float values[1] = {0};
  tcc_tensor y{}, a{}, x{};
  y.order = 1, y.dims[0] = 1001, y.vals = values;
  a.order = 2, a.dims[0] = 1001, a.dims[1] = 77, a.levels[1].pos = pos, a.levels[1].crd = crd, a.vals = values;
  x.order = 1, x.dims[0] = 77, x.vals = values;
  std::vector<detail::KernelLaunch> launches;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch& launch) { launches.push_back(launch); };
  int32_t status = detail::runHostPart(function, {&y, &a, &x}, device);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(launches.size(), 1u);
  const auto& kernel = *launches[0].kernel;
  EXPECT_EQ(launches[0].blocks, (1001 + kernel.iterationsPerBlock() - 1) / kernel.iterationsPerBlock());
  ASSERT_EQ(launches[0].arguments.size(), kernel.parameters.size());
  for (size_t k = 0; k < kernel.parameters.size(); ++k) {
    const std::string& name = kernel.parameters[k].as<ir::imp::Var>()->name;
    if (name == "y1_dimension") EXPECT_EQ(argumentAs<int32_t>(launches[0], k), 1001);
    if (name == "A2_pos") EXPECT_EQ(argumentAs<void*>(launches[0], k), static_cast<void*>(pos));
    if (name == "A2_crd") EXPECT_EQ(argumentAs<void*>(launches[0], k), static_cast<void*>(crd));
  }
}

TEST(HostPart, NothingIsLaunchedForAnEmptyOutput) {
  Lowered lowered = lowerForCuda(kSpmv);
  tcc_tensor y{}, a{}, x{};
  y.order = 1, a.order = 2, x.order = 1;
  int launches = 0;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch&) { ++launches; };
  detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &a, &x}, device);
  EXPECT_EQ(launches, 0);
}

// SDDMM over B's positions: the host reads the ends of the position range
// (through the device) to size the launch.
TEST(HostPart, ReadsAPositionRangeToSizeTheLaunch) {
  auto path = std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu" / "sddmm_pos.tc";
  Lowered lowered = lowerProgram(Program::fromFile(path.string()));
  long long pos[4] = {0, 30, 30, 101};  // 3 rows, the second empty: 101 nonzeros
  double values[1] = {0};
  tcc_tensor a{}, b{}, c{}, d{};
  a.order = 2, a.dims[0] = 3, a.dims[1] = 50, a.vals = values;
  b.order = 2, b.dims[0] = 3, b.dims[1] = 50, b.levels[1].pos = pos, b.vals = values;
  c.order = 2, c.dims[0] = 3, c.dims[1] = 5, c.vals = values;
  d.order = 2, d.dims[0] = 5, d.dims[1] = 50, d.vals = values;
  std::vector<detail::KernelLaunch> launches;
  int reads = 0;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch& launch) { launches.push_back(launch); };
  device.read = [&](void* host, const void* address, size_t bytes) {
    ++reads;
    std::memcpy(host, address, bytes);
  };
  EXPECT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&a, &b, &c, &d}, device), 0);
  EXPECT_EQ(reads, 2);
  ASSERT_EQ(launches.size(), 1u);
  // ceil(101 / 8) = 13 groups of positions, one per warp, 8 warps a block.
  EXPECT_EQ(launches[0].blocks, 2);
}

std::vector<std::string> gpuExamples() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu"))
    if (entry.path().extension() == ".tc") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GpuExampleKernels : public ::testing::TestWithParam<std::string> {};

// NVRTC needs no GPU: the kernels `tcc run --target cuda` would load compile
// to a cubin here too.
TEST_P(GpuExampleKernels, CompileWithNvrtcAlone) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  auto path = std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu" / (GetParam() + ".tc");
  Lowered lowered = lowerProgram(Program::fromFile(path.string()));
  ASSERT_EQ(lowered.target, frontend::Target::Cuda);
  std::string cubin = rt::cuda::compileToCubin(lowered.cudaKernels, "sm_90", GetParam() + ".cu");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuExampleKernels, ::testing::ValuesIn(gpuExamples()),
                         [](const auto& info) { return info.param; });

// The disk cache keeps one cubin per architecture (the key holds it); a
// repeated request is answered from memory, writing nothing new.
TEST(Nvrtc, CubinsAreCachedOnDiskPerArchitecture) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  namespace fs = std::filesystem;
  fs::path directory = fs::temp_directory_path() / ("tcc_cubin_cache_" + std::to_string(::getpid()));
  fs::remove_all(directory);
  ::setenv("TCC_CACHE_DIR", directory.c_str(), 1);
  ::unsetenv("TCC_NO_DISK_CACHE");
  // A kernel text unique to this run, so no earlier entry can answer.
  std::string kernels = lowerForCuda(kSpmv).cudaKernels + "// run " + std::to_string(::getpid()) + "\n";
  std::string first = detail::cubinFor(kernels, "sm_90", true);
  auto files = [&] {
    size_t n = 0;
    for (const auto& entry : fs::directory_iterator(directory)) n += entry.path().extension() == ".cubin";
    return n;
  };
  EXPECT_EQ(files(), 1u);
  EXPECT_EQ(detail::cubinFor(kernels, "sm_90", true), first);  // from memory
  EXPECT_EQ(files(), 1u);
  std::string other = detail::cubinFor(kernels, "sm_80", true);
  EXPECT_EQ(files(), 2u);
  EXPECT_NE(other, first);
  ::unsetenv("TCC_CACHE_DIR");
  fs::remove_all(directory);
}

TEST(Nvrtc, ACompileErrorCarriesTheLog) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  try {
    rt::cuda::compileToCubin("extern \"C\" __global__ void k() { undeclared(); }", "sm_90", "broken.cu");
    FAIL() << "expected a CudaError";
  } catch (const rt::cuda::CudaError& error) {
    EXPECT_TRUE(contains(error.what(), "NVRTC could not compile")) << error.what();
    EXPECT_TRUE(contains(error.what(), "undeclared")) << error.what();
  }
}

}  // namespace
}  // namespace tcc::test
