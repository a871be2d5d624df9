// Kernels whose merge cases make them large (many sparse operands, nested
// sums repeated in every case) are printed as one C++ body: the copies
// printed beside it for speed alone (streaming stores for large inputs,
// fast mode's reassociated rows) would double or triple the time the C++
// compiler takes. Differential seed 7242813 compiled for over two minutes
// with its copy (128.8 s of CPU in clang -O3), 52.3 s without.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

const std::string kDeclarations = "tensor Y(I, J, K) : {dense, compressed, dense} of int32\n"
                                  "tensor A(I, J, K) : {compressed, compressed, compressed} of int32\n"
                                  "tensor B(I, J, K) : coo of int32\n"
                                  "tensor C(L, N) : {compressed, dense} of int32\n"
                                  "tensor D(I, J, K) : {compressed, compressed, compressed} of int32\n"
                                  "tensor E(I, J) : {dense, compressed} of int32\n"
                                  "tensor F(I, J) : {compressed, dense} of int32\n";

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string cppOf(const std::string& statement, frontend::FloatingPointMode mode, bool oneMergeLoop = true) {
  CompileOptions options;
  options.floatingPoint = mode;
  options.oneMergeLoop = oneMergeLoop;
  return lowerProgram(Program::fromText(kDeclarations + statement + "\n", "test.tc"), options).cpp;
}

// With TACO's loop per lattice point (CompileOptions::oneMergeLoop off):
// with one merge loop per co-iteration this kernel is no longer large.
TEST(LargeKernels, AreCompiledAsOneBody) {
  for (frontend::FloatingPointMode mode : {frontend::FloatingPointMode::Strict, frontend::FloatingPointMode::Fast}) {
    std::string cpp =
        cppOf("Y(i,j,k) = A(i,j,k) - B(i,j,k) + C(l,n) * D(i,j,k) * (E(i,j) - F(i,j))", mode, /*oneMergeLoop=*/false);
    EXPECT_FALSE(contains(cpp, "streaming_stores_tcc_kernel_0")) << cpp.substr(0, 2000);
    EXPECT_EQ(count(cpp, "int32_t tcc_kernel_0("), 1u);
  }
}

// A kernel of fewer lines keeps its copy with streaming stores.
TEST(LargeKernels, SmallerOnesKeepTheirStreamingCopy) {
  std::string cpp = cppOf("Y(i,j,k) = A(i,j,k) + C(l,n) * D(i,j,k) * (E(i,j) - F(i,j))", frontend::FloatingPointMode::Strict);
  EXPECT_TRUE(contains(cpp, "static __attribute__((noinline)) int32_t streaming_stores_tcc_kernel_0(")) << cpp;
  EXPECT_TRUE(contains(cpp, "return streaming_stores_tcc_kernel_0(tcc_tensors);")) << cpp;
}

}  // namespace
}  // namespace tcc::test
