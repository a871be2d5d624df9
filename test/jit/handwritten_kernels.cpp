#include "handwritten_kernels.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace tcc::jit::testing {

std::string kernelPrelude(const std::string& sourceDirectory) {
  const std::string abiPath = sourceDirectory + "/runtime/include/tcc/runtime/abi.h";
  std::ifstream abi(abiPath);
  if (!abi) throw std::runtime_error("cannot read " + abiPath);
  std::string abiText{std::istreambuf_iterator<char>(abi), std::istreambuf_iterator<char>()};
  return R"(// tcc prelude
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned long size_t;
extern "C" {
void* malloc(size_t size);
void* realloc(void* pointer, size_t size);
void free(void* pointer);
void* memset(void* destination, int value, size_t count);
void* memcpy(void* destination, const void* source, size_t count);
double sqrt(double value);
}
)" + abiText + "\n";
}

std::string spmvKernel(const std::string& sourceDirectory) {
  return kernelPrelude(sourceDirectory) + R"(
// y(i) = A(i,j) * x(j)
extern "C" int32_t spmv(tcc_tensor** tensors) {
  tcc_tensor* y = tensors[0];
  tcc_tensor* A = tensors[1];
  tcc_tensor* x = tensors[2];
  int32_t A1_dimension = A->dims[0];
  int64_t* A2_pos = A->levels[1].pos;
  int32_t* A2_crd = A->levels[1].crd;
  double* A_vals = (double*)A->vals;
  double* x_vals = (double*)x->vals;
  double* y_vals = (double*)y->vals;

  // i
  for (int32_t i = 0; i < A1_dimension; i++) {
    double tj_val = 0.0;
    // j
    for (int64_t jA = A2_pos[i]; jA < A2_pos[i + 1]; jA++) {
      int32_t j = A2_crd[jA];
      tj_val += A_vals[jA] * x_vals[j];
    }
    y_vals[i] = tj_val;
  }
  return 0;
}
)";
}

std::string rowNormKernel(const std::string& sourceDirectory) {
  return kernelPrelude(sourceDirectory) + R"(
// y(i) = sqrt(sum(j, A(i,j) * A(i,j)))
extern "C" int32_t row_norms(tcc_tensor** tensors) {
  tcc_tensor* y = tensors[0];
  tcc_tensor* A = tensors[1];
  int32_t A1_dimension = A->dims[0];
  int64_t* A2_pos = A->levels[1].pos;
  double* A_vals = (double*)A->vals;
  double* y_vals = (double*)y->vals;

  double* workspace = (double*)malloc(sizeof(double) * (size_t)A1_dimension);
  if (!workspace) return 1;
  memset(workspace, 0, sizeof(double) * (size_t)A1_dimension);
  // i
  for (int32_t i = 0; i < A1_dimension; i++) {
    // j
    for (int64_t jA = A2_pos[i]; jA < A2_pos[i + 1]; jA++) {
      workspace[i] += A_vals[jA] * A_vals[jA];
    }
  }
  // i
  for (int32_t i = 0; i < A1_dimension; i++) {
    y_vals[i] = sqrt(workspace[i]);
  }
  free(workspace);
  return 0;
}
)";
}

std::string mttkrpKernel(const std::string& sourceDirectory) {
  return kernelPrelude(sourceDirectory) + R"(
// A(i,j) = B(i,k,l) * C(k,j) * D(l,j)
extern "C" int32_t mttkrp(tcc_tensor** tensors) {
  tcc_tensor* A = tensors[0];
  tcc_tensor* B = tensors[1];
  tcc_tensor* C = tensors[2];
  tcc_tensor* D = tensors[3];
  int32_t A2_dimension = A->dims[1];
  double* A_vals = (double*)A->vals;
  int64_t* B1_pos = B->levels[0].pos;
  int32_t* B1_crd = B->levels[0].crd;
  int64_t* B2_pos = B->levels[1].pos;
  int32_t* B2_crd = B->levels[1].crd;
  int64_t* B3_pos = B->levels[2].pos;
  int32_t* B3_crd = B->levels[2].crd;
  double* B_vals = (double*)B->vals;
  double* C_vals = (double*)C->vals;
  double* D_vals = (double*)D->vals;

  memset(A_vals, 0, sizeof(double) * (size_t)A->dims[0] * (size_t)A2_dimension);
  // i
  for (int64_t iB = B1_pos[0]; iB < B1_pos[1]; iB++) {
    int32_t i = B1_crd[iB];
    // k
    for (int64_t kB = B2_pos[iB]; kB < B2_pos[iB + 1]; kB++) {
      int32_t k = B2_crd[kB];
      // l
      for (int64_t lB = B3_pos[kB]; lB < B3_pos[kB + 1]; lB++) {
        int32_t l = B3_crd[lB];
        double B_val = B_vals[lB];
        // j
        for (int32_t j = 0; j < A2_dimension; j++) {
          A_vals[i * A2_dimension + j] += B_val * C_vals[k * A2_dimension + j] * D_vals[l * A2_dimension + j];
        }
      }
    }
  }
  return 0;
}
)";
}

}  // namespace tcc::jit::testing
