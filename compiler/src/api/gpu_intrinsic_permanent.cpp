// The in-process host step of p = perm(A) on the cuda target: what the
// printed .cu's tcc_permanent_cuda call does, with its failure message.
#include "gpu_intrinsic_permanent.h"

#include "tcc/tcc.h"

#ifdef TCC_HAVE_PERMANENT_GPU
#include "tcc/runtime/permanent_gpu.h"
#endif

namespace tcc::detail {

int32_t runPermanentOnGpu(const GpuIntrinsicRun& run) {
#ifndef TCC_HAVE_PERMANENT_GPU
  throw Error("perm: this tcc was built without the CUDA toolkit, so it has no GPU permanent");
#else
  const auto& tensors = run.call.op->tensors;
  tcc_tensor* result = run.tensors.at(tensors.at(0));
  tcc_tensor* matrix = run.tensors.at(tensors.at(1));
  if (tcc_permanent_cuda(result, matrix) != 0) throw Error(tcc_permanent_cuda_last_error());
  return 0;
#endif
}

}  // namespace tcc::detail
