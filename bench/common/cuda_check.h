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
