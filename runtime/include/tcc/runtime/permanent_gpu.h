// The sparse matrix permanent on the GPU: `p = perm(A)` on the cuda target.
//
// The same Gray-code Ryser sum as the CPU kernel (tcc/runtime/permanent.h),
// chunk for chunk, so progress, Ctrl-C, checkpoints and the chunk limit of
// a PermanentOptionsScope work the same way; the chunks are summed on the
// GPU by one of Elbek and Kaya's kernels, generated for the matrix and
// compiled with NVRTC at run time:
//
//   hybrid    CodeGen-Hybrid (the default): permanent ordering, the row
//             sums the frequent columns touch in registers, the rest in
//             global memory (Algorithms 3 and 4);
//   purereg   CodeGen-PureReg: every row sum in a register;
//   baseline  GPU-SparsePerman: one generic kernel, row sums in shared memory.
//
// TCC_PERMANENT_GPU_VARIANT picks one (hybrid, purereg, baseline). Float
// results only (float64 or float32; partial sums in float64, added
// compensated); exact mode (an integer result) is refused, since 128-bit
// products do not fit the GPU kernels: compute it on the cpu target.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tcc/runtime/abi.h"
#include "tcc/runtime/permanent.h"

namespace tcc::rt {

enum class GpuPermanentVariant { Baseline, PureReg, Hybrid };

// "baseline", "purereg", "hybrid".
const char* gpuPermanentVariantName(GpuPermanentVariant variant);
// The paper's name: "GPU-SparsePerman", "CodeGen-PureReg", "CodeGen-Hybrid".
const char* gpuPermanentVariantTitle(GpuPermanentVariant variant);
std::optional<GpuPermanentVariant> parseGpuPermanentVariant(std::string_view text);
// TCC_PERMANENT_GPU_VARIANT, or Hybrid when unset; throws
// std::invalid_argument naming the accepted values for any other text.
GpuPermanentVariant gpuPermanentVariantFromEnvironment();

// The permanent of a matrix held on the host, on the GPU. Throws
// std::runtime_error (a PermanentError, or a CUDA error) when it fails.
double gpuPermanent(const tcc_tensor& matrix, GpuPermanentVariant variant, const PermanentOptions& options = {});

// For an MPI rank without a GPU in a run whose other ranks compute on
// theirs with `variant`: makes this process's float permanents on the cpu
// target (tcc_permanent) sum their chunks with the OpenMP CPU kernel in
// `variant`'s column order, under its checkpoint mode, so that they are the
// same chunks the GPU ranks sum. Process-wide; call it before the
// permanents run (`tcc run` does, for such a rank of a cuda-target run).
void computeCpuPermanentsInGpuOrder(GpuPermanentVariant variant);

}  // namespace tcc::rt

extern "C" {
// What the cuda target's p = perm(A) calls: result and matrix are tensors
// whose arrays are in device memory (result: a float64 or float32 scalar).
// The variant comes from TCC_PERMANENT_GPU_VARIANT; the options from the
// calling thread's PermanentOptionsScope. Returns 0, or
// tcc::rt::kPermanentFailedStatus with tcc_permanent_cuda_last_error() saying why.
int tcc_permanent_cuda(tcc_tensor* result, const tcc_tensor* matrix);
const char* tcc_permanent_cuda_last_error(void);
}
