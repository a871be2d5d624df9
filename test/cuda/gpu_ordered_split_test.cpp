// The nonzero split in one order (fp strict's split of the default CSR
// SpMM; orderedSplitSums in gpu_spmm_mappings.h) without a GPU:
//  - the rule picks it under fp strict exactly where fp fast picks the
//    atomic split, and `tcc explain` says which and why;
//  - its kernels hold no atomic addition and compile with NVRTC;
//  - run serially (the lowered IR, and the kernels as the CUDA backend
//    prints them) on matrices with long rows (adder_dcop_05, mbeacxc, one
//    drawn row crossing many shares, a single row, shares of 32 on 70000
//    rows), it matches the dense reference and has the bits of the CPU's
//    sums in the split's order (ordered_split_reference.h);
//  - with every GPU loop's iterations taken last first (another order of
//    the warps), the bits do not change; the atomic split's do.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda_lowering.h"
#include "dense_of.h"
#include "ordered_split_reference.h"
#include "serial_gpu_loops.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

using lowering::NonzeroSplits;
using lowering::SpmmKernel;

constexpr const char* kSpmm = kCsrSpmmFloat32;

// Whether `a` and `b` hold the same bits; where not, the first entry that
// differs is reported.
::testing::AssertionResult sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " entries against " << b.size();
  for (size_t k = 0; k < a.size(); ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(double)) != 0)
      return ::testing::AssertionFailure() << "entry " << k << ": " << std::hexfloat << a[k] << " against " << b[k];
  return ::testing::AssertionSuccess();
}

lowering::SpmmStatistics statisticsOf(const rt::Coo& a, int32_t columns) {
  std::vector<int64_t> lengths(a.dims[0], 0);
  for (size_t e = 0; e < a.nnz(); ++e) ++lengths[a.coords[0][e]];
  int64_t longest = 0;
  for (int64_t length : lengths) longest = std::max(longest, length);
  return {a.dims[0], static_cast<int64_t>(a.nnz()), longest, columns};
}

SpmmKernel inOneOrder(SpmmKernel kernel) {
  if (kernel == SpmmKernel::Split16) return SpmmKernel::OrderedSplit16;
  if (kernel == SpmmKernel::Split32) return SpmmKernel::OrderedSplit32;
  return kernel;
}

TEST(OrderedSplit, StrictPicksTheSplitInOneOrderWhereFastPicksTheAtomicOne) {
  int splits = 0, checked = 0;
  for (int64_t rows : {1, 100, 492, 1813, 4096, 70000, 1048576})
    for (int64_t mean : {1, 2, 6, 64, 101, 300})
      for (int64_t longest : {1, 32, 300, 484, 1310, 23401})
        for (int64_t columns : {1, 32, 33, 128, 256}) {
          const lowering::SpmmStatistics statistics{rows, rows * mean + longest, longest, columns};
          const SpmmKernel fast = lowering::spmmKernelRule(statistics, NonzeroSplits::Atomic);
          const SpmmKernel strict = lowering::spmmKernelRule(statistics, NonzeroSplits::InOneOrder);
          EXPECT_EQ(toString(strict), toString(inOneOrder(fast)));
          splits += lowering::isOrderedSplit(strict);
          ++checked;
        }
  EXPECT_GT(splits, 50);
  EXPECT_GT(checked, 1000);
  // The benchmark's skewed inputs (bench/cuda/RESULTS.md).
  EXPECT_EQ(lowering::spmmKernelRule({1813, 11097, 1310, 32}, NonzeroSplits::InOneOrder), SpmmKernel::OrderedSplit16);
  EXPECT_EQ(lowering::spmmKernelRule({492, 49920, 484, 32}, NonzeroSplits::InOneOrder), SpmmKernel::OrderedSplit16);
  EXPECT_EQ(lowering::spmmKernelRule({1048576, 8175461, 23401, 32}, NonzeroSplits::InOneOrder),
            SpmmKernel::OrderedSplit32);
}

TEST(OrderedSplit, ExplainSaysWhichSplitAndWhy) {
  Lowered strict = lowerProgram(Program::fromText(kSpmm, "spmm.tc"));
  const std::string decisions = decisionsOf(strict);
  EXPECT_TRUE(contains(decisions, "per input: nonzero split in one order, shares of 32 where A_long_row_split and "
                                  "nonzeros > 131072; nonzero split in one order, shares of 16 where "
                                  "A_long_row_split or A_few_long_rows;")) << decisions;
  EXPECT_TRUE(contains(decisions, "(fp strict: the nonzero splits in one order, where fp fast takes the ones whose "
                                  "atomic additions come in another order each run)")) << decisions;
  EXPECT_TRUE(contains(decisions, "per input, nonzero split in one order, shares of 16: nonzero-split GPU mapping "
                                  "in one order (fp strict): A's nonzeros in shares of 16, a warp per (share, tile "
                                  "of 32 k), a column per lane, whatever rows they belong to; each lane sums a row's "
                                  "segment of its share in a register")) << decisions;
  EXPECT_TRUE(contains(decisions, "in share order, and zeroes the empty rows: the same order, and bits, every run"))
      << decisions;
  EXPECT_FALSE(contains(decisions, "atomic addition\n")) << decisions;
  // Three tiles, and each split's two kernels (the shares, then the rows
  // that cross them); no atomic addition anywhere.
  ASSERT_EQ(strict.gpuFunctions.at(0).kernels.size(), 7u);
  EXPECT_FALSE(contains(strict.cudaKernels, "atomicAdd(")) << strict.cudaKernels;
  EXPECT_EQ(count(strict.cuda, "C_share_slots16"), count(strict.cuda, "C_share_slots32")) << strict.cuda;
  EXPECT_TRUE(contains(strict.cuda, "the rows that cross shares: the slots of their later shares, in share order"))
      << strict.cuda;
  // fp fast keeps the atomic splits.
  CompileOptions fast;
  fast.floatingPoint = frontend::FloatingPointMode::Fast;
  Lowered atomic = lowerProgram(Program::fromText(kSpmm, "spmm.tc"), fast);
  EXPECT_EQ(atomic.gpuFunctions.at(0).kernels.size(), 5u);
  EXPECT_FALSE(contains(atomic.cuda, "share_slots")) << atomic.cuda;
  EXPECT_FALSE(contains(decisionsOf(atomic), "in one order")) << decisionsOf(atomic);
}

// The serial runs print the host part's rule for the CPU: its reads of
// A's pos (the nonzeros) must index the array, not a cast of an entry (it
// read nonzeros / 8, and ran the tiles where the rule names a split).
TEST(OrderedSplit, TheSerialHostPartReadsThePosArray) {
  Lowered strict = lowerProgram(Program::fromText(kSpmm, "spmm.tc"));
  const std::string source = serialCppOf(strict.statements.at(0).function);
  EXPECT_TRUE(contains(source, "int64_t A_nonzeros = (((int64_t*)A->levels[1].pos)[(int64_t)(A->dims[0])] - "
                               "((int64_t*)A->levels[1].pos)[0LL]);")) << source;
}

TEST(OrderedSplit, TheStrictKernelsCompileWithNvrtc) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  Lowered strict = lowerProgram(Program::fromText(kSpmm, "spmm.tc"));
  std::string cubin = rt::cuda::compileToCubin(strict.cudaKernels, "sm_90", "ordered_split.cu", false);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
}

struct SplitInput {
  std::string name;
  rt::Coo matrix;
  std::vector<int32_t> columns;
  SpmmKernel kernel;  // the one the strict rule names
};

std::vector<SplitInput> splitInputs() {
  std::map<std::string, int32_t> sizes;
  return {{"adder_dcop_05: one row of 1310 among rows of 6", realMatrix("adder_dcop_05.mtx", sizes), {1, 33},
           SpmmKernel::OrderedSplit16},
          {"mbeacxc: 492 rows of 101", realMatrix("mbeacxc.mtx", sizes), {33}, SpmmKernel::OrderedSplit16},
          {"3000 x 2500, rows of about 2, one full row (157 shares)", drawnMatrix(3000, 2500, 0.0008, 13, 1717, 31),
           {1, 33, 100}, SpmmKernel::OrderedSplit16},
          {"a single row of about 150", drawnMatrix(1, 300, 0.5, 0, -1, 32), {1, 33}, SpmmKernel::OrderedSplit16},
          {"600 x 700, one full row, empty rows", drawnMatrix(600, 700, 0.003, 11, 300, 33), {1, 33, 128},
           SpmmKernel::OrderedSplit16}};
}

// C = A B summed over A's entries (`a` as the kernel reads it), in double.
std::vector<double> sumsOverNonzeros(const rt::Coo& a, const std::vector<double>& b, int32_t columns) {
  std::vector<double> sums(size_t(a.dims[0]) * columns, 0.0);
  for (size_t e = 0; e < a.nnz(); ++e)
    for (int32_t c = 0; c < columns; ++c)
      sums[size_t(a.coords[0][e]) * columns + c] += a.values[e] * b[size_t(a.coords[1][e]) * columns + c];
  return sums;
}

// The statement's IR run serially three ways: forward, its GPU loops'
// iterations last first, and the kernels as the CUDA backend prints them.
struct SerialRuns {
  SerialRuns(const CompiledStatement& statement, const lowering::GpuFunction& kernels)
      : forward(statement), reversed(statement, GpuLoopOrder::Reversed), printed(statement, kernels) {}
  // Expects each run's bits to be `inOrder`'s; returns the forward run's values.
  // The output is given filled with NaN: the split writes every entry
  // (an empty row's too), so that no one needs to zero it first.
  std::vector<double> expectBits(const std::map<std::string, Tensor>& inputs, const std::vector<int32_t>& dims,
                                 const std::vector<double>& inOrder) const {
    std::vector<double> values = rt::toDense(forward.run(inputs, dims, std::nan("")));
    EXPECT_TRUE(sameBits(values, inOrder)) << "not the bits of the split's order";
    EXPECT_TRUE(sameBits(rt::toDense(reversed.run(inputs, dims)), inOrder)) << "the warps' order changed the bits";
    EXPECT_TRUE(sameBits(rt::toDense(printed.run(inputs, dims)), inOrder)) << "the printed kernels differ";
    return values;
  }
  SerialGpuIr forward, reversed, printed;
};

TEST(OrderedSplit, RunSeriallyItHasTheBitsOfItsOrderInEveryWarpOrderAndMatchesTheReference) {
  Program program = Program::fromText(kSpmm, "spmm.tc");
  Lowered lowered = lowerProgram(program);
  const CompiledStatement& statement = lowered.statements.at(0);
  SerialRuns serial(statement, lowered.gpuFunctions.at(0));
  if (!serial.forward.available()) GTEST_SKIP() << "no C++ JIT here";
  uint64_t seed = 900;
  int runs = 0;
  for (const SplitInput& input : splitInputs()) {
    for (int32_t columns : input.columns) {
      SCOPED_TRACE(input.name + ", N = " + std::to_string(columns));
      ASSERT_EQ(toString(lowering::spmmKernelRule(statisticsOf(input.matrix, columns), NonzeroSplits::InOneOrder)),
                toString(input.kernel));
      BoundInputs bound;
      for (const TensorVar& parameter : statement.parameters) {
        if (parameter.name() == "A") bound.bind(parameter, input.matrix);
        if (parameter.name() == "B")
          bound.bind(parameter, rt::randomUniform({input.matrix.dims[1], columns}, 1.0, ++seed));
      }
      const std::vector<int32_t> dims{input.matrix.dims[0], columns};
      const rt::Coo aRead = rt::unpack(bound.tensors.at("A"));
      const std::vector<double>& b = bound.dense.at("B").values;
      std::vector<double> values =
          serial.expectBits(bound.tensors, dims, orderedSplitSums(aRead, b, columns, lowering::shareOf(input.kernel)));
      // The dense reference where it walks little, else the sums over A's entries.
      if (int64_t(input.matrix.dims[0]) * input.matrix.dims[1] * columns <= 20000000)
        expectClose(values, referenceOf(program, bound, statement.computedOutput), 2e-4, "vs dense reference");
      else
        expectClose(values, sumsOverNonzeros(aRead, b, columns), 2e-4, "vs the sums over the nonzeros");
      ++runs;
    }
  }
  EXPECT_EQ(runs, 11);
}

// Shares of 32 need more than 131072 nonzeros: 70000 rows of about 2, one
// of 300, against the sums over the nonzeros and the split's order.
TEST(OrderedSplit, SharesOf32RunSeriallyHaveTheBitsOfTheirOrder) {
  Program program = Program::fromText(kSpmm, "spmm.tc");
  Lowered lowered = lowerProgram(program);
  const CompiledStatement& statement = lowered.statements.at(0);
  SerialRuns serial(statement, lowered.gpuFunctions.at(0));
  if (!serial.forward.available()) GTEST_SKIP() << "no C++ JIT here";
  rt::Coo a = drawnMatrix(70000, 300, 0.008, 13, 69998, 21);
  for (int32_t columns : {1, 33}) {
    SCOPED_TRACE("N = " + std::to_string(columns));
    ASSERT_EQ(lowering::spmmKernelRule(statisticsOf(a, columns), NonzeroSplits::InOneOrder),
              SpmmKernel::OrderedSplit32);
    BoundInputs bound;
    for (const TensorVar& parameter : statement.parameters) {
      if (parameter.name() == "A") bound.bind(parameter, a);
      if (parameter.name() == "B") bound.bind(parameter, rt::randomUniform({300, columns}, 1.0, 22 + columns));
    }
    const rt::Coo aRead = rt::unpack(bound.tensors.at("A"));
    const std::vector<double>& b = bound.dense.at("B").values;
    std::vector<double> values =
        serial.expectBits(bound.tensors, {70000, columns}, orderedSplitSums(aRead, b, columns, 32));
    expectClose(values, sumsOverNonzeros(aRead, b, columns), 2e-4, "vs the sums over the nonzeros");
  }
}

// The check above can see an order: the atomic split (fp fast), its warps
// taken last first, adds adder_dcop_05's long row in another order, and
// its bits change.
TEST(OrderedSplit, TheAtomicSplitsBitsChangeWithTheWarpOrder) {
  CompileOptions fast;
  fast.floatingPoint = frontend::FloatingPointMode::Fast;
  Program program = Program::fromText(kSpmm, "spmm.tc");
  Lowered lowered = lowerProgram(program, fast);
  const CompiledStatement& statement = lowered.statements.at(0);
  if (!SerialGpuIr(statement).available()) GTEST_SKIP() << "no C++ JIT here";
  std::map<std::string, int32_t> sizes;
  rt::Coo a = realMatrix("adder_dcop_05.mtx", sizes);
  ASSERT_EQ(lowering::spmmKernelRule(statisticsOf(a, 33)), SpmmKernel::Split16);
  BoundInputs bound;
  for (const TensorVar& parameter : statement.parameters) {
    if (parameter.name() == "A") bound.bind(parameter, a);
    if (parameter.name() == "B") bound.bind(parameter, rt::randomUniform({a.dims[1], 33}, 1.0, 5));
  }
  std::vector<double> forward = rt::toDense(SerialGpuIr(statement).run(bound.tensors, {a.dims[0], 33}));
  std::vector<double> reversed =
      rt::toDense(SerialGpuIr(statement, GpuLoopOrder::Reversed).run(bound.tensors, {a.dims[0], 33}));
  EXPECT_FALSE(sameBits(forward, reversed));
  expectClose(reversed, forward, 2e-4, "reversed vs forward");
}

// Other products of a CSR A with dense operands take the split in one
// order too (float64, a row scale x(i), B read transposed): run serially on
// adder_dcop_05 (the rule's split), each matches the dense reference and
// keeps its bits when the warps run last first.
TEST(OrderedSplit, OtherProductsOfACsrMatrixRunSeriallyInOneOrder) {
  const std::vector<std::pair<const char*, std::string>> programs{
      {"float64", "tensor C(I, K) : dense of float64\ntensor A(I, J) : csr of float64\n"
                  "tensor B(J, K) : dense of float64\nC(i, k) = A(i, j) * B(j, k)\n"},
      {"a row scale", "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\ntensor x(I) : dense\n"
                      "C(i, k) = x(i) * A(i, j) * B(j, k)\n"},
      {"B transposed", "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(K, J) : dense\n"
                       "C(i, k) = A(i, j) * B(k, j)\n"}};
  for (const auto& [name, dsl] : programs) {
    SCOPED_TRACE(name);
    Program program = Program::fromText(dsl + "target cuda\n", "spmm.tc");
    Lowered lowered = lowerProgram(program);
    const CompiledStatement& statement = lowered.statements.at(0);
    ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 7u);
    EXPECT_FALSE(contains(lowered.cudaKernels, "atomicAdd(")) << lowered.cudaKernels;
    SerialGpuIr forward(statement), reversed(statement, GpuLoopOrder::Reversed);
    if (!forward.available()) GTEST_SKIP() << "no C++ JIT here";
    std::map<std::string, int32_t> sizes{{"K", 5}};  // (the dense reference walks I x J x K)
    uint64_t seed = 40;
    BoundInputs bound = drawnInputs(statement.parameters, statement.computedOutput,
                                    {name, sizes, 1.0, "adder_dcop_05.mtx"}, sizes, seed);
    const std::vector<int32_t> dims = dimsOf(statement.computedOutput, sizes);
    std::vector<double> values = rt::toDense(forward.run(bound.tensors, dims, std::nan("")));
    EXPECT_TRUE(sameBits(rt::toDense(reversed.run(bound.tensors, dims)), values));
    expectClose(values, referenceOf(program, bound, statement.computedOutput), toleranceOf(statement.computedOutput),
                "vs dense reference");
  }
}

}  // namespace
}  // namespace tcc::test
