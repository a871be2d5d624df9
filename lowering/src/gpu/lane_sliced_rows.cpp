// A CSR output's rows assembled by GPU warps: a GPUWarp loop over the rows
// and a GPUThread loop over the columns (`parallelize(i, GPUWarp, ...)`,
// `parallelize(j, GPUThread, ...)`). A thread a row merges a long row
// serially; here the row's coordinates are cut into 32 slices, one a lane.
//
// Lane l's slice starts at the coordinate stored l/32 of the way through
// the row of the operand that stores the most of it (lane 0 at the row's
// smallest coordinate of any operand, the last slice ending past its
// largest), so a banded row and a skewed one (a cluster and a few far
// off) give every lane a 32nd of that operand's entries; where a dense
// operand drives the loop (every coordinate visited) the row's dimension
// is cut in equal parts. Each lane finds its slice's first and end
// position in every operand by binary search (an owned range,
// initializeSparseIterator) and runs the ordinary merge over it, serially.
// The slices are disjoint and in order, so the row's entries come out
// sorted and unique, as the thread-a-row form gives them.
//
// Two passes, as the thread-a-row form: the count pass stores each lane's
// appends in laneOffsets[row * 32 + lane + 1]; a prefix sum over all the
// slices (gpuPrefixSums) turns the counts into offsets; a GPU loop copies
// each row's first offset into pos; the host allocates the output's
// columns and values; the fill pass appends each slice from its lane's
// offset. No lane waits on another (no shuffles, no barriers), so the
// loops run unchanged in every backend, the serial CPU check included.
#include <functional>
#include <limits>

#include "../access_occurrences.h"
#include "../lowerer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

constexpr int64_t kLanes = 32;


}  // namespace

// The form applies where a GPUWarp loop over a CSR output's rows holds,
// as its whole body, a GPUThread loop over the output's columns whose body
// has no loop or where of its own. Elsewhere the GPUThread loop meets
// planGpuLoop's refusal of sparse outputs under GPU loops.
void Lowerer::planLaneSlicedRows(const ir::IndexStmt& cin) {
  if (!options_.cudaTarget || rowParallelOutputs_.size() != 1) return;
  const ir::TensorVar& output = *rowParallelOutputs_.begin();
  for (const auto* rows : statementsOf<ir::ForallNode>(cin)) {
    if (rows->attributes.parallelUnit != ir::ParallelUnit::GPUWarp || !rowParallelVars_.count(rows->indexVar))
      continue;
    const auto* columns = rows->body.as<ir::ForallNode>();
    if (!columns || columns->attributes.parallelUnit != ir::ParallelUnit::GPUThread) return;
    if (!statementsOf<ir::ForallNode>(columns->body).empty() || !whereStatements(columns->body).empty()) return;
    auto assignments = ir::assignmentsOf(columns->body);
    if (assignments.size() != 1 || !(assignments[0]->lhs.tensor() == output)) return;
    const ir::Format& format = output.format();
    if (!(assignments[0]->lhs.indices()[format.modeOfLevel(1)] == columns->indexVar)) return;
    laneSlicedRows_ = LaneSlicedRows{output, rows->indexVar, columns->indexVar, Expr(), Expr(), false};
    return;
  }
}

std::vector<Stmt> Lowerer::lowerLaneSlicedRowsInTwoPasses(const ir::IndexStmt& cin) {
  LaneSlicedRows& sliced = *laneSlicedRows_;
  TensorStorage& storage = storageOf(sliced.output);
  const imp::Type int64 = imp::Type::int64();
  Expr rows = ops::cast(int64, storage.dims[sliced.output.format().modeOfLevel(0)]);
  Expr slices = freshVar(storage.name + "2_lane_slices", int64);
  sliced.laneOffsets = freshVar(storage.name + "2_lane_offsets", imp::Type::pointerTo(int64));
  std::vector<Stmt> passes{imp::Declare::make(slices, ops::mul(rows, ops::int64Imm(kLanes))),
                           imp::Declare::make(sliced.laneOffsets, Expr()),
                           imp::Allocate::make(sliced.laneOffsets, ops::add(slices, ops::int64Imm(1)), true)};
  gpuSharedWorkspaces_.push_back(sliced.laneOffsets);  // (device memory the host allocates, zeroed, and frees)
  auto lowerPass = [&](OutputPass pass, const std::string& what) {
    pass_ = pass;
    sliced.lowered = false;
    passes.push_back(imp::Comment::make(what));
    passes.push_back(lower(cin));
    pass_ = OutputPass::Fused;
    if (!sliced.lowered)
      throw LoweringError("internal: the loop over " + sliced.column.name() + " was not lowered in lane slices");
  };
  lowerPass(OutputPass::Count, "count the entries of each lane's slice of each row of " + storage.name +
                                   ", rows on GPU warps");
  std::vector<Stmt> prefixSums = gpuPrefixSums({sliced.laneOffsets}, slices, "the lanes' slices' sizes");
  passes.insert(passes.end(), prefixSums.begin(), prefixSums.end());
  Expr row = freshVar("row", int64);
  passes.push_back(imp::For::make(row, ops::int64Imm(0), ops::add(rows, ops::int64Imm(1)),
                                  imp::Store::make(storage.pos[1], row,
                                                   imp::Load::make(sliced.laneOffsets, ops::mul(row, ops::int64Imm(kLanes)))),
                                  imp::LoopKind::GpuThread, "each row's offset: its first lane's"));
  passes.push_back(imp::Assign::make(storage.appendPosition[1], imp::Load::make(sliced.laneOffsets, slices)));
  Expr entries = ops::max(storage.appendPosition[1], ops::int64Imm(1));
  passes.push_back(imp::Allocate::make(storage.crd[1], entries, false, Expr()));
  passes.push_back(imp::Allocate::make(storage.vals, entries));
  lowerPass(OutputPass::Fill, "fill each lane's slice of each row of " + storage.name +
                                  " from its offset, rows on GPU warps");
  passes.push_back(imp::Free::make(sliced.laneOffsets));
  return passes;
}

Stmt Lowerer::lowerRowInLaneSlices(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                                   bool everyCoordinate) {
  LaneSlicedRows& sliced = *laneSlicedRows_;
  sliced.lowered = true;
  const ir::IndexVar& var = forall->indexVar;
  const imp::Type int64 = imp::Type::int64();
  if (!sliced.rowPosition.defined())
    throw LoweringError("internal: the row of " + sliced.output.name() + " was not bound before its lanes' slices");
  // The row's coordinates: [first, stop).
  Expr first = freshVar(var.name() + "_row_first", int64), stop = freshVar(var.name() + "_row_stop", int64);
  Expr lane = freshVar("lane", int64);
  std::vector<Stmt> stmts;
  // Where the slice of lane `index` (1..31) starts.
  std::function<Expr(const Expr&)> splitter;
  if (everyCoordinate) {
    // (A dense operand's coordinates are all visited: equal parts of the row.)
    stmts.push_back(imp::Declare::make(first, ops::int64Imm(0)));
    stmts.push_back(imp::Declare::make(stop, ops::cast(int64, dimensionOf(var))));
    splitter = [&](const Expr& index) {
      return ops::add(first, ops::div(ops::mul(index, ops::sub(stop, first)), ops::int64Imm(kLanes)));
    };
  } else {
    // The sparse operands' stored coordinates: every lane starts at the
    // coordinate a 32nd of the way through the operand that stores the
    // most of the row, so a banded or skewed row's entries are shared
    // alike; the first lane from the row's smallest, the last to past its
    // largest, of any operand.
    Expr smallest, largest, longest;
    struct Operand {
      Expr crd, begin, length;
    };
    std::vector<Operand> operands;
    for (const auto& it : iterators) {
      if (it.locatable()) continue;
      requireParallelizable(forall, !it.workspaceList && it.format.isOrderedCompressed(),
                            "a row of " + sliced.output.name() + " is split among a warp's lanes, each finding its "
                            "slice in " + it.tensor.name() + " by binary search, but " + it.tensor.name() + "'s " +
                            it.format.toString() + " level cannot be searched; store it as an ordered compressed "
                            "level, or run a row a GPU thread (parallelize the rows over GPUThread)");
      const TensorStorage& operand = storageOf(it.tensor);
      const std::string base = "p" + it.tensor.name() + std::to_string(it.level + 1);
      Expr parent = parentPosition(it.access, it.level);
      Expr begin = freshVar(base + "_row_begin", int64), length = freshVar(base + "_row_length", int64);
      stmts.push_back(imp::Declare::make(begin, imp::Load::make(operand.pos[it.level], parent)));
      stmts.push_back(imp::Declare::make(
          length, ops::sub(imp::Load::make(operand.pos[it.level], ops::add(parent, ops::int64Imm(1))), begin)));
      Expr stored = ops::gt(length, ops::int64Imm(0));
      const Expr& crd = operand.crd[it.level];
      Expr low = imp::Select::make(stored, ops::cast(int64, imp::Load::make(crd, begin)),
                                   ops::int64Imm(std::numeric_limits<int32_t>::max()));
      Expr lastAt = ops::sub(ops::add(begin, length), ops::int64Imm(1));
      Expr high = imp::Select::make(stored, ops::add(ops::cast(int64, imp::Load::make(crd, lastAt)), ops::int64Imm(1)),
                                    ops::int64Imm(0));
      smallest = smallest.defined() ? ops::min(smallest, low) : low;
      largest = largest.defined() ? ops::max(largest, high) : high;
      longest = longest.defined() ? ops::max(longest, length) : length;
      operands.push_back({crd, begin, length});
    }
    if (operands.empty())
      throw LoweringError("internal: no sparse operand iterates " + var.name() + " in a row of " +
                          sliced.output.name());
    stmts.push_back(imp::Declare::make(first, smallest));
    stmts.push_back(imp::Declare::make(stop, largest));
    Expr lead = freshVar(var.name() + "_row_longest", int64);
    stmts.push_back(imp::Declare::make(lead, longest));
    splitter = [&, operands, lead](const Expr& index) {
      // (The first operand that stores the longest part of the row; the
      // chain's final case is taken only where it is the last operand.)
      auto at = [&](const Operand& operand) {
        Expr position = ops::add(operand.begin, ops::div(ops::mul(index, operand.length), ops::int64Imm(kLanes)));
        return ops::cast(int64, imp::Load::make(operand.crd, position));
      };
      Expr chosen = at(operands.back());
      for (size_t k = operands.size() - 1; k-- > 0;)
        chosen = imp::Select::make(ops::eq(operands[k].length, lead), at(operands[k]), chosen);
      // (No operand stores the row: every slice is empty.)
      return imp::Select::make(ops::gt(lead, ops::int64Imm(0)), chosen, first);
    };
  }

  Expr slice = ops::add(ops::mul(sliced.rowPosition, ops::int64Imm(kLanes)), lane);
  Expr sliceFirst = freshVar(var.name() + "_slice_first", int64);
  Expr sliceStop = freshVar(var.name() + "_slice_stop", int64);
  TensorStorage& output = storageOf(sliced.output);
  Expr own = freshVar("p" + output.name + "2_lane", int64);
  std::vector<Stmt> body{
      imp::Declare::make(sliceFirst, imp::Select::make(ops::eq(lane, ops::int64Imm(0)), first, splitter(lane))),
      imp::Declare::make(sliceStop, imp::Select::make(ops::eq(lane, ops::int64Imm(kLanes - 1)), stop,
                                                      splitter(ops::add(lane, ops::int64Imm(1))))),
      imp::Declare::make(own, pass_ == OutputPass::Count ? ops::int64Imm(0) : imp::Load::make(sliced.laneOffsets, slice))};
  LoopPlan plan;
  plan.kind = imp::LoopKind::GpuThread;
  {
    LoopScope scope(*this, plan);
    OwnedRangeScope owned(*this, var, {sliceFirst, sliceStop});
    ir::ForallAttributes serial = forall->attributes;
    serial.parallelUnit = ir::ParallelUnit::NotParallel;
    serial.outputRaceStrategy = ir::OutputRaceStrategy::IgnoreRaces;
    Expr shared = output.appendPosition[1];
    output.appendPosition[1] = own;
    try {
      body.push_back(lower(ir::ForallNode::make(var, forall->body, serial)));
    } catch (...) {
      output.appendPosition[1] = shared;
      throw;
    }
    output.appendPosition[1] = shared;
  }
  if (pass_ == OutputPass::Count)
    body.push_back(imp::Store::make(sliced.laneOffsets, ops::add(slice, ops::int64Imm(1)), own));
  stmts.push_back(imp::For::make(lane, ops::int64Imm(0), ops::int64Imm(kLanes), imp::Block::make(body), imp::LoopKind::GpuThread,
                                 "the row's coordinates of " + var.name() + " in " + std::to_string(kLanes) +
                                     " slices, one a lane of the warp"));
  return imp::Block::make(stmts);
}

}  // namespace tcc::lowering
