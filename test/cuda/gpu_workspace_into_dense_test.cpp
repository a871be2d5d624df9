// sparse_workspace(...) on the cuda target where its where would stand
// outside every GPU loop (over all of the output, or below loops none of
// which is on the GPU), between GPU loops, or over more than one of the
// output's levels below a GPU loop: a dense output takes the results
// itself, the loops adding into it in place with their race strategies
// (atomics where iterations of a raced variable meet in one entry), zeroed
// first where they sum; the command's policy and pipeline options have no
// effect there. A sparse output's workspace stays refused at its command.
// Checked without a GPU: the kernels as lowered, and the lowered IR run on
// the CPU (each GPU loop's iterations one after another) against the dense
// reference on random inputs and real matrices. (On a GPU, programs/sparse_workspace_into_dense_*.tc run
// against the dense reference in gpu_programs_test.cpp.)
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

std::string spgemm(const std::string& formatOfC, const std::string& schedule) {
  return "tensor C(I, K) : " + formatOfC + "\ntensor A(I, J) : csr\ntensor B(J, K) : csr\n"
         "C(i, k) = A(i, j) * B(j, k)\nschedule {\n" + schedule + "\n}\n";
}

TEST(GpuWorkspaceIntoDenseOutput, TheWholeOutputsWorkspaceBecomesAtomicAddsIntoTheOutput) {
  Lowered lowered = lowerForCuda(spgemm("dense", "sparse_workspace(i, policy = hash, pipeline = on)\n"
                                                 "parallelize(i, GPUBlock, NoRaces)\n"
                                                 "parallelize(j, GPUThread, Atomics)"));
  const std::string concrete = ir::toString(lowered.statements.at(0).concrete);
  EXPECT_FALSE(contains(concrete, "where(")) << concrete;
  EXPECT_FALSE(contains(lowered.cuda, "ws_C")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tcc_ism_")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cudaKernels, "= tcc_gpu_sparse_workspace_merge(")) << lowered.cudaKernels;
  EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&C_vals[")) << lowered.cudaKernels;
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "sparse_workspace(i, policy = hash, pipeline = on): on the cuda target C (dense) takes "
                                  "the results itself: its where would stand outside every GPU loop")) << decisions;
  EXPECT_TRUE(contains(decisions, "(its options, policy hash, pipelined, describe the workspace's storage on the CPU "
                                  "and have no effect on the GPU)")) << decisions;
}

// The same statement and loops without the command: the same kernels.
TEST(GpuWorkspaceIntoDenseOutput, TheKernelsAreThoseOfTheStatementWithoutTheCommand) {
  const std::string mapping = "parallelize(i, GPUThread, NoRaces)";
  Lowered with = lowerForCuda(spgemm("dense", "sparse_workspace(i, policy = bucket)\n" + mapping));
  Lowered without = lowerForCuda(spgemm("dense", mapping));
  EXPECT_EQ(with.cudaKernels, without.cudaKernels);
}

TEST(GpuWorkspaceIntoDenseOutput, AWorkspaceBetweenGpuLoopsSaysWhy) {
  Lowered lowered = lowerForCuda(spgemm("dense", "sparse_workspace(k)\nparallelize(i, GPUWarp, NoRaces)\n"
                                                 "parallelize(j, GPUThread, Atomics)"));
  EXPECT_FALSE(contains(lowered.cudaKernels, "= tcc_gpu_sparse_workspace_merge(")) << lowered.cudaKernels;
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "sparse_workspace(k): on the cuda target C (dense) takes the results itself: its "
                                  "where would stand between GPU loops")) << decisions;
  EXPECT_FALSE(contains(decisions, "have no effect")) << decisions;  // no options given
}

// One GPU thread's own list stays where it fits: order 1, filled by the
// thread alone.
TEST(GpuWorkspaceIntoDenseOutput, AnOrderOneWorkspaceInsideTheGpuLoopStaysAThreadsList) {
  Lowered lowered = lowerForCuda(spgemm("dense", "sparse_workspace(k)\nparallelize(i, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(lowered.cudaKernels, "= tcc_gpu_sparse_workspace_merge(")) << lowered.cudaKernels;
}

TEST(GpuWorkspaceIntoDenseOutput, ASparseOutputsWorkspaceOutsideTheGpuLoopsStaysRefusedAtItsCommand) {
  std::string message = cudaErrorOf(spgemm("csr", "parallelize(i, GPUThread, NoRaces)\nsparse_workspace(i)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: sparse_workspace(i): sparse workspaces are not supported on the "
                                "cuda target here: its where is outside every GPU loop, so all GPU threads would "
                                "insert into one workspace, and its consumer writes the sparse output C")) << message;
  EXPECT_TRUE(contains(message, "\nsparse_workspace(i)\n^\n")) << message;
}

// Each program run serially on random inputs (one entry, a single row,
// empty rows, past a block) and real matrices as A.
class GpuWorkspaceIntoDensePrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuWorkspaceIntoDensePrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  CompileOptions options;
  options.target = frontend::Target::Cuda;
  Lowered lowered = lowerProgram(program, options);
  const CompiledStatement& statement = lowered.statements.at(0);
  EXPECT_FALSE(contains(ir::toString(statement.concrete), "where(")) << ir::toString(statement.concrete);
  SerialGpuIr serial(statement);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  const TensorVar& output = statement.computedOutput;
  // (Given zeroed, as a GPU run copies it to the device.)
  ASSERT_TRUE(output.format().isAllDense());

  std::vector<SerialInputs> all{{"one entry each", {{"I", 1}, {"J", 1}, {"K", 1}, {"L", 1}}, 1.0, ""},
                          {"a single row", {{"I", 1}, {"J", 300}, {"K", 70}, {"L", 3}}, 0.5, ""},
                          {"257 rows", {{"I", 257}, {"J", 130}, {"K", 33}, {"L", 7}}, 0.05, ""},
                          {"1000 rows", {{"I", 1000}, {"J", 700}, {"K", 20}, {"L", 2}}, 0.01, ""},
                          {"494_bus", {{"K", 9}, {"L", 2}}, 0.1, "494_bus.mtx"},
                          {"bcsstk13", {{"K", 5}, {"L", 2}}, 0.05, "bcsstk13.mtx"}};
  EXPECT_EQ(expectSerialRunsMatch(program, statement, serial, all, /*realInputs=*/true, 700),
            static_cast<int>(all.size()));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuWorkspaceIntoDensePrograms,
                         ::testing::ValuesIn(programsNamed("sparse_workspace_into_dense_")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
