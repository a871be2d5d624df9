// Which device an MPI rank compiles and runs for (tcc/tcc.h's placeOnRankDevice).
#include <cstdlib>
#include <stdexcept>

#include "tcc/runtime/cuda.h"
#include "tcc/runtime/distributed.h"
#include "tcc/tcc.h"

#ifdef TCC_HAVE_PERMANENT_GPU
#include "tcc/runtime/permanent_gpu.h"
#endif

namespace tcc {

frontend::Target placeOnRankDevice(const Program& program, const CompileOptions& options) {
  const auto& line = program.syntax().target;
  const frontend::Target target = options.target ? *options.target : line ? line->target : frontend::Target::Cpu;
  const rt::RankPlacement placement = rt::currentPlacement();
  if (target != frontend::Target::Cuda) {
    rt::announceDevice(-1);
    return target;
  }
  const int devices = rt::cuda::deviceCount();
  int device = -1;
  try {
    device = rt::deviceForRank(placement, devices);
  } catch (const std::invalid_argument& error) {
    throw Error(error.what());
  }
  if (device >= 0) rt::cuda::selectDevice(device);
  rt::announceDevice(device);
  if (device >= 0) return target;
  if (placement.size == 1) {
    // One process: the cuda target says itself that there is no GPU.
    if (devices > 0)
      throw Error("TCC_CUDA_DEVICE leaves this process no GPU, but the program runs on the cuda target; unset it "
                  "or name a device");
    return target;
  }
#ifdef TCC_HAVE_PERMANENT_GPU
  rt::computeCpuPermanentsInGpuOrder(rt::gpuPermanentVariantFromEnvironment());
#endif
  return frontend::Target::Cpu;
}

}  // namespace tcc
