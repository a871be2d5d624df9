// fp strict on the cuda target, without a GPU: every floating-point product
// in the kernels tcc prints is __fmul_rn / __dmul_rn (never contracted into
// an FMA, whatever flags compile the unit), and no sum the default mapping
// makes into a floating-point output adds from many threads atomically
// (the SpMM nonzero splits in one order, gpu_ordered_split_test.cpp; a
// summed term nest in one thread); fp fast keeps plain products and the atomics.
// A schedule's Atomics stay, with a line in `tcc explain`. The strict
// kernels still compile (NVRTC, --fmad=false) and, run serially, still
// compute the dense reference's function. (On a GPU,
// gpu_strict_gpu_test.cpp checks that strict results are the same bits
// every run.)
#include <gtest/gtest.h>

#include "cuda_lowering.h"
#include "serial_gpu_loops.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/ir/index_printer.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/cuda.h"

namespace tcc::test {
namespace {

struct CudaProgram {
  const char* name;
  std::string dsl;
  bool userAtomics = false;
};

const std::string kTermSums = "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
                              "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n";

std::vector<CudaProgram> programs() {
  return {{"SpMV", "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n"},
          {"SpMM", "tensor C(I, K) : dense of float32\ntensor A(I, J) : csr of float32\n"
                   "tensor B(J, K) : dense of float32\nC(i, k) = A(i, j) * B(j, k)\n"},
          {"TermSums", kTermSums},
          {"NestedSums", "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
                         "y(i) = 2 * A(i, j) * x(j) + b(i)\n"},
          {"FloatDot", "tensor Y : dense of float32\ntensor A(I) : dense of float32\ntensor B(I) : dense of float32\n"
                       "Y = A(i) * B(i)\n"},
          {"SparseDot", "tensor Y : dense\ntensor A(J) : sparse\ntensor B(J) : dense\nY = A(j) * B(j)\n"},
          {"ColumnSums", "tensor y(K) : dense\ntensor A(I, K) : csr\ntensor w(I) : dense\ny(k) = A(i, k) * w(i)\n"},
          {"UserAtomics", "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ny(j) = A(i, j) * x(i)\n"
                          "schedule {\n  parallelize(i, GPUThread, Atomics)\n}\n",
           true}};
}

Lowered lowerIn(const CudaProgram& program, frontend::FloatingPointMode mode) {
  CompileOptions options;
  options.floatingPoint = mode;
  return lowerForCuda(program.dsl, options);
}

// The floating-point products of a kernel's IR (as C types them: either
// operand float or double).
size_t floatProductsOf(const ir::imp::Stmt& loop) {
  struct Products : ir::imp::IRVisitor {
    using ir::imp::IRVisitor::visit;
    size_t count = 0;
    static bool floating(const ir::imp::Expr& e) {
      return !e.type().isPointer &&
             (e.type().kind == ir::imp::ScalarKind::Float32 || e.type().kind == ir::imp::ScalarKind::Float64);
    }
    void visit(const ir::imp::Binary* op) override {
      if (op->op == ir::imp::BinaryOp::Mul && (floating(op->a) || floating(op->b))) ++count;
      ir::imp::IRVisitor::visit(op);
    }
  } products;
  loop.accept(products);
  return products.count;
}

// The printed text of one kernel (up to the next one).
std::string kernelText(const std::string& kernels, const std::string& name) {
  size_t start = kernels.find(") " + name + "(");
  if (start == std::string::npos) return "";
  size_t end = kernels.find("extern \"C\"", start);
  return kernels.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A kernel whose GPU loop is a divide into one part: one thread, or one
// block, runs it.
bool inOnePart(const std::string& kernel) {
  for (const char* unit : {"_thread < 1", "_block < 1"})
    for (const char* end : {";", "LL;"})
      if (contains(kernel, std::string(unit) + end)) return true;
  return false;
}

size_t roundedProductsIn(const std::string& text) { return count(text, "__fmul_rn(") + count(text, "__dmul_rn("); }

class StrictCuda : public ::testing::TestWithParam<CudaProgram> {};

TEST_P(StrictCuda, EveryFloatProductOfTheKernelsIsRoundedOnItsOwn) {
  Lowered lowered = lowerIn(GetParam(), frontend::FloatingPointMode::Strict);
  size_t products = 0;
  for (const auto& function : lowered.gpuFunctions)
    for (const auto& kernel : function.kernels) {
      const size_t expected = floatProductsOf(kernel.loop);
      products += expected;
      for (const std::string* text : {&lowered.cuda, &lowered.cudaKernels})
        EXPECT_EQ(roundedProductsIn(kernelText(*text, kernel.name)), expected) << kernelText(*text, kernel.name);
    }
  EXPECT_GT(products, 0u);  // (the check means something)
  EXPECT_TRUE(contains(lowered.cuda, "// Floating-point mode: strict.")) << lowered.cuda;
}

TEST_P(StrictCuda, FastKeepsPlainProducts) {
  Lowered lowered = lowerIn(GetParam(), frontend::FloatingPointMode::Fast);
  size_t products = 0;
  for (const auto& function : lowered.gpuFunctions)
    for (const auto& kernel : function.kernels) products += floatProductsOf(kernel.loop);
  EXPECT_GT(products, 0u);
  EXPECT_EQ(roundedProductsIn(lowered.cuda), 0u) << lowered.cuda;
  EXPECT_EQ(roundedProductsIn(lowered.cudaKernels), 0u) << lowered.cudaKernels;
}

// The default mapping's atomic additions under strict come from one thread
// (a loop divided into one part) or one block adding its total once: the
// same order every run. A schedule's Atomics stay, and explain says their
// order varies.
TEST_P(StrictCuda, NoSumOfTheDefaultMappingAddsFromManyThreads) {
  Lowered lowered = lowerIn(GetParam(), frontend::FloatingPointMode::Strict);
  const std::string decisions = decisionsOf(lowered);
  const bool noted = contains(decisions, "fp strict: the schedule's Atomics on the GPU loops over");
  EXPECT_EQ(noted, GetParam().userAtomics) << decisions;
  if (GetParam().userAtomics) {
    EXPECT_TRUE(contains(lowered.cudaKernels, "atomicAdd(&y_vals[")) << lowered.cudaKernels;
    EXPECT_TRUE(contains(decisions, "the additions come in another order each run")) << decisions;
    return;
  }
  for (const auto& function : lowered.gpuFunctions)
    for (const auto& kernel : function.kernels) {
      const std::string text = kernelText(lowered.cudaKernels, kernel.name);
      if (contains(text, "atomicAdd(")) {
        EXPECT_TRUE(inOnePart(text)) << text;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Programs, StrictCuda, ::testing::ValuesIn(programs()),
                         [](const auto& info) { return std::string(info.param.name); });

// What fp fast adds atomically and strict does not: the SpMM splits, the
// summed term nest, the column sums' outer loop.
TEST(StrictCudaAtomics, FastAddsAtomicallyWhereStrictKeepsOneOrder) {
  for (const CudaProgram& program : programs()) {
    const std::string name = program.name;
    if (name != "SpMM" && name != "TermSums" && name != "ColumnSums") continue;
    SCOPED_TRACE(name);
    Lowered fast = lowerIn(program, frontend::FloatingPointMode::Fast);
    bool manyThreads = false;
    for (const auto& function : fast.gpuFunctions)
      for (const auto& kernel : function.kernels) {
        const std::string text = kernelText(fast.cudaKernels, kernel.name);
        manyThreads = manyThreads || (contains(text, "atomicAdd(") && !inOnePart(text));
      }
    EXPECT_TRUE(manyThreads) << fast.cudaKernels;
  }
}

TEST(StrictCudaAtomics, StrictSpmmChoosesAmongTheTilesAndTheSplitsInOneOrder) {
  const CudaProgram spmm = programs().at(1);
  Lowered strict = lowerIn(spmm, frontend::FloatingPointMode::Strict);
  // The three tiles, and two kernels for each split in one order.
  ASSERT_EQ(strict.gpuFunctions.at(0).kernels.size(), 7u);
  EXPECT_FALSE(contains(strict.cudaKernels, "atomicAdd(")) << strict.cudaKernels;
  const std::string decisions = decisionsOf(strict);
  EXPECT_TRUE(contains(decisions, "per input: nonzero split in one order, shares of 32 where A_long_row_split and "
                                  "nonzeros > 131072; nonzero split in one order, shares of 16 where A_long_row_split "
                                  "or A_few_long_rows; tiles of 32 where rows >= 4096 and the longest row < 1024 "
                                  "and N <= 32; tiles of 128 where rows >= 4096 and the longest row < 1024 and N > "
                                  "64; tiles of 64 otherwise"))
      << decisions;
  EXPECT_TRUE(contains(decisions, "fp strict: the nonzero splits in one order")) << decisions;
  EXPECT_TRUE(contains(strict.cuda, "A_split_in_32s")) << strict.cuda;
  EXPECT_EQ(lowerIn(spmm, frontend::FloatingPointMode::Fast).gpuFunctions.at(0).kernels.size(), 5u);
}

TEST(StrictCudaAtomics, AStrictSummedTermNestRunsInOneThreadAndMatchesTheReferenceSerially) {
  Program program = Program::fromText(kTermSums + "target cuda\n", "terms.tc");
  Lowered lowered = lowerProgram(program);
  const CompiledStatement& statement = lowered.statements.at(0);
  const std::string decisions = decisionsOf(lowered);
  EXPECT_TRUE(contains(decisions, "summed over i into the output: one GPU thread runs its loops in order (divide(i, "
                                  "i_thread, i_in, 1); fp strict: atomic additions from many GPU threads would come "
                                  "in another order each run")) << decisions;
  EXPECT_TRUE(contains(ir::toString(statement.concrete), "forall(i_thread, forall(i_in, ")) << ir::toString(statement.concrete);
  SerialGpuIr serial(statement);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  std::vector<SerialInputs> all{{"one entry each", {{"I", 1}, {"J", 1}, {"K", 1}}, 1.0, ""},
                                {"67 x 90", {{"I", 67}, {"J", 90}, {"K", 40}}, 0.1, ""},
                                {"494_bus", {{"K", 33}}, 0.1, "494_bus.mtx"},
                                {"cage5", {{"K", 7}}, 0.3, "cage5.mtx"}};
  EXPECT_EQ(expectSerialRunsMatch(program, statement, serial, all, true, 700), 4);
  SerialGpuIr kernels(statement, lowered.gpuFunctions.at(0));
  EXPECT_EQ(expectSerialRunsMatch(program, statement, kernels, all, true, 800), 4);
}

// A nest whose own workspace (a precompute inside it) is written through
// other indices still writes entries of its own: a thread per iteration.
TEST(StrictCudaAtomics, ANestWritingItsOwnEntriesThroughAWorkspaceKeepsAThreadPerIteration) {
  Lowered lowered = lowerForCuda(kTermSums + "schedule {\n  precompute(B(j, k) * z(k), k, kw)\n}\n");
  EXPECT_EQ(ir::toString(lowered.statements.at(0).concrete),
            "suchthat(sequence(forall(i_thread, forall(i_in, forall(j, y(j) += A(i,j) * x(i))), GPUThread, Atomics), "
            "forall(j, where(forall(k, y(j) += w_y(k)), forall(kw, w_y(kw) = B(j,kw) * z(kw))), GPUThread, Atomics)), "
            "divide(i, i_thread, i_in, 1))");
}

// A summed nest whose outer loop walks a sparse level (a divide would
// search it) is refused under strict, with the reason and the way out.
TEST(StrictCudaAtomics, AStrictSummedTermNestOverASparseLevelIsRefusedWithTheReason) {
  const std::string dsl = "tensor y(J) : dense\ntensor A(I, J) : dcsr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
                          "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n";
  std::string message = cudaErrorOf(dsl);
  EXPECT_TRUE(contains(message, "sums over i into its output, and i iterates a sparse level, which no divide cuts "
                                "into one GPU thread; fp strict: atomic additions")) << message;
  EXPECT_TRUE(contains(message, "parallelize(i, GPUThread, Atomics)")) << message;
  CompileOptions fast;
  fast.floatingPoint = frontend::FloatingPointMode::Fast;
  EXPECT_NO_THROW(lowerForCuda(dsl, fast));
}

// The strict kernels compile with NVRTC under --fmad=false (the runtime's
// choice for them), and the .cu with the same products under nvcc
// (cuda.NvccCompilesGenerated.*, whose programs are strict by default).
TEST(StrictCudaAtomics, StrictKernelsCompileWithNvrtc) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  for (const CudaProgram& program : programs()) {
    SCOPED_TRACE(program.name);
    Lowered lowered = lowerIn(program, frontend::FloatingPointMode::Strict);
    std::string cubin = rt::cuda::compileToCubin(lowered.cudaKernels, "sm_90", std::string(program.name) + ".cu", false);
    ASSERT_GT(cubin.size(), 4u);
    EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  }
}

}  // namespace
}  // namespace tcc::test
