// Shared by the benchmarks that measure cuBLAS: a failed cuBLAS call ends
// the benchmark with the call and its status.
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUBLAS(call)                                                    \
  do {                                                                        \
    cublasStatus_t status_ = (call);                                          \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                   \
      std::fprintf(stderr, "%s failed: status %d\n", #call, int(status_));    \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)
