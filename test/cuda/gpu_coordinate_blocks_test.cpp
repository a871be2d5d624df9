// split, divide and bound of a variable an ordered compressed level
// iterates, on the cuda target: the loop over the inner part iterates the
// coordinates the level stores in its block, the block's first and last
// positions found by binary search, as on the cpu target, inside the GPU
// loops (the outer part on blocks, warps or threads); the inner part may be
// a GPU loop itself, whose threads share the block's coordinates.
// Checked here without a GPU: the lowered IR with its GPU loops run one
// iteration after another (printed by the C++ backend) against the dense
// reference, for programs/coordinate_blocks_*.tc (which run on a GPU in
// gpu_programs_test.cpp) and a few more, on random inputs (a single entry,
// empty rows, a band of rows and columns with no entries, so whole blocks
// are empty, sizes no factor divides) and real matrices as A.
#include <gtest/gtest.h>

#include <algorithm>

#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "dense_of.h"
#include "serial_gpu_loops.h"
#include "tcc/runtime/random.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

struct Inputs {
  std::string name;
  int32_t rows, columns;  // I, J (a real matrix A gives both)
  double density;
  int emptyEvery = 0;                  // every emptyEvery-th first coordinate left empty
  std::pair<int32_t, int32_t> band{};  // coordinates in [first, second) of any mode left empty
  std::string realMatrix;
};

std::vector<Inputs> inputSets() {
  return {{"one entry", 1, 1, 1.0},
          {"257 x 130, every 7th row empty, no entries in 16..47", 257, 130, 0.15, 7, {16, 48}},
          {"a single row", 1, 300, 0.3},
          {"1000 x 999, long rows", 1000, 999, 0.2},
          {"494_bus", 0, 0, 0.05, 0, {}, "494_bus.mtx"},
          {"bcsstk13", 0, 0, 0.002, 0, {}, "bcsstk13.mtx"}};
}

rt::Coo filtered(const rt::Coo& all, const Inputs& drawn) {
  return withoutEntries(all, [&](const std::vector<int32_t>& at) {
    if (drawn.emptyEvery > 0 && at[0] % drawn.emptyEvery == 0) return true;
    return std::any_of(at.begin(), at.end(),
                       [&](int32_t c) { return c >= drawn.band.first && c < drawn.band.second; });
  });
}

// Lowers `dsl` for the cuda target, runs its IR with the GPU loops serial
// on each input set and compares with the reference; returns the sets run.
int expectSerialGpuIrMatchesReference(const std::string& dsl, const std::vector<Inputs>& sets) {
  Program program = Program::fromText(dsl, "test.tc");
  Lowered lowered = lowerForCuda(dsl);
  const CompiledStatement& statement = lowered.statements.at(0);
  SerialGpuIr serial(statement, /*serialSums=*/true);
  if (!serial.available()) {
    ADD_FAILURE() << "no C++ JIT here";
    return 0;
  }
  const TensorVar& output = statement.computedOutput;
  uint64_t seed = 900;
  int checked = 0;
  for (const Inputs& drawn : sets) {
    SCOPED_TRACE(drawn.name);
    std::optional<rt::Coo> matrix;
    std::map<std::string, int32_t> sizes{{"I", drawn.rows}, {"J", drawn.columns}, {"K", 7}};
    if (!drawn.realMatrix.empty()) matrix = realMatrix(drawn.realMatrix, sizes);
    BoundInputs inputs;
    for (const TensorVar& parameter : statement.parameters) {
      if (parameter == output) continue;
      std::vector<int32_t> dims = dimsOf(parameter, sizes);
      inputs.bind(parameter, matrix && parameter.name() == "A" ? *matrix
                             : parameter.format().isAllDense()
                                 ? rt::randomUniform(dims, 1.0, ++seed)
                                 : filtered(rt::randomUniform(dims, drawn.density, ++seed), drawn));
    }
    std::vector<double> expected = referenceOf(program, inputs, output);
    // Never compared on an all-zero result.
    EXPECT_TRUE(anyNonZero(expected));
    serial.expectMatches(inputs.tensors, dimsOf(output, sizes), expected);
    ++checked;
  }
  return checked;
}

class GpuCoordinateBlockPrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCoordinateBlockPrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  std::string dsl = programText(GetParam());
  EXPECT_EQ(expectSerialGpuIrMatchesReference(dsl, inputSets()), static_cast<int>(inputSets().size()));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuCoordinateBlockPrograms,
                         ::testing::ValuesIn(programsNamed("coordinate_blocks_")),
                         [](const auto& info) { return info.param; });

std::string withSchedule(const std::string& statement, const std::string& schedule) {
  return statement + "target cuda\nschedule {\n" + schedule + "\n}\n";
}

const std::string kSpmv = "tensor y(I) : dense\ntensor A(I, J) : FORMAT\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n";

std::string withFormat(std::string program, const std::string& format) {
  return program.replace(program.find("FORMAT"), 6, format);
}

// More shapes than the GPU runs: the outer part on each GPU unit, the
// inner part serial or shared by threads, over rows and columns, a bound,
// unions, products, sparse vectors (their intersection in blocks) and SpMM.
TEST(GpuCoordinateBlocks, SchedulesOverSparselyIteratedVariablesMatchTheReference) {
  struct Case {
    std::string program, schedule;
  };
  const std::string dcsr = withFormat(kSpmv, "dcsr"), csr = withFormat(kSpmv, "csr");
  const std::string csrUnion = "tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : dcsr\n"
                               "Y(i, j) = A(i, j) + B(i, j)\n";
  const std::string dot = "tensor a : dense\ntensor b(J) : sparse\ntensor c(J) : sparse\na = b(j) * c(j)\n";
  const std::string spmm = "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\n"
                           "C(i, k) = A(i, j) * B(j, k)\n";
  const std::string sparseOut = "tensor Y(I, J) : csr\ntensor A(I, J) : dcsr\ntensor B(I, J) : csr\n"
                                "Y(i, j) = A(i, j) + B(i, j)\n";
  const std::vector<Case> cases{
      {csr, "split(j, j0, j1, 4)\nparallelize(i, GPUThread, NoRaces)"},
      {csr, "split(j, j0, j1, 1)\nparallelize(i, GPUWarp, NoRaces)"},
      {csr, "divide(j, j0, j1, 5)\nparallelize(i, GPUBlock, NoRaces)"},
      {csr, "bound(j, jb, 5000, MaxConstraint)\nparallelize(i, GPUThread, NoRaces)"},
      {dcsr, "split(i, i0, i1, 8)\nparallelize(i0, GPUThread, NoRaces)"},
      {dcsr, "split(i, i0, i1, 16)\nparallelize(i0, GPUWarp, NoRaces)\nparallelize(i1, GPUThread, NoRaces)"},
      {dcsr, "divide(i, i0, i1, 7)\nparallelize(i0, GPUBlock, NoRaces)\nparallelize(i1, GPUWarp, NoRaces)"},
      {dcsr, "split(i, i0, i1, 3)\nsplit(j, j0, j1, 2)\nparallelize(i0, GPUThread, NoRaces)"},
      {dcsr, "split(i, i0, i1, 4)"},  // the default mapping: a warp per block, its lanes over i1
      {csr, "split(j, j0, j1, 4)"},   // the default mapping: a thread per row
      {dcsr, "bound(i, ib, 5000, MaxConstraint)\nparallelize(ib, GPUThread, NoRaces)"},
      {csrUnion, "split(j, j0, j1, 6)\nparallelize(i, GPUThread, NoRaces)"},
      {csrUnion, "split(i, i0, i1, 32)\nparallelize(i0, GPUBlock, NoRaces)\nparallelize(i1, GPUThread, NoRaces)"},
      {dot, "split(j, j0, j1, 16)\nparallelize(j0, GPUThread, Atomics)"},
      {spmm, "split(j, j0, j1, 4)\nparallelize(i, GPUThread, NoRaces)"},
      // A CSR output's rows, counted then filled, by the GPU iteration of
      // each row of a block.
      {sparseOut, "split(i, i0, i1, 8)\nparallelize(i0, GPUThread, NoRaces)"},
      {sparseOut, "split(i, i0, i1, 8)\nparallelize(i0, GPUBlock, NoRaces)\nparallelize(i1, GPUThread, NoRaces)"},
      {sparseOut, "split(j, j0, j1, 3)\nparallelize(i, GPUThread, NoRaces)"},
  };
  // (Vectors over J, dense enough that two of them intersect.)
  std::vector<Inputs> sets = inputSets();
  sets.erase(sets.begin() + 2);  // a single row: b and c of 300 may miss each other
  for (const Case& drawn : cases) {
    std::string dsl = withSchedule(drawn.program, drawn.schedule);
    SCOPED_TRACE(dsl);
    std::vector<Inputs> used = sets;
    if (drawn.program == dot)
      for (auto& set : used) set.density = std::max(set.density, 0.3);
    EXPECT_EQ(expectSerialGpuIrMatchesReference(dsl, used), static_cast<int>(used.size()));
  }
}

// Each block searches its first position in the level, on the GPU as on
// the CPU: no loop over every coordinate of the block.
TEST(GpuCoordinateBlocks, EachBlockBinarySearchesItsRangeInsideTheGpuLoop) {
  Lowered rows = lowerForCuda(withSchedule(
      withFormat(kSpmv, "dcsr"),
      "split(i, i0, i1, 32)\nparallelize(i0, GPUBlock, NoRaces)\nparallelize(i1, GPUThread, NoRaces)"));
  const std::string& kernels = rows.cudaKernels;
  EXPECT_TRUE(contains(kernels, "tcc_lower_bound(A1_crd")) << kernels;
  EXPECT_TRUE(contains(kernels, "int64_t i_block = ((int64_t)(i0) * 32LL);")) << kernels;
  // Its threads share the positions the block searched.
  EXPECT_TRUE(contains(kernels, "pA1 = pA1_owned + (int64_t)(threadIdx.x); pA1 < pA1_end;")) << kernels;
  EXPECT_FALSE(contains(kernels, "i1 <")) << kernels;
  Lowered columns = lowerForCuda(withSchedule(withFormat(kSpmv, "csr"), "split(j, j0, j1, 4)\n"
                                                                         "parallelize(i, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(columns.cudaKernels, "tcc_lower_bound(A2_crd")) << columns.cudaKernels;
}

// Refusals in the loop over a block's coordinates name the command's
// variable and point at its parallelize, as for a dense block.
TEST(GpuCoordinateBlocks, RefusalsInsideTheBlockPointAtTheInnerPartsParallelize) {
  struct Case {
    std::string schedule, message;
    int line;
  };
  const std::vector<Case> cases{
      {"split(j, j0, j1, 4)\nparallelize(i, GPUBlock, NoRaces)\nparallelize(j1, GPUThread, NoRaces)",
       "parallelize(j1, GPUThread, NoRaces): j is summed into y, so GPU iterations race on its entries", 9},
      {"bound(j, jb, 40, MaxConstraint)\nparallelize(i, GPUThread, NoRaces)\nparallelize(jb, GPUThread, NoRaces)",
       "parallelize(jb, GPUThread, NoRaces): GPU units nest as GPUBlock, then GPUWarp, then GPUThread", 9},
      {"split(j, j0, j1, 4)\nparallelize(i, GPUBlock, NoRaces)\nparallelize(j1, CPUThread, NoRaces)",
       "parallelize(j1, CPUThread, NoRaces): CPU parallel units need the cpu target", 9},
  };
  for (const Case& drawn : cases) {
    std::string dsl = withSchedule(withFormat(kSpmv, "csr"), drawn.schedule);
    try {
      lowerForCuda(dsl);
      ADD_FAILURE() << "not refused: " << dsl;
    } catch (const frontend::DiagnosticError& error) {
      EXPECT_EQ(error.diagnostics().at(0).location.line, drawn.line) << error.what();
      EXPECT_TRUE(contains(error.what(), drawn.message)) << error.what();
    }
  }
}

// A thread loop whose lanes' sum is reduced inside a serial loop of its
// warp or block (a block of columns at a time) runs once per iteration:
// each time the lanes start from zero and their sum is added to the total
// they held before (as every lanes' sum is printed). (Summing the running total again would count the
// blocks before 32 times over.)
TEST(GpuCoordinateBlocks, ALanesSumInsideASerialLoopIsAddedToTheTotalBefore) {
  for (const std::string format : {"csr", "dense"}) {
    for (const std::string unit : {"GPUWarp", "GPUBlock"}) {
      Lowered lowered = lowerForCuda(withSchedule(withFormat(kSpmv, format),
                                                  "split(j, j0, j1, 64)\nparallelize(i, " + unit +
                                                      ", NoRaces)\nparallelize(j1, GPUThread, ParallelReduction)"));
      const std::string& kernels = lowered.cudaKernels;
      const std::string sum = unit == "GPUWarp" ? "tcc_warp_sum(ty)" : "tcc_block_sum(ty)";
      EXPECT_TRUE(contains(kernels, "double ty_before = ty;\n        ty = 0;\n")) << kernels;
      EXPECT_TRUE(contains(kernels, "ty = ty_before + " + sum + ";")) << kernels;
      EXPECT_FALSE(contains(kernels, "ty = " + sum)) << kernels;
    }
  }
  // A thread loop directly inside the warp sums once, onto the zero before.
  Lowered once = lowerForCuda(withSchedule(withFormat(kSpmv, "csr"), "parallelize(i, GPUWarp, NoRaces)\n"
                                                                      "parallelize(j, GPUThread, ParallelReduction)"));
  EXPECT_TRUE(contains(once.cudaKernels, "ty = ty_before + tcc_warp_sum(ty);")) << once.cudaKernels;
}

// Atomics on the lanes of a sum that a serial loop around them keeps in a
// scalar temporary: the updates go to each lane's registers, so the lanes'
// parts are added across the warp or block as under ParallelReduction
// (before, each lane kept its own part and the first lane's was stored).
TEST(GpuCoordinateBlocks, LanesAtomicsIntoASumsTemporaryAreAddedAcrossTheLanes) {
  for (const std::string unit : {"GPUWarp", "GPUBlock"}) {
    Lowered lowered = lowerForCuda(withSchedule(withFormat(kSpmv, "dense"), "split(j, j0, j1, 64)\nparallelize(i, " +
                                                                                 unit + ", NoRaces)\nparallelize(j1, "
                                                                                 "GPUThread, Atomics)"));
    const std::string sum = unit == "GPUWarp" ? "tcc_warp_sum(ty)" : "tcc_block_sum(ty)";
    EXPECT_TRUE(contains(lowered.cudaKernels, "ty = ty_before + " + sum + ";")) << lowered.cudaKernels;
  }
  // A warp loop's iterations cannot add their parts that way: refused.
  try {
    lowerForCuda(withSchedule(withFormat(kSpmv, "dense"), "split(j, j0, j1, 64)\nparallelize(i, GPUBlock, NoRaces)\n"
                                                          "parallelize(j1, GPUWarp, Atomics)"));
    FAIL() << "lowered";
  } catch (const std::exception& error) {
    EXPECT_TRUE(contains(error.what(), "where atomic updates reach no other thread")) << error.what();
  }
}

}  // namespace
}  // namespace tcc::test
