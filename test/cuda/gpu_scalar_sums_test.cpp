// A scalar statement whose sums nest in its expression with no loop around
// them (d = x(i) * y(i) + 2) on the cuda target: each outermost sum is
// computed by a statement of its own into a scalar tcc names (in device
// memory, its loop mapped as any sum into a scalar: one block in one order
// under fp strict, blocks adding atomically under fp fast), and the
// statement combines the scalars. Checked without a GPU: the parts and
// their mappings, explain's line, and the parts' lowered IR run one after
// another on the CPU against the dense reference. (On a GPU,
// programs/scalar_nested_sums_*.tc run against the dense reference in
// gpu_programs_test.cpp.)
#include <gtest/gtest.h>

#include "tcc/ir/index_printer.h"
#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "dense_of.h"
#include "serial_gpu_loops.h"

namespace tcc::test {
namespace {

const std::string kTensors = "tensor d : dense of float32\ntensor x(I) : dense of float32\n"
                             "tensor y(I) : dense of float32\ntensor A(I, J) : csr of float32\n"
                             "tensor z(J) : dense of float32\n";

std::string allDecisions(const Lowered& lowered) {
  std::string all;
  for (const auto& statement : lowered.statements)
    for (const auto& decision : statement.decisions) all += statement.output.name() + ": " + decision + "\n";
  return all;
}

struct Split {
  std::string statement;
  std::vector<std::string> sums;  // the parts split out, as printed
  std::string combined;
};

class GpuScalarSums : public ::testing::TestWithParam<bool> {};

TEST_P(GpuScalarSums, EachSumGoesToADeviceScalarOfItsOwnThenTheStatementCombinesThem) {
  const bool strict = GetParam();
  const std::vector<Split> splits{
      {"d = x(i) * y(i) + 2", {"d_sum = x(i) * y(i)"}, "d = d_sum + 2"},
      {"d = x(i) * y(i) + A(i,j) * z(j)",
       {"d_sum = x(i) * y(i)", "d_sum_2 = A(i,j) * z(j)"},
       "d = d_sum + d_sum_2"},
      {"d = x(i) * y(i) - 2 * (A(i,j) * z(j))",
       {"d_sum = x(i) * y(i)", "d_sum_2 = 2 * (A(i,j) * z(j))"},
       "d = d_sum - d_sum_2"}};
  for (const Split& split : splits) {
    SCOPED_TRACE(split.statement);
    Lowered lowered = lowerForCuda(kTensors + split.statement + "\ntarget cuda\n" + (strict ? "" : "fp fast\n"));
    const std::string decisions = allDecisions(lowered);
    ASSERT_EQ(lowered.statements.size(), split.sums.size() + 1) << decisions;
    ASSERT_EQ(lowered.gpuFunctions.size(), lowered.statements.size());
    for (size_t k = 0; k < split.sums.size(); ++k) {
      const CompiledStatement& sum = lowered.statements[k];
      EXPECT_TRUE(sum.temporary);
      EXPECT_EQ(sum.programStatement, 0u);
      EXPECT_EQ(ir::toString(sum.statement), split.sums[k]);
      const std::string name = sum.output.name();
      std::string mapping;
      for (const auto& decision : sum.decisions) mapping += decision + "\n";
      EXPECT_TRUE(contains(mapping, strict ? "default GPU mapping: i is summed into the scalar " + name +
                                                 " by one GPU block (divide into 1 part)"
                                           : "each block's total added to " + name + " with one atomic addition"))
          << mapping;
      EXPECT_FALSE(lowered.gpuFunctions[k].kernels.empty());
    }
    const CompiledStatement& combined = lowered.statements.back();
    EXPECT_FALSE(combined.temporary);
    EXPECT_EQ(combined.output.name(), "d");
    EXPECT_EQ(ir::toString(combined.statement), split.combined);
    ASSERT_FALSE(combined.decisions.empty());
    EXPECT_TRUE(contains(combined.decisions.front(),
                         "the sums nested in the expression would be scalar temporaries outside every loop, on the "
                         "host, where no GPU thread adds to them: each is computed by a statement of its own into a "
                         "scalar in device memory (")) << combined.decisions.front();
    EXPECT_TRUE(contains(combined.decisions.front(), "combines them")) << combined.decisions.front();
    // The combination runs on the GPU too: a kernel of one thread.
    EXPECT_FALSE(lowered.gpuFunctions.back().kernels.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Fp, GpuScalarSums, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "strict" : "fast"; });

// A sum of terms keeps its sum explicit (an implicit one could go to each
// term); a sparse vector's product is cut by its positions, as the user's
// statement of it would be.
TEST(GpuScalarSums, ASumOfTermsSaysItsSumAndASparseProductIsCutByPositions) {
  Lowered terms = lowerForCuda(kTensors + "d = sum(i, x(i) + 2) * 3\ntarget cuda\n");
  ASSERT_EQ(terms.statements.size(), 2u);
  EXPECT_EQ(ir::toString(terms.statements[0].statement), "d_sum = sum(i, x(i) + 2)");
  EXPECT_EQ(ir::toString(terms.statements[1].statement), "d = d_sum * 3");
  Lowered sparse = lowerForCuda("tensor Y : dense\ntensor A(I) : dense\ntensor B : dense\n"
                                "tensor C(I) : sparse\nY = A(k) * (-3) - C(k) * B\ntarget cuda\n");
  ASSERT_EQ(sparse.statements.size(), 3u);
  std::string mapping;
  for (const auto& decision : sparse.statements[1].decisions) mapping += decision + "\n";
  EXPECT_TRUE(contains(mapping, "pos(k, k_pos, C(k))")) << mapping;
}

// The scalars' names are fresh: a user's d_sum keeps its name and role.
TEST(GpuScalarSums, TheScalarsNamesDoNotClashWithTheUsers) {
  Lowered lowered = lowerForCuda(kTensors + "tensor d_sum : dense of float32\nd_sum = z(j)\n"
                                 "d = x(i) * y(i) + 2\ntarget cuda\n");
  ASSERT_EQ(lowered.statements.size(), 3u);
  EXPECT_FALSE(lowered.statements[0].temporary);
  EXPECT_EQ(lowered.statements[0].output.name(), "d_sum");
  EXPECT_TRUE(lowered.statements[1].temporary);
  EXPECT_EQ(lowered.statements[1].output.name(), "d_sum_2");
  EXPECT_EQ(lowered.statements[1].programStatement, 1u);
  EXPECT_EQ(ir::toString(lowered.statements[2].statement), "d = d_sum_2 + 2");
}

// The CPU target keeps one statement, its sums in scalar temporaries.
TEST(GpuScalarSums, TheCpuTargetIsUnchanged) {
  CompileOptions options;
  options.target = frontend::Target::Cpu;
  Lowered lowered = lowerProgram(Program::fromText(kTensors + "d = x(i) * y(i) + A(i,j) * z(j)\n", "test.tc"), options);
  ASSERT_EQ(lowered.statements.size(), 1u);
  EXPECT_FALSE(lowered.statements[0].temporary);
  const std::string concrete = ir::toString(lowered.statements[0].concrete);
  EXPECT_TRUE(contains(concrete, "where(")) << concrete;
}

// A schedule keeps the statement whole (its commands name its loops): the
// refusal stands, naming the statements to write.
TEST(GpuScalarSums, AScheduledStatementIsNotSplit) {
  std::string message = cudaErrorOf(kTensors + "d = x(i) * y(i) + 2\nschedule {\n  split(i, i0, i1, 4)\n}\ntarget cuda\n");
  EXPECT_TRUE(contains(message, "compute each such sum in a statement of its own")) << message;
}

// Each program's parts run serially, one after another (a scalar a part
// computes is read by the next), on random inputs and real matrices as A.
class GpuScalarSumPrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuScalarSumPrograms, ThePartsLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  Lowered lowered = lowerProgram(program, CompileOptions{});
  ASSERT_GE(lowered.statements.size(), 2u);
  std::vector<std::unique_ptr<SerialGpuIr>> serial;
  for (const auto& statement : lowered.statements) {
    serial.push_back(std::make_unique<SerialGpuIr>(statement, /*serialSums=*/true));
    if (!serial.back()->available()) GTEST_SKIP() << "no C++ JIT here";
  }
  const TensorVar& output = lowered.statements.back().output;
  const std::vector<SerialInputs> all{{"one entry each", {{"I", 1}, {"J", 1}}, 1.0, ""},
                                      {"a single row", {{"I", 1}, {"J", 5000}}, 0.5, ""},
                                      {"257 rows", {{"I", 257}, {"J", 130}}, 0.05, ""},
                                      {"3000 rows", {{"I", 3000}, {"J", 100}}, 0.02, ""},
                                      {"494_bus", {}, 0.1, "494_bus.mtx"},
                                      {"cage5", {}, 0.05, "cage5.mtx"}};
  const TensorVar* a = program.syntax().findTensor("A");
  const bool realInputs = a && a->order() == 2;
  uint64_t seed = 700;
  int checked = 0;
  for (const SerialInputs& drawn : all) {
    if (!drawn.realMatrix.empty() && !realInputs) continue;
    SCOPED_TRACE(drawn.name);
    std::map<std::string, int32_t> sizes = drawn.sizes;
    BoundInputs inputs = drawnInputs(program.tensors(), output, drawn, sizes, seed);
    std::vector<double> expected = referenceOf(program, inputs, output);
    EXPECT_TRUE(anyNonZero(expected));
    if (!anyNonZero(expected)) continue;
    std::map<std::string, Tensor> tensors = inputs.tensors;
    for (size_t k = 0; k + 1 < lowered.statements.size(); ++k)
      tensors.insert_or_assign(lowered.statements[k].output.name(), serial[k]->run(tensors, {}));
    serial.back()->expectMatches(tensors, {}, expected);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(all.size()) - (realInputs ? 0 : 2));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuScalarSumPrograms, ::testing::ValuesIn(programsNamed("scalar_nested_sums_")),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
