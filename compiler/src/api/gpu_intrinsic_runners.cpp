// The table of in-process host steps, one per CUDA intrinsic.
#include "gpu_intrinsic_runners.h"

#include <utility>
#include <vector>

#include "tcc/lowering/tca_spmm.h"

namespace tcc::detail {

GpuIntrinsicRunner gpuIntrinsicRunner(const std::string& name) {
  static const std::vector<std::pair<std::string, GpuIntrinsicRunner>> table = {
      {lowering::kTcaSpmmIntrinsic, tcaSpmmRunner()},
  };
  for (const auto& [entry, runner] : table)
    if (entry == name) return runner;
  return nullptr;
}

}  // namespace tcc::detail
