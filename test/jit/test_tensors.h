// Random sparse inputs for the JIT tests and benchmark, owning their
// storage, with tcc_tensor views of it (runtime/include/tcc/runtime/abi.h)
// to hand to kernels.
#ifndef TCC_TEST_JIT_TEST_TENSORS_H
#define TCC_TEST_JIT_TEST_TENSORS_H

#include <cstdint>
#include <vector>

#include "tcc/runtime/abi.h"

namespace tcc::jit::testing {

struct CsrMatrix {
  int rows = 0, columns = 0;
  std::vector<long long> pos;  // rows + 1
  std::vector<int> crd;
  std::vector<double> vals;
};

// Each row gets about `density * columns` distinct sorted columns, values
// uniform in [-1, 1] (never all zero).
CsrMatrix randomCsr(int rows, int columns, double density, std::uint64_t seed);

// A third-order tensor stored {compressed, compressed, compressed}.
struct CsfTensor {
  int dims[3] = {0, 0, 0};
  std::vector<long long> pos[3];
  std::vector<int> crd[3];
  std::vector<double> vals;
};

CsfTensor randomCsf(int dim0, int dim1, int dim2, long long nonzeros, std::uint64_t seed);

std::vector<double> randomVector(std::size_t size, std::uint64_t seed);

// Views (no copies) for the kernel ABI.
tcc_tensor denseVectorView(std::vector<double>& values);
tcc_tensor denseMatrixView(std::vector<double>& values, int rows, int columns);  // row-major
tcc_tensor csrView(CsrMatrix& matrix);
tcc_tensor csfView(CsfTensor& tensor);

}  // namespace tcc::jit::testing

#endif  // TCC_TEST_JIT_TEST_TENSORS_H
