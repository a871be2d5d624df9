// Vector-wise N:M SpMM, C(i,j) = A(i,k) * B(k,j) with B in nm(N,M,L)
// (see tcc/lowering/intrinsics.h and tcc/lowering/nm_spmm.h).
#pragma once

#include "tcc/lowering/intrinsics.h"
#include "tcc/lowering/nm_spmm.h"

namespace tcc::lowering {

std::optional<ir::imp::Function> recognizeNmSpmm(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                 const LowerOptions& options);
std::string explainNmSpmm(const ir::imp::Function& function, const ir::imp::Intrinsic& op);
extern const CudaIntrinsicExpansion kNmSpmmCudaExpansion;
// The tensor-core tiles' template and their kernels for nm(N, M, L), named
// prefix_<tile>, with the kernels' `parameters` (nm_spmm_tensor_core_kernel.cpp).
std::string nmSpmmTensorCoreKernels(int N, int M, int L, const std::string& prefix, const char* parameters);

}  // namespace tcc::lowering
