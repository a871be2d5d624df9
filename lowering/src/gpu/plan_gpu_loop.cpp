// How a forall parallelized over a GPU unit runs, and whether it can: the
// units nest in order (blocks, then warps, then threads), iterations that
// race on an output entry need a strategy the GPU has (atomics, or a sum of
// a scalar temporary over a warp's lanes through shuffles, or over a
// block's threads through shuffles and shared memory), and outputs
// assembled in order (sparse ones) stay off the GPU, and so do sparse
// workspaces other than a GPU thread's own (gpu_sparse_workspace.cpp).
// The scalar temporaries of sums below the statement's top live in
// registers: each iteration of a loop around their where has its own; a
// GPU loop inside the where sums into one only through a reduction across
// a warp's lanes or a block's threads (planSumIntoTemporary). A dense
// workspace whose where is inside a GPU loop has a copy per GPU thread,
// filled and read by that thread alone; one whose where is outside the GPU
// loops is one copy in device memory, filled as an output is. A sparse
// workspace whose where is inside a GPU loop is a GPU thread's own too.
#include "../access_occurrences.h"
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

// (int64 through the unsigned 64-bit atomicAdd: two's complement adds the
// same bits.)
bool hasAtomicAdd(ir::Datatype type) {
  return type == ir::Datatype::Float32 || type == ir::Datatype::Float64 || type == ir::Datatype::Int32 ||
         type == ir::Datatype::Int64;
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
  if (gpuUnit_ != imp::LoopKind::Serial && nestingRank(plan.kind) <= nestingRank(gpuUnit_)) {
    auto standsFor = loopStandsFor_.find(forall->indexVar);  // (as requireParallelizable names it)
    auto kept = options_.gpuUnitsKept.find(standsFor == loopStandsFor_.end() ? forall->indexVar.name()
                                                                             : standsFor->second.name());
    try {
      requireParallelizable(forall, false,
                            std::string("GPU units nest as GPUBlock, then GPUWarp, then GPUThread, but this loop is "
                                        "inside a ") + imp::toString(gpuUnit_) + " loop" +
                                (kept == options_.gpuUnitsKept.end() ? "" : "; " + kept->second));
    } catch (LoweringError& error) {
      throw error.markGpuUnitsOutOfOrder();
    }
  }

  const ir::IndexVar& var = forall->indexVar;
  // The scalar temporaries of sums below the statement's top whose where
  // is in this loop's body: each iteration declares its own, in the
  // registers of the thread that runs it (of every thread of a warp or
  // block that runs it, each holding the same value).
  // Likewise the dense workspaces whose where is in it: each GPU thread
  // has its own copy (perGpuThread).
  std::set<ir::TensorVar> privateTemporaries;
  for (const auto* where : whereStatements(forall->body))
    for (const auto& tensor : ir::tensorsWritten(where->producer))
      if (!isParameter(tensor) &&
          (tensor.order() == 0 || storageOf(tensor).perGpuThread || storageOf(tensor).gpuSparse))
        privateTemporaries.insert(tensor);
  for (const auto* assignment : ir::assignmentsOf(forall->body)) {
    const ir::TensorVar& output = assignment->lhs.tensor();
    if (privateTemporaries.count(output)) continue;
    const bool temporary = !isParameter(output) && output.order() == 0;
    if (!isParameter(output) && !temporary) {
      const TensorStorage& workspace = storageOf(output);
      requireParallelizable(forall, !workspace.perGpuThread && !workspace.gpuSparse,
                            workspaceInWords(output) + " is filled by this GPU loop inside its where, but each GPU "
                            "thread keeps a copy of its own, filled and read by that thread alone; parallelize a "
                            "loop around the workspace's where, and none inside it that fills the workspace");
      requireParallelizable(forall, workspace.sharedOnGpu,
                            workspaceInWords(output) + " would be shared by GPU threads; on the cuda target only "
                            "dense workspaces of dense results run on the GPU (sparse workspaces, and dense ones that "
                            "list their coordinates for a sparse output, run on the CPU)");
    }
    if (temporary) {
      planSumIntoTemporary(forall, output, plan);
      continue;
    }
    // (A dense workspace whose where is outside the GPU loops is filled as
    // a dense output is: one copy in device memory, shared by the threads.)
    // A sparse output's rows (a dense level, then a compressed one) are
    // each assembled by the GPU iteration of the row, counted, then
    // filled at their offsets (Lowerer::run); so are the coordinates of
    // an output whose first level is compressed, each by the iteration of
    // its coordinate (lowerRangesAppendingInTwoPasses); nothing else is.
    if (output.order() > 0 && !output.format().isAllDense()) {
      const bool byCoordinate = rangeAppended_ && rangeAppended_->onGpu && rangeAppended_->output == output &&
                                rangeAppended_->var == var;
      // (A loop inside the one over its rows: only the lane slices of a
      // CSR row, which lowerRowInLaneSlices lowers before this plan.)
      const bool insideRows = gpuUnit_ != imp::LoopKind::Serial;
      requireParallelizable(forall, byCoordinate ||
                                        (rowParallelOutputs_.count(output) && rowsAssembledInParallel(assignment->lhs, var)),
                            "output " + output.name() + " is sparse, and sparse outputs cannot be assembled under a "
                            "GPU loop; store it dense or run this statement on the CPU" +
                            std::string(insideRows ? " (a row split among GPU threads is assembled only for a CSR "
                                                     "output whose rows are a GPUWarp loop holding just a GPUThread "
                                                     "loop over its columns)"
                                                   : ""));
      continue;
    }
    if (derivesOnlyFrom(var, assignment->lhs.indices())) continue;  // iterations write different entries
    const std::string written = isParameter(output) ? output.name() : workspaceInWords(output);
    std::string race = var.name() + " is summed into " + written + ", so GPU iterations race on its entries";
    switch (forall->attributes.outputRaceStrategy) {
      case OutputRaceStrategy::IgnoreRaces: break;
      case OutputRaceStrategy::NoRaces:
        requireParallelizable(forall, false, race + "; parallelize an index of the output, or choose Atomics or "
                                             "ParallelReduction");
        break;
      case OutputRaceStrategy::Atomics:
        // A sum around this loop keeps its total in a scalar temporary, in
        // each thread's registers: an atomic update there reaches no other
        // thread, so the lanes' partial sums are added as ParallelReduction
        // adds them.
        if (reduction_.receives(output)) {
          requireParallelizable(forall, plan.kind == imp::LoopKind::GpuThread &&
                                            (gpuUnit_ == imp::LoopKind::GpuWarp || gpuUnit_ == imp::LoopKind::GpuBlock),
                                race + " through the scalar temporary of the sum around this loop, which is in each "
                                "GPU thread's registers, where atomic updates reach no other thread; make this a "
                                "GPUThread loop inside a GPUWarp or GPUBlock loop (its lanes' partial sums are then "
                                "added across the warp or block), or parallelize the loops of the sum instead");
          plan.reductions.push_back({reduction_.temporary, imp::Expr()});
          break;
        }
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
                              "every index of " + written);
        plan.reductions.push_back({reduction_.temporary, imp::Expr()});
        break;
    }
  }
  return plan;
}

// A GPU loop inside the where of a scalar temporary sums into it: its
// threads keep partial sums, added with shuffles across a warp's lanes or
// a block's threads (ParallelReduction, Temporary, and Atomics, which
// have no memory to update: the temporary is in registers).
void Lowerer::planSumIntoTemporary(const ir::ForallNode* forall, const ir::TensorVar& temporary, LoopPlan& plan) {
  using ir::OutputRaceStrategy;
  const OutputRaceStrategy strategy = forall->attributes.outputRaceStrategy;
  const std::string sum = forall->indexVar.name() + " is summed into " + temporary.name() +
                          " (the scalar temporary of a sum below the statement's top)";
  requireParallelizable(forall, gpuUnit_ != imp::LoopKind::Serial,
                        sum + ", which is declared outside the GPU loops, on the host, where GPU iterations cannot "
                        "add to it; parallelize a loop around the sum (an index of the output) over the GPU");
  // Each thread holds a copy of its own: ignoring the race would keep one
  // thread's part of the sum, not a racy total.
  requireParallelizable(forall, strategy != OutputRaceStrategy::NoRaces && strategy != OutputRaceStrategy::IgnoreRaces,
                        sum + ", so GPU iterations race on it; choose ParallelReduction, Temporary or Atomics, "
                        "under which each thread keeps a partial sum, added across the threads after the loop");
  requireParallelizable(forall, strategy != OutputRaceStrategy::Workspace,
                        sum + "; sparse workspaces run on CPU threads, not on the GPU");
  requireParallelizable(forall, plan.kind == imp::LoopKind::GpuThread &&
                                    (gpuUnit_ == imp::LoopKind::GpuWarp || gpuUnit_ == imp::LoopKind::GpuBlock),
                        sum + ", which is in registers: its threads' partial sums are added across a warp's lanes "
                        "(shuffles) or a block's threads (shuffles, then shared memory), so the loop must be a "
                        "GPUThread loop inside a GPUWarp or GPUBlock loop");
  requireParallelizable(forall, reduction_.receives(temporary),
                        sum + "; a reduction over GPU threads needs the loop's body to be the sum alone");
  plan.reductions.push_back({reduction_.temporary, imp::Expr()});
}

}  // namespace tcc::lowering
