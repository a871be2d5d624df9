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
// each level follows range c-1's. So the output is assembled in place
// (RangeAppendedOutput): in one pass (lowerRangesAppendingInOnePass), each
// thread appending the ranges it claims to arrays of its own and copying
// each to its offsets; or in two passes over the ranges: the first runs
// each range's merge without stores and counts its appends to every level,
// a prefix sum over the ranges turns the counts into offsets, and the
// second appends each range from its offsets, as the serial loop appends,
// into arrays allocated exactly. (A per-thread sparse workspace would
// hash, sort and merge every entry instead.)
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
  // (The rows in one pass go in chunks of rows, not of coordinates.)
  const bool rangesInOnePass = rangeAppended_ && rangeAppended_->onePass;
  if (workPass_ || (pass_ == OutputPass::Chunk && !rangesInOnePass) || !remainderRoles_.empty() ||
      relationOf_.count(var) || pinnedCoordinates_.count(var) || pinnedPositions_.count(var) ||
      ownedRanges_.count(var.name()))
    return false;
  for (const auto& it : iterators) {
    if (it.locatable()) continue;
    // A range's cursor is found by a binary search of ordered coordinates.
    if (it.workspaceList || it.format.kind != ir::LevelKind::Compressed || !it.format.ordered) return false;
  }
  // An output the ranges append to (rangesAppend) is appended in ranges
  // whichever way the loop runs: over one level's positions (cut by the
  // binary searches) or over the plain coordinates.
  if (rangeAppended_ && rangeAppended_->var == var &&
      (pass_ == OutputPass::Count || pass_ == OutputPass::Fill || pass_ == OutputPass::Chunk))
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
                       (pass_ == OutputPass::Count || pass_ == OutputPass::Fill || pass_ == OutputPass::Chunk);
  const bool onePass = appends && pass_ == OutputPass::Chunk;
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
    if (onePass) {
      std::vector<Stmt> range = lowerRangeIntoThreadArrays(nest, chunk);
      body.insert(body.end(), range.begin(), range.end());
    } else {
      // The range's own append positions: from 0 when counting, from its
      // offsets when appending.
      std::vector<Expr> shared;
      TensorStorage* output = appends ? &storageOf(rangeAppended_->output) : nullptr;
      if (output) {
        shared = output->appendPosition;
        for (size_t level = 0; level < shared.size(); ++level) {
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
            body.push_back(imp::Store::make(rangeAppended_->offsets[level], ops::add(chunk, ops::IntImm::make(1, int64)),
                                            output->appendPosition[level]));
        output->appendPosition = shared;
      }
    }
  }
  if (onePass) {
    if (!plan.reductions.empty())
      throw LoweringError("internal: the ranges of " + var.name() + " that append in one pass reduce a value");
    RangeAppendedOutput& appended = *rangeAppended_;
    std::vector<Expr> capacities;
    std::vector<std::pair<Expr, Expr>> arrays;
    for (const auto& level : appended.thread) {
      capacities.push_back(level.crdCapacity);
      arrays.push_back({level.crd, level.crdCapacity});
      if (!level.pos.defined()) continue;
      capacities.push_back(level.posCapacity);
      arrays.push_back({level.pos, level.posCapacity});
    }
    arrays.push_back({appended.threadVals, appended.thread.back().crdCapacity});
    body.insert(body.begin(), imp::Comment::make("ranges of " + var.name() + " on the threads, " + how));
    before.push_back(claimChunksOnThreads(capacities, arrays, ops::add(appended.offsets[0], chunks), chunks, chunk,
                                          body));
    return imp::Block::make(before);
  }
  before.push_back(imp::For::make(chunk, ops::IntImm::make(0, int64), chunks, imp::Block::make(body),
                                  imp::LoopKind::Parallel,
                                  "ranges of " + var.name() + " on the threads, " + how,
                                  0, plan.reductions, 1));
  return imp::Block::make(before);
}

std::vector<Stmt> Lowerer::lowerRangeIntoThreadArrays(const ir::IndexStmt& nest, const Expr& range) {
  RangeAppendedOutput& appended = *rangeAppended_;
  TensorStorage& storage = storageOf(appended.output);
  const size_t levels = appended.thread.size();
  const imp::Type int64 = imp::Type::int64();
  auto imm = [&](int64_t value) { return ops::IntImm::make(value, int64); };
  // The thread's arrays stand in for the output's while the range is
  // lowered; each range appends to them from 0 (a level's ends from 0 too).
  const TensorStorage output = storage;
  std::vector<Stmt> stmts;
  for (size_t level = 0; level < levels; ++level) {
    const auto& own = appended.thread[level];
    stmts.push_back(imp::Declare::make(own.append, imm(0)));
    storage.crd[level] = own.crd;
    storage.crdCapacity[level] = own.crdCapacity;
    storage.appendPosition[level] = own.append;
    if (own.pos.defined()) {
      stmts.push_back(imp::Store::make(own.pos, imm(0), imm(0)));
      storage.pos[level + 1] = own.pos;
      storage.posCapacity[level + 1] = own.posCapacity;
    }
  }
  storage.vals = appended.threadVals;
  try {
    stmts.push_back(lower(nest));
  } catch (...) {
    storage = output;
    throw;
  }
  storage.crd = output.crd;
  storage.pos = output.pos;
  storage.vals = output.vals;
  storage.crdCapacity = output.crdCapacity;
  storage.posCapacity = output.posCapacity;
  storage.appendPosition = output.appendPosition;
  // Each level's offset from the ranges before this one (a look-back:
  // ranges are claimed in order), then the range's part of every level
  // copied there, its ends moved by the next level's offset.
  std::vector<Expr> offsets;
  for (size_t level = 0; level < levels; ++level) {
    offsets.push_back(freshVar("p" + storage.name + std::to_string(level + 1) + "_range", int64));
    Expr size = appended.thread[level].append;
    stmts.push_back(imp::Declare::make(
        offsets.back(), imp::Call::make("tcc_chunk_offset", {appended.offsets[level], range, size}, int64)));
  }
  const bool streaming = streamedOutputs_.count(appended.output) > 0;
  for (size_t level = 0; level < levels; ++level) {
    const auto& own = appended.thread[level];
    Expr copied = freshVar("p" + storage.name + std::to_string(level + 1) + "_copy", int64);
    Expr to = ops::add(offsets[level], copied);
    std::vector<Stmt> copy{imp::Store::make(output.crd[level], to, imp::Load::make(own.crd, copied), false, false,
                                            streaming)};
    if (own.pos.defined()) {
      Expr end = imp::Load::make(own.pos, ops::add(copied, imm(1)));
      copy.push_back(imp::Store::make(output.pos[level + 1], ops::add(to, imm(1)), ops::add(end, offsets[level + 1])));
    }
    else
      copy.push_back(imp::Store::make(output.vals, to, imp::Load::make(appended.threadVals, copied), false, false,
                                      streaming));
    std::string what = level + 1 < levels ? "the range's coordinates of level " + std::to_string(level + 1) +
                                                " and their segments' ends to their offsets"
                                          : "the range's entries to their offset";
    stmts.push_back(imp::For::make(copied, imm(0), own.append, imp::Block::make(copy), imp::LoopKind::Serial, what));
  }
  return stmts;
}

bool Lowerer::rangesAppend(const ir::ForallNode* forall, const ir::AssignmentNode* assignment) const {
  const ir::TensorVar& output = assignment->lhs.tensor();
  if (!forall->attributes.onThreads() || options_.cudaTarget || !isParameter(output) || output.order() == 0 ||
      sparseWorkspaceOutputs_.count(output) || relationOf_.count(forall->indexVar))
    return false;
  const ir::Format& format = output.format();
  if (format.level(0).kind != ir::LevelKind::Compressed || !format.level(0).unique ||
      !(assignment->lhs.indices()[format.modeOfLevel(0)] == forall->indexVar))
    return false;
  // (Each level appended in order, each coordinate once.)
  for (int level = 0; level < format.order(); ++level)
    if (visitOrder_.repeatedLevels.count({output, level}) || visitOrder_.outOfOrderLevels.count({output, level}))
      return false;
  return true;
}

std::vector<Stmt> Lowerer::lowerRangesAppendingInTwoPasses(const ir::IndexStmt& cin) {
  RangeAppendedOutput& appended = *rangeAppended_;
  TensorStorage& storage = storageOf(appended.output);
  const int levels = appended.output.order();
  const imp::Type int64 = imp::Type::int64();
  auto imm = [&](int64_t value) { return ops::IntImm::make(value, int64); };
  appended.ranges = freshVar(appended.var.name() + "_ranges", int64);
  std::vector<Stmt> passes{imp::Declare::make(appended.ranges, rangesOfThreads())};
  for (int level = 0; level < levels; ++level) {
    Expr offsets = freshVar(storage.name + std::to_string(level + 1) + "_range_offsets", imp::Type::pointerTo(int64));
    appended.offsets.push_back(offsets);
    passes.push_back(imp::Declare::make(offsets, Expr()));
    passes.push_back(imp::Allocate::make(offsets, ops::add(appended.ranges, imm(1)), true));
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
  lowerPass(OutputPass::Count, "count each range of " + appended.var.name() + "'s appends to " + storage.name +
                                   "'s levels, ranges on the threads");
  Expr range = freshVar(appended.var.name() + "_range", int64);
  std::vector<Stmt> sums;
  for (const auto& offsets : appended.offsets)
    sums.push_back(imp::Store::make(offsets, ops::add(range, imm(1)), imp::Load::make(offsets, range), true));
  passes.push_back(imp::For::make(range, imm(0), appended.ranges, imp::Block::make(sums), imp::LoopKind::Serial,
                                  "the ranges' counts to their offsets (prefix sum)"));
  // Every level's arrays, exactly sized (the counting pass wrote none of them).
  for (int level = 0; level < levels; ++level) {
    Expr total = storage.appendPosition[level];
    passes.push_back(imp::Assign::make(total, imp::Load::make(appended.offsets[level], appended.ranges)));
    Expr entries = ops::max(total, imm(1));
    passes.push_back(imp::Allocate::make(storage.crd[level], entries, false, imm(0)));
    passes.push_back(imp::Assign::make(storage.crdCapacity[level], entries));
    if (level + 1 < levels) {
      Expr ends = ops::add(total, imm(1));
      passes.push_back(imp::Allocate::make(storage.pos[level + 1], ends, false, imm(0)));
      passes.push_back(imp::Store::make(storage.pos[level + 1], imm(0), imm(0)));
      passes.push_back(imp::Assign::make(storage.posCapacity[level + 1], ends));
    }
  }
  // (Assembled apart from its values, assemble(..., true), the output's
  // values were never allocated: nothing to keep.)
  Expr values = ops::max(storage.appendPosition[levels - 1], imm(1));
  passes.push_back(options_.separateAssembly ? imp::Allocate::make(storage.vals, values)
                                             : imp::Allocate::make(storage.vals, values, false, imm(0)));
  lowerPass(OutputPass::Fill, "append each range of " + appended.var.name() + " to " + storage.name +
                                  " from its offsets, ranges on the threads");
  for (const auto& offsets : appended.offsets) passes.push_back(imp::Free::make(offsets));
  return passes;
}

// The one-pass form of an output the ranges append to: each thread claims
// ranges in order from a shared counter, appends a range's part of every
// level to arrays of its own (grown as a serial kernel's are, from
// tcc_chunk_capacity() entries: they stay in its cache), learns the
// range's offsets from the ranges before it (a decoupled look-back,
// tcc_chunk_offset, one a level: a range waits only on ranges that threads
// claimed before it and are appending), and copies its part there. Each
// operand is merged once; the two-pass form merges every range twice
// (count, fill), which on short rows cost more than the merge saved.
// As the rows in one pass (lowerRowsInOnePass), the output's arrays are
// allocated before the ranges run, at the bound the operands give
// (onePassBound: the serial kernel's first capacity); without one (a
// dense or COO operand, several operands read at other levels), or where
// a level is not compressed, the two-pass form stays. It stays too where
// one operand drives the loops alone (`2 * B(i,j)`, CSF times a dense
// vector): there the counting pass only reads that operand's positions,
// which costs less than the one pass's copy of every entry.
std::optional<std::vector<Stmt>> Lowerer::lowerRangesAppendingInOnePass(const ir::IndexStmt& cin, std::string& whyNot) {
  RangeAppendedOutput& appended = *rangeAppended_;
  const ir::TensorVar output = appended.output;
  const ir::Format& format = output.format();
  if (!options_.rowsInOnePass) {
    whyNot = "the one-pass form is turned off";
    return std::nullopt;
  }
  if (options_.separateAssembly) {
    whyNot = "its values are allocated apart from its coordinates";
    return std::nullopt;
  }
  for (int level = 0; level < format.order(); ++level)
    if (format.level(level).kind != ir::LevelKind::Compressed || !format.level(level).unique) {
      whyNot = "its level " + std::to_string(level + 1) + " is not compressed";
      return std::nullopt;
    }
  TensorStorage& storage = storageOf(output);
  auto assignments = ir::assignmentsOf(cin);
  bool merges = false;
  Expr bound = assignments.size() == 1 ? onePassBound(cin, assignments[0], appended.var, false, &merges) : Expr();
  if (!bound.defined()) {
    whyNot = "its operands give no bound on its entries, which one pass allocates before the ranges run";
    return std::nullopt;
  }
  if (!merges) {
    whyNot = "one operand drives the loops alone, so the counting pass reads only its positions: cheaper than "
             "copying every entry out of the threads' arrays";
    return std::nullopt;
  }
  const int levels = output.order();
  const imp::Type int64 = imp::Type::int64();
  auto imm = [&](int64_t value) { return ops::IntImm::make(value, int64); };
  // (The declarations allocate the last level and the values at the bound,
  // as for a serial kernel.)
  storage.firstCapacity = bound;
  appended.onePass = true;
  appended.ranges = freshVar(appended.var.name() + "_ranges", int64);
  Expr extent = ops::cast(int64, dimensionOf(appended.var));
  std::vector<Stmt> passes{
      imp::Comment::make("ranges of " + appended.var.name() + " claimed in order by the threads, in one pass: each "
                         "range appended to the thread's arrays, then copied to its offsets"),
      imp::Declare::make(appended.ranges,
                         imp::Call::make("tcc_ranges_of", {extent, bound, threadCount()}, int64))};
  for (int level = 0; level < levels; ++level) {
    // A level's look-back state; level 1's holds the counter past its end.
    Expr state = freshVar(storage.name + std::to_string(level + 1) + "_range_state", imp::Type::pointerTo(int64));
    appended.offsets.push_back(state);
    passes.push_back(imp::Declare::make(state, Expr()));
    passes.push_back(imp::Allocate::make(state, ops::add(appended.ranges, imm(1)), true));
    RangeAppendedOutput::ThreadLevel own;
    const std::string prefix = storage.name + std::to_string(level + 1);
    own.crd = freshVar(prefix + "_crd_of_thread", storage.crd[level].type());
    own.crdCapacity = freshVar(prefix + "_capacity_of_thread", int64);
    own.append = freshVar("p" + prefix + "_thread", int64);
    if (level + 1 < levels) {
      own.pos = freshVar(storage.name + std::to_string(level + 2) + "_pos_of_thread", storage.pos[level + 1].type());
      own.posCapacity = freshVar(storage.name + std::to_string(level + 2) + "_pos_capacity_of_thread", int64);
      // Every entry of a level above the last has an entry below it.
      Expr entries = level == 0 ? ops::min(bound, extent) : bound;
      passes.push_back(imp::Assign::make(storage.crdCapacity[level], ops::max(entries, imm(1))));
      passes.push_back(imp::Allocate::make(storage.crd[level], storage.crdCapacity[level], false, imm(0)));
      passes.push_back(imp::Assign::make(storage.posCapacity[level + 1], ops::add(entries, imm(1))));
      passes.push_back(imp::Allocate::make(storage.pos[level + 1], storage.posCapacity[level + 1], false, imm(0)));
      passes.push_back(imp::Store::make(storage.pos[level + 1], imm(0), imm(0)));
    }
    appended.thread.push_back(own);
  }
  appended.threadVals = freshVar(storage.name + "_vals_of_thread", storage.vals.type());
  pass_ = OutputPass::Chunk;
  appended.lowered = false;
  Stmt ranges = lower(cin);
  pass_ = OutputPass::Fused;
  if (!appended.lowered)
    throw LoweringError("internal: the loop over " + appended.var.name() + " was not lowered in ranges");
  passes.push_back(ranges);
  for (int level = 0; level < levels; ++level) {
    passes.push_back(imp::Assign::make(storage.appendPosition[level],
                                       imp::Call::make("tcc_chunk_total", {appended.offsets[level], appended.ranges},
                                                       int64)));
    passes.push_back(imp::Free::make(appended.offsets[level]));
  }
  decisions_.push_back(output.name() + " is appended by the ranges in one pass: each thread claims ranges of " +
                       appended.var.name() + " in order, appends a range to arrays of its own and copies it to its "
                       "offsets, which the ranges before it give (a look-back); " + output.name() +
                       "'s arrays are allocated before, at the bound the operands give (their entries, summed for "
                       "a union, the least for an intersection), as a serial kernel's");
  return passes;
}

}  // namespace tcc::lowering
