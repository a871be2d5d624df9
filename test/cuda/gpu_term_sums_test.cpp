// Terms that reduce over different variables (`y(j) = A(i,j) * x(i) +
// B(j,k) * z(k)`, no one loop order reading every term's sparse inputs in
// storage order) on the cuda target, without a GPU: into a dense output
// each term adds in a loop nest of its own, a kernel each, no sparse
// workspace (sparse_workspace(...) there has no effect once its own checks
// pass); what stays refused says why. (On a GPU,
// programs/term_sums_*.tc run against the dense reference.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "tcc/ir/index_printer.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::string transposedSpmvPlusRows(const std::string& formatOfY, const std::string& schedule = "") {
  return "tensor y(J) : " + formatOfY + "\ntensor A(I, J) : csr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
         "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n" +
         (schedule.empty() ? "" : "schedule {\n" + schedule + "\n}\n");
}

std::string kernelNamed(const std::string& kernels, const std::string& name) {
  size_t start = kernels.find("void __launch_bounds__(256) " + name + "(");
  if (start == std::string::npos) return "";
  return kernels.substr(start, kernels.find("\n}\n", start) - start);
}

// (fp fast: the summed nest's threads add atomically; fp strict runs it in
// one thread, gpu_strict_test.cpp.)
CompileOptions fast() {
  CompileOptions options;
  options.floatingPoint = frontend::FloatingPointMode::Fast;
  return options;
}

TEST(GpuTermSums, EachTermAddsIntoTheDenseOutputInAKernelOfItsOwn) {
  Lowered lowered = lowerForCuda(transposedSpmvPlusRows("dense"), fast());
  EXPECT_EQ(ir::toString(lowered.statements.at(0).concrete),
            "sequence(forall(i, forall(j, y(j) += A(i,j) * x(i)), GPUThread, Atomics), "
            "forall(j, forall(k, y(j) += B(j,k) * z(k)), GPUThread, NoRaces))");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "each term adds into y (dense, zeroed before the kernels run) in a loop nest of its "
                                  "own")) << decisions;
  EXPECT_TRUE(contains(decisions, "not taken: a sparse workspace of y's entries")) << decisions;
  EXPECT_FALSE(contains(lowered.cuda, "tcc_ism")) << lowered.cuda;
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), 2u);
  EXPECT_TRUE(function.host.gpuThreadScratch.empty());
  // The rows of A scatter into y: atomic additions (a row's run of one
  // coordinate combined first).
  std::string scatter = kernelNamed(lowered.cudaKernels, function.kernels[0].name);
  EXPECT_TRUE(contains(scatter, "atomicAdd(&y_vals[")) << lowered.cudaKernels;
  // B's row sums add to what the first kernel left: a row's sum is not
  // the entry's only contribution, so it is added, never stored over it.
  std::string rows = kernelNamed(lowered.cudaKernels, function.kernels[1].name);
  EXPECT_TRUE(contains(rows, "y_vals[(int64_t)(j)] += ty;")) << rows;
  EXPECT_FALSE(contains(rows, "y_vals[(int64_t)(j)] = ty;")) << rows;
  EXPECT_FALSE(contains(rows, "atomicAdd")) << rows;
}

TEST(GpuTermSums, ThreeTermsAreThreeKernels) {
  Lowered lowered = lowerForCuda("tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\n"
                                 "tensor c(J) : dense\ntensor D(J, L) : dense\n"
                                 "y(j) = A(i, j) * x(i) - c(j) + 0.5 * D(j, l)\n");
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3u);
  EXPECT_TRUE(contains(lowered.cudaKernels, "y_vals[(int64_t)(j)] += -(c_vals[pc1]);")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "y_vals[(int64_t)(j_0)] += ty;")) << lowered.cudaKernels;
}

// The cpu target adds each term into a dense output the same way (a loop
// nest after another, no kernels); a sparse output keeps its workspace.
TEST(GpuTermSums, TheCpuTargetAddsIntoADenseOutputToo) {
  Lowered dense = lowerProgram(Program::fromText(transposedSpmvPlusRows("dense"), "test.tc"));
  EXPECT_EQ(ir::toString(dense.statements.at(0).concrete),
            "sequence(forall(i, forall(j, y(j) += A(i,j) * x(i))), forall(j, forall(k, y(j) += B(j,k) * z(k))))");
  EXPECT_FALSE(contains(dense.cpp, "ws_y")) << dense.cpp;
  Lowered sparse = lowerProgram(Program::fromText(transposedSpmvPlusRows("sparse"), "test.tc"));
  EXPECT_TRUE(contains(ir::toString(sparse.statements.at(0).concrete), "where(")) << sparse.cpp;
  EXPECT_TRUE(contains(sparse.cpp, "tcc_ism_insert_hash_1(ws_y_0, ")) << sparse.cpp;
}

TEST(GpuTermSums, ASparseOutputStaysRefused) {
  std::string message = cudaErrorOf(transposedSpmvPlusRows("sparse"));
  EXPECT_TRUE(contains(message, "the terms of this sum reduce over different variables, so they go through a sparse "
                                "workspace, and sparse workspaces run on the CPU only")) << message;
}

// The command's own checks still run; then it has no effect.
TEST(GpuTermSums, ASparseWorkspaceCommandLeavesTheTermsAddingIntoTheDenseOutput) {
  Lowered lowered = lowerForCuda(transposedSpmvPlusRows("dense", "sparse_workspace(policy = hash)"));
  EXPECT_FALSE(contains(ir::toString(lowered.statements.at(0).concrete), "where(")) << lowered.cuda;
  EXPECT_EQ(lowered.cudaKernels, lowerForCuda(transposedSpmvPlusRows("dense")).cudaKernels);
  std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "sparse_workspace(policy = hash): on the cuda target the terms add into y (dense) "
                                  "directly, each in a loop nest of its own, a kernel each; no sparse workspace is "
                                  "made (its options, policy hash, describe the workspace's storage on the CPU and "
                                  "have no effect on the GPU)")) << decisions;
  std::string message = cudaErrorOf(transposedSpmvPlusRows("dense", "sparse_workspace(k)"));
  EXPECT_TRUE(contains(message, "test.tc:8:1")) << message;
  EXPECT_TRUE(contains(message, "sparse_workspace(k): k is not an index of y")) << message;
}

// A precompute of a part of one term goes among that term's loops: inside
// its GPU loop, each thread fills a copy of its own and adds it into y.
// One whose where stands outside every loop of its term leaves a loop on
// the host, refused as such.
TEST(GpuTermSums, APrecomputeGoesAmongItsTermsLoops) {
  Lowered lowered = lowerForCuda(transposedSpmvPlusRows("dense", "precompute(B(j, k) * z(k), k, kw)"), fast());
  EXPECT_EQ(ir::toString(lowered.statements.at(0).concrete),
            "sequence(forall(i, forall(j, y(j) += A(i,j) * x(i)), GPUThread, Atomics), "
            "forall(j, where(forall(k, y(j) += w_y(k)), forall(kw, w_y(kw) = B(j,kw) * z(kw))), GPUThread, Atomics))");
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), 2u);
  std::string rows = kernelNamed(lowered.cudaKernels, function.kernels[1].name);
  EXPECT_TRUE(contains(rows, "w_y_vals_of_all_threads + tcc_gpu_thread_index()")) << rows;
  EXPECT_FALSE(contains(rows, "y_vals[(int64_t)(j)] = ")) << rows;
  std::string message = cudaErrorOf(transposedSpmvPlusRows("dense", "precompute(B(j, k) * z(k), j, jw)"));
  EXPECT_TRUE(contains(message, "test.tc:6:1")) << message;
  EXPECT_TRUE(contains(message, "this kernel's host part has a loop (iterate j) that no parallelize maps to the GPU"))
    << message;
}

// A hand mapping applies by variable to every nest: a nest it leaves on
// the host is refused, naming the loop.
TEST(GpuTermSums, ANestNoParallelizeMapsIsRefused) {
  std::string message = cudaErrorOf(transposedSpmvPlusRows("dense", "parallelize(i, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(message, "host part has a loop (iterate j)")) << message;
}

TEST(GpuTermSums, AHandMappingOfEveryNestLowers) {
  Lowered lowered = lowerForCuda("tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\n"
                                 "tensor B(J, K) : csr\ntensor z(K) : dense\n"
                                 "y(j) = A(i, j) * x(i) + B(j, k) * z(k)\n"
                                 "schedule {\n  parallelize(i, GPUBlock, Atomics)\n"
                                 "  parallelize(j, GPUThread, NoRaces)\n}\n");
  EXPECT_TRUE(contains(ir::toString(lowered.statements.at(0).concrete), "GPUBlock, Atomics")) << lowered.cuda;
  EXPECT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 2u);
}

// int64 sums add through CUDA's unsigned 64-bit atomicAdd (two's
// complement adds the same bits).
TEST(GpuTermSums, ScatteringInt64TermsAddThroughTheUnsignedAtomicAdd) {
  Lowered lowered = lowerForCuda("tensor y(J) : dense of int64\ntensor A(I, J) : csr of int64\n"
                                 "tensor x(I) : dense of int64\ntensor b(J) : dense of int64\n"
                                 "y(j) = A(i, j) * x(i) + b(j)\n");
  EXPECT_TRUE(contains(lowered.cuda, "atomicAdd((unsigned long long*)&y_vals[")) << lowered.cuda;
}

}  // namespace
}  // namespace tcc::test
