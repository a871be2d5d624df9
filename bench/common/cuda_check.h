// Shared by the GPU benchmarks: a failed CUDA runtime call ends the
// benchmark with the call and the runtime's message.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                              \
  do {                                                                                \
    cudaError_t status_ = (call);                                                     \
    if (status_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status_));   \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

// "CUDA driver 13.0, runtime 13.0": the versions a GPU table was made with.
inline void printCudaVersions() {
  int driver = 0, runtime = 0;
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  std::printf("CUDA driver %d.%d, runtime %d.%d\n", driver / 1000, driver % 1000 / 10, runtime / 1000,
              runtime % 1000 / 10);
}
