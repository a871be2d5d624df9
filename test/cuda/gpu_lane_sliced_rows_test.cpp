// A CSR output's rows assembled by GPU warps, each row's columns cut into
// 32 slices, one a lane (a GPUWarp loop over the rows, a GPUThread loop
// over the columns; lowering/src/gpu/lane_sliced_rows.cpp), without a GPU:
// the kernels as lowered, and the lowered IR run on the CPU (each GPU
// loop's iterations one after another) against the dense reference and
// against the thread-a-row form's arrays, on rows built to break the
// slices: empty rows, rows of one entry, one very long row among short
// ones, banded and skewed rows, operands whose rows do not overlap, unions
// and intersections of two and three operands, a dense operand, real
// matrices. (On a GPU: gpu_lane_sliced_rows_gpu_test.cpp.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "dense_of.h"
#include "lane_sliced_inputs.h"
#include "serial_gpu_loops.h"
#include "tcc/lowering/gpu_default_mapping.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/random.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

constexpr size_t kScanKernels = 7;

TEST(GpuLaneSlicedRows, EachLaneCountsAndFillsItsSliceOfTheRow) {
  Lowered lowered = lowerForCuda(laneSliced(kLaneSlicedStatements[0].dsl));
  // Count, the scan of every lane's count, the rows' offsets, fill.
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3 + kScanKernels);
  const std::string& kernels = lowered.cudaKernels;
  // A warp a row, a lane a slice, each slice's start found by binary search.
  EXPECT_EQ(count(kernels, " + (int64_t)(threadIdx.x % 32); lane"), 2u) << kernels;
  EXPECT_EQ(count(kernels, "int64_t j_row_longest"), 2u) << kernels;
  EXPECT_GE(count(kernels, "tcc_lower_bound(A2_crd"), 4u) << kernels;
  EXPECT_GE(count(kernels, "tcc_lower_bound(B2_crd"), 4u) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_lane_offsets[(((pY1 * 32LL) + lane) + 1LL)] = pY2_lane;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[row] = Y2_lane_offsets[(row * 32LL)];")) << kernels;
  EXPECT_TRUE(contains(lowered.cuda, "pY2 = tcc_read_device(Y2_lane_offsets, Y2_lane_slices);")) << lowered.cuda;
  // The offsets are device memory of the call, freed after the fill.
  EXPECT_TRUE(contains(lowered.cuda, "// Y2_lane_offsets")) << lowered.cuda;
}

// What the form does not cover keeps a refusal at the parallelize.
TEST(GpuLaneSlicedRows, WhatTheLanesCannotSliceIsRefused) {
  const std::string sparse = "output Y is sparse, and sparse outputs cannot be assembled under a GPU loop";
  // An unordered operand cannot be searched for a slice's start.
  EXPECT_TRUE(contains(cudaErrorOf(laneSliced("tensor Y(I, J) : csr\n"
                                              "tensor A(I, J) : {dense, compressed(unordered)}\n"
                                              "Y(i, j) = 2 * A(i, j)\n")),
                       "parallelize(j, GPUThread, NoRaces): a row of Y is split among a warp's lanes"));
  // The rows over GPU blocks, not warps.
  EXPECT_TRUE(contains(cudaErrorOf("tensor Y(I, J) : csr\ntensor A(I, J) : csr\nY(i, j) = 2 * A(i, j)\n"
                                   "schedule {\nparallelize(i, GPUBlock, NoRaces)\n"
                                   "parallelize(j, GPUThread, NoRaces)\n}\n"),
                       sparse));
}

// Unscheduled, a CSR output gets both forms in one host part, picked per
// input by A's row lengths; both run right (the inputs below take one each).
TEST(GpuLaneSlicedRows, TheDefaultMappingPicksAThreadOrAWarpARowByTheRowLengths) {
  const std::string dsl = kLaneSlicedStatements[0].dsl + "target cuda\n";
  Lowered lowered = lowerForCuda(dsl);
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), (2 + kScanKernels) + (3 + kScanKernels));
  EXPECT_TRUE(contains(lowered.cuda, "A_rows_on_warps")) << lowered.cuda;
  const CompiledStatement& statement = lowered.statements.at(0);
  EXPECT_TRUE(std::any_of(statement.decisions.begin(), statement.decisions.end(), [](const std::string& line) {
    return contains(line, "a warp a row (its columns cut among the lanes) where nonzeros >= 32 * rows or "
                               "A_split_nonzeros; a thread a row otherwise. A_split_nonzeros: ");
  }));
  SerialGpuIr serial(statement);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  Program program = Program::fromText(dsl, "test.tc");
  std::vector<bool> picked;
  // Long rows (the mixed rows: a mean of some 50), then short random ones.
  LaneSlicedCase mixed = laneSlicedCases()[0];
  BoundInputs shortRows;
  for (const char* name : {"A", "B"})
    shortRows.bind(*program.syntax().findTensor(name), rt::randomUniform({300, 200}, 0.02, name[0]));
  std::vector<std::pair<BoundInputs, std::vector<int32_t>>> inputs;
  inputs.push_back({bindLaneSlicedInputs(statement, mixed), {mixed.rows, mixed.columns}});
  inputs.push_back({shortRows, {300, 200}});
  for (const auto& [bound, dims] : inputs) {
    rt::Coo a = rt::unpack(bound.tensors.at("A"));
    std::vector<int64_t> lengths(dims[0]);
    for (size_t k = 0; k < a.nnz(); ++k) ++lengths[a.coords[0][k]];
    picked.push_back(lowering::laneSlicedRowRule(*std::max_element(lengths.begin(), lengths.end()), dims[0],
                                                 static_cast<int64_t>(a.nnz())));
    std::vector<double> expected = referenceOf(program, bound, statement.computedOutput);
    ASSERT_TRUE(anyNonZero(expected));
    serial.expectMatches(bound.tensors, dims, expected);
  }
  EXPECT_EQ(picked, (std::vector<bool>{true, false}));
}

class GpuLaneSlicedStatements : public ::testing::TestWithParam<LaneSlicedStatement> {};

// The serial IR of the lane slices against the dense reference, and its
// arrays against the thread-a-row form's (sorted, unique, the same
// entries in the same order).
TEST_P(GpuLaneSlicedStatements, TheLoweredIrRunOnTheCpuMatchesTheReferenceAndTheRowPerThreadForm) {
  const LaneSlicedStatement& tested = GetParam();
  Program program = Program::fromText(laneSliced(tested.dsl), "test.tc");
  Lowered sliced = lowerForCuda(laneSliced(tested.dsl));
  Lowered perThread = lowerForCuda(rowPerThread(tested.dsl));
  SerialGpuIr slicedIr(sliced.statements.at(0)), perThreadIr(perThread.statements.at(0));
  if (!slicedIr.available()) GTEST_SKIP() << "no C++ JIT here";
  const TensorVar& output = sliced.statements.at(0).computedOutput;
  int nonEmpty = 0;
  for (LaneSlicedCase drawn : laneSlicedCases()) {
    SCOPED_TRACE(tested.name + ", " + drawn.name);
    BoundInputs inputs = bindLaneSlicedInputs(sliced.statements.at(0), drawn);
    std::vector<int32_t> dims{drawn.rows, drawn.columns};
    std::vector<double> expected = referenceOf(program, inputs, output);
    Tensor assembled = slicedIr.run(inputs.tensors, dims);
    EXPECT_EQ(expectClose(rt::toDense(assembled), expected, 1e-12, "lane slices (serial) vs reference"), 0)
        << slicedIr.source();
    rt::Coo mine = rt::unpack(assembled), theirs = rt::unpack(perThreadIr.run(inputs.tensors, dims));
    EXPECT_EQ(mine.coords, theirs.coords);
    EXPECT_EQ(mine.values, theirs.values);
    nonEmpty += anyNonZero(expected);
  }
  // (An intersection of operands whose rows do not overlap is empty, and
  // one of operands on alternate rows; the other inputs are not.)
  EXPECT_GE(nonEmpty, static_cast<int>(laneSlicedCases().size()) - 2);
}

INSTANTIATE_TEST_SUITE_P(Statements, GpuLaneSlicedStatements, ::testing::ValuesIn(kLaneSlicedStatements),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tcc::test
