#include "hybrid_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tcc::rt::permanent::gpu {

HybridPlan evaluateHybrid(const RyserProblem& problem, int registerColumns, int unroll, int sliceBits, int pairs,
                          const HybridModel& model) {
  HybridPlan plan;
  CostModel partitionModel;
  partitionModel.globalAccessCost = model.globalAccessCost;
  partitionModel.sliceBits = sliceBits;
  partitionModel.unroll = unroll;
  plan.partition = evaluatePartition(problem, registerColumns, partitionModel);
  plan.unroll = unroll;
  plan.pairs = hybridUsesPairs(problem, plan.partition, unroll, true, true) ? pairs : kNoPairs;
  plan.cost = hybridKernelCost(problem, plan.partition, unroll, sliceBits, plan.pairs, model.globalAccessCost);
  // Forming column 0's second sums keeps them as temporaries while d is multiplied.
  const int formed = plan.pairs == kPairsFormingSums ? problem.columnSize(0) : 0;
  const int registers = static_cast<int>(
      std::ceil(model.baseRegisters + model.registersPerDouble * (plan.cost.liveDoubles + formed)));
  plan.estimatedRegisters = (registers + 7) / 8 * 8;
  const int threadsPerBlock = kGeneratedThreadsPerBlock;
  const int fit = model.registersPerMultiprocessor / (threadsPerBlock * std::max(1, plan.estimatedRegisters));
  plan.estimatedBlocks = std::clamp(fit, 1, model.maxBlocksPerMultiprocessor);
  // Compiled for the blocks the registers allow (two at least); past 128
  // registers, uncapped (one block per SM, no spills).
  plan.minBlocks = plan.estimatedBlocks >= 2 ? plan.estimatedBlocks : 0;
  const double cycles = (model.fixedCyclesPerStep + model.fixedCyclesPerBlock / unroll +
                         model.cyclesPerOperation * plan.cost.perStep) *
                        model.blockFactor[plan.estimatedBlocks - 1];
  plan.predictedCycles = cycles;
  plan.chainDispatch = model.chainDispatch && plan.pairs != kNoPairs;
  return plan;
}

HybridPlan planHybrid(const RyserProblem& problem, int maxUnroll, int sliceBits, const HybridModel& model) {
  HybridPlan best;
  bool any = false;
  for (int unroll : model.unrolls) {
    if (unroll < 2 || (unroll > maxUnroll && any)) continue;
    const int u = std::min(unroll, maxUnroll);
    for (int k = 1; k < problem.n; ++k)
      for (int pairs : {kNoPairs, kPairsKeepingSums, kPairsFormingSums}) {
        HybridPlan candidate = evaluateHybrid(problem, k, u, sliceBits, pairs, model);
        if (!any || candidate.predictedCycles < best.predictedCycles - 1e-9) best = candidate, any = true;
      }
  }
  return best;
}

std::string HybridPlan::text() const {
  char line[400];
  std::snprintf(line, sizeof line,
                "k = %d register columns, %d register rows, blocks of %d steps%s, %s, %s; model: %.1f adds + %.1f "
                "multiplications + %.3f global accesses per step, ~%d registers, %d blocks per SM, %.1f cycles per "
                "warp-step",
                partition.registerColumns, partition.registerRows, unroll,
                chainDispatch ? " (the last one's column found by tests in order of frequency)" : "",
                pairs == kNoPairs            ? "every step"
                : pairs == kPairsKeepingSums ? "column 0 summed out in pairs (its rows' second sums in registers)"
                                             : "column 0 summed out in pairs (second sums formed per pair)",
                minBlocks > 0 ? ("compiled for " + std::to_string(minBlocks) + " blocks per SM").c_str()
                              : "registers as the compiler likes",
                cost.additions, cost.multiplications, cost.globalAccesses, estimatedRegisters, estimatedBlocks,
                predictedCycles);
  return line;
}

}  // namespace tcc::rt::permanent::gpu
