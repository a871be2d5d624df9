// The builtins abs, sqrt, exp, max and min on the cuda target: their math
// is CUDA's device library's (double precision, as on the CPU), and where
// they are evaluated follows the CPU's rule (wherever any argument has an
// entry, an absent one reading as zero, and everywhere for exp, which is 1
// at zero). Checked without a GPU: the kernels call the device functions,
// and each programs/builtins_*.tc statement, its GPU loops run one
// iteration after another on the CPU, matches the dense reference on
// random inputs and real matrices. (On a GPU, gpu_programs_test.cpp runs
// the same programs against the dense reference.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "dense_of.h"
#include "serial_gpu_loops.h"

namespace tcc::test {
namespace {

TEST(GpuBuiltins, TheKernelsCallTheDeviceMathFunctions) {
  Lowered lowered = lowerProgram(Program::fromText(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
      "y(i) = abs(A(i, j)) * sqrt(x(j)) + exp(A(i, j))\ntarget cuda\n"));
  for (const char* call : {"fabs(", "sqrt(", "exp("})
    EXPECT_TRUE(contains(lowered.cudaKernels, call)) << call << "\n" << lowered.cudaKernels;
}

class GpuBuiltinPrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuBuiltinPrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  Lowered lowered = lowerProgram(program, CompileOptions{});
  const CompiledStatement& statement = lowered.statements.at(0);
  SerialGpuIr serial(statement, /*serialSums=*/true);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  std::vector<SerialInputs> all{{"one entry each", {{"I", 1}, {"J", 1}}, 1.0, ""},
                                {"a single row", {{"I", 1}, {"J", 700}}, 0.3, ""},
                                {"257 rows", {{"I", 257}, {"J", 130}}, 0.05, ""},
                                {"494_bus", {}, 0.01, "494_bus.mtx"},
                                {"cage5", {}, 0.1, "cage5.mtx"}};
  const TensorVar* a = program.syntax().findTensor("A");
  const bool realInputs = a && a->order() == 2;
  EXPECT_EQ(expectSerialRunsMatch(program, statement, serial, all, realInputs, 700),
            static_cast<int>(all.size()) - (realInputs ? 0 : 2));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuBuiltinPrograms, ::testing::ValuesIn(programsNamed("builtins_")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
