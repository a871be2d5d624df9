// GPU units a schedule gives out of order (blocks, then warps, then
// threads), on the cuda target without a GPU: a GPU loop whose nearest GPU
// loops below share a unit of lower rank exchanges units with them (each
// loop keeping its race strategy); two loops on one unit with nothing
// between, over dense ranges, run as one loop over their fuse on that unit;
// the rest stay refused at the parallelize, saying why. Checked as
// lowered (the kernels' loops, atomics and reductions, `tcc explain`'s
// lines) and run: the lowered IR on the CPU, each GPU loop's iterations one
// after another, against the dense reference on random inputs and real
// matrices. (On a GPU, programs/units_*.tc run against the dense reference
// in gpu_programs_test.cpp.)
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "dense_of.h"
#include "serial_gpu_loops.h"
#include "tcc/ir/index_printer.h"
#include "tcc/runtime/random.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

Lowered lowerProgramNamed(const std::string& name) {
  CompileOptions options;
  options.target = frontend::Target::Cuda;
  return lowerProgram(Program::fromFile(programPath(name).string()), options);
}

std::string matrixProgram(const std::string& formatOfA, const std::string& statement, const std::string& schedule) {
  return "tensor Y(I, J) : dense\ntensor y(I) : dense\ntensor z(J) : dense\ntensor s : dense\ntensor A(I, J) : " + formatOfA +
         "\ntensor B(I, J) : dense\n" + statement + "\ntarget cuda\nschedule {\n" + schedule + "\n}\n";
}

TEST(GpuUnitOrder, TwoThreadLoopsWithNothingBetweenRunAsOneOverTheirFuse) {
  Lowered lowered = lowerProgramNamed("units_collapse_dense_threads");
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "for (int64_t ij = 0LL + (int64_t)(blockIdx.x * blockDim.x + threadIdx.x); ij < "))
      << kernels;
  EXPECT_EQ(count(kernels, "threadIdx.x); "), 1u) << kernels;  // one GPU loop
  EXPECT_TRUE(contains(ir::toString(lowered.statements.at(0).concrete), "fuse(i, j, ij)"));
  EXPECT_TRUE(contains(decisionsOf(lowered), "GPU units: i and j, both on GPUThread with nothing between, run as one "
                                             "GPUThread loop over fuse(i, j, ij) (every (i, j) iteration on one "
                                             "GPUThread), NoRaces")) << decisionsOf(lowered);
}

TEST(GpuUnitOrder, TwoBlockLoopsRunAsOneWhoseThreadsReduce) {
  Lowered lowered = lowerProgramNamed("units_collapse_blocks_thread_sums");
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "for (int64_t ik = 0LL + (int64_t)(blockIdx.x); ik < ")) << kernels;
  EXPECT_TRUE(contains(kernels, "tcc_block_sum(")) << kernels;
}

// The fused loop sums: its strategy (Atomics) is the summed loops'.
TEST(GpuUnitOrder, ACollapsedSumKeepsItsAtomics) {
  for (const char* name : {"units_collapse_summed_atomics", "units_collapse_scalar_atomics"}) {
    SCOPED_TRACE(name);
    Lowered lowered = lowerProgramNamed(name);
    EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&")) << lowered.cudaKernels;
    EXPECT_TRUE(contains(decisionsOf(lowered), "Atomics for the races of its sum")) << decisionsOf(lowered);
  }
}

// Only the summed loop races: the fused loop takes its strategy, whatever
// the other (an index of the output) says.
TEST(GpuUnitOrder, TheFusedLoopTakesTheStrategyOfTheLoopThatSums) {
  Lowered lowered = lowerForCuda(matrixProgram("dense", "y(i) = A(i, j) * B(i, j)",
                                               "parallelize(i, GPUThread, NoRaces)\nparallelize(j, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&y_vals[")) << lowered.cudaKernels;
  Lowered outer = lowerForCuda(matrixProgram("dense", "z(j) = A(i, j) * B(i, j)",
                                             "parallelize(i, GPUThread, Atomics)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(outer.cudaKernels, "atomicAdd(&z_vals[")) << outer.cudaKernels;
}

TEST(GpuUnitOrder, AWarpLoopInsideAThreadLoopExchangesUnitsWithIt) {
  Lowered lowered = lowerProgramNamed("units_exchange_csr_rows_lanes");
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "for (int32_t i = 0 + (int32_t)((blockIdx.x * blockDim.x + threadIdx.x) / 32); "))
      << kernels;
  EXPECT_TRUE(contains(kernels, "tcc_warp_sum(")) << kernels;
  EXPECT_TRUE(contains(decisionsOf(lowered), "GPU units: i on GPUWarp and j on GPUThread (the schedule gave them the "
                                             "other way round; blocks hold warps, which hold threads)"))
      << decisionsOf(lowered);
}

TEST(GpuUnitOrder, AnExchangeReachesPastASerialLoopAndASumsWhere) {
  Lowered spmm = lowerProgramNamed("units_exchange_spmm_block_threads");
  EXPECT_TRUE(contains(spmm.cudaKernels, "(int32_t)(blockIdx.x); i < ")) << spmm.cudaKernels;
  EXPECT_TRUE(contains(spmm.cudaKernels, "(int32_t)(threadIdx.x); k < ")) << spmm.cudaKernels;
  Lowered nested = lowerProgramNamed("units_exchange_nested_sum_block");
  EXPECT_TRUE(contains(nested.cudaKernels, "tcc_block_sum(")) << nested.cudaKernels;
}

TEST(GpuUnitOrder, ThreadThreadBlockBecomesABlockAndOneThreadLoop) {
  Lowered lowered = lowerProgramNamed("units_exchange_then_collapse");
  EXPECT_TRUE(contains(lowered.cudaKernels, "(int32_t)(blockIdx.x); i < ")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "for (int64_t jk = 0LL + (int64_t)(threadIdx.x); jk < "))
      << lowered.cudaKernels;
}

// A compressed level's loop depends on its parent's position: no
// rectangle to collapse.
TEST(GpuUnitOrder, ASparseLevelsLoopIsNotCollapsed) {
  std::string message = cudaErrorOf(
      matrixProgram("csr", "Y(i, j) = A(i, j)", "parallelize(i, GPUThread, NoRaces)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:11:1: error: parallelize(j, GPUThread, NoRaces): GPU units nest as GPUBlock, "
                                "then GPUWarp, then GPUThread, but this loop is inside a GPU thread loop; its loop and "
                                "the loop over i around it, both on GPUThread with nothing between, would run as one "
                                "GPUThread loop over their fuse, but j iterates a sparse level, whose range depends "
                                "on its parent's position")) << message;
}

TEST(GpuUnitOrder, APositionLoopIsNotCollapsed) {
  std::string message = cudaErrorOf(matrixProgram(
      "csr", "y(i) = A(i, j) * B(i, j)",
      "pos(j, jp, A(i, j))\nparallelize(i, GPUThread, NoRaces)\nparallelize(jp, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(message, "but jp iterates positions (pos(j, jp, A(i,j)))")) << message;
}

TEST(GpuUnitOrder, ALoopBetweenKeepsTheRefusal) {
  std::string message = cudaErrorOf(
      "tensor Y(I, J) : dense\ntensor A(I, K, J) : dense\nY(i, j) = A(i, k, j)\ntarget cuda\nschedule {\n"
      "reorder(i, k, j)\nparallelize(i, GPUThread, NoRaces)\nparallelize(j, GPUThread, NoRaces)\n}\n");
  EXPECT_TRUE(contains(message, "but this loop is inside a GPU thread loop; its loop and the loop over i are both on "
                                "GPUThread, and two such loops run as one (their fuse) only where the inner one is "
                                "all the outer one's body")) << message;
}

TEST(GpuUnitOrder, TwoSummedLoopsUnderDifferentStrategiesAreNotCollapsed) {
  std::string message = cudaErrorOf(matrixProgram(
      "dense", "s = A(i, j)", "parallelize(i, GPUThread, Atomics)\nparallelize(j, GPUThread, ParallelReduction)"));
  EXPECT_TRUE(contains(message, "but both are summed, under different race strategies (Atomics, ParallelReduction), "
                                "and one loop takes one; give both the same")) << message;
}

// A NoRaces claim on a summed loop stays refused, after the collapse too.
TEST(GpuUnitOrder, ANoRacesClaimOnASumStaysRefused) {
  std::string message = cudaErrorOf(
      matrixProgram("dense", "y(i) = A(i, j)", "parallelize(i, GPUThread, NoRaces)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:11:1: error: parallelize(j, GPUThread, NoRaces): GPU units nest as GPUBlock, "
                                "then GPUWarp, then GPUThread, but this loop is inside a GPU thread loop (with the GPU "
                                "units in order, exchanged or collapsed as `tcc explain` says, the statement is "
                                "refused too: parallelize(ij, GPUThread, NoRaces): ij is summed into y, so GPU "
                                "iterations race on its entries")) << message;
}

// Units below that differ cannot all take the outer loop's.
TEST(GpuUnitOrder, GpuLoopsBelowOfDifferentUnitsKeepTheRefusal) {
  std::string message = cudaErrorOf(
      "tensor y(I) : dense\ntensor A(I, J) : dense\ntensor B(I, K) : dense\ntensor b(I) : dense\n"
      "y(i) = A(i, j) + B(i, k) + b(i)\ntarget cuda\nschedule {\nparallelize(i, GPUWarp, NoRaces)\n"
      "parallelize(j, GPUBlock, ParallelReduction)\nparallelize(k, GPUThread, ParallelReduction)\n}\n");
  EXPECT_TRUE(contains(message, "the GPU loops nearest below i have different units, so none can exchange its unit "
                                "with i's")) << message;
}

// Each units_*.tc program run serially on random inputs (one entry, a
// single row, past a block) and real matrices as A where A is a matrix.
class GpuUnitOrderPrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuUnitOrderPrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  CompileOptions options;
  options.target = frontend::Target::Cuda;
  Lowered lowered = lowerProgram(program, options);
  const CompiledStatement& statement = lowered.statements.at(0);
  EXPECT_TRUE(contains(decisionsOf(lowered), "GPU units: ")) << decisionsOf(lowered);
  SerialGpuIr serial(statement, /*serialSums=*/true);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  const TensorVar& output = statement.computedOutput;
  ASSERT_TRUE(output.format().isAllDense());
  const TensorVar* matrixA = program.syntax().findTensor("A");
  const bool realInputs = matrixA && matrixA->order() == 2;

  std::vector<SerialInputs> all{{"one entry each", {{"I", 1}, {"J", 1}, {"K", 1}, {"L", 1}}, 1.0, ""},
                          {"a single row", {{"I", 1}, {"J", 300}, {"K", 70}, {"L", 3}}, 0.5, ""},
                          {"past a block", {{"I", 257}, {"J", 130}, {"K", 33}, {"L", 7}}, 0.05, ""},
                          {"uneven", {{"I", 37}, {"J", 65}, {"K", 3}, {"L", 40}}, 0.3, ""},
                          {"494_bus", {{"K", 9}, {"L", 2}}, 0.1, "494_bus.mtx"},
                          {"bcsstk13", {{"K", 5}, {"L", 2}}, 0.05, "bcsstk13.mtx"}};
  EXPECT_GE(expectSerialRunsMatch(program, statement, serial, all, realInputs, 1900), 4);
}

INSTANTIATE_TEST_SUITE_P(Units, GpuUnitOrderPrograms, ::testing::ValuesIn(programsNamed("units_")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
