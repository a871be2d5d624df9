// The in-process host step of the permanent intrinsic on the cuda target
// (see gpu_intrinsic_runners.h).
#pragma once

#include "gpu_intrinsic_runners.h"

namespace tcc::detail {

// Throws Error with the runtime's reason when the permanent fails.
int32_t runPermanentOnGpu(const GpuIntrinsicRun& run);

}  // namespace tcc::detail
