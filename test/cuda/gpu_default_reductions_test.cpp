// The default GPU mapping (no schedule, or one without parallelize) where
// the outermost loop sums into a dense output: an index of the output
// comes outward where the sparse inputs' storage orders allow it; else a
// scalar is summed over GPU blocks (their threads' parts added across the
// block, each block's total added atomically), or in one block where fp
// strict keeps a floating-point sum's order from run to run; other outputs
// get a GPU thread per iteration of the sum, adding atomically, or one
// thread running the loops in order (fp strict, floating point).
// Checked without a GPU: the commands chosen, the kernels as lowered, and
// the lowered IR run on the CPU (each GPU loop's iterations one after
// another, the threads' parts of a block's sum into one scalar) against
// the dense reference on random inputs and real matrices. (On a GPU,
// programs/default_reductions_*.tc run against the dense reference in
// gpu_programs_test.cpp.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "dense_of.h"
#include "serial_gpu_loops.h"

namespace tcc::test {
namespace {

const std::string kDot = "tensor Y : dense of float32\ntensor A(I) : dense of float32\ntensor B(I) : dense of float32\n"
                         "Y = A(i) * B(i)\ntarget cuda\n";

TEST(GpuDefaultReductions, AStrictFloatDotProductIsSummedByOneBlockInOneOrder) {
  Lowered lowered = lowerForCuda(kDot);
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "divide(i, i_block, i_in, 1): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "split(i_in, i_round, i_thread, 1024): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(i_block, GPUBlock, Atomics): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(i_thread, GPUThread, ParallelReduction): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "default GPU mapping: i is summed into the scalar Y by one GPU block (divide into 1 "
                                  "part), its 1024 threads over consecutive iterations, their parts added across the "
                                  "block in the same order every run and added to Y once (fp strict: atomic additions "
                                  "from many threads would come in another order each run; fp fast spreads the sum "
                                  "over the GPU)")) << decisions;
  EXPECT_TRUE(contains(lowered.cudaKernels, "i_block < 1;")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "tY = tY_before + tcc_block_sum(tY);")) << lowered.cudaKernels;
  EXPECT_EQ(count(lowered.cudaKernels, "atomicAdd(&Y_vals[0LL], tY);"), 1u) << lowered.cudaKernels;
}

TEST(GpuDefaultReductions, AFastDotProductIsSummedOverBlocksAddedAtomically) {
  Lowered lowered = lowerForCuda(kDot + "fp fast\n");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "split(i, i_block, i_in, 2048): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "split(i_in, i_round, i_thread, 256): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "loop order: i_block, i_thread, i_round (as reordered by the schedule)")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(i_block, GPUBlock, Atomics): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(i_thread, GPUThread, ParallelReduction): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "a GPU block per 2048 iterations, its 256 threads over consecutive ones, 8 each")) << decisions;
  EXPECT_TRUE(contains(lowered.cudaKernels, "i_block < ((A1_dimension + 2047) / 2048);")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&Y_vals[0LL], tY);")) << lowered.cudaKernels;
}

// Integer sums are exact in any order: blocks and atomics under fp strict too.
TEST(GpuDefaultReductions, AnInt32SparseDotProductCutsThePositionsOverBlocks) {
  Lowered lowered = lowerForCuda("tensor Y : dense of int32\ntensor A(J) : sparse of int32\n"
                                 "tensor B(J) : dense of int32\nY = A(j) * B(j)\ntarget cuda\n");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "pos(j, j_pos, A(j)): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "split(j_pos, j_block, j_in, 2048): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(j_block, GPUBlock, Atomics): ")) << decisions;
}

TEST(GpuDefaultReductions, AnOuterSumBelowWhichTheOutputIsStoredAddsAtomicallyUnderFpFast) {
  Lowered lowered = lowerForCuda("tensor Y(I) : dense of float32\ntensor A(I, K) : csc of float32\n"
                                 "tensor B(I) : dense of float32\nY(i) = A(i, k) * B(i)\ntarget cuda\nfp fast\n");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "parallelize(k, GPUThread, Atomics): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "default GPU mapping: one thread per iteration of k, which is summed into Y (no "
                                  "index of Y can be the outermost loop: the sparse inputs are iterated in storage "
                                  "order); threads add into Y with atomic additions")) << decisions;
  EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&Y_vals[")) << lowered.cudaKernels;
}

TEST(GpuDefaultReductions, AnOuterSumBelowWhichTheOutputIsStoredRunsInOneThreadUnderFpStrict) {
  Lowered lowered = lowerForCuda("tensor Y(I) : dense\ntensor A(I, K) : csc\ntensor B(I) : dense\n"
                                 "Y(i) = A(i, k) * B(i)\ntarget cuda\n");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "divide(k, k_thread, k_in, 1): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(k_thread, GPUThread, Atomics): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "one GPU thread runs the loops in order")) << decisions;
  EXPECT_TRUE(contains(lowered.cudaKernels, "k_thread < 1;")) << lowered.cudaKernels;
}

// j indexes the dense A alone: it can be the outermost loop, and each of
// its iterations writes entries of its own.
TEST(GpuDefaultReductions, AnIndexOfTheOutputComesOutwardWhereTheStorageOrdersAllow) {
  Lowered lowered = lowerForCuda("tensor Y(I, J) : dense of float32\ntensor B(I, K) : csc of float32\n"
                                 "tensor A(I, J) : dense of float32\nY(i, j) = B(i, k) * A(i, j)\ntarget cuda\n");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "loop order: j, k, i (as reordered by the schedule)")) << decisions;
  EXPECT_TRUE(contains(decisions, "parallelize(j, GPUThread, NoRaces): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "default GPU mapping: k is summed into Y, so j, an index of it, becomes the "
                                  "outermost loop (reorder(j, k, i))")) << decisions;
  EXPECT_FALSE(contains(lowered.cudaKernels, "atomicAdd")) << lowered.cudaKernels;
}

// An int64 scalar sum: blocks, each adding its total through CUDA's
// unsigned 64-bit atomicAdd (two's complement adds the same bits).
TEST(GpuDefaultReductions, AnInt64ScalarSumAddsThroughTheUnsignedAtomicAdd) {
  Lowered lowered = lowerForCuda("tensor Y : dense of int64\ntensor A(I) : dense of int64\nY = A(i)\ntarget cuda\n");
  EXPECT_TRUE(contains(decisionsOf(lowered), "parallelize(i_block, GPUBlock, Atomics)")) << decisionsOf(lowered);
  EXPECT_TRUE(contains(lowered.cuda, "atomicAdd((unsigned long long*)&Y_vals[0LL], (unsigned long long)(")) << lowered.cuda;
}

// Two sparse vectors meet over i: no pos covers the loop, so no divide
// cuts it into one block. fp fast: a thread per i, adding atomically.
TEST(GpuDefaultReductions, UnderFpStrictASumCoiteratingSparseOperandsIsRefusedSayingWhy) {
  const std::string dot = "tensor Y : dense of float32\ntensor A(I) : sparse of float32\n"
                          "tensor B(I) : sparse of float32\nY = A(i) * B(i)\ntarget cuda\n";
  std::string message = cudaErrorOf(dot);
  EXPECT_TRUE(contains(message, "test.tc:4:1: error: cannot compile `Y = A(i) * B(i)`: the default GPU mapping: i is "
                                "summed into Y, and its loop co-iterates several sparse operands (or the terms of a "
                                "sum, or a builtin evaluated off a sparse operand's entries), which no divide cuts "
                                "into one GPU block; fp strict: atomic additions from many "
                                "threads would come in another order each run")) << message;
  Lowered fast = lowerForCuda(dot + "fp fast\n");
  const std::string decisions = decisionsOf(fast);
  EXPECT_TRUE(contains(decisions, "parallelize(i, GPUThread, Atomics): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "one thread per iteration of i, which is summed into Y (no split cuts it into "
                                  "blocks)")) << decisions;
  // exp is 1 off A's entries: the loop walks every i, merging A's coordinates.
  std::string sumOfExp = cudaErrorOf("tensor Y : dense of float32\ntensor A(I) : sparse of float32\nY = exp(A(i))\n"
                                     "target cuda\n");
  EXPECT_TRUE(contains(sumOfExp, "or a builtin evaluated off a sparse operand's entries")) << sumOfExp;
}

// A product scaled by a constant: its one sparse operand's positions.
TEST(GpuDefaultReductions, AScaledProductsSparseOperandsPositionsAreCut) {
  Lowered lowered = lowerForCuda("tensor Y : dense of float32\ntensor A(I) : dense of float32\n"
                                 "tensor B(I) : sparse of float32\nY = A(i) * B(i) / 2\ntarget cuda\n");
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "pos(i, i_pos, B(i)): ")) << decisions;
  EXPECT_TRUE(contains(decisions, "divide(i_pos, i_block, i_in, 1): ")) << decisions;
}

// The mapping's strategies matter: without them the lowering refuses.
TEST(GpuDefaultReductions, NoRacesOnTheSumIsRefused) {
  std::string message = cudaErrorOf(kDot + "schedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n");
  EXPECT_TRUE(contains(message, "i is summed into Y, so GPU iterations race on its entries")) << message;
}

// Each program run serially on random inputs (one entry, a single row,
// empty rows, past a block) and real matrices as A.
class GpuDefaultReductionPrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuDefaultReductionPrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  Lowered lowered = lowerProgram(program, CompileOptions{});
  const CompiledStatement& statement = lowered.statements.at(0);
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "default GPU mapping: ")) << decisions;
  SerialGpuIr serial(statement, /*serialSums=*/true);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  ASSERT_TRUE(statement.computedOutput.format().isAllDense());
  std::vector<SerialInputs> all{{"one entry each", {{"I", 1}, {"J", 1}, {"K", 1}, {"L", 1}}, 1.0, ""},
                                {"a single row", {{"I", 1}, {"J", 5000}, {"K", 70}, {"L", 3}}, 0.5, ""},
                                {"257 rows", {{"I", 257}, {"J", 130}, {"K", 33}, {"L", 7}}, 0.05, ""},
                                {"3000 rows", {{"I", 3000}, {"J", 100}, {"K", 3}, {"L", 2}}, 0.02, ""},
                                {"494_bus", {{"K", 9}, {"L", 2}}, 0.1, "494_bus.mtx"},
                                {"cage5", {{"K", 5}, {"L", 2}}, 0.05, "cage5.mtx"}};
  const TensorVar* a = program.syntax().findTensor("A");
  const bool realInputs = a && a->order() == 2;
  EXPECT_EQ(expectSerialRunsMatch(program, statement, serial, all, realInputs, 900),
            static_cast<int>(all.size()) - (realInputs ? 0 : 2));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuDefaultReductionPrograms,
                         ::testing::ValuesIn(programsNamed("default_reductions_")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
