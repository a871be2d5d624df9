// split, divide and bound of a variable that an ordered compressed level
// iterates: the loop over the inner part (or the bound variable) iterates
// the coordinates the level stores in its block, the block's first and
// last positions found by binary search; merges, unions with dense
// operands, sparse outputs and thread loops over the blocks as for the
// whole dimension. Each program is checked against the dense reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct Shape {
  std::string program;
  std::vector<std::string> schedules;
};

const char* kSpmv = "tensor y(I) : dense\ntensor A(I, J) : FORMAT\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";

std::string withFormat(std::string program, const std::string& format) {
  return program.replace(program.find("FORMAT"), 6, format);
}

std::vector<Shape> shapes() {
  return {
      {withFormat(kSpmv, "csr"),
       {"split(j, j0, j1, 4)", "split(j, j0, j1, 1)", "split(j, j0, j1, 64)", "divide(j, j0, j1, 3)",
        "bound(j, jb, 17, MaxExact)", "bound(j, jb, 21, MaxConstraint)",
        "split(j, j0, j1, 4)\nparallelize(i, CPUThread, NoRaces)", "split(j, j0, j1, 5)\nunroll(j0, 2)"}},
      {withFormat(kSpmv, "dcsr"),
       {"split(i, i0, i1, 4)", "split(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)",
        "divide(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)", "split(i, i0, i1, 3)\nsplit(j, j0, j1, 2)",
        "bound(i, ib, 13, MaxExact)", "bound(i, ib, 20, MaxConstraint)\nparallelize(ib, CPUThread, NoRaces)"}},
      // compressed(nonunique) over singleton: runs of one row.
      {withFormat(kSpmv, "coo"), {"split(i, i0, i1, 4)", "divide(i, i0, i1, 2)"}},
      {"tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nY(i,j) = A(i,j) + B(i,j)\n",
       {"split(j, j0, j1, 5)", "divide(j, j0, j1, 4)", "split(j, j0, j1, 3)\nparallelize(i, CPUThread, NoRaces)"}},
      {"tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nY(i,j) = A(i,j) - 2 * B(i,j)\n",
       {"split(j, j0, j1, 5)", "bound(j, jb, 20, MaxConstraint)"}},
      {"tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : dcsr\nY(i,j) = A(i,j) * B(i,j)\n",
       {"split(j, j0, j1, 4)", "divide(i, i0, i1, 3)"}},
      // A union with a dense operand: every coordinate of the block.
      {"tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor D(I, J) : dense\nY(i,j) = A(i,j) + D(i,j)\n",
       {"split(j, j0, j1, 4)", "divide(j, j0, j1, 2)"}},
      {"tensor a : dense\ntensor b(I) : sparse\ntensor c(I) : sparse\na = b(i) * c(i)\n",
       {"split(i, i0, i1, 3)", "split(i, i0, i1, 4)\nparallelize(i0, CPUThread, ParallelReduction)"}},
      {"tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\nC(i,k) = A(i,j) * B(j,k)\n",
       {"split(j, j0, j1, 4)", "split(j, j0, j1, 4)\nreorder(i, j0, k, j1)"}},
      // Sums below the statement's top, each in a scalar temporary by loops
      // of its own (the nested-sum scheduler): blocks of a sum's variable,
      // and of the top's, whose loops hold both sums.
      {"tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor B(I, K) : dcsr\n"
       "tensor z(K) : dense\ny(i) = A(i,j) * x(j) + B(i,k) * z(k)\n",
       {"split(j, j0, j1, 4)", "split(i, i0, i1, 3)\nsplit(k, k0, k1, 5)", "divide(k, k0, k1, 3)",
        "bound(j, jb, 17, MaxExact)", "split(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)"}},
      {"tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       {"split(j, j0, j1, 2)"}},
      // A is read from a copy in the loops' order (j, i), whose level over i is compressed.
      {"tensor Y(I, J) : dense\ntensor A(I, J) : {dense, compressed}\ntensor B(J, I) : {compressed, dense}\n"
       "Y(i,j) = B(j,i) * A(i,j)\n",
       {"split(i, i0, i1, 4)"}},
  };
}

std::map<std::string, rt::Coo> inputs(uint64_t seed) {
  return {{"A", randomSparse({13, 17}, 0.25, seed)},     {"B", randomSparse({13, 17}, 0.3, seed + 1)},
          {"D", randomDense({13, 17}, seed + 2)},        {"x", randomDense({17}, seed + 3)},
          {"b", randomSparse({13}, 0.5, seed + 4)},      {"c", randomSparse({13}, 0.5, seed + 5)},
          {"z", randomDense({17}, seed + 7)},
          {"B_dense", randomDense({17, 6}, seed + 6)}};
}

TEST(CoordinateBlocks, SplitDivideAndBoundOfASparselyIteratedVariableMatchReference) {
  int checked = 0;
  for (const auto& shape : shapes()) {
    for (const auto& schedule : shape.schedules) {
      for (uint64_t seed : {7100u, 7200u}) {
        std::map<std::string, rt::Coo> tensors = inputs(seed);
        // SpMM's B is dense, 17 x 6.
        if (contains(shape.program, "B(J, K)")) tensors["B"] = tensors.at("B_dense");
        if (contains(shape.program, "B(J, I)")) tensors["B"] = transposed(tensors.at("B"));
        tensors.erase("B_dense");
        std::string dsl = withSchedule(shape.program, schedule);
        SCOPED_TRACE(dsl);
        EXPECT_TRUE(codeMatchingReference(dsl, declaredInputs(dsl, tensors)).has_value());
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2 * 36);
}

TEST(CoordinateBlocks, TheBlockIsFoundByBinarySearchNotByVisitingEveryCoordinate) {
  std::string dsl = withSchedule(withFormat(kSpmv, "csr"), "split(j, j0, j1, 4)");
  std::string code = expectProgramMatchesReference(dsl, declaredInputs(dsl, inputs(7300)));
  EXPECT_TRUE(contains(code, "tcc_lower_bound(A2_crd")) << code;
  EXPECT_FALSE(contains(code, "for (int32_t j1 =")) << code;
}

TEST(CoordinateBlocks, AnEmptyOperandAndEmptyRows) {
  std::string dsl = withSchedule(withFormat(kSpmv, "dcsr"), "split(i, i0, i1, 4)\nsplit(j, j0, j1, 2)");
  rt::Coo rows = randomSparse({13, 17}, 0.05, 7400);
  expectProgramMatchesReference(dsl, {{"A", rows}, {"x", randomDense({17}, 7401)}});
  rt::Coo empty = rt::Coo::ofShape({13, 17});
  expectProgramMatchesReference(dsl, {{"A", empty}, {"x", randomDense({17}, 7402)}});
}

// A bound is a promise about the inputs, checked when the kernel starts,
// over a sparse level as over a dense one.
TEST(CoordinateBlocks, ABoundBelowTheDimensionStopsTheKernel) {
  for (const std::string schedule : {"bound(j, jb, 10, MaxConstraint)", "bound(j, jb, 16, MaxExact)"}) {
    std::string dsl = withSchedule(withFormat(kSpmv, "csr"), schedule);
    std::string message = runError(dsl, declaredInputs(dsl, inputs(7500)));
    EXPECT_TRUE(contains(message, "a bound(...) of the schedule does not hold for these inputs")) << message;
  }
}

// What a block cannot be searched in stays refused at the command.
TEST(CoordinateBlocks, LevelsThatCannotBeSearchedAreRefusedAtTheCommand) {
  expectRefusedAtLastCommand(withFormat(kSpmv, "coo"), "split(j, j0, j1, 4)",
                             "j is iterated by a singleton level of A, whose coordinates cannot be cut into ranges");
  expectRefusedAtLastCommand(withFormat(kSpmv, "csr"), "fuse(i, j, f)",
                             "j is iterated by a compressed level of A, whose coordinates cannot be cut into ranges");
  // An inner part split again, reordered outside its outer part or
  // unrolled: refused in the lowering, at the split, a copy named as such.
  const std::string copied = "tensor Y(I, J) : dense\ntensor A(I, J) : {dense, compressed}\n"
                             "tensor B(J, I) : {compressed, dense}\nY(i,j) = B(j,i) * A(i,j)\n";
  for (const std::string after : {"split(i1, i2, i3, 2)", "reorder(i1, i0)", "unroll(i1, 2)"}) {
    frontend::Diagnostic refusal = refusalOf(withSchedule(copied, "split(i, i0, i1, 4)\n" + after));
    EXPECT_EQ(refusal.location.line, 6) << refusal.format();
    EXPECT_TRUE(contains(refusal.message, "i is iterated by a sparse level of the copy of A in the loops' order"))
        << refusal.format();
  }
}

// The loop over a block's coordinates walks them from the block's first
// position: not on CPU threads or in vector lanes (on the cuda target, GPU
// threads share them: GpuCoordinateBlocks.*), refused at the parallelize.
TEST(CoordinateBlocks, AnInnerPartOnCpuThreadsOrLanesIsRefusedAtItsParallelize) {
  for (const std::string unit : {"CPUThread", "CPUVector"}) {
    frontend::Diagnostic refusal =
        refusalOf(withSchedule(withFormat(kSpmv, "csr"), "split(j, j0, j1, 4)\nparallelize(j1, " + unit + ", Atomics)"));
    EXPECT_EQ(refusal.location.line, 7) << refusal.format();
    EXPECT_TRUE(contains(refusal.message, "parallelize(j1, " + unit + ", Atomics): j1 visits the coordinates of j "
                                          "that A's sparse level stores in its block, one after another from the "
                                          "block's first position (found by binary search), so it cannot run on CPU "
                                          "threads or in vector lanes; parallelize j0 instead"))
        << refusal.format();
  }
  // GPU units need the cuda target, as anywhere.
  frontend::Diagnostic gpu =
      refusalOf(withSchedule(withFormat(kSpmv, "csr"), "split(j, j0, j1, 4)\nparallelize(j1, GPUThread, Atomics)"));
  EXPECT_EQ(gpu.location.line, 7) << gpu.format();
  EXPECT_TRUE(contains(gpu.message, "GPU parallel units need the CUDA target")) << gpu.format();
}

// explain says what the loops over a sparsely iterated variable's parts
// visit: the block's coordinates, its ends found by binary search, not every
// j = j0 * F + j1.
TEST(CoordinateBlocks, ExplainSaysTheBlocksStoredCoordinatesAreVisited) {
  std::string csr = decisionsOf(withSchedule(withFormat(kSpmv, "csr"), "split(j, j0, j1, 4)"));
  EXPECT_TRUE(contains(csr, "split(j, j0, j1, 4): j1 visits j's coordinates in each block of 4, [j0 * 4, "
                            "min(j0 * 4 + 4, |j|)), not every j = j0 * 4 + j1: the block's first and last positions "
                            "in what A's compressed level 2 stores are found by binary search in each segment"))
      << csr;
  EXPECT_FALSE(contains(csr, "4): j = j0 * 4 + j1")) << csr;
  std::string dcsr = decisionsOf(withSchedule(withFormat(kSpmv, "dcsr"), "split(i, i0, i1, 4)"));
  EXPECT_TRUE(contains(dcsr, "split(i, i0, i1, 4): i1 visits i's coordinates in each block of 4, [i0 * 4, "
                             "min(i0 * 4 + 4, |i|)), not every i = i0 * 4 + i1: the block's first and last "
                             "positions in what A's compressed level 1 stores"))
      << dcsr;
  std::string divided = decisionsOf(withSchedule(withFormat(kSpmv, "csr"), "divide(j, j0, j1, 3)"));
  EXPECT_TRUE(contains(divided, "divide(j, j0, j1, 3): j0 picks one of 3 equal parts of j; j1 visits j's coordinates "
                                "in that part: its first and last positions in what A's compressed level 2 stores"))
      << divided;
  std::string bounded = decisionsOf(withSchedule(withFormat(kSpmv, "csr"), "bound(j, jb, 17, MaxExact)"));
  EXPECT_TRUE(contains(bounded, "bound(j, jb, 17, MaxExact): jb iterates j as without the bound, what A's compressed "
                                "level 2 stores read whole, not cut at 17; the bound is checked when the kernel starts "
                                "(the dimension of j must be 17)"))
      << bounded;
  std::string constrained = decisionsOf(withSchedule(withFormat(kSpmv, "csr"), "bound(j, jb, 21, MaxConstraint)"));
  EXPECT_TRUE(contains(constrained, "(the dimension of j must be at most 21)")) << constrained;
  // A's copy in the loops' order (j, i) stores i in a compressed level.
  std::string copied = decisionsOf(withSchedule(
      "tensor Y(I, J) : dense\ntensor A(I, J) : {dense, compressed}\ntensor B(J, I) : {compressed, dense}\n"
      "Y(i,j) = B(j,i) * A(i,j)\n",
      "split(i, i0, i1, 4)"));
  EXPECT_TRUE(contains(copied, "split(i, i0, i1, 4): i1 visits i's coordinates in each block of 4, [i0 * 4, "
                               "min(i0 * 4 + 4, |i|)), not every i = i0 * 4 + i1: the block's first and last positions "
                               "in what the compressed level 2 of A's copy in the loops' order stores"))
      << copied;
  // Sums below the top say the same, naming the levels of the nests that
  // loop over the variable.
  std::string sums = decisionsOf(withSchedule(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor B(I, K) : dcsr\n"
      "tensor z(K) : dense\ny(i) = A(i,j) * x(j) + B(i,k) * z(k)\n",
      "split(i, i0, i1, 8)\ndivide(k, k0, k1, 2)"));
  EXPECT_TRUE(contains(sums, "split(i, i0, i1, 8): i1 visits i's coordinates in each block of 8, [i0 * 8, "
                             "min(i0 * 8 + 8, |i|)), not every i = i0 * 8 + i1: the block's first and last positions "
                             "in what B's compressed level 1 stores"))
      << sums;
  EXPECT_TRUE(contains(sums, "divide(k, k0, k1, 2): k0 picks one of 2 equal parts of k; k1 visits k's coordinates "
                             "in that part: its first and last positions in what B's compressed level 2 stores"))
      << sums;
  // A dense split keeps its text.
  std::string dense = decisionsOf(withSchedule(withFormat(kSpmv, "dense"), "split(j, j0, j1, 4)"));
  EXPECT_TRUE(contains(dense, "split(j, j0, j1, 4): j = j0 * 4 + j1")) << dense;
  std::string rows = decisionsOf(withSchedule(withFormat(kSpmv, "csr"), "split(i, i0, i1, 4)"));
  EXPECT_TRUE(contains(rows, "split(i, i0, i1, 4): i = i0 * 4 + i1")) << rows;
  std::string denseBound = decisionsOf(withSchedule(withFormat(kSpmv, "csr"), "bound(i, ib, 13, MaxExact)"));
  EXPECT_TRUE(contains(denseBound, "bound(i, ib, 13, MaxExact): ib runs to 13, which must be the dimension of i"))
      << denseBound;
}

}  // namespace
}  // namespace tcc::test
