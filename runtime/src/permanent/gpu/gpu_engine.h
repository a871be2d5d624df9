// The GPU engine: a RangeEngine (range_engine.h) that sums a batch of
// Gray-code chunks on the device with one of the three kernels of
// kernel_source.h, generated for the matrix and compiled with NVRTC when
// the engine is made. The single-process driver (engine_driver.h) runs it,
// so progress, Ctrl-C, checkpoints and the chunk limit work as on the CPU;
// an MPI rank could run it the same way.
#pragma once

#include <memory>
#include <string>

#include "../range_engine.h"
#include "hybrid_plan.h"
#include "launch_plan.h"
#include "ryser_problem.h"
#include "tcc/runtime/permanent_gpu.h"

namespace tcc::rt::permanent::gpu {

// What the engine decided and what the compiler made of its kernel.
struct GpuEngineReport {
  GpuPermanentVariant variant = GpuPermanentVariant::Hybrid;
  std::string device;
  int n = 0;
  int registerColumns = 0, registerRows = 0;  // Hybrid's partition (PureReg: n - 1, n)
  int registers = 0;                          // per thread (cuFuncGetAttribute NUM_REGS)
  int localBytes = 0;                         // per thread: spills (LOCAL_SIZE_BYTES)
  int threadsPerBlock = 0;
  size_t sharedBytesPerBlock = 0;  // dynamic (the baseline's)
  int blocksPerMultiprocessor = 0;
  int64_t residentThreads = 0;     // blocks per SM x threads per block x SMs
  LaunchPlan launch;
  double generateSeconds = 0, compileSeconds = 0;
  size_t sourceBytes = 0;
  std::string plan;  // Hybrid: the kernel shape chosen and the model's numbers
  std::string text() const;  // one line
};

class GpuRangeEngine final : public RangeEngine<double> {
 public:
  // `matrix` equilibrated; `chunkSize` the chunk plan's.
  GpuRangeEngine(const SortedColumnMatrix& matrix, GpuPermanentVariant variant, uint64_t chunkSize);
  ~GpuRangeEngine() override;

  std::string description() const override;
  int64_t parallelism() const override;
  void sumChunks(std::span<const int64_t> chunks, uint64_t chunkSize, StopFlags stop,
                 const ChunkDone& chunkDone) override;

  const GpuEngineReport& report() const;
  const std::string& source() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The kernel source a variant generates for a matrix (equilibrated), and
// the problem it runs on; for tests and `explain`.
struct GeneratedPermanentKernel {
  RyserProblem problem;
  Partition partition;  // Hybrid's (else empty)
  std::string plan;     // HybridPlan::text() (PureReg: its unroll and operations)
  bool planned = false;  // Hybrid's shape from the plan (no knobs)
  int unroll = 0;        // the plan's
  std::string source;
};
// The kernels run slices of the launch plan's size for the chunk plan of
// matrix.n (launch_plan.h), which sets how far the step loop unrolls.
GeneratedPermanentKernel generatePermanentKernel(const SortedColumnMatrix& matrix, GpuPermanentVariant variant,
                                                 const CostModel& model = {});

// Names a checkpoint's computation: partial sums depend on the column order.
std::string gpuCheckpointMode(GpuPermanentVariant variant);

}  // namespace tcc::rt::permanent::gpu
