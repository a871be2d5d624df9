#include "hybrid_plan.h"

#include <algorithm>
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
  plan.estimatedRegisters = (model.baseRegisters + 2 * plan.cost.liveDoubles + 7) / 8 * 8;
  const int threadsPerBlock = kGeneratedThreadsPerBlock;
  const int fit = model.registersPerMultiprocessor / (threadsPerBlock * std::max(1, plan.estimatedRegisters));
  double cycles = model.fixedCyclesPerStep + model.fixedCyclesPerBlock / unroll +
                  model.cyclesPerOperation * plan.cost.perStep;
  if (fit >= 2) {
    // Compiled for two blocks at least: the compiler may not take more
    // registers than that allows (it would cut to one block).
    plan.estimatedBlocks = std::min(model.maxBlocksPerMultiprocessor, fit);
    plan.minBlocks = 2;
  } else {
    // Compiled for two blocks, the doubles over 128 registers spill; or one block.
    const int over = (plan.estimatedRegisters - model.registersPerMultiprocessor / (2 * threadsPerBlock) + 1) / 2;
    const double spilled = cycles + model.spillCyclesPerDouble * over;
    const double alone = cycles * model.oneBlockFactor;
    if (spilled <= alone) {
      plan.minBlocks = 2;
      plan.estimatedBlocks = 2;
      cycles = spilled;
    } else {
      plan.estimatedBlocks = 1;
      cycles = alone;
    }
  }
  plan.predictedCycles = cycles;
  return plan;
}

HybridPlan planHybrid(const RyserProblem& problem, int maxUnroll, int sliceBits, const HybridModel& model) {
  HybridPlan best;
  bool any = false;
  for (int unroll : {8, 16}) {
    if (unroll > maxUnroll && any) continue;
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
                "k = %d register columns, %d register rows, blocks of %d steps, %s, %s; model: %.1f adds + %.1f "
                "multiplications + %.3f global accesses per step, ~%d registers, %d blocks per SM, %.1f cycles per "
                "warp-step",
                partition.registerColumns, partition.registerRows, unroll,
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
