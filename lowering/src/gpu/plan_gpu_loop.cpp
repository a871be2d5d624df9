// How a forall parallelized over a GPU unit runs, and whether it can: the
// units nest in order (blocks, then warps, then threads), iterations that
// race on an output entry need a strategy the GPU has (atomics, or a sum of
// a scalar temporary over a warp's lanes through shuffles, or over a
// block's threads through shuffles and shared memory), and outputs
// assembled in order (sparse ones) and workspaces stay off the GPU for now.
#include "../lowerer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

namespace {

imp::LoopKind loopKindOf(ir::ParallelUnit unit) {
  switch (unit) {
    case ir::ParallelUnit::GPUBlock: return imp::LoopKind::GpuBlock;
    case ir::ParallelUnit::GPUWarp: return imp::LoopKind::GpuWarp;
    default: return imp::LoopKind::GpuThread;
  }
}

int nestingRank(imp::LoopKind kind) {
  switch (kind) {
    case imp::LoopKind::GpuBlock: return 1;
    case imp::LoopKind::GpuWarp: return 2;
    case imp::LoopKind::GpuThread: return 3;
    default: return 0;
  }
}

bool hasAtomicAdd(ir::Datatype type) {
  return type == ir::Datatype::Float32 || type == ir::Datatype::Float64 || type == ir::Datatype::Int32;
}

}  // namespace

void Lowerer::requireCpuTarget(const ir::ForallNode* forall) const {
  requireParallelizable(forall, !options_.cudaTarget,
                        "CPU parallel units need the cpu target; on the cuda target parallelize over GPUBlock, "
                        "GPUWarp or GPUThread");
}

LoopPlan Lowerer::planGpuLoop(const ir::ForallNode* forall) {
  using ir::OutputRaceStrategy;
  LoopPlan plan;
  plan.kind = loopKindOf(forall->attributes.parallelUnit);
  requireParallelizable(forall, options_.cudaTarget,
                        "GPU parallel units need the CUDA target (`target cuda` or --target cuda)");
  requireParallelizable(forall, !insideParallelLoop_, "a GPU loop cannot run inside a loop on CPU threads");
  if (gpuUnit_ != imp::LoopKind::Serial)
    requireParallelizable(forall, nestingRank(plan.kind) > nestingRank(gpuUnit_),
                          std::string("GPU units nest as GPUBlock, then GPUWarp, then GPUThread, but this loop is "
                                      "inside a ") + imp::toString(gpuUnit_) + " loop");

  const ir::IndexVar& var = forall->indexVar;
  for (const auto* assignment : ir::assignmentsOf(forall->body)) {
    const ir::TensorVar& output = assignment->lhs.tensor();
    requireParallelizable(forall, isParameter(output),
                          "workspace " + output.name() + " would be shared by GPU threads; workspaces under GPU "
                          "loops are not supported yet");
    requireParallelizable(forall, output.order() == 0 || output.format().isAllDense(),
                          "output " + output.name() + " is sparse, and sparse outputs cannot be assembled under a "
                          "GPU loop; store it dense or run this statement on the CPU");
    if (derivesOnlyFrom(var, assignment->lhs.indices())) continue;  // iterations write different entries
    std::string race = var.name() + " is summed into " + output.name() + ", so GPU iterations race on its entries";
    switch (forall->attributes.outputRaceStrategy) {
      case OutputRaceStrategy::IgnoreRaces: break;
      case OutputRaceStrategy::NoRaces:
        requireParallelizable(forall, false, race + "; parallelize an index of the output, or choose Atomics or "
                                             "ParallelReduction");
        break;
      case OutputRaceStrategy::Atomics:
        requireParallelizable(forall, hasAtomicAdd(output.datatype()),
                              race + ", and the GPU has no atomic add for " + ir::toString(output.datatype()));
        plan.atomicStores = true;
        break;
      case OutputRaceStrategy::Workspace:
        requireParallelizable(forall, false, race + "; sparse workspaces run on CPU threads, not on the GPU");
        break;
      case OutputRaceStrategy::Temporary: case OutputRaceStrategy::ParallelReduction:
        requireParallelizable(forall, plan.kind == imp::LoopKind::GpuThread &&
                                          (gpuUnit_ == imp::LoopKind::GpuWarp || gpuUnit_ == imp::LoopKind::GpuBlock),
                              race + "; a reduction over GPU threads sums a warp's lanes (shuffles) or a block's "
                              "threads (shuffles, then shared memory), so the loop must be a GPUThread loop inside "
                              "a GPUWarp or GPUBlock loop");
        requireParallelizable(forall, reduction_.defined(),
                              race + "; a reduction over GPU threads needs a scalar sum: the loops outside must fix "
                              "every index of " + output.name());
        plan.reductions.push_back({reduction_.temporary, imp::Expr()});
        break;
    }
  }
  return plan;
}

}  // namespace tcc::lowering
