// Which CodeGen-Hybrid kernel to generate for a matrix (after permanent
// ordering): the register/global partition (Algorithm 4's k), whether
// column 0 is summed out in pairs of steps (and whether its rows keep their
// second sums in registers), the unrolled block, and the resident blocks
// per SM the kernel is compiled for (its register cap through
// __launch_bounds__).
//
// The model: on the H100 the generated kernels run at about
//   cycles per warp-step and scheduler = (fixedCyclesPerBlock / unroll
//       + cyclesPerOperation * float64 operations per step) * blockFactor
// with the operations counted from the kernel's structure
// (hybridKernelCost; a global access weighted as globalAccessCost
// operations) and blockFactor by the resident blocks of 256 threads per
// SM. The registers a shape needs are estimated from the doubles it keeps;
// the kernel is compiled for the blocks per SM they allow (at most 4, at
// least 2: __launch_bounds__(256, B)), and where they need more than 128
// it is compiled without a cap and runs one block per SM: the H100 runs
// such a kernel faster than the same kernel squeezed into 128 registers,
// whose spills cost up to 2x (bench/permanent_gpu/RESULTS.md).
#pragma once

#include <string>

#include "kernel_source.h"
#include "ryser_problem.h"

namespace tcc::rt::permanent::gpu {

struct HybridModel {
  double globalAccessCost = 8;
  // Fitted on the H100 (bench/permanent_gpu/RESULTS.md): 2 blocks per SM,
  // no spills, blocks of 8 to 32 steps, densities 0.1-0.5 at n = 40.
  double cyclesPerOperation = 1.944;
  double fixedCyclesPerBlock = 100.8;  // the block's last step: the flipped column found, the loop
  double fixedCyclesPerStep = 0;
  // Registers: per double kept (2, and the compiler's temporaries, which
  // grow with them) and addresses and counters; fitted to what ptxas gives
  // the kernels at n = 40 (64 registers at 22 doubles, 128 at 49).
  double baseRegisters = 11;
  double registersPerDouble = 2.37;
  int registersPerMultiprocessor = 65536;
  int maxBlocksPerMultiprocessor = 4;  // the most the plan compiles for (64 registers)
  // Time factor by resident blocks of 256 threads per SM (1, 2, 3, 4):
  // one block leaves the float64 pipeline waiting; more than two hide
  // latency a little better (measured 1.17, 1, -, 0.85-0.93).
  double blockFactor[4] = {1.17, 1.0, 0.95, 0.9};
  // The unrolled blocks the plan considers (powers of two; no more than a slice).
  int unrolls[3] = {8, 16, 32};
  // The block's last flip chosen by if-tests (most frequent first), not a switch.
  bool chainDispatch = true;
};

struct HybridPlan {
  Partition partition;
  int unroll = 8;
  int pairs = kPairsKeepingSums;
  int minBlocks = 0;  // __launch_bounds__(256, minBlocks); 0: none
  bool chainDispatch = false;
  KernelCost cost;
  int estimatedRegisters = 0;  // what the shape's doubles need
  int estimatedBlocks = 0;     // resident blocks per SM it runs at
  double predictedCycles = 0;  // per warp-step and scheduler
  std::string text() const;    // one line: the choice and the model's numbers
};

// The model's numbers for one shape (unroll a power of two dividing every
// thread's slice of 2^sliceBits steps).
HybridPlan evaluateHybrid(const RyserProblem& problem, int registerColumns, int unroll, int sliceBits, int pairs,
                          const HybridModel& model = {});
// The best shape over k in [1, n-1], pairs (none, kept, formed) and unrolls
// 8 and 16 (no more than the slice); n >= 2.
HybridPlan planHybrid(const RyserProblem& problem, int maxUnroll, int sliceBits, const HybridModel& model = {});

}  // namespace tcc::rt::permanent::gpu
