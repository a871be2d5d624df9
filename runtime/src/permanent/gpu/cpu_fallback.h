// The CPU kernel over a GPU kernel's column order: what a rank without a
// GPU computes in a cuda-target run over MPI, so that its chunks are the
// same Gray-code ranges as the GPU ranks' (a chunk's partial sum depends on
// the column order; the permanent does not).
#pragma once

#include <memory>

#include "../range_engine.h"
#include "tcc/runtime/permanent_gpu.h"

namespace tcc::rt::permanent::gpu {

// `matrix` equilibrated, its columns reordered as `variant`'s kernel
// orders them (the reordered matrix's column c is its column columnOf[c]).
SortedColumnMatrix reorderedAsGpuKernel(const SortedColumnMatrix& matrix, GpuPermanentVariant variant);

// The OpenMP CPU engine (range_engine.h) on `threads` threads (0: OpenMP's
// default) over `variant`'s column order: chunk for chunk the sums the GPU
// engine of that variant computes, up to rounding.
std::unique_ptr<RangeEngine<double>> makeCpuEngineInGpuOrder(const SortedColumnMatrix& matrix,
                                                             GpuPermanentVariant variant, int threads);

// That engine for an MPI rank without a GPU, on the rank's share of the
// node's cores (cpuThreadsForThisRank), saying so when progress is on.
std::unique_ptr<RangeEngine<double>> rankEngineWithoutGpu(const SortedColumnMatrix& matrix,
                                                          GpuPermanentVariant variant,
                                                          const PermanentOptions& options);

}  // namespace tcc::rt::permanent::gpu
