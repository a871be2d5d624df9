// Sparse workspaces a command asks for on the cuda target, without a GPU:
// one whose where runs inside a GPU loop (sparse_workspace(j) below a loop
// over rows i mapped to the GPU) is a coordinate list and values per GPU
// thread in scratch buffers of the launch, sorted and merged in the thread
// when full and after the fill, then read by the consumer as a compressed
// level; a dense output takes the results itself where the list does not
// fit (gpu_workspace_into_dense_test.cpp), and a sparse output's workspace
// is refused at its command, saying why. (On a GPU, programs/sparse_workspace_*.tc run against the
// dense reference.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::string spgemm(const std::string& formatOfC, const std::string& schedule) {
  return "tensor C(I, J) : " + formatOfC + "\ntensor A(I, K) : csr\ntensor B(K, J) : csr\n"
         "C(i, j) = A(i, k) * B(k, j)\nschedule {\n" + schedule + "\n}\n";
}

size_t parameterNamed(const lowering::GpuKernel& kernel, const std::string& name) {
  for (size_t k = 0; k < kernel.parameters.size(); ++k)
    if (kernel.parameters[k].as<ir::imp::Var>()->name == name) return k;
  return kernel.parameters.size();
}

TEST(GpuSparseWorkspaces, EachGpuThreadInsertsSortsAndMergesItsOwnList) {
  Lowered lowered = lowerForCuda(spgemm("dense", "sparse_workspace(j, policy = hash)\n"
                                                 "parallelize(i, GPUThread, NoRaces)"));
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_FALSE(contains(lowered.cuda, "tcc_ism_")) << lowered.cuda;  // no CPU runtime
  // The thread's own arrays, emptied at the start of each row.
  EXPECT_TRUE(contains(kernels, "int32_t* ws_C1_crd = (ws_C1_crd_of_all_threads + (tcc_gpu_thread_index() * "
                                "ws_C_capacity));")) << kernels;
  EXPECT_TRUE(contains(kernels, "int64_t ws_C_entries = 0LL;")) << kernels;
  // An insert appends, merging first when the list is full.
  EXPECT_TRUE(contains(kernels, "if ((ws_C_entries >= ws_C_capacity)) {\n"
                                "          ws_C_entries = tcc_gpu_sparse_workspace_merge(ws_C1_crd, ws_C_vals, "
                                "ws_C_entries);")) << kernels;
  EXPECT_TRUE(contains(kernels, "ws_C1_crd[ws_C_entries] = jB;")) << kernels;
  EXPECT_TRUE(contains(kernels, "ws_C_vals[ws_C_entries] = __dmul_rn(A_vals[pA2], B_vals[pB2]);")) << kernels;
  // After the fill: merged once more, and read as a compressed level.
  EXPECT_EQ(count(kernels, "= tcc_gpu_sparse_workspace_merge(ws_C1_crd, ws_C_vals, ws_C_entries);"), 2u) << kernels;
  EXPECT_TRUE(contains(kernels, "ws_C1_pos[1LL] = ws_C_entries;")) << kernels;
  EXPECT_TRUE(contains(kernels, "C_vals[(((int64_t)(i) * (int64_t)(C2_dimension)) + (int64_t)(jws_C))] = "
                                "ws_C_vals[pws_C1];")) << kernels;
  EXPECT_TRUE(contains(kernels, "template <typename T> __device__ static inline int64_t "
                                "tcc_gpu_sparse_workspace_merge(")) << kernels;
  // Three scratch buffers: twice J coordinates and values, two positions.
  const lowering::GpuKernel& kernel = lowered.gpuFunctions.at(0).kernels.at(0);
  ASSERT_EQ(kernel.scratch.size(), 3u);
  EXPECT_EQ(kernel.scratch[0].parameter, parameterNamed(kernel, "ws_C1_crd_of_all_threads"));
  EXPECT_EQ(kernel.scratch[0].bytesPerEntry(), 4);
  EXPECT_EQ(kernel.scratch[1].parameter, parameterNamed(kernel, "ws_C_vals_of_all_threads"));
  EXPECT_EQ(kernel.scratch[1].bytesPerEntry(), 8);
  EXPECT_EQ(kernel.scratch[2].parameter, parameterNamed(kernel, "ws_C1_pos_of_all_threads"));
  EXPECT_EQ(kernel.scratch[2].bytesPerEntry(), 8);
  for (const auto& scratch : kernel.scratch) EXPECT_FALSE(kernel.readOnly[scratch.parameter]);
  EXPECT_TRUE(contains(lowered.cuda, "int64_t ws_C_capacity = (2LL * (int64_t)(C2_dimension));")) << lowered.cuda;
}

// Under a warp with no thread loop every lane fills a list of its own; one
// lane stores the row.
TEST(GpuSparseWorkspaces, AWarpsLanesEachFillTheirOwnList) {
  Lowered lowered = lowerForCuda(spgemm("dense", "sparse_workspace()\nparallelize(i, GPUWarp, NoRaces)"));
  const std::string& kernels = lowered.cudaKernels;
  size_t guard = kernels.find("if (threadIdx.x % 32 == 0) {");
  ASSERT_NE(guard, std::string::npos) << kernels;
  EXPECT_TRUE(contains(kernels.substr(guard, 120), "C_vals[")) << kernels;
  EXPECT_LT(kernels.find("ws_C1_crd[ws_C_entries] = "), guard) << kernels;
}

std::string refusalOf(const std::string& dsl) {
  SCOPED_TRACE(dsl);
  return cudaErrorOf(dsl);
}

// (A dense output takes the results itself where a GPU thread's list does
// not fit: gpu_workspace_into_dense_test.cpp.)
TEST(GpuSparseWorkspaces, ASparseOutputsWorkspaceOutsideTheGpuLoopsIsRefusedAtItsCommand) {
  // sparse_workspace(i) names the first index: one workspace of all of C.
  std::string message = refusalOf(spgemm("csr", "sparse_workspace(i)\nparallelize(i, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:6:1: error: sparse_workspace(i): sparse workspaces are not supported on the "
                                "cuda target here: its where is outside every GPU loop")) << message;
  EXPECT_TRUE(contains(message, "its consumer writes the sparse output C")) << message;
  EXPECT_TRUE(contains(message, "\nsparse_workspace(i)\n^\n")) << message;
}

TEST(GpuSparseWorkspaces, ASparseOutputsWorkspaceOfOrderTwoIsRefusedAtItsCommand) {
  std::string message = refusalOf("tensor Y(I, J, L) : csf\ntensor A(I, K) : csr\ntensor B(K, J, L) : csf\n"
                                  "Y(i, j, l) = A(i, k) * B(k, j, l)\nschedule {\nsparse_workspace(j)\n"
                                  "parallelize(i, GPUThread, NoRaces)\n}\n");
  EXPECT_TRUE(contains(message, "sparse_workspace(j): sparse workspaces are not supported on the cuda target here: the "
                                "workspace has order 2")) << message;
}

// (Sparse outputs under GPU loops are not assembled.)
TEST(GpuSparseWorkspaces, AWorkspaceOfASparseOutputIsRefusedAtItsCommand) {
  std::string message = refusalOf(spgemm("csr", "sparse_workspace(j)\nparallelize(i, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "sparse_workspace(j): sparse workspaces are not supported on the cuda target here: its "
                                "consumer writes the sparse output C")) << message;
}

}  // namespace
}  // namespace tcc::test
