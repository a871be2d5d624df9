// On a GPU (label gpu): each of test/cuda/programs/*.tc against the dense
// reference, on random inputs (a single row, empty rows, sizes past a warp
// and a block, long rows) and on real matrices as A. nested_*: sums nested
// in the expression (`y(i) = A(i,j) * x(j) + b(i)`) in scalar temporaries,
// registers of the threads that own the output's iteration, summed across
// a warp's lanes or a block's threads through shuffles (and shared memory).
// pos_union_*: pos over A in a sum whose other operands have entries A
// lacks, the rest computed after the positions (in the same threads, or by
// a kernel of its own). scalars_only: no loop, one GPU thread.
// coordinate_blocks_*: split, divide or bound of a variable an ordered
// compressed level iterates, each block's first and last positions found
// by binary search inside the GPU loops (its threads may share them).
// units_*: GPU units a schedule gives out of order, exchanged (a block or
// warp loop inside a thread loop) or collapsed (two loops on one unit with
// nothing between, one loop over their fuse). default_reductions_*: no
// schedule where the outermost loop sums into a dense output (an index of
// the output brought outward; a scalar summed over blocks, or in one block
// under fp strict; other outputs a thread per iteration adding atomically,
// or one thread under fp strict). Integer inputs take whole values from
// -9 to 9 (BoundInputs::bind).
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "cuda_programs.h"
#include "dense_of.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

// Sizes of the programs' symbolic dimensions, and how the sparse inputs
// are drawn; a real matrix, when named, is A (its shape gives I and J).
struct Inputs {
  std::string name;
  std::map<std::string, int32_t> sizes;
  double density = 0.1;  // of the inputs with a sparse level
  int emptyEvery = 0;    // every emptyEvery-th first coordinate left empty there
  std::string realMatrix;
};

std::vector<Inputs> inputs() {
  std::vector<Inputs> all;
  all.push_back({"one entry each", {{"I", 1}, {"J", 1}, {"K", 1}, {"L", 1}}, 1.0, 0, ""});
  all.push_back({"a single row", {{"I", 1}, {"J", 300}, {"K", 70}, {"L", 9}}, 0.5, 0, ""});
  all.push_back({"257 rows, empty rows", {{"I", 257}, {"J", 130}, {"K", 33}, {"L", 7}}, 0.05, 7, ""});
  all.push_back({"1000 rows, long rows", {{"I", 1000}, {"J", 999}, {"K", 40}, {"L", 3}}, 0.2, 0, ""});
  all.push_back({"3001 rows, sparse, empty rows", {{"I", 3001}, {"J", 2000}, {"K", 31}, {"L", 2}}, 0.002, 5, ""});
  for (const char* real : {"494_bus.mtx", "cage5.mtx", "Erdos971.mtx", "adder_dcop_05.mtx", "bcsstk13.mtx"})
    all.push_back({real, {{"K", 37}, {"L", 3}}, 0.05, 0, real});
  return all;
}

rt::Coo withoutFirstCoordinates(const rt::Coo& all, int every) {
  if (every <= 0) return all;
  return withoutEntries(all, [every](const std::vector<int32_t>& at) { return at[0] % every == 0; });
}

class GpuPrograms : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuPrograms, MatchTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  Kernel kernel = compile(program);
  ASSERT_FALSE(kernel.source().empty());
  const TensorVar& output = program.statements()[0].as<ir::AssignmentNode>()->lhs.tensor();
  const TensorVar* matrixA = program.syntax().findTensor("A");
  const bool realInputs = matrixA && matrixA->order() == 2;
  uint64_t seed = 100;
  int ran = 0, real = 0;
  for (const Inputs& drawn : inputs()) {
    if (!drawn.realMatrix.empty() && !realInputs) continue;
    SCOPED_TRACE(GetParam() + ", " + drawn.name);
    std::map<std::string, int32_t> sizes = drawn.sizes;
    std::optional<rt::Coo> matrix;
    if (!drawn.realMatrix.empty()) matrix = realMatrix(drawn.realMatrix, sizes);
    // The reference walks every index variable's range: keep it quick.
    std::set<std::string> symbols;
    for (const TensorVar& tensor : program.tensors())
      for (int mode = 0; mode < tensor.order(); ++mode) symbols.insert(tensor.dimension(mode).symbol());
    double points = 1;
    for (const auto& symbol : symbols) points *= sizes.at(symbol);
    if (points > 5e7) continue;
    BoundInputs inputs;
    for (const TensorVar& tensor : program.tensors()) {
      if (tensor == output) continue;
      std::vector<int32_t> dims = dimsOf(tensor, sizes);
      rt::Coo entries;
      if (matrix && tensor.name() == "A") {
        entries = *matrix;
      } else if (tensor.format().isAllDense()) {
        entries = rt::randomUniform(dims, 1.0, ++seed);
      } else {
        entries = withoutFirstCoordinates(rt::randomUniform(dims, drawn.density, ++seed), drawn.emptyEvery);
      }
      inputs.bind(tensor, entries);
    }
    std::vector<double> expected = referenceOf(program, inputs, output);
    // Never compared on an all-zero result.
    ASSERT_TRUE(anyNonZero(expected));
    std::vector<double> actual = rt::toDense(kernel.run(inputs.tensors).at(output.name()));
    if (expectClose(actual, expected, toleranceOf(output), "GPU vs reference") > 0) {
      ADD_FAILURE() << kernel.source();
      return;
    }
    ++ran;
    real += matrix.has_value();
  }
  // Random and real inputs both ran (the largest are left to the smaller
  // programs, so one over three index sizes runs one fewer; a program
  // without a matrix A takes random inputs alone).
  EXPECT_GE(ran, 4);
  EXPECT_GE(real, realInputs ? 2 : 0);
  std::cout << GetParam() << ": " << ran << " inputs, " << real << " of them real matrices\n";
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuPrograms, ::testing::ValuesIn(programsNamed()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
