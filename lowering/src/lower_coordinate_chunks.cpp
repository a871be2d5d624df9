// A loop on CPU threads that merges sparse operands' cursors (a union of
// DCSR rows, `Y(i,j) = A(i,j) + B(i,j)`, or sparse rows beside a dense
// operand): its cursors carry from one coordinate to the next, so its
// iterations cannot be handed to threads one by one. Instead the
// coordinates [0, extent) are cut into equal ranges, taken by the threads
// dynamically; each range starts every operand's cursor at its first
// stored coordinate in the range (a binary search of the level's crd
// within its segment, initializeSparseIterator) and ends it at the first
// past the range, and merges as the serial loop does. The ranges write
// disjoint coordinates of the variable, so what holds for the parallel
// loop's outputs (planLoop's checks: rows of an output assembled in
// parallel, a reduction, a per-thread sparse workspace) holds for them.
//
// The ranges also append in order to an output whose first level is
// compressed and indexed by the loop's variable (DCSR): range c's part of
// each level follows range c-1's. So the output is assembled in place, in
// two passes over the ranges (RangeAppendedOutput): the first runs each
// range's merge without stores and counts its appends to every level, a
// prefix sum over the ranges turns the counts into offsets, and the second
// appends each range from its offsets, as the serial loop appends, into
// arrays allocated exactly. (A per-thread sparse workspace would hash,
// sort and merge every entry instead.) Dense levels above the compressed
// ones append nothing: a range's segments of the first compressed level
// sit at the dense positions of its coordinates, whose pos entries the
// fill pass stores (a `{dense, dense, compressed}` output). Where
// statements below the loop (a sum into a scalar temporary, a precompute)
// fill temporaries that each thread keeps its own copy of, in both passes.
#include "access_occurrences.h"
#include "lowerer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

// Many ranges a thread: the rows the operands store may gather in a few
// ranges, which the dynamic schedule then spreads; each range costs only
// two binary searches an operand (and, appending an output, two counts).
constexpr int kChunksPerThread = 16;

Expr rangesOfThreads() {
  const imp::Type int64 = imp::Type::int64();
  return ops::mul(ops::IntImm::make(kChunksPerThread, int64),
                  ops::cast(int64, imp::Call::make("omp_get_max_threads", {}, imp::Type::int32())));
}

}  // namespace

bool Lowerer::mergesInCoordinateChunks(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                                       bool countedByLoneDriver) const {
  const ir::IndexVar& var = forall->indexVar;
  if (!forall->attributes.onThreads() || options_.cudaTarget || insideParallelLoop_ || insideVectorLoop_) return false;
  if (workPass_ || pass_ == OutputPass::Chunk || !remainderRoles_.empty() || relationOf_.count(var) ||
      pinnedCoordinates_.count(var) || pinnedPositions_.count(var) || ownedRanges_.count(var.name()))
    return false;
  for (const auto& it : iterators) {
    if (it.locatable()) continue;
    // A range's cursor is found by a binary search of ordered coordinates.
    if (it.workspaceList || it.format.kind != ir::LevelKind::Compressed || !it.format.ordered) return false;
  }
  // An output the ranges append to (rangesAppend) is appended in ranges
  // whichever way the loop runs: over one level's positions (cut by the
  // binary searches) or over the plain coordinates.
  if (rangeAppended_ && rangeAppended_->var == var && (pass_ == OutputPass::Count || pass_ == OutputPass::Fill))
    return true;
  // Else a counted loop over one level, the threads split its positions;
  // a loop over the coordinates, its iterations.
  if (countedByLoneDriver) return false;
  return std::any_of(iterators.begin(), iterators.end(), [](const LevelIterator& it) { return !it.locatable(); });
}

Stmt Lowerer::lowerInCoordinateChunks(const ir::ForallNode* forall, const std::string& how) {
  const ir::IndexVar& var = forall->indexVar;
  // The passes of an output these ranges append to share the ranges.
  const bool appends = rangeAppended_ && rangeAppended_->var == var &&
                       (pass_ == OutputPass::Count || pass_ == OutputPass::Fill);
  if (appends) rangeAppended_->lowered = true;
  LoopPlan plan = planLoop(forall);
  usesOpenMP_ = true;
  const imp::Type int64 = imp::Type::int64();
  Expr chunks = appends ? rangeAppended_->ranges : freshVar(var.name() + "_chunks", int64);
  Expr chunk = freshVar(var.name() + "_chunk", int64);
  Expr extent = freshVar(var.name() + "_extent", int64);
  Expr first = freshVar(var.name() + "_first", int64);
  Expr stop = freshVar(var.name() + "_stop", int64);
  std::vector<Stmt> before{imp::Declare::make(extent, ops::cast(int64, dimensionOf(var)))};
  if (!appends) before.push_back(imp::Declare::make(chunks, rangesOfThreads()));

  ir::ForallAttributes serial = forall->attributes;
  serial.parallelUnit = ir::ParallelUnit::NotParallel;
  serial.outputRaceStrategy = ir::OutputRaceStrategy::IgnoreRaces;
  ir::IndexStmt nest = ir::ForallNode::make(var, forall->body, serial);
  std::vector<Stmt> body;
  {
    LoopScope scope(*this, plan);
    body = scope.iterationPrologue();
    body.push_back(imp::Declare::make(first, ops::div(ops::mul(chunk, extent), chunks)));
    body.push_back(
        imp::Declare::make(stop, ops::div(ops::mul(ops::add(chunk, ops::IntImm::make(1, int64)), extent), chunks)));
    OwnedRangeScope owned(*this, var, {first, stop});
    // The range's own append positions: from 0 when counting, from its
    // offsets when appending.
    std::vector<Expr> shared;
    TensorStorage* output = appends ? &storageOf(rangeAppended_->output) : nullptr;
    if (output) {
      shared = output->appendPosition;
      for (size_t level = 0; level < shared.size(); ++level) {
        if (!shared[level].defined()) continue;  // (a dense level: no appends)
        Expr own = freshVar("p" + output->name + std::to_string(level + 1) + "_range", int64);
        const Expr& offsets = rangeAppended_->offsets[level];
        body.push_back(imp::Declare::make(
            own, pass_ == OutputPass::Count ? ops::IntImm::make(0, int64) : imp::Load::make(offsets, chunk)));
        output->appendPosition[level] = own;
      }
    }
    try {
      body.push_back(lower(nest));
    } catch (...) {
      if (output) output->appendPosition = shared;
      throw;
    }
    if (output) {
      if (pass_ == OutputPass::Count)
        for (size_t level = 0; level < shared.size(); ++level)
          if (shared[level].defined())
            body.push_back(imp::Store::make(rangeAppended_->offsets[level], ops::add(chunk, ops::IntImm::make(1, int64)),
                                          output->appendPosition[level]));
      output->appendPosition = shared;
    }
  }
  before.push_back(imp::For::make(chunk, ops::IntImm::make(0, int64), chunks, imp::Block::make(body),
                                  imp::LoopKind::Parallel,
                                  "ranges of " + var.name() + " on the threads, " + how,
                                  0, plan.reductions, 1));
  return imp::Block::make(before);
}

bool Lowerer::rangesAppend(const ir::ForallNode* forall, const ir::AssignmentNode* assignment) const {
  const ir::TensorVar& output = assignment->lhs.tensor();
  const bool parallel = options_.cudaTarget ? ir::isGpuUnit(forall->attributes.parallelUnit)
                                            : forall->attributes.onThreads();
  if (!parallel || !isParameter(output) || output.order() == 0 ||
      sparseWorkspaceOutputs_.count(output) || relationOf_.count(forall->indexVar))
    return false;
  // The levels above the first compressed one are dense (an output tcc
  // assembles has no other kind there): a range's segments of each level
  // follow the previous range's, the dense ones' at their own positions.
  // (The cuda target binds a coordinate's appends at a compressed first
  // level only.)
  const ir::Format& format = output.format();
  const int firstSparse = format.firstSparseLevel();
  if (firstSparse == format.order() || (options_.cudaTarget && firstSparse > 0)) return false;
  if (format.level(firstSparse).kind != ir::LevelKind::Compressed || !format.level(firstSparse).unique ||
      !(assignment->lhs.indices()[format.modeOfLevel(0)] == forall->indexVar))
    return false;
  // (Each level appended in order, each coordinate once.)
  for (int level = 0; level < format.order(); ++level)
    if (visitOrder_.repeatedLevels.count({output, level}) || visitOrder_.outOfOrderLevels.count({output, level}))
      return false;
  return true;
}

const ir::AssignmentNode* Lowerer::assignmentAppendedByRanges(const ir::ForallNode* top) const {
  const auto assignments = ir::assignmentsOf(top->body);
  if (options_.cudaTarget) {
    // (The cuda target's form: the loop's one assignment, no where.)
    if (assignments.size() != 1 || !whereStatements(top->body).empty()) return nullptr;
    return rangesAppend(top, assignments[0]) ? assignments[0] : nullptr;
  }
  const ir::AssignmentNode* appended = nullptr;
  for (const auto* assignment : assignments) {
    if (!isParameter(assignment->lhs.tensor())) continue;
    if (appended) return nullptr;
    appended = assignment;
  }
  if (!appended || !rangesAppend(top, appended)) return nullptr;
  // Each input's level for the loop's variable is cut into ranges by a
  // binary search of its coordinates, or located (mergesInCoordinateChunks);
  // the statement's own (concretized) loops ensure it, a sum's or a
  // precompute's reads below the top may not.
  const ir::IndexVar& var = top->indexVar;
  for (const auto* access : accessOccurrences(top->body)) {
    if (!isParameter(access->tensor) || access->tensor.order() == 0) continue;
    const ir::Format& format = access->tensor.format();
    for (int level = 0; level < format.order(); ++level) {
      if (!(access->indices[format.modeOfLevel(level)] == var)) continue;
      const ir::LevelFormat& stored = format.level(level);
      if (level > 0 || !(stored.isDense() || (stored.kind == ir::LevelKind::Compressed && stored.ordered)))
        return nullptr;
    }
  }
  return appended;
}

// The cuda target's form: each coordinate of the GPU loop is a range of
// its own (offsets indexed by the coordinate, bound at the output's first
// level, bindGpuCoordinateAppends), the prefix sums run on GPU loops
// (gpuPrefixSums), a GPU thread ends the first level's pos, and the host
// allocates the output's arrays once the counts are read back (zeroed pos
// arrays: their first entries stay 0).
std::vector<Stmt> Lowerer::lowerRangesAppendingInTwoPasses(const ir::IndexStmt& cin) {
  RangeAppendedOutput& appended = *rangeAppended_;
  TensorStorage& storage = storageOf(appended.output);
  const int levels = appended.output.order();
  const imp::Type int64 = imp::Type::int64();
  auto imm = [&](int64_t value) { return ops::IntImm::make(value, int64); };
  const bool gpu = appended.onGpu;
  appended.ranges = freshVar(appended.var.name() + (gpu ? "_coordinates" : "_ranges"), int64);
  std::vector<Stmt> passes{
      imp::Declare::make(appended.ranges, gpu ? ops::cast(int64, dimensionOf(appended.var)) : rangesOfThreads())};
  const ir::Format& format = appended.output.format();
  for (int level = 0; level < levels; ++level) {
    if (format.level(level).isDense()) {
      appended.offsets.push_back(Expr());
      continue;
    }
    Expr offsets = freshVar(storage.name + std::to_string(level + 1) + (gpu ? "_coordinate_offsets" : "_range_offsets"),
                            imp::Type::pointerTo(int64));
    appended.offsets.push_back(offsets);
    passes.push_back(imp::Declare::make(offsets, Expr()));
    passes.push_back(imp::Allocate::make(offsets, ops::add(appended.ranges, imm(1)), true));
    if (gpu) gpuSharedWorkspaces_.push_back(offsets);  // (device memory the host allocates, zeroed, and frees)
  }
  auto lowerPass = [&](OutputPass pass, const std::string& what) {
    pass_ = pass;
    appended.lowered = false;
    passes.push_back(imp::Comment::make(what));
    passes.push_back(lower(cin));
    pass_ = OutputPass::Fused;
    if (!appended.lowered)
      throw LoweringError("internal: the loop over " + appended.var.name() + " was not lowered in ranges");
  };
  lowerPass(OutputPass::Count, gpu ? "count each coordinate of " + appended.var.name() + "'s appends to " +
                                         storage.name + "'s levels, coordinates on GPU threads"
                                   : "count each range of " + appended.var.name() + "'s appends to " + storage.name +
                                         "'s levels, ranges on the threads");
  if (gpu) {
    std::vector<Stmt> prefixSums = gpuPrefixSums(appended.offsets, appended.ranges, "the coordinates' counts");
    passes.insert(passes.end(), prefixSums.begin(), prefixSums.end());
    // (A GPU thread ends the first level's only segment: the host writes
    // no device memory.)
    Expr thread = freshVar("thread", imp::Type::int32());
    Stmt end = imp::Store::make(storage.pos[0], imm(1), imp::Load::make(appended.offsets[0], appended.ranges));
    passes.push_back(imp::For::make(thread, ops::IntImm::make(0), ops::IntImm::make(1), end, imp::LoopKind::GpuThread,
                                    "the end of the first level's segment, on one GPU thread"));
  } else {
    Expr range = freshVar(appended.var.name() + "_range", int64);
    std::vector<Stmt> sums;
    for (const auto& offsets : appended.offsets)
      if (offsets.defined())
        sums.push_back(imp::Store::make(offsets, ops::add(range, imm(1)), imp::Load::make(offsets, range), true));
    passes.push_back(imp::For::make(range, imm(0), appended.ranges, imp::Block::make(sums), imp::LoopKind::Serial,
                                    "the ranges' counts to their offsets (prefix sum)"));
  }
  // Every level's arrays, exactly sized (the counting pass wrote none of
  // them). (The pos of a level below dense ones, one segment a position of
  // theirs, was allocated with the output.)
  for (int level = 0; level < levels; ++level) {
    if (format.level(level).isDense()) continue;
    Expr total = storage.appendPosition[level];
    passes.push_back(imp::Assign::make(total, imp::Load::make(appended.offsets[level], appended.ranges)));
    Expr entries = ops::max(total, imm(1));
    passes.push_back(imp::Allocate::make(storage.crd[level], entries, false, gpu ? Expr() : imm(0)));
    if (!gpu) passes.push_back(imp::Assign::make(storage.crdCapacity[level], entries));
    if (level + 1 < levels) {
      Expr ends = ops::add(total, imm(1));
      if (gpu) {
        passes.push_back(imp::Allocate::make(storage.pos[level + 1], ends, true));
        continue;
      }
      passes.push_back(imp::Allocate::make(storage.pos[level + 1], ends, false, imm(0)));
      passes.push_back(imp::Store::make(storage.pos[level + 1], imm(0), imm(0)));
      passes.push_back(imp::Assign::make(storage.posCapacity[level + 1], ends));
    }
  }
  // (Assembled apart from its values, assemble(..., true), the output's
  // values were never allocated: nothing to keep.)
  Expr values = ops::max(storage.appendPosition[levels - 1], imm(1));
  passes.push_back(options_.separateAssembly || gpu ? imp::Allocate::make(storage.vals, values)
                                                    : imp::Allocate::make(storage.vals, values, false, imm(0)));
  lowerPass(OutputPass::Fill, gpu ? "append each coordinate of " + appended.var.name() + " to " + storage.name +
                                        " from its offsets, coordinates on GPU threads"
                                  : "append each range of " + appended.var.name() + " to " + storage.name +
                                        " from its offsets, ranges on the threads");
  for (const auto& offsets : appended.offsets)
    if (offsets.defined()) passes.push_back(imp::Free::make(offsets));
  return passes;
}

}  // namespace tcc::lowering

namespace tcc::lowering {

bool Lowerer::appendsByGpuCoordinate(const ir::AccessNode* lhs, int level) const {
  return level == 0 && rangeAppended_ && rangeAppended_->onGpu && rangeAppended_->output == lhs->tensor &&
         (pass_ == OutputPass::Count || pass_ == OutputPass::Fill);
}

std::vector<Stmt> Lowerer::bindGpuCoordinateAppends(const Expr& coordinate) {
  RangeAppendedOutput& appended = *rangeAppended_;
  appended.lowered = true;
  TensorStorage& output = storageOf(appended.output);
  const imp::Type int64 = imp::Type::int64();
  appended.sharedAppends = output.appendPosition;
  std::vector<Stmt> stmts;
  for (size_t level = 0; level < output.appendPosition.size(); ++level) {
    Expr own = freshVar("p" + output.name + std::to_string(level + 1) + "_own", int64);
    stmts.push_back(imp::Declare::make(own, pass_ == OutputPass::Count
                                                ? ops::IntImm::make(0, int64)
                                                : imp::Load::make(appended.offsets[level],
                                                                  ops::cast(int64, coordinate))));
    output.appendPosition[level] = own;
  }
  return stmts;
}

std::vector<Stmt> Lowerer::releaseGpuCoordinateAppends(const Expr& coordinate) {
  RangeAppendedOutput& appended = *rangeAppended_;
  TensorStorage& output = storageOf(appended.output);
  std::vector<Stmt> stmts;
  if (pass_ == OutputPass::Count)
    for (size_t level = 0; level < output.appendPosition.size(); ++level)
      stmts.push_back(imp::Store::make(appended.offsets[level],
                                       ops::add(ops::cast(imp::Type::int64(), coordinate),
                                                ops::IntImm::make(1, imp::Type::int64())),
                                       output.appendPosition[level]));
  output.appendPosition = appended.sharedAppends;
  return stmts;
}

}  // namespace tcc::lowering
