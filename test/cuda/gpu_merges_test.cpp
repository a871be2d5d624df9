// Co-iteration on GPU loops, without a GPU: a GPU loop that merges sparse
// operands (a while loop, or a loop over every coordinate with cursors
// carried from one to the next) gives each iteration one coordinate, at
// which it searches every sparse operand (tcc_lower_bound from the
// segment's start); the loops inside run in the thread as on a CPU thread.
// What cannot be searched is refused at the parallelize. (On a GPU,
// programs/merge_*.tc run against the dense reference.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

std::string program(const std::string& tensors, const std::string& statement, const std::string& schedule) {
  return tensors + statement + "\n" + (schedule.empty() ? "" : "schedule {\n" + schedule + "\n}\n");
}

const std::string kDcsrUnion = "tensor Y(I, J) : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n";

TEST(GpuMerges, EachThreadSearchesItsRowInBothOperandsAndMergesTheRowsAlone) {
  Lowered lowered = lowerForCuda(
    program(kDcsrUnion, "Y(i, j) = A(i, j) + B(i, j)", "parallelize(i, GPUThread, NoRaces)"));
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "int64_t pA1_at = tcc_lower_bound(A1_crd, pA1, pA1_end, i);")) << kernels;
  EXPECT_TRUE(contains(kernels, "int64_t pB1_at = tcc_lower_bound(B1_crd, pB1, pB1_end, i);")) << kernels;
  EXPECT_TRUE(contains(kernels, "int32_t iA = ((pA1_at < pA1_end) ? A1_crd[pA1_at] : -1);")) << kernels;
  // The row's children start at the position found, not at a carried cursor.
  EXPECT_TRUE(contains(kernels, "int64_t pA2 = A2_pos[pA1_at];")) << kernels;
  // The rows' columns merged by the thread, a while loop.
  EXPECT_TRUE(contains(kernels, "// co-iterate j\n")) << kernels;
  EXPECT_FALSE(contains(kernels, "// co-iterate i")) << kernels;
  EXPECT_FALSE(contains(kernels, "pA1 = ")) << kernels;  // no cursor moves on
}

TEST(GpuMerges, CarriedCursorsBesideADenseOperandBecomeSearchesUnderTheDefaultMapping) {
  Lowered lowered = lowerForCuda(program("tensor Y(I, J) : dense\ntensor A(I, J) : dcsr\ntensor D(I, J) : dense\n",
                                         "Y(i, j) = A(i, j) - D(i, j)", ""));
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "tcc_lower_bound(A1_crd, pA1, pA1_end, i)")) << kernels;
  EXPECT_FALSE(contains(kernels, "pA1 = ")) << kernels;
}

TEST(GpuMerges, ARepeatedCoordinateIsSearchedForItsFirstPositionAndItsRunFollowed) {
  Lowered lowered = lowerForCuda(program("tensor y(I) : dense\ntensor A(I, J) : coo\ntensor x(J) : dense\n",
                                         "y(i) = A(i, j) * x(j)", "parallelize(i, GPUThread, NoRaces)"));
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "int64_t pA1_at = tcc_lower_bound(A1_crd, pA1, pA1_end, i);")) << kernels;
  EXPECT_TRUE(contains(kernels, "while (((pA1_at_segment_end < pA1_end) && (A1_crd[pA1_at_segment_end] == iA)))"))
      << kernels;
  EXPECT_TRUE(contains(kernels, "for (int64_t pA2 = pA1_at; pA2 < pA2_end; pA2++)")) << kernels;
}

TEST(GpuMerges, LanesOfAWarpSearchTheirColumnsAndSumThroughShuffles) {
  Lowered lowered = lowerForCuda(
    program("tensor y(I) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n", "y(i) = A(i, j) * B(i, j)",
            "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, ParallelReduction)"));
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "tcc_lower_bound(A2_crd, pA2, pA2_end, j)")) << kernels;
  EXPECT_TRUE(contains(kernels, "tcc_lower_bound(B2_crd, pB2, pB2_end, j)")) << kernels;
  EXPECT_TRUE(contains(kernels, "tcc_warp_sum(")) << kernels;
}

TEST(GpuMerges, AnUnorderedLevelIsRefusedAtTheParallelize) {
  std::string error = cudaErrorOf(
    program("tensor Y(I, K) : dense\ntensor A(I, K) : {dense, compressed}\n"
            "tensor B(I, K) : {dense, compressed(unordered)}\n",
            "Y(i, k) = A(i, k) + B(i, k)", "parallelize(i, GPUWarp, NoRaces)\nparallelize(k, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(error, "test.tc:7:1")) << error;
  EXPECT_TRUE(contains(error, "parallelize(k, GPUThread, NoRaces): the loop co-iterates sparse operands, so each GPU "
                              "iteration searches B for its coordinate of k, but its level is unordered"))
      << error;
}

}  // namespace
}  // namespace tcc::test
