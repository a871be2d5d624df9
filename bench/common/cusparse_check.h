// Shared by the benchmarks that measure cuSPARSE: a failed cuSPARSE call is
// reported with its message and throws CusparseFailure, so that the
// measurement it belongs to can be left out rather than the whole run.
#pragma once

#include <cusparse.h>

#include <cstdio>

struct CusparseFailure {};

#define CHECK_CUSPARSE(call)                                                            \
  do {                                                                                  \
    cusparseStatus_t status_ = (call);                                                  \
    if (status_ != CUSPARSE_STATUS_SUCCESS) {                                           \
      std::fprintf(stderr, "%s failed: %s\n", #call, cusparseGetErrorString(status_)); \
      throw CusparseFailure();                                                          \
    }                                                                                   \
  } while (0)
