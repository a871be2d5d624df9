#include "cpu_fallback.h"

#include <cstdio>

#include "../distributed_sum.h"
#include "../engine_driver.h"
#include "../gray_code_ryser.h"
#include "gpu_engine.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt::permanent::gpu {

SortedColumnMatrix reorderedAsGpuKernel(const SortedColumnMatrix& matrix, GpuPermanentVariant variant) {
  // The order the kernel itself is generated with, so the two cannot drift apart.
  const std::vector<int> columnOf = generatePermanentKernel(matrix, variant).problem.columnOf;
  SortedColumnMatrix reordered;
  reordered.n = matrix.n;
  reordered.nonzeros = matrix.nonzeros;
  reordered.fingerprint = matrix.fingerprint;
  reordered.columnStart.push_back(0);
  for (int source : columnOf) {
    for (int32_t k = matrix.columnStart[source]; k < matrix.columnStart[source + 1]; ++k) {
      reordered.rows.push_back(matrix.rows[k]);
      reordered.values.push_back(matrix.values[k]);
    }
    reordered.columnStart.push_back(static_cast<int32_t>(reordered.rows.size()));
    reordered.originalColumn.push_back(matrix.originalColumn[source]);
  }
  return reordered;
}

std::unique_ptr<RangeEngine<double>> makeCpuEngineInGpuOrder(const SortedColumnMatrix& matrix,
                                                             GpuPermanentVariant variant, int threads) {
  struct Held {
    SortedColumnMatrix matrix;
    RyserTables<double> tables;
  };
  auto held = std::make_shared<Held>();
  held->matrix = reorderedAsGpuKernel(matrix, variant);
  held->tables = floatTables(held->matrix);  // points into held->matrix
  return makeCpuEngine<double>(
      [held](uint64_t begin, uint64_t end, StopFlags stop) { return floatChunk(held->tables, begin, end, stop); },
      threads);
}

std::unique_ptr<RangeEngine<double>> rankEngineWithoutGpu(const SortedColumnMatrix& matrix,
                                                          GpuPermanentVariant variant,
                                                          const PermanentOptions& options) {
  auto engine = makeCpuEngineInGpuOrder(matrix, variant, cpuThreadsForThisRank(options));
  if (options.progress == ProgressMode::On)
    std::fprintf(stderr, "perm: rank %d (no GPU): %s, in the column order of %s\n", currentPlacement().rank,
                 engine->description().c_str(), gpuPermanentVariantTitle(variant));
  return engine;
}

}  // namespace tcc::rt::permanent::gpu

namespace tcc::rt {

void computeCpuPermanentsInGpuOrder(GpuPermanentVariant variant) {
  permanent::overrideFloatEngine(permanent::gpu::gpuCheckpointMode(variant),
                                 [variant](const permanent::SortedColumnMatrix& matrix) {
                                   return permanent::gpu::rankEngineWithoutGpu(
                                       matrix, variant, permanent::currentPermanentOptions());
                                 });
}

}  // namespace tcc::rt
