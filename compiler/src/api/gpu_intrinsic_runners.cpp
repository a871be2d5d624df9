// The table of in-process host steps, one per CUDA intrinsic.
#include "gpu_intrinsic_runners.h"

#include "gpu_intrinsic_nm_spmm.h"
#include "gpu_intrinsic_permanent.h"
#include "tcc/lowering/intrinsics.h"
#include "tcc/lowering/nm_spmm.h"
#include "tcc/lowering/tca_spmm.h"

#include <utility>
#include <vector>

namespace tcc::detail {

GpuIntrinsicRunner gpuIntrinsicRunner(const std::string& name) {
  static const std::vector<std::pair<std::string, GpuIntrinsicRunner>> table = {
      {lowering::kNmSpmmIntrinsic, runNmSpmm},
      {lowering::kPermanentIntrinsic, runPermanentOnGpu},
      {lowering::kTcaSpmmIntrinsic, tcaSpmmRunner()},
  };
  for (const auto& [entry, runner] : table)
    if (entry == name) return runner;
  return nullptr;
}

}  // namespace tcc::detail
