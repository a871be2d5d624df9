// On a GPU (label gpu): a CSR output's rows on GPU warps, each row's
// columns cut among the warp's lanes, run as real kernels against the same
// statement compiled for the CPU, against the thread-a-row kernels, and
// against the dense reference, on the rows of lane_sliced_inputs.h (empty
// rows, rows of one entry, a very long row among short ones, banded and
// skewed rows, operands whose rows do not overlap, real matrices).
#include <gtest/gtest.h>

#include "dense_of.h"
#include "lane_sliced_inputs.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

class GpuLaneSlicedKernels : public ::testing::TestWithParam<LaneSlicedStatement> {};

TEST_P(GpuLaneSlicedKernels, MatchTheCpuKernelTheRowPerThreadKernelsAndTheDenseReference) {
  const LaneSlicedStatement& tested = GetParam();
  CompileOptions cuda;
  cuda.target = frontend::Target::Cuda;
  CompileOptions cpu;
  cpu.target = frontend::Target::Cpu;
  Program program = Program::fromText(laneSliced(tested.dsl), "test.tc");
  Kernel sliced = compile(program, cuda);
  Kernel perThread = compile(Program::fromText(rowPerThread(tested.dsl), "test.tc"), cuda);
  Kernel onCpu = compile(Program::fromText(tested.dsl, "test.tc"), cpu);
  // The statement's parameters, to bind the inputs by.
  Lowered lowered = lowerProgram(program, cuda);
  const CompiledStatement& statement = lowered.statements.at(0);
  const TensorVar& output = statement.computedOutput;
  int nonEmpty = 0;
  for (LaneSlicedCase drawn : laneSlicedCases()) {
    SCOPED_TRACE(tested.name + ", " + drawn.name);
    BoundInputs inputs = bindLaneSlicedInputs(statement, drawn);
    std::vector<double> expected = referenceOf(program, inputs, output);
    Tensor fromGpu = sliced.run(inputs.tensors).at(output.name());
    EXPECT_EQ(expectClose(rt::toDense(fromGpu), expected, toleranceOf(output), "lane slices on the GPU vs reference"),
              0);
    EXPECT_EQ(expectClose(rt::toDense(fromGpu), rt::toDense(onCpu.run(inputs.tensors).at(output.name())),
                          toleranceOf(output), "lane slices on the GPU vs the CPU kernel"),
              0);
    // Sorted, unique, and the same entries in the same order as a thread a row.
    rt::Coo mine = rt::unpack(fromGpu), theirs = rt::unpack(perThread.run(inputs.tensors).at(output.name()));
    EXPECT_EQ(mine.coords, theirs.coords);
    EXPECT_EQ(mine.values, theirs.values);
    nonEmpty += anyNonZero(expected);
  }
  EXPECT_GE(nonEmpty, static_cast<int>(laneSlicedCases().size()) - 2);
}

INSTANTIATE_TEST_SUITE_P(Statements, GpuLaneSlicedKernels, ::testing::ValuesIn(kLaneSlicedStatements),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tcc::test
