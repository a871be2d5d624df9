// Kernels written by hand in the style the C++ emitter generates: no system
// headers, a prelude of our own declarations, the tcc_tensor ABI struct, and
// one `extern "C" int32_t NAME(tcc_tensor** tensors)` entry point. Shared by
// the tests and the benchmark in bench/jit.
#ifndef TCC_TEST_JIT_HANDWRITTEN_KERNELS_H
#define TCC_TEST_JIT_HANDWRITTEN_KERNELS_H

#include <string>

namespace tcc::jit::testing {

// Fixed-width types, the libc functions kernels call, and the text of
// runtime/include/tcc/runtime/abi.h read from `sourceDirectory`.
std::string kernelPrelude(const std::string& sourceDirectory);

// y(i) = A(i,j) * x(j), A CSR ({dense, compressed}), x and y dense.
// Tensors: y, A, x.
std::string spmvKernel(const std::string& sourceDirectory);

// y(i) = sqrt(sum_j A(i,j)^2), through a malloc'ed workspace (exercises
// malloc, memset, free and sqrt from the prelude). Tensors: y, A.
std::string rowNormKernel(const std::string& sourceDirectory);

// A(i,j) = B(i,k,l) * C(k,j) * D(l,j), B CSF ({compressed, compressed,
// compressed}), A, C, D dense row-major. Tensors: A, B, C, D.
std::string mttkrpKernel(const std::string& sourceDirectory);

}  // namespace tcc::jit::testing

#endif  // TCC_TEST_JIT_HANDWRITTEN_KERNELS_H
