// Dense workspaces on the cuda target, without a GPU: under a GPU loop,
// each GPU thread's copy in a scratch buffer its launch gets (selected by
// the thread's index, interleaved with the other threads' copies, zeroed
// before each fill), the host part's request
// and its limit; outside the GPU loops, one copy in device memory that the
// host allocates; and the workspaces still refused, at their command.
// (On a GPU, programs/workspace_*.tc run against the dense reference.)
#include <gtest/gtest.h>

#include <cstring>

#include "cuda_lowering.h"
#include "gpu_host_part.h"
#include "tcc/ir/index_printer.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::string spmm(const std::string& formatOfB, const std::string& schedule) {
  return "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : " + formatOfB +
         "\nC(i, k) = A(i, j) * B(j, k)\nschedule {\n" + schedule + "\n}\n";
}

const std::string kRowsOnThreads = "precompute(A(i, j) * B(j, k), k, k)\nparallelize(i, GPUThread, NoRaces)";


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
  // The copies interleaved: entry e of thread t at e * T + t, T the
  // launch's threads, so a warp's lanes touch consecutive addresses.
  EXPECT_TRUE(contains(lowered.cudaKernels, "int64_t w_C_stride = tcc_gpu_thread_count();")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "double* w_C_vals = (w_C_vals_of_all_threads + tcc_gpu_thread_index());"));
  EXPECT_TRUE(contains(lowered.cudaKernels, "// zero this GPU thread's copy of w_C\n"
                                            "    for (int64_t pw_C_zero = 0LL; pw_C_zero < w_C_size; pw_C_zero++) {\n"
                                            "      w_C_vals[(pw_C_zero * w_C_stride)] = 0.0;"))
      << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "w_C_vals[((int64_t)(k) * w_C_stride)] += __dmul_rn(A_vals[pA2], B_vals[pB2]);"));
  EXPECT_TRUE(contains(lowered.cudaKernels, "= w_C_vals[(pw_C1 * w_C_stride)];"));
  EXPECT_TRUE(contains(lowered.cudaKernels, "tcc_gpu_thread_count() { return (int64_t)gridDim.x * blockDim.x; }"));
  EXPECT_FALSE(contains(lowered.cudaKernels, "memset"));
  // The printed launcher allocates the buffer for the launch's threads.
  EXPECT_TRUE(contains(lowered.cuda, "cudaMalloc((void**)&w_C_vals_of_all_threads, (size_t)(tcc_blocks * 256 * "
                                     "(int64_t)(w_C_size) * 8 + 1))")) << lowered.cuda;
  // Held from its allocation, so that a CUDA error's early return frees it
  // too; released (after a synchronize) once the kernel is done with it.
  EXPECT_TRUE(contains(lowered.cuda, "tcc_device_buffers<1> tcc_buffers;")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, " * 8 + 1)) != cudaSuccess) return 2;\n"
                                     "      tcc_buffers.hold(0, w_C_vals_of_all_threads);\n")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "if (tcc_buffers.release(0) != cudaSuccess) return 2;  // w_C_vals_of_all_threads"))
      << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "cudaFree(w_C_vals_of_all_threads)")) << lowered.cuda;
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
  EXPECT_TRUE(contains(kernels, "w_C_vals[((int64_t)(kB) * w_C_stride)] += ")) << kernels;
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

// A workspace whose where is outside every GPU loop (over the whole
// output) is one copy in device memory: the host allocates it zeroed, the
// kernel that fills it and the one that copies it to y share it, and the
// host frees it after them.
const std::string kSpmvThroughAWorkspace =
    "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\nschedule {\n"
    "dense_workspace(i)\nparallelize(i, GPUBlock, NoRaces)\nparallelize(j, GPUThread, Atomics)\n}\n";

TEST(GpuWorkspaces, AWorkspaceOutsideTheGpuLoopsIsOneCopyInDeviceMemory) {
  Lowered lowered = lowerForCuda(kSpmvThroughAWorkspace);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.host.gpuSharedWorkspaces.size(), 1u);
  EXPECT_EQ(function.kernels.size(), 2u);
  for (const auto& kernel : function.kernels) EXPECT_TRUE(kernel.scratch.empty());
  // Threads of a block add to the same entry: atomically.
  EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&w_y_vals[(int64_t)(i)], ")) << lowered.cudaKernels;
  // Held before it is zeroed: a failed memset or launch returns early and
  // the launcher's tcc_buffers frees it then.
  EXPECT_TRUE(contains(lowered.cuda, "if (cudaMalloc((void**)&w_y_vals, sizeof(double) * ((size_t)((int64_t)("
                                     "y1_dimension)) + 1)) != cudaSuccess) return 2;\n"
                                     "  tcc_buffers.hold(0, w_y_vals);\n"
                                     "  if (cudaMemset(w_y_vals, 0, ")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "if (tcc_buffers.release(0) != cudaSuccess) return 2;  // w_y_vals"));
  EXPECT_FALSE(contains(lowered.cuda, "cudaFree(w_y_vals)"));

  std::vector<long long> pos(1001, 0);
  int crd[1] = {0};
  double values[1] = {0};
  tcc_tensor y{}, a{}, x{};
  y.order = 1, y.dims[0] = 1000, y.vals = values;
  a.order = 2, a.dims[0] = 1000, a.dims[1] = 7, a.vals = values;
  a.levels[0].size = 1000, a.levels[1].kind = TCC_LEVEL_COMPRESSED, a.levels[1].size = 7;
  a.levels[1].pos = pos.data(), a.levels[1].crd = crd;
  x.order = 1, x.dims[0] = 7, x.vals = values;
  std::vector<std::string> events;
  std::vector<void*> workspaceArguments;
  double workspace[1000];
  detail::HostPartDevice device;
  device.allocateZeroed = [&](size_t bytes) {
    events.push_back("allocate " + std::to_string(bytes));
    return static_cast<void*>(workspace);
  };
  device.release = [&](void* address) { events.push_back(address == workspace ? "release" : "release another"); };
  device.launch = [&](const detail::KernelLaunch& launch) {
    events.push_back("launch");
    size_t k = parameterNamed(*launch.kernel, "w_y_vals");
    ASSERT_LT(k, launch.arguments.size());
    void* address;
    std::memcpy(&address, launch.arguments[k].data(), sizeof address);
    workspaceArguments.push_back(address);
  };
  EXPECT_EQ(detail::runHostPart(function, {&y, &a, &x}, device), 0);
  EXPECT_EQ(events, (std::vector<std::string>{"allocate 8000", "launch", "launch", "release"}));
  EXPECT_EQ(workspaceArguments, (std::vector<void*>{workspace, workspace}));
}

// Without a way to allocate device memory (a device that leaves it out),
// the host part refuses, saying why.
TEST(GpuWorkspaces, AHostPartWithoutDeviceAllocationRefusesASharedWorkspace) {
  Lowered lowered = lowerForCuda(kSpmvThroughAWorkspace);
  tcc_tensor y{}, a{}, x{};
  y.order = 1, a.order = 2, x.order = 1;
  detail::HostPartDevice device;
  device.launch = [](const detail::KernelLaunch&) {};
  try {
    detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &a, &x}, device);
    ADD_FAILURE() << "ran";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "cannot allocate device memory for a workspace")) << error.what();
  }
}

// precompute(A(i), i, iw) with no parallelize: the where is outside the
// GPU loops, so the default mapping fills the workspace in a kernel of its
// own, a thread per stored entry of A, before the kernel that reads it.
TEST(GpuWorkspaces, TheDefaultMappingFillsAWorkspaceOutsideTheGpuLoopsOnGpuThreads) {
  const std::string dsl = "tensor Y(I) : dense\ntensor A(I) : sparse\ntensor B : dense\nY(i) = (-3) * B * A(i)\n"
                          "schedule {\nprecompute(A(i), i, iw)\n}\n";
  Lowered lowered = lowerForCuda(dsl);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.host.gpuSharedWorkspaces.size(), 1u);
  ASSERT_EQ(function.kernels.size(), 2u);
  // The fill's kernel first, its threads over A's positions, each storing
  // its own entry (no atomics).
  size_t fill = lowered.cudaKernels.find("w_Y_vals[(int64_t)(iwA)] = A_vals[pA1];");
  size_t read = lowered.cudaKernels.find(", w_Y_vals[pw_Y1])");
  ASSERT_NE(fill, std::string::npos) << lowered.cudaKernels;
  ASSERT_NE(read, std::string::npos) << lowered.cudaKernels;
  EXPECT_LT(fill, read);
  EXPECT_FALSE(contains(lowered.cudaKernels, "atomicAdd")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "for (int64_t pA1 = A1_pos[0LL] + (int64_t)(blockIdx.x * blockDim.x + "
                                            "threadIdx.x); pA1 < pA1_end; pA1 += (int64_t)(gridDim.x * blockDim.x))"))
      << lowered.cudaKernels;
  std::string decisions;
  for (const auto& line : lowered.statements.at(0).decisions) decisions += line + "\n";
  EXPECT_TRUE(contains(decisions, "workspace w_Y (its where outside the GPU loops: one copy in device memory) filled "
                                  "by a kernel of its own, one thread per iteration of iw"))
      << decisions;

  std::vector<long long> pos{0, 0};
  int crd[1] = {0};
  double values[1] = {0};
  tcc_tensor y{}, a{}, b{};
  y.order = 1, y.dims[0] = 100, y.vals = values;
  a.order = 1, a.dims[0] = 100, a.vals = values;
  a.levels[0].kind = TCC_LEVEL_COMPRESSED, a.levels[0].size = 100, a.levels[0].pos = pos.data(), a.levels[0].crd = crd;
  b.order = 0, b.vals = values;
  std::vector<std::string> events;
  double workspace[100];
  detail::HostPartDevice device;
  device.allocateZeroed = [&](size_t bytes) {
    events.push_back("allocate " + std::to_string(bytes));
    return static_cast<void*>(workspace);
  };
  device.release = [&](void* address) { events.push_back(address == workspace ? "release" : "release another"); };
  device.read = [](void* host, const void* address, size_t bytes) { std::memcpy(host, address, bytes); };
  device.launch = [&](const detail::KernelLaunch& launch) {
    events.push_back(launch.kernel == &function.kernels[0] ? "launch fill" : "launch read");
  };
  pos[1] = 1;
  EXPECT_EQ(detail::runHostPart(function, {&y, &a, &b}, device), 0);
  EXPECT_EQ(events, (std::vector<std::string>{"allocate 800", "launch fill", "launch read", "release"}));
}

// Under a hand-written mapping too: no command can name the fill's loop
// over iw (no loop of the statement), so it runs on GPU threads; a fill
// loop a command maps already (precompute(A(i), i, i): the parallelize of
// i maps both loops) keeps its unit.
TEST(GpuWorkspaces, AFillNoCommandCanNameRunsOnGpuThreadsUnderAHandMapping) {
  auto program = [](const std::string& workspaceIndex) {
    return "tensor Y(I) : dense\ntensor A(I) : sparse\ntensor B(I) : dense\nY(i) = B(i) * A(i)\nschedule {\n"
           "precompute(A(i), i, " + workspaceIndex + ")\nparallelize(i, GPUBlock, NoRaces)\n}\n";
  };
  Lowered lowered = lowerForCuda(program("iw"));
  EXPECT_EQ(ir::toString(lowered.statements.at(0).concrete),
            "where(forall(i, Y(i) = B(i) * w_Y(i), GPUBlock, NoRaces), forall(iw, w_Y(iw) = A(iw), GPUThread, "
            "NoRaces))");
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 2u);
  EXPECT_TRUE(contains(lowered.cudaKernels, "// kernel: iterate iw over A's level 1, over GPU threads"))
      << lowered.cudaKernels;
  lowered = lowerForCuda(program("i"));
  EXPECT_EQ(ir::toString(lowered.statements.at(0).concrete),
            "where(forall(i, Y(i) = B(i) * w_Y(i), GPUBlock, NoRaces), forall(i, w_Y(i) = A(i), GPUBlock, NoRaces))");
}

// A dense workspace that lists its coordinates for a sparse output stays
// on the CPU.
TEST(GpuWorkspaces, AWorkspaceOfASparseOutputIsRefusedAtTheParallelize) {
  std::string dsl = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n"
                    "schedule {\nparallelize(k, GPUThread, Atomics)\n}\n";
  std::string message = cudaErrorOf(dsl);
  EXPECT_TRUE(contains(message, "test.tc:6:1: error: parallelize(k, GPUThread, Atomics): the dense workspace tcc "
                                "inserted for A would be shared by GPU threads; on the cuda target only dense "
                                "workspaces of dense results run on the GPU")) << message;
}

}  // namespace
}  // namespace tcc::test
