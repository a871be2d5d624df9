// The default mapping's CSR SpMM kernels (gpu_spmm_mappings.h) without a
// GPU: each kernel, scheduled by the very commands the default mapping
// gives it, and the default mapping as a whole (the rule and its five
// kernels), lowered for the cuda target and run with their GPU loops one
// iteration after another on the CPU, against the dense reference, on
// drawn and real matrices and N off the tiles (1, 33, 100, 128, 300):
// both the lowered IR and the kernels as the CUDA backend prints them
// (unroll and jam applied, its loads speculative or guarded).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cuda_lowering.h"
#include "dense_of.h"
#include "serial_gpu_loops.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

constexpr const char* kSpmm = R"(tensor C(I, K) : dense of float32
tensor A(I, J) : csr of float32
tensor B(J, K) : dense of float32

C(i, k) = A(i, j) * B(j, k)
)";

struct SpmmInput {
  std::string name;
  rt::Coo matrix;
  std::vector<int32_t> columns;
};

// Runs `serial` (the lowered `statement` of `program`) on each input at
// each N against the dense reference; returns the runs made.
int expectSpmmRunsMatch(const Program& program, const CompiledStatement& statement, const SerialGpuIr& serial,
                        const std::vector<SpmmInput>& inputs, uint64_t seed) {
  int runs = 0;
  for (const SpmmInput& input : inputs) {
    for (int32_t columns : input.columns) {
      SCOPED_TRACE(input.name + ", N = " + std::to_string(columns));
      BoundInputs bound;
      for (const TensorVar& parameter : statement.parameters) {
        if (parameter.name() == "A") bound.bind(parameter, input.matrix);
        if (parameter.name() == "B")
          bound.bind(parameter, rt::randomUniform({input.matrix.dims[1], columns}, 1.0, ++seed));
      }
      std::vector<double> expected = referenceOf(program, bound, statement.computedOutput);
      EXPECT_TRUE(anyNonZero(expected));
      serial.expectMatches(bound.tensors, {input.matrix.dims[0], columns}, expected);
      ++runs;
    }
  }
  return runs;
}

std::string scheduleOf(const std::vector<lowering::ScheduleCommand>& commands) {
  std::string text = "schedule {\n";
  for (const auto& command : commands) text += "  " + command.text + "\n";
  return text + "}\n";
}

// Each kernel alone, scheduled by the commands the default mapping gives
// it: small matrices with empty rows, a long row, a single row, and real
// ones, at N off every tile.
TEST(SpmmMappings, EachKernelRunSeriallyMatchesTheDenseReference) {
  Program bare = Program::fromText(kSpmm, "spmm.tc");
  const auto* assignment = bare.statements().at(0).as<ir::AssignmentNode>();
  ASSERT_NE(assignment, nullptr);
  const ir::IndexVar& i = assignment->lhs.indices()[0];
  const ir::IndexVar& k = assignment->lhs.indices()[1];
  std::vector<ir::IndexVar> loopOrder{i};
  for (const auto& access : ir::accessesOf(assignment->rhs))
    if (access.tensor().name() == "A") loopOrder.push_back(access.indices()[1]);
  loopOrder.push_back(k);
  ASSERT_EQ(loopOrder.size(), 3u);
  auto mappings = lowering::spmmGpuMappings(bare.statements()[0], loopOrder);
  ASSERT_TRUE(mappings.has_value());
  ASSERT_EQ(mappings->alternatives.size(), 4u);
  std::vector<std::pair<std::string, std::string>> schedules;
  for (const auto& alternative : mappings->alternatives)
    schedules.emplace_back(toString(alternative.kernel), scheduleOf(alternative.commands));
  // The default's own tiles of 64, written out as spmm_tiles64.tc has them.
  schedules.emplace_back("tiles of 64", "schedule {\n  split(k, k_tile, k_in, 64)\n  split(k_in, k_round, k_lane, 32)\n"
                                        "  reorder(i, k_tile, k_lane, k_round, j)\n  fuse(i, k_tile, ik_warp)\n"
                                        "  parallelize(ik_warp, GPUWarp, NoRaces)\n"
                                        "  parallelize(k_lane, GPUThread, NoRaces)\n  unroll(k_round, 2)\n"
                                        "  unroll(j, 4)\n}\n");
  std::map<std::string, int32_t> sizes;
  std::vector<SpmmInput> inputs{
      {"one entry", drawnMatrix(1, 1, 1.0, 0, -1, 1), {1, 33}},
      {"a single row", drawnMatrix(1, 300, 0.5, 0, -1, 2), {1, 33, 100}},
      {"67 x 90, empty rows", drawnMatrix(67, 90, 0.1, 5, -1, 3), {1, 33, 100, 128, 300}},
      {"150 x 300, one full row, empty rows", drawnMatrix(150, 300, 0.01, 7, 40, 4), {1, 33, 100, 128, 300}},
      {"cage5", realMatrix("cage5.mtx", sizes), {1, 33, 100, 128, 300}},
      {"mbeacxc", realMatrix("mbeacxc.mtx", sizes), {33, 128}}};
  for (const auto& [name, schedule] : schedules) {
    for (bool speculative : {true, false}) {
      SCOPED_TRACE(name + (speculative ? "" : ", the jam's loads guarded"));
      Program program = Program::fromText(std::string(kSpmm) + schedule, "spmm.tc");
      CompileOptions options;
      options.target = frontend::Target::Cuda;
      options.gpuSpeculativeJamLoads = speculative;
      Lowered lowered = lowerProgram(program, options);
      const CompiledStatement& statement = lowered.statements.at(0);
      // One kernel: the schedule's, no choice.
      ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 1u) << schedule;
      if (speculative) {
        SerialGpuIr serial(statement);
        if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
        EXPECT_EQ(expectSpmmRunsMatch(program, statement, serial, inputs, 100), 22);
      }
      // The kernel as the CUDA backend prints it (jammed), run serially.
      SerialGpuIr kernels(statement, lowered.gpuFunctions.at(0));
      EXPECT_EQ(expectSpmmRunsMatch(program, statement, kernels, inputs, 100), 22);
    }
  }
}

// The default mapping as a whole: inputs that the rule gives to each of
// the five kernels (the kernel the rule names is checked against the host
// part in gpu_lowering_test.cpp), run serially against the dense reference;
// under fp strict the same inputs go to the splits in one order
// (gpu_ordered_split_test.cpp checks their bits).
class SpmmDefaultBranches : public ::testing::TestWithParam<bool> {};

TEST_P(SpmmDefaultBranches, TheDefaultMappingRunSeriallyMatchesTheDenseReferenceOnEveryBranch) {
  const bool fast = GetParam();
  Program program = Program::fromText(std::string(kSpmm) + "target cuda\n" + (fast ? "fp fast\n" : ""), "spmm.tc");
  Lowered lowered = lowerProgram(program);
  const CompiledStatement& statement = lowered.statements.at(0);
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), fast ? 5u : 7u);
  SerialGpuIr serial(statement);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  using lowering::SpmmKernel;
  struct Branch {
    SpmmInput input;
    SpmmKernel kernel;
  };
  std::map<std::string, int32_t> sizes;
  std::vector<Branch> branches{
      {{"4500 x 61, rows of about 3, empty rows", drawnMatrix(4500, 61, 0.05, 9, -1, 11), {1, 17, 32}},
       SpmmKernel::Tiles32},
      {{"4500 x 61, rows of about 3, empty rows", drawnMatrix(4500, 61, 0.05, 9, -1, 11), {100, 128, 300}},
       SpmmKernel::Tiles128},
      {{"500 x 300, rows of about 15, empty rows", drawnMatrix(500, 300, 0.05, 7, -1, 12), {1, 33, 64, 100, 300}},
       SpmmKernel::Tiles64},
      {{"100 x 400, rows of about 120", drawnMatrix(100, 400, 0.3, 0, -1, 13), {1, 33, 100, 128, 300}},
       SpmmKernel::Split16},
      {{"600 x 700, one full row among rows of about 2, empty rows", drawnMatrix(600, 700, 0.003, 11, 300, 14),
        {1, 33, 100, 128, 300}},
       SpmmKernel::Split16},
      {{"adder_dcop_05", realMatrix("adder_dcop_05.mtx", sizes), {1, 33}}, SpmmKernel::Split16},
      {{"bcsstk13", realMatrix("bcsstk13.mtx", sizes), {33}}, SpmmKernel::Tiles64}};
  std::vector<SpmmInput> inputs;
  for (const Branch& branch : branches) {
    // Each input is the rule's for the kernel named (the serial run goes
    // through the same host part).
    const rt::Coo& a = branch.input.matrix;
    std::vector<int64_t> lengths(a.dims[0], 0);
    for (size_t e = 0; e < a.nnz(); ++e) ++lengths[a.coords[0][e]];
    int64_t longest = 0;
    for (int64_t length : lengths) longest = std::max(longest, length);
    for (int32_t columns : branch.input.columns) {
      const lowering::SpmmStatistics statistics{a.dims[0], static_cast<int64_t>(a.nnz()), longest, columns};
      EXPECT_EQ(toString(lowering::spmmKernelRule(statistics)), toString(branch.kernel))
          << branch.input.name << ", N = " << columns;
      const SpmmKernel strict = lowering::spmmKernelRule(statistics, lowering::NonzeroSplits::InOneOrder);
      EXPECT_EQ(toString(strict), toString(branch.kernel == SpmmKernel::Split16 ? SpmmKernel::OrderedSplit16
                                                                                : branch.kernel))
          << branch.input.name;
    }
    inputs.push_back(branch.input);
  }
  EXPECT_EQ(expectSpmmRunsMatch(program, statement, serial, inputs, 200), 24);
  // The same through the kernels as the CUDA backend prints them.
  SerialGpuIr kernels(statement, lowered.gpuFunctions.at(0));
  EXPECT_EQ(expectSpmmRunsMatch(program, statement, kernels, inputs, 300), 24);
}

INSTANTIATE_TEST_SUITE_P(FpModes, SpmmDefaultBranches, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fast" : "Strict"; });

// The nonzero split in shares of 32 needs more than 131072 nonzeros; its
// branch of the default mapping on such a matrix (70000 rows of about 2,
// one of 300), against the reference computed over the nonzeros (the dense
// reference would walk 70000 x 300 x N).
TEST(SpmmMappings, TheDefaultMappingsSplitInSharesOf32RunSeriallyMatchesTheNonzeroSums) {
  Program program = Program::fromText(std::string(kSpmm) + "target cuda\nfp fast\n", "spmm.tc");
  Lowered lowered = lowerProgram(program);
  const CompiledStatement& statement = lowered.statements.at(0);
  SerialGpuIr serial(statement);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  rt::Coo a = drawnMatrix(70000, 300, 0.008, 13, 69998, 21);
  for (int32_t columns : {1, 33}) {
    SCOPED_TRACE("N = " + std::to_string(columns));
    ASSERT_EQ(lowering::spmmKernelRule({70000, static_cast<int64_t>(a.nnz()), 300, columns}),
              lowering::SpmmKernel::Split32);
    BoundInputs bound;
    for (const TensorVar& parameter : statement.parameters) {
      if (parameter.name() == "A") bound.bind(parameter, a);
      if (parameter.name() == "B") bound.bind(parameter, rt::randomUniform({300, columns}, 1.0, 22 + columns));
    }
    // C = A B over A's entries, from the values the kernel reads.
    const DenseArray& b = bound.dense.at("B");
    rt::Coo packed = rt::unpack(bound.tensors.at("A"));
    std::vector<double> expected(size_t(70000) * columns, 0.0);
    for (size_t e = 0; e < packed.nnz(); ++e)
      for (int32_t c = 0; c < columns; ++c)
        expected[size_t(packed.coords[0][e]) * columns + c] +=
            packed.values[e] * b.values[size_t(packed.coords[1][e]) * columns + c];
    EXPECT_TRUE(anyNonZero(expected));
    serial.expectMatches(bound.tensors, {70000, columns}, expected);
    SerialGpuIr(statement, lowered.gpuFunctions.at(0)).expectMatches(bound.tensors, {70000, columns}, expected);
  }
}

}  // namespace
}  // namespace tcc::test
