// Dense workspaces under GPU loops on the cuda target, without a GPU: each
// GPU thread's copy in a scratch buffer its launch gets (selected by the
// thread's index, zeroed before each fill), the host part's allocation
// and its limit, and the workspaces still refused, at their command.
// (On a GPU, programs/workspace_*.tc run against the dense reference.)
#include <gtest/gtest.h>

#include <cstring>

#include "gpu_host_part.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::string spmm(const std::string& formatOfB, const std::string& schedule) {
  return "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : " + formatOfB +
         "\nC(i, k) = A(i, j) * B(j, k)\nschedule {\n" + schedule + "\n}\n";
}

const std::string kRowsOnThreads = "precompute(A(i, j) * B(j, k), k, k)\nparallelize(i, GPUThread, NoRaces)";

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

size_t parameterNamed(const lowering::GpuKernel& kernel, const std::string& name) {
  for (size_t k = 0; k < kernel.parameters.size(); ++k)
    if (kernel.parameters[k].as<ir::imp::Var>()->name == name) return k;
  return kernel.parameters.size();
}

TEST(GpuWorkspaces, EachThreadSelectsItsCopyAndZeroesItBeforeAFill) {
  Lowered lowered = lowerForCuda(spmm("dense", kRowsOnThreads));
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), 1u);
  const lowering::GpuKernel& kernel = function.kernels[0];
  ASSERT_EQ(kernel.scratch.size(), 1u);
  size_t buffer = parameterNamed(kernel, "w_C_vals_of_all_threads");
  ASSERT_LT(buffer, kernel.parameters.size());
  EXPECT_EQ(kernel.scratch[0].parameter, buffer);
  EXPECT_FALSE(kernel.readOnly[buffer]);  // each thread stores through its copy
  EXPECT_EQ(kernel.scratch[0].bytesPerEntry(), 8);
  EXPECT_TRUE(contains(lowered.cudaKernels, "int64_t w_C_offset = (tcc_gpu_thread_index() * w_C_size);"))
      << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "double* w_C_vals = (w_C_vals_of_all_threads + w_C_offset);"));
  EXPECT_TRUE(contains(lowered.cudaKernels, "// zero this GPU thread's copy of w_C"));
  EXPECT_FALSE(contains(lowered.cudaKernels, "memset"));
  // The printed launcher allocates the buffer for the launch's threads.
  EXPECT_TRUE(contains(lowered.cuda, "cudaMalloc((void**)&w_C_vals_of_all_threads, (size_t)(tcc_blocks * 256 * "
                                     "(int64_t)(w_C_size) * 8 + 1))")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "cudaFree(w_C_vals_of_all_threads)"));
  EXPECT_TRUE(contains(lowered.cuda, "if (tcc_scratch_blocks < 1) return " +
                                         std::to_string(lowering::kGpuScratchTooLargeStatus) + ";"));
}

// Under a warp with no thread loop, every lane runs the fill; each stores
// to its own copy, and one lane stores the output.
TEST(GpuWorkspaces, AWarpsLanesEachStoreToTheirOwnCopy) {
  Lowered lowered = lowerForCuda(spmm("csr", "precompute(A(i, j) * B(j, k), k, k)\nparallelize(i, GPUWarp, NoRaces)"));
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_EQ(count(kernels, "if (threadIdx.x % 32 == 0) {"), 1u) << kernels;
  size_t guard = kernels.find("if (threadIdx.x % 32 == 0) {");
  ASSERT_NE(guard, std::string::npos);
  EXPECT_TRUE(contains(kernels.substr(guard, 80), "C_vals[")) << kernels;
  EXPECT_TRUE(contains(kernels, "w_C_vals[(int64_t)(kB)] += ")) << kernels;
}

struct FakeSpmm {
  std::vector<long long> pos;
  int crd[1] = {0};
  double values[1] = {0};
  tcc_tensor c{}, a{}, b{};
  FakeSpmm(int rows, int columns, int inner) : pos(rows + 1, 0) {
    c.order = 2, c.dims[0] = rows, c.dims[1] = columns, c.vals = values;
    a.order = 2, a.dims[0] = rows, a.dims[1] = inner, a.vals = values;
    a.levels[0].size = rows, a.levels[1].kind = TCC_LEVEL_COMPRESSED, a.levels[1].size = inner;
    a.levels[1].pos = pos.data(), a.levels[1].crd = crd;
    b.order = 2, b.dims[0] = inner, b.dims[1] = columns, b.vals = values;
  }
  std::vector<detail::KernelLaunch> run(const Lowered& lowered) {
    std::vector<detail::KernelLaunch> launches;
    detail::HostPartDevice device;
    device.launch = [&](const detail::KernelLaunch& launch) { launches.push_back(launch); };
    device.read = [](void* host, const void* address, size_t bytes) { std::memcpy(host, address, bytes); };
    EXPECT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&c, &a, &b}, device), 0);
    return launches;
  }
};

TEST(GpuWorkspaces, TheHostPartAsksForACopyPerThreadOfTheLaunch) {
  Lowered lowered = lowerForCuda(spmm("dense", kRowsOnThreads));
  FakeSpmm tensors(1001, 77, 5);
  auto launches = tensors.run(lowered);
  ASSERT_EQ(launches.size(), 1u);
  const lowering::GpuKernel& kernel = *launches[0].kernel;
  EXPECT_EQ(launches[0].blocks, 4);  // 1001 rows, 256 threads a block
  ASSERT_EQ(launches[0].scratch.size(), 1u);
  EXPECT_EQ(launches[0].scratch[0].argument, parameterNamed(kernel, "w_C_vals_of_all_threads"));
  EXPECT_EQ(launches[0].scratch[0].bytes, int64_t{4} * 256 * 77 * 8);
}

// 100,000 columns of float64 a thread: the limit holds 1,342 threads, so
// 5 blocks of 256 (the kernel's loop strides over the other rows).
TEST(GpuWorkspaces, ALaunchWhoseCopiesPassTheLimitRunsOnFewerBlocks) {
  Lowered lowered = lowerForCuda(spmm("dense", kRowsOnThreads));
  FakeSpmm tensors(100000, 100000, 5);
  auto launches = tensors.run(lowered);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].blocks, 5);
  ASSERT_EQ(launches[0].scratch.size(), 1u);
  EXPECT_EQ(launches[0].scratch[0].bytes, int64_t{5} * 256 * 100000 * 8);
  EXPECT_LE(launches[0].scratch[0].bytes, lowering::kGpuScratchBytesLimit);
}

TEST(GpuWorkspaces, CopiesThatOneBlockCannotHoldAreRefusedAtTheLaunch) {
  Lowered lowered = lowerForCuda(spmm("dense", kRowsOnThreads));
  FakeSpmm tensors(10, 1000000, 5);  // 8 MB a thread, 2 GB a block
  detail::HostPartDevice device;
  int launches = 0;
  device.launch = [&](const detail::KernelLaunch&) { ++launches; };
  try {
    detail::runHostPart(lowered.gpuFunctions.at(0), {&tensors.c, &tensors.a, &tensors.b}, device);
    ADD_FAILURE() << "launched";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "keeps a copy of its workspaces in each GPU thread, 8000000 bytes a thread"))
        << error.what();
  }
  EXPECT_EQ(launches, 0);
}

// A GPU loop inside the where that fills the workspace: the threads of a
// block would have to share one copy.
TEST(GpuWorkspaces, AGpuLoopFillingAThreadsCopyIsRefusedAtItsParallelize) {
  std::string dsl = spmm("dense", "precompute(A(i, j) * B(j, k), k, k)\nparallelize(i, GPUBlock, NoRaces)\n"
                                  "parallelize(k, GPUThread, NoRaces)");
  std::string message = cudaErrorOf(dsl);
  EXPECT_TRUE(contains(message, "test.tc:8:1: error: parallelize(k, GPUThread, NoRaces): the dense workspace that "
                                "precompute(A(i, j) * B(j, k), k, k) asks for is filled by this GPU loop inside its "
                                "where, but each GPU thread keeps a copy of its own")) << message;
}

// A workspace whose where is outside every GPU loop (over the outermost
// variable) would be one copy that the threads share.
TEST(GpuWorkspaces, AWorkspaceOutsideTheGpuLoopsIsRefusedAtTheParallelize) {
  std::string dsl = "tensor Y(I) : dense\ntensor A(I, J) : {dense, dense}\nY(i) = A(i,j)\nschedule {\n"
                    "dense_workspace(i)\nparallelize(i, GPUBlock, NoRaces)\n}\n";
  std::string message = cudaErrorOf(dsl);
  EXPECT_TRUE(contains(message, "test.tc:6:1: error: parallelize(i, GPUBlock, NoRaces): the dense workspace that "
                                "dense_workspace(i) asks for would be shared by GPU threads: it is filled by GPU loops "
                                "but its where is outside them")) << message;
}

}  // namespace
}  // namespace tcc::test
