// Internal to the library: the in-process host step of the nm_spmm
// intrinsic (tcc/lowering/nm_spmm.h): picks a launch plan for the shape,
// timing the candidates once per shape and module when the product is large
// (the default plan otherwise), and launches it.
#pragma once

#include "gpu_intrinsic_runners.h"

namespace tcc::detail {

int32_t runNmSpmm(const GpuIntrinsicRun& run);

}  // namespace tcc::detail
