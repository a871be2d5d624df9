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
#include "lowerer.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

bool Lowerer::mergesInCoordinateChunks(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                                       bool countedByLoneDriver) const {
  const ir::IndexVar& var = forall->indexVar;
  if (!forall->attributes.onThreads() || options_.cudaTarget || insideParallelLoop_ || insideVectorLoop_) return false;
  if (workPass_ || pass_ == OutputPass::Chunk || !remainderRoles_.empty() || relationOf_.count(var) ||
      pinnedCoordinates_.count(var) || pinnedPositions_.count(var) || ownedRanges_.count(var.name()))
    return false;
  if (countedByLoneDriver) return false;  // a counted loop over one level: the threads split its positions
  bool merges = false;
  for (const auto& it : iterators) {
    if (it.locatable()) continue;
    // A range's cursor is found by a binary search of ordered coordinates.
    if (it.workspaceList || it.format.kind != ir::LevelKind::Compressed || !it.format.ordered) return false;
    merges = true;
  }
  return merges;
}

Stmt Lowerer::lowerInCoordinateChunks(const ir::ForallNode* forall) {
  // Many ranges a thread: the rows the operands store may gather in a few
  // ranges, which the dynamic schedule then spreads; each range costs only
  // two binary searches an operand.
  constexpr int kChunksPerThread = 16;
  const ir::IndexVar& var = forall->indexVar;
  LoopPlan plan = planLoop(forall);
  usesOpenMP_ = true;
  const imp::Type int64 = imp::Type::int64();
  Expr chunks = freshVar(var.name() + "_chunks", int64);
  Expr chunk = freshVar(var.name() + "_chunk", int64);
  Expr extent = freshVar(var.name() + "_extent", int64);
  Expr first = freshVar(var.name() + "_first", int64);
  Expr stop = freshVar(var.name() + "_stop", int64);
  std::vector<Stmt> before{
      imp::Declare::make(extent, ops::cast(int64, dimensionOf(var))),
      imp::Declare::make(chunks, ops::mul(ops::IntImm::make(kChunksPerThread, int64),
                                          ops::cast(int64, imp::Call::make("omp_get_max_threads", {},
                                                                           imp::Type::int32()))))};

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
    body.push_back(lower(nest));
  }
  before.push_back(imp::For::make(chunk, ops::IntImm::make(0, int64), chunks, imp::Block::make(body),
                                  imp::LoopKind::Parallel,
                                  "ranges of " + var.name() + " on the threads, each merging the operands' cursors "
                                  "from the range's first stored coordinate",
                                  0, plan.reductions, 1));
  return imp::Block::make(before);
}

}  // namespace tcc::lowering
