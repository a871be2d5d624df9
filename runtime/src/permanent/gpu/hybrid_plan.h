// Which CodeGen-Hybrid kernel to generate for a matrix (after permanent
// ordering): the register/global partition (Algorithm 4's k), whether
// column 0 is summed out in pairs of steps (and whether its rows keep their
// second sums in registers), the unrolled block, and the resident blocks
// per SM the kernel is compiled for (its register cap through
// __launch_bounds__).
//
// The model: on the H100 the generated kernels run at about
//   cycles per warp-step and scheduler = fixed / unroll + perStep
//                                        + cyclesPerOperation * float64 operations per step
// once two or more blocks of 256 threads are resident per SM (PureReg and
// Hybrid, 2 to 4 blocks, fit one line, bench/permanent_gpu/RESULTS.md); the
// operations are counted from the kernel's structure (hybridKernelCost), a
// global access weighted as globalAccessCost operations. One resident block
// (8 warps) leaves the float64 pipeline idle while a warp waits on its
// own results: the cliff. So a shape's registers (estimated from the
// doubles it keeps) decide whether it keeps two blocks: the kernel is
// compiled for two blocks per SM (at most 128 registers) and a shape that
// needs more either spills (spillCyclesPerDouble per double over) or, where
// that costs more, runs at one block.
#pragma once

#include <string>

#include "kernel_source.h"
#include "ryser_problem.h"

namespace tcc::rt::permanent::gpu {

struct HybridModel {
  double globalAccessCost = 8;
  double cyclesPerOperation = 2.36;
  double fixedCyclesPerBlock = 40;  // the block's last step: the switch on the flipped column, the loop
  double fixedCyclesPerStep = 4.7;
  int baseRegisters = 24;           // addresses, the loop's counters, the sum
  int registersPerMultiprocessor = 65536;
  int maxBlocksPerMultiprocessor = 8;  // 2048 threads / 256
  // Over one resident block (no second block to hide latency): time factor.
  double oneBlockFactor = 1.8;
  // A kernel compiled for 2 blocks whose doubles need more registers than
  // 128: cycles per step per double over.
  double spillCyclesPerDouble = 1.5;
};

struct HybridPlan {
  Partition partition;
  int unroll = 8;
  int pairs = kPairsKeepingSums;
  int minBlocks = 0;  // __launch_bounds__(256, minBlocks); 0: none
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
