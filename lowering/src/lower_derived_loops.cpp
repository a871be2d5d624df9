// Loops over derived variables (split, divide, fuse, pos, bound) and the
// recovery of the variables they replace, through the provenance relations
// of the statement's such-that clause.
//
// A derived variable's loop runs over its own range: split's inner loop over
// [0, factor), a pos variable over the positions of one segment of a
// compressed level, and so on. Once every variable a relation introduced
// is bound, the relation gives the value of the variable it replaced
// (i = i0 * 32 + i1, i = f / |j|, ...), guarded where the last block may run
// past the end. A statement variable fixed this way is "pinned": its forall
// is then lowered as a single iteration at that coordinate, which locates
// and assembles every operand exactly as an ordinary loop would. A pos
// variable pins a position instead, and the coordinate is read from crd.
#include <algorithm>
#include <optional>
#include <set>

#include "access_occurrences.h"
#include "lowerer.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

Expr ceilDiv(const Expr& a, const Expr& b) { return ops::div(ops::add(a, ops::sub(b, ops::IntImm::make(1, b.type()))), b); }

Expr extentOf(const LoopRange& range) { return ops::sub(range.end, range.begin); }

bool sameAccess(const ir::AccessNode* node, const ir::Access& access) {
  return node->tensor == access.tensor() && node->indices == access.indices();
}

int levelOf(const ir::Access& access, const ir::IndexVar& var) {
  const auto& indices = access.indices();
  int mode = static_cast<int>(std::find(indices.begin(), indices.end(), var) - indices.begin());
  return access.tensor().format().levelOfMode(mode);
}

}  // namespace

std::set<ir::IndexVar> Lowerer::originsOf(const ir::IndexVar& var) const { return ir::originVars(var, relations_); }

bool Lowerer::derivesOnlyFrom(const ir::IndexVar& var, const std::vector<ir::IndexVar>& vars) const {
  for (const auto& origin : originsOf(var))
    if (std::find(vars.begin(), vars.end(), origin) == vars.end()) return false;
  return true;
}

LoopRange Lowerer::rangeOf(const ir::IndexVar& var, std::vector<Stmt>& setup) {
  if (auto known = ranges_.find(var); known != ranges_.end()) return known->second;
  auto found = relationOf_.find(var);
  if (found == relationOf_.end()) return {ops::IntImm::make(0), dimensionOf(var)};
  const ir::ProvenanceRelation& relation = found->second;
  LoopRange range;
  if (const auto* split = std::get_if<ir::SplitRelation>(&relation)) {
    LoopRange parent = rangeOf(split->parent, setup);
    Expr factor = ops::IntImm::make(split->factor, parent.end.type());
    range = var == split->outer ? LoopRange{ops::IntImm::make(0, parent.end.type()), ceilDiv(extentOf(parent), factor)}
                                : LoopRange{ops::IntImm::make(0, parent.end.type()), factor};
    // Inside its outer loop, the inner loop stops at the end of the last
    // block instead of testing every iteration (in a block known to be full,
    // it runs the factor exactly).
    if (var == split->inner && fullBlocks_.count(var)) {
      tightlyBounded_.insert(var);
    } else if (var == split->inner && coordinates_.count(split->outer)) {
      Expr left = ops::sub(extentOf(parent), ops::mul(coordinates_.at(split->outer), factor));
      range.end = ops::min(factor, left);
      tightlyBounded_.insert(var);
    }
  } else if (const auto* divide = std::get_if<ir::DivideRelation>(&relation)) {
    LoopRange parent = rangeOf(divide->parent, setup);
    Expr parts = ops::IntImm::make(divide->factor, parent.end.type());
    range = var == divide->outer ? LoopRange{ops::IntImm::make(0, parent.end.type()), parts}
                                 : LoopRange{ops::IntImm::make(0, parent.end.type()), ceilDiv(extentOf(parent), parts)};
    if (var == divide->inner && coordinates_.count(divide->outer)) {
      Expr part = range.end;
      range.end = ops::min(part, ops::sub(extentOf(parent), ops::mul(coordinates_.at(divide->outer), part)));
      tightlyBounded_.insert(var);
    }
  } else if (const auto* fuse = std::get_if<ir::FuseRelation>(&relation)) {
    LoopRange outer = rangeOf(fuse->outer, setup), inner = rangeOf(fuse->inner, setup);
    range = {ops::IntImm::make(0, imp::Type::int64()),
             ops::mul(ops::cast(imp::Type::int64(), extentOf(outer)), ops::cast(imp::Type::int64(), extentOf(inner)))};
  } else if (const auto* bound = std::get_if<ir::BoundRelation>(&relation)) {
    range = {ops::IntImm::make(0), ops::IntImm::make(bound->value)};
    promisedBounds_.emplace(bound->var, *bound);
  } else if (const auto* fused = fusedPosition(relation)) {
    // Every position of the second level: [pos[0], pos[segments]).
    const auto& pos = std::get<ir::PosRelation>(relation);
    const TensorStorage& storage = storageOf(pos.access.tensor());
    Expr segments = firstLevelSegments(pos.access);
    range.begin = freshVar(pos.posVar.name() + "_begin", imp::Type::int64());
    range.end = freshVar(pos.posVar.name() + "_end", imp::Type::int64());
    setup.push_back(imp::Declare::make(range.begin, imp::Load::make(storage.pos[1], ops::IntImm::make(0, imp::Type::int64()))));
    setup.push_back(imp::Declare::make(range.end, imp::Load::make(storage.pos[1], segments)));
    ranges_[var] = range;
    segmentCursors_[pos.posVar] = freshVar(fused->outer.name() + "_segment", imp::Type::int64());
  } else {
    const auto& pos = std::get<ir::PosRelation>(relation);
    int level = levelOf(pos.access, pos.indexVar);
    // The segment of the level under the parent position the enclosing loops fixed.
    const ir::AccessNode* located = nullptr;
    auto consider = [&](const ir::AccessNode* node) {
      if (!sameAccess(node, pos.access)) return;
      auto positions = positions_.find(canonical(node, level - 1));  // (a read sharing another's iterator)
      if (level == 0 || (positions != positions_.end() && positions->second.count(level - 1))) located = node;
    };
    for (const auto& [node, levels] : positions_) consider(node);
    for (const auto& [twin, earlier] : twinOf_) consider(twin.first);
    // (A first level's one segment is the whole level: no loop fixes it.)
    if (!located && level > 0)
      throw LoweringError(ir::toString(relation) + ": the loops over " + pos.posVar.name() + " iterate a segment of " +
                              pos.access.tensor().name() + "'s level " + std::to_string(level + 1) +
                              ", so they must be inside the loops that fix its outer levels",
                          options_.commands.commandOf(relation));
    const TensorStorage& storage = storageOf(pos.access.tensor());
    Expr parent = parentPosition(located, level);
    range.begin = freshVar(pos.posVar.name() + "_begin", imp::Type::int64());
    range.end = freshVar(pos.posVar.name() + "_end", imp::Type::int64());
    setup.push_back(imp::Declare::make(range.begin, imp::Load::make(storage.pos[level], parent)));
    setup.push_back(imp::Declare::make(
        range.end, imp::Load::make(storage.pos[level], ops::add(parent, ops::IntImm::make(1, imp::Type::int64())))));
    ranges_[var] = range;
  }
  return range;
}

const ir::FuseRelation* Lowerer::fusedPosition(const ir::ProvenanceRelation& relation) const {
  const auto* pos = std::get_if<ir::PosRelation>(&relation);
  if (!pos) return nullptr;
  auto fused = relationOf_.find(pos->indexVar);
  return fused == relationOf_.end() ? nullptr : std::get_if<ir::FuseRelation>(&fused->second);
}

Expr Lowerer::firstLevelSegments(const ir::Access& access) {
  const ir::Format& format = access.tensor().format();
  const TensorStorage& storage = storageOf(access.tensor());
  if (format.level(0).isDense()) return ops::cast(imp::Type::int64(), storage.dims[format.modeOfLevel(0)]);
  return imp::Load::make(storage.pos[0], ops::IntImm::make(1, imp::Type::int64()));
}

// The split whose outer loop this is, when the split's inner loop is the
// innermost loop (its body the assignment) and so worth unrolling: full
// blocks and the last block are then lowered apart (TACO's boundary peeling).
const ir::SplitRelation* Lowerer::peeledSplit(const ir::ForallNode* forall) const {
  const auto* split = std::get_if<ir::SplitRelation>(&relationOf_.at(forall->indexVar));
  if (!split || !(split->outer == forall->indexVar) || split->factor < 2 || split->factor > kLargestPeeledSplit)
    return nullptr;
  // (A block of a sparse level's coordinates gains nothing from peeling.)
  if (!relationOf_.count(split->parent) && !sparseReadsOf(forall->body, split->parent).empty()) return nullptr;
  for (const auto* nested : statementsOf<ir::ForallNode>(forall->body))
    if (nested->indexVar == split->inner && nested->body.isa<ir::AssignmentNode>()) return split;
  return nullptr;
}

Stmt Lowerer::lowerDerivedLoop(const ir::ForallNode* forall) {
  if (const ir::ProvenanceRelation* pos = positionLoopsStartingAt(forall)) return lowerPositionLoops(forall, *pos);
  return lowerDerivedFor(forall);
}

std::vector<const ir::AccessNode*> Lowerer::sparseReadsOf(const ir::IndexStmt& body, const ir::IndexVar& var) const {
  std::set<const ir::AccessNode*> written;
  for (const auto* assignment : ir::assignmentsOf(body))
    written.insert(static_cast<const ir::AccessNode*>(assignment->lhs.get()));
  std::vector<const ir::AccessNode*> reads;
  for (const auto* node : accessOccurrences(body)) {
    if (written.count(node)) continue;
    const ir::Format& format = node->tensor.format();
    for (int level = 0; level < format.order(); ++level)
      if (!format.level(level).isDense() && node->indices[format.modeOfLevel(level)] == var) reads.push_back(node);
  }
  return reads;
}

bool Lowerer::searchableInBlocks(const std::vector<const ir::AccessNode*>& reads, const ir::IndexVar& var) const {
  for (const auto* node : reads) {
    auto storage = storage_.find(node->tensor);
    if (storage != storage_.end() && storage->second.isWorkspace) return false;
    const ir::Format& format = node->tensor.format();
    for (int level = 0; level < format.order(); ++level) {
      const ir::LevelFormat& kind = format.level(level);
      if (!kind.isDense() && node->indices[format.modeOfLevel(level)] == var && !kind.isOrderedCompressed())
        return false;
    }
  }
  return true;
}

std::optional<LoopRange> Lowerer::coordinateBlock(const ir::ForallNode* forall, ir::IndexVar& parent) {
  const ir::IndexVar& var = forall->indexVar;
  if (forall->attributes.unrollFactor) return std::nullopt;
  const ir::ProvenanceRelation& relation = relationOf_.at(var);
  const auto* split = std::get_if<ir::SplitRelation>(&relation);
  const auto* divide = std::get_if<ir::DivideRelation>(&relation);
  const auto* bound = std::get_if<ir::BoundRelation>(&relation);
  if (split && split->inner == var && coordinates_.count(split->outer)) parent = split->parent;
  else if (divide && divide->inner == var && coordinates_.count(divide->outer)) parent = divide->parent;
  else if (bound && bound->boundVar == var) parent = bound->var;
  else return std::nullopt;
  // (A derived parent is recovered as before: its own loops iterate it.)
  if (relationOf_.count(parent)) return std::nullopt;
  auto reads = sparseReadsOf(forall->body, parent);
  if (reads.empty() || !searchableInBlocks(reads, parent)) return std::nullopt;
  // The loop keeps the inner part's parallel unit. A bound's is the loop
  // over the whole level, parallel as the variable's own would be; a block's
  // may be a GPU loop (the block's threads or warps share its coordinates,
  // each searching for its own or counting its own positions: lowerLoop),
  // but not CPU threads or lanes, which would need ranges of the range.
  const ir::ParallelUnit unit = forall->attributes.parallelUnit;
  if (!bound && unit != ir::ParallelUnit::NotParallel) {
    if (ir::isGpuUnit(unit))
      requireParallelizable(forall, options_.cudaTarget,
                            "GPU parallel units need the CUDA target (`target cuda` or --target cuda)");
    else
      requireCpuTarget(forall);
    const ir::IndexVar& outer = split ? split->outer : divide->outer;
    requireParallelizable(forall, options_.cudaTarget,
                          var.name() + " visits the coordinates of " + parent.name() + " that " +
                              reads.front()->tensor.name() + "'s sparse level stores in its block, one after "
                              "another from the block's first position (found by binary search), so it cannot run "
                              "on CPU threads or in vector lanes; parallelize " + outer.name() + " instead");
  }
  const imp::Type int64 = imp::Type::int64();
  Expr extent = ops::cast(int64, dimensionOf(parent));
  LoopRange block;
  if (split) {
    Expr first = ops::mul(ops::cast(int64, coordinates_.at(split->outer)), ops::IntImm::make(split->factor, int64));
    block = {first, ops::add(first, ops::IntImm::make(split->factor, int64))};
  } else if (divide) {
    Expr part = ceilDiv(extent, ops::IntImm::make(divide->factor, int64));
    Expr first = ops::mul(ops::cast(int64, coordinates_.at(divide->outer)), part);
    block = {first, ops::add(first, part)};
  } else {
    // The bound is a promise checked when the kernel starts (dimension at
    // most the bound): the block is the whole level, no search needed.
    promisedBounds_.emplace(bound->var, *bound);
    return LoopRange{};
  }
  block.end = ops::min(block.end, extent);
  return block;
}

Stmt Lowerer::lowerDerivedFor(const ir::ForallNode* forall) {
  const ir::IndexVar& var = forall->indexVar;
  // The inner part of a split or divide (or a bound) of a variable that a
  // sparse level iterates: the loop over that variable itself, over the
  // coordinates the level stores in the block (found by binary search).
  ir::IndexVar parent = var;
  if (auto block = coordinateBlock(forall, parent)) {
    // (The loop keeps the inner part's GPU unit and race strategy.)
    ir::IndexStmt loop = ir::ForallNode::make(parent, forall->body, forall->attributes);
    struct StandsFor {
      std::map<ir::IndexVar, ir::IndexVar>& loops;
      ir::IndexVar parent;
      ~StandsFor() { loops.erase(parent); }
    } standsFor{loopStandsFor_, parent};
    loopStandsFor_.insert_or_assign(parent, var);
    if (!block->begin.defined()) return lower(loop);
    const imp::Type int64 = imp::Type::int64();
    Expr first = freshVar(parent.name() + "_block", int64);
    Expr stop = freshVar(parent.name() + "_block_stop", int64);
    std::vector<Stmt> stmts{imp::Declare::make(first, block->begin), imp::Declare::make(stop, block->end)};
    OwnedRangeScope owned(*this, parent, {first, stop});
    stmts.push_back(lower(loop));
    return imp::Block::make(stmts);
  }
  std::set<ir::IndexVar> rangesBefore;
  for (const auto& [known, range] : ranges_) rangesBefore.insert(known);
  // Ranges computed for this loop, tight ones included, hold only inside it.
  std::set<ir::IndexVar> tightBefore = tightlyBounded_;
  std::vector<Stmt> setup;
  LoopRange range = rangeOf(var, setup);
  Expr coordinate = freshVar(var.name(), ops::promote(range.begin.type(), range.end.type()));
  coordinates_[var] = coordinate;
  LoopPlan plan = planLoop(forall);
  std::optional<LoopScope> scope(std::in_place, *this, plan);
  const ir::ProvenanceRelation& relation = relationOf_.at(var);
  bool complete = true;
  for (const auto& derived : ir::derivedVars(relation)) complete = complete && coordinates_.count(derived);
  // Segment cursors of fused position ranges (see recoverParents) are one
  // per thread: a parallel loop gives its iterations private copies of the
  // cursors declared outside it.
  bool parallel = plan.kind == imp::LoopKind::Parallel || imp::isGpuLoop(plan.kind);
  std::map<ir::IndexVar, Expr> sharedCursors;
  for (auto& [posVar, cursor] : segmentCursors_) {
    if (!parallel || !rangesBefore.count(posVar)) continue;
    sharedCursors[posVar] = cursor;
    cursor = freshVar(cursor.as<imp::Var>()->name, imp::Type::int64());
  }
  Stmt body;
  if (const ir::SplitRelation* split = peeledSplit(forall)) {
    // Full blocks get an inner loop of constant trip count the C++ compiler
    // unrolls; only the last, partial block keeps the variable bound.
    LoopRange parent = rangeOf(split->parent, setup);
    Expr factor = ops::IntImm::make(split->factor, parent.end.type());
    Expr blockEnd = ops::mul(ops::add(coordinate, ops::IntImm::make(1, coordinate.type())), factor);
    fullBlocks_.insert(split->inner);
    Stmt full = lower(forall->body);
    fullBlocks_.erase(split->inner);
    body = imp::If::make(ops::le(blockEnd, extentOf(parent)), full, lower(forall->body));
  } else {
    body = complete ? recoverParents({relation}, {}, forall->body) : lower(forall->body);
  }
  if (!scope->iterationPrologue().empty()) {
    std::vector<Stmt> withPrologue = scope->iterationPrologue();
    withPrologue.push_back(body);
    body = imp::Block::make(withPrologue);
  }
  scope.reset();
  Expr unset = ops::IntImm::make(-1, imp::Type::int64());
  for (const auto& [posVar, shared] : sharedCursors) {
    body = imp::Block::make({imp::Declare::make(segmentCursors_.at(posVar), unset), body});
    segmentCursors_[posVar] = shared;
  }
  for (const auto& [known, unusedRange] : ranges_) {
    auto cursor = segmentCursors_.find(known);
    if (rangesBefore.count(known) || cursor == segmentCursors_.end()) continue;
    Stmt declare = imp::Declare::make(cursor->second, unset);
    if (parallel) body = imp::Block::make({declare, body});
    else setup.push_back(declare);
  }
  coordinates_.erase(var);
  tightlyBounded_ = tightBefore;
  for (auto it = ranges_.begin(); it != ranges_.end();) it = rangesBefore.count(it->first) ? std::next(it) : ranges_.erase(it);

  std::string comment = "iterate " + var.name() + " (" + ir::toString(relation) + ")";
  // A full block's inner loop is unrolled completely unless the schedule says otherwise.
  int unrollFactor = forall->attributes.unrollFactor;
  if (const auto* split = std::get_if<ir::SplitRelation>(&relation); split && fullBlocks_.count(var) && !unrollFactor)
    unrollFactor = static_cast<int>(split->factor);
  setup.push_back(imp::For::make(coordinate, range.begin, range.end, body, plan.kind, comment, unrollFactor,
                                 plan.reductions));
  return imp::Block::make(setup);
}

Stmt Lowerer::recoverParents(std::vector<ir::ProvenanceRelation> pending, std::vector<ir::IndexVar> pinned,
                             const ir::IndexStmt& body) {
  if (pending.empty()) {
    // The pinned statement variables, outermost first, each one iteration
    // (a derived variable's place is only held until its parents are
    // recovered; see below).
    ir::IndexStmt nest = body;
    for (auto it = pinned.rbegin(); it != pinned.rend(); ++it)
      if (!(coordinates_.count(*it) && relationOf_.count(*it))) nest = ir::ForallNode::make(*it, nest);
    return lower(nest);
  }
  const ir::ProvenanceRelation relation = pending.front();
  pending.erase(pending.begin());
  std::vector<Stmt> unused;
  // (parent, value) pairs, and the end a block may run past.
  std::vector<std::pair<ir::IndexVar, Expr>> recovered;
  Expr guardEnd, partGuard;
  if (const auto* split = std::get_if<ir::SplitRelation>(&relation)) {
    LoopRange parent = rangeOf(split->parent, unused);
    Expr value = ops::add(parent.begin, ops::add(ops::mul(coordinates_.at(split->outer),
                                                          ops::IntImm::make(split->factor, parent.end.type())),
                                                 coordinates_.at(split->inner)));
    recovered.push_back({split->parent, value});
    if (split->factor > 1 && !tightlyBounded_.count(split->inner)) guardEnd = parent.end;
  } else if (const auto* divide = std::get_if<ir::DivideRelation>(&relation)) {
    LoopRange parent = rangeOf(divide->parent, unused);
    Expr part = ceilDiv(extentOf(parent), ops::IntImm::make(divide->factor, parent.end.type()));
    Expr value = ops::add(parent.begin, ops::add(ops::mul(coordinates_.at(divide->outer), part),
                                                 coordinates_.at(divide->inner)));
    recovered.push_back({divide->parent, value});
    if (!tightlyBounded_.count(divide->inner)) {
      guardEnd = parent.end;
      // An inner loop outside the loops that fix the parent's extent (a
      // split's last block) ran to the part of the largest extent; the
      // part here may be smaller, and a larger inner coordinate would give
      // the next part's values again.
      partGuard = ops::lt(coordinates_.at(divide->inner), part);
    }
  } else if (const auto* fuse = std::get_if<ir::FuseRelation>(&relation)) {
    // Ranges read to recover values bound no loop: a split's inner part
    // recovered here (split(i, i0, i1), fuse(i1, j, f), fuse(i0, f, g))
    // runs to the factor in the last block too, so it keeps its guard.
    std::set<ir::IndexVar> tight = tightlyBounded_;
    LoopRange outer = rangeOf(fuse->outer, unused), inner = rangeOf(fuse->inner, unused);
    tightlyBounded_ = tight;
    Expr innerExtent = ops::cast(imp::Type::int64(), extentOf(inner));
    Expr fused = coordinates_.at(fuse->fused);
    recovered.push_back({fuse->outer, ops::add(outer.begin, ops::div(fused, innerExtent))});
    recovered.push_back({fuse->inner, ops::add(inner.begin, ops::mod(fused, innerExtent))});
  } else if (const auto* bound = std::get_if<ir::BoundRelation>(&relation)) {
    Expr value = coordinates_.at(bound->boundVar);
    recovered.push_back({bound->var, value});
    // MaxExact runs exactly to the dimension (checked on entry); a
    // constraint only bounds it from above.
    if (bound->kind != ir::BoundKind::MaxExact) guardEnd = dimensionOf(bound->var);
  } else if (const auto* fuse = fusedPosition(relation)) {
    // The first level's position is the segment of the second level that
    // holds the position: a cursor that moves forward, searched for when
    // it is unset or behind.
    const auto& pos = std::get<ir::PosRelation>(relation);
    Expr position = coordinates_.at(pos.posVar);
    Expr cursor = segmentCursors_.at(pos.posVar);
    Expr segmentPos = storageOf(pos.access.tensor()).pos[1];
    Expr one = ops::IntImm::make(1, imp::Type::int64());
    Expr search = imp::Call::make("tcc_segment_of", {segmentPos, firstLevelSegments(pos.access), position},
                                  imp::Type::int64());
    std::vector<Stmt> stmts{
        imp::If::make(ops::lor(ops::lt(cursor, ops::IntImm::make(0, imp::Type::int64())),
                               ops::lt(position, imp::Load::make(segmentPos, cursor))),
                      imp::Assign::make(cursor, search)),
        imp::While::make(ops::le(imp::Load::make(segmentPos, ops::add(cursor, one)), position),
                         imp::Assign::makeCompound(imp::BinaryOp::Add, cursor, one))};
    pinnedPositions_[fuse->outer] = {pos.access, cursor, relation};
    pinnedPositions_[fuse->inner] = {pos.access, position, relation};
    // The levels take the position variable's place (it holds one where a
    // fuse recovered it beside another variable: fuse(fp, j, g)).
    auto place = std::find(pinned.begin(), pinned.end(), pos.posVar);
    place = pinned.insert(place, fuse->inner);
    pinned.insert(place, fuse->outer);
    stmts.push_back(recoverParents(pending, pinned, body));
    pinnedPositions_.erase(fuse->outer);
    pinnedPositions_.erase(fuse->inner);
    return imp::Block::make(stmts);
  } else {
    const auto& pos = std::get<ir::PosRelation>(relation);
    pinnedPositions_[pos.indexVar] = {pos.access, coordinates_.at(pos.posVar), relation};
    // The variable takes its position variable's place: pos(i, ip, A(i)),
    // fuse(ip, j, f) pins i, then j (i after j appended a sparse output's
    // level 2 before its level 1 was located).
    pinned.insert(std::find(pinned.begin(), pinned.end(), pos.posVar), pos.indexVar);
    Stmt inner = recoverParents(pending, pinned, body);
    pinnedPositions_.erase(pos.indexVar);
    return inner;
  }

  // The parents take the place of the variables they were recovered from,
  // and a derived parent holds its own place until its parents are
  // recovered in turn: fuse(ib, j, f) over bound(i, ib, ...) pins i, then
  // j, as the loops were ordered (pinned in the order found, j came first,
  // and an assembled output's row closed before the row's entry was
  // appended).
  std::vector<ir::IndexVar> children = ir::derivedVars(relation);
  auto isChild = [&](const ir::IndexVar& var) { return std::find(children.begin(), children.end(), var) != children.end(); };
  size_t slot = static_cast<size_t>(std::find_if(pinned.begin(), pinned.end(), isChild) - pinned.begin());
  pinned.erase(std::remove_if(pinned.begin(), pinned.end(), isChild), pinned.end());
  slot = std::min(slot, pinned.size());
  std::vector<Stmt> stmts;
  std::vector<ir::IndexVar> bound, pinnedHere;
  Expr guard;
  for (const auto& [parent, value] : recovered) {
    pinned.insert(pinned.begin() + static_cast<long>(slot++), parent);
    auto parentRelation = relationOf_.find(parent);
    if (parentRelation == relationOf_.end()) {
      if (guardEnd.defined()) guard = ops::lt(value, guardEnd);
      pinnedCoordinates_[parent] = value;
      pinnedHere.push_back(parent);
      continue;
    }
    // A derived variable in turn (the split of a pos variable, the fused
    // parts of split loops): bind it, and recover what it replaced once
    // its relation is complete.
    Expr coordinate = freshVar(parent.name(), value.type());
    stmts.push_back(imp::Declare::make(coordinate, value));
    coordinates_[parent] = coordinate;
    bound.push_back(parent);
    if (guardEnd.defined()) guard = ops::lt(coordinate, guardEnd);
    bool complete = true;
    for (const auto& sibling : ir::derivedVars(parentRelation->second))
      complete = complete && coordinates_.count(sibling);
    if (complete) pending.push_back(parentRelation->second);
  }
  Stmt inner = recoverParents(pending, pinned, body);
  for (const auto& var : pinnedHere) pinnedCoordinates_.erase(var);
  for (const auto& var : bound) coordinates_.erase(var);
  guard = ops::land(partGuard, guard);
  if (guard.defined()) inner = imp::If::make(guard, inner);
  stmts.push_back(inner);
  return imp::Block::make(stmts);
}

Stmt Lowerer::lowerPinnedPositionLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                      const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole) {
  const ir::IndexVar& var = forall->indexVar;
  const PinnedPosition& pinned = pinnedPositions_.at(var);
  std::string command = ir::toString(pinned.relation);
  auto refuse = [&](const std::string& reason) {
    throw LoweringError(command + ": " + reason, options_.commands.commandOf(pinned.relation));
  };
  LevelIterator* driver = nullptr;
  // Other operands that store the variable sparsely: each is searched for
  // the driver's coordinate at every position (TACO's locate of a sorted
  // level), so a term needing one runs only where it has the entry.
  std::vector<LevelIterator*> searched;
  for (auto& it : iterators) {
    if (sameAccess(it.access, pinned.access) && !driver) {
      driver = &it;
    } else if (!it.locatable()) {
      searched.push_back(&it);
    }
  }
  // A case of the loops around where the statement's terms with the
  // access all lack another operand (`A(i,k) * C(i,k) + B(i,k)` in a row
  // without C): the positions still give the coordinates, at which the
  // others are searched.
  const std::string name = pinned.access.tensor().name();
  const ir::AccessNode* read = nullptr;
  for (const auto* node : accessOccurrences(statement_))
    if (sameAccess(node, pinned.access)) read = node;
  if (!driver && !read) refuse("the access is not iterated by the loop over " + var.name());
  const int level = levelOf(pinned.access, var);
  const ir::LevelFormat& format = pinned.access.tensor().format().level(level);
  // Terms without the driver (a union): at the driver's coordinates its
  // cases run as any other (a term of the others is what remains where
  // the driver's terms lack an operand); the coordinates it does not
  // store are left to the loops after the positions (lowerPositionLoops).
  bool united = driver && std::any_of(lattice.begin(), lattice.end(), [&](const LatticePoint& point) {
    return !std::binary_search(point.iterators.begin(), point.iterators.end(), driver->id);
  });
  if (united) {
    std::string sum = "the expression has terms where " + name + " has no entry (a sum), ";
    if (!format.ordered)
      refuse(sum + "which a second loop skips where " + name + " stores the coordinate, found by binary search; " +
             name + "'s level is unordered; store it ordered");
    unitedPositions_.insert(command);
  }
  for (const auto* it : searched) {
    std::string also = it->tensor.name() + " also stores " + var.name() + " sparsely";
    if (it->workspaceList || storageOf(it->tensor).isWorkspace)
      refuse(also + " as a workspace, whose coordinates are not searched; iterating positions of " + name +
             " while co-iterating it is not supported");
    if (it->format.kind != ir::LevelKind::Compressed && it->format.kind != ir::LevelKind::Singleton)
      refuse(also + " in a " + it->format.toString() + " level, which cannot be searched for " + name +
             "'s coordinates");
    if (!it->format.ordered)
      refuse(also + " in an unordered level, which cannot be searched for " + name + "'s coordinates; store it ordered");
  }

  const TensorStorage& storage = storageOf(pinned.access.tensor());
  Expr coordinate = freshVar(var.name() + name, imp::Type::int32());
  coordinates_[var] = coordinate;
  Expr value;
  if (format.isDense()) {
    // A dense first level's position is its coordinate.
    Expr parent = ops::mul(parentPosition(driver ? driver->access : read, level),
                           ops::cast(imp::Type::int64(), storage.dims[pinned.access.tensor().format().modeOfLevel(level)]));
    value = ops::sub(pinned.position, parent);
  } else {
    value = imp::Load::make(storage.crd[level], pinned.position);
  }
  std::vector<Stmt> stmts{imp::Declare::make(coordinate, value)};
  auto locate = locateDenseIterators(iterators, coordinate);
  stmts.insert(stmts.end(), locate.begin(), locate.end());
  if (driver) {
    driver->pos = pinned.position;
    positions_[driver->access][driver->level] = driver->pos;
  }
  if (searched.empty()) {
    stmts.push_back(lowerCase(forall, lattice.front(), sole));
    return imp::Block::make(stmts);
  }

  // Each searched operand's range at its parent's position, the first of
  // its positions whether the coordinate is at least the driver's, and
  // whether the coordinate is there.
  std::map<int, Expr> found;
  Expr one = ops::IntImm::make(1, imp::Type::int64());
  for (auto* it : searched) {
    const TensorStorage& other = storageOf(it->tensor);
    std::string base = "p" + it->tensor.name() + std::to_string(it->level + 1);
    Expr parent = parentPosition(it->access, it->level);
    Expr begin, end;
    if (it->format.kind == ir::LevelKind::Compressed) {
      begin = imp::Load::make(other.pos[it->level], parent);
      end = imp::Load::make(other.pos[it->level], ops::add(parent, one));
    } else {
      begin = parent;
      auto segment = segmentEnds_[it->access].find(it->level - 1);
      end = segment != segmentEnds_[it->access].end() ? segment->second : ops::add(parent, one);
    }
    it->end = freshVar(base + "_end", imp::Type::int64());
    stmts.push_back(imp::Declare::make(it->end, end));
    it->pos = freshVar(base, imp::Type::int64());
    stmts.push_back(imp::Declare::make(
      it->pos, imp::Call::make("tcc_lower_bound", {other.crd[it->level], begin, it->end, coordinate},
                               imp::Type::int64())));
    Expr present = freshVar(base + "_found", imp::Type::bool_());
    stmts.push_back(imp::Declare::make(
      present, ops::land(ops::lt(it->pos, it->end), ops::eq(imp::Load::make(other.crd[it->level], it->pos), coordinate))));
    found[it->id] = present;
    positions_[it->access][it->level] = it->pos;
  }

  // The lattice's cases, most operands first: the first whose searched
  // operands are all there (a product with one that is absent is skipped).
  // (A point that needs the same searched operands as an earlier one
  // never runs.)
  std::vector<std::pair<Expr, const LatticePoint*>> cases;
  std::vector<std::vector<int>> seen;
  for (const auto& point : lattice) {
    std::vector<int> needed;
    Expr condition;
    for (int id : point.iterators) {
      if (!found.count(id)) continue;
      condition = ops::land(condition, found.at(id));
      needed.push_back(id);
    }
    if (std::find(seen.begin(), seen.end(), needed) != seen.end()) continue;
    seen.push_back(needed);
    cases.push_back({condition, &point});
    if (!condition.defined()) break;
  }
  // A level with repeated coordinates (COO's first) hands its children the
  // run of positions at the coordinate.
  auto caseBody = [&](const LatticePoint& point) {
    std::vector<Stmt> body;
    for (auto* it : searched) {
      if (!std::binary_search(point.iterators.begin(), point.iterators.end(), it->id)) continue;
      it->coord = coordinate;
      auto segment = findSegmentEnd(*it);
      body.insert(body.end(), segment.begin(), segment.end());
    }
    body.push_back(lowerCase(forall, point, sole));
    return imp::Block::make(body);
  };
  Stmt chain;
  for (auto c = cases.rbegin(); c != cases.rend(); ++c) {
    Stmt body = caseBody(*c->second);
    chain = c->first.defined() ? imp::If::make(c->first, body, chain) : body;
  }
  if (chain.defined()) stmts.push_back(chain);
  return imp::Block::make(stmts);
}

}  // namespace tcc::lowering
