// Foralls, merge-lattice loops and where-statements.
#include <algorithm>
#include <limits>

#include "access_occurrences.h"
#include "iteration_space.h"
#include "lowerer.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/imperative_printer.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/ir/index_rewriter.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

const ir::AssignmentNode* soleAssignment(const ir::IndexStmt& stmt) {
  if (const auto* forall = stmt.as<ir::ForallNode>()) return soleAssignment(forall->body);
  if (const auto* suchThat = stmt.as<ir::SuchThatNode>()) return soleAssignment(suchThat->stmt);
  return stmt.as<ir::AssignmentNode>();
}

namespace {

// Replaces the right-hand side of the one assignment in a forall nest.
class ReplaceRhs : public ir::IndexNotationRewriter {
 public:
  explicit ReplaceRhs(ir::IndexExpr rhs) : rhs_(std::move(rhs)) {}

 protected:
  using ir::IndexNotationRewriter::visit;
  ir::IndexStmt visit(const ir::AssignmentNode* node, const ir::IndexStmt&) override {
    return ir::AssignmentNode::make(node->lhs, rhs_, node->accumulate);
  }

 private:
  ir::IndexExpr rhs_;
};

// The level of `access` that stores `var` (-1: none); `twice`: a second
// level stores it too (a diagonal), which levelOfVar refuses.
int firstLevelOfVar(const ir::AccessNode* access, const ir::IndexVar& var, bool& twice) {
  const auto& format = access->tensor.format();
  int found = -1;
  twice = false;
  for (int level = 0; level < format.order(); ++level) {
    if (!(access->indices[format.modeOfLevel(level)] == var)) continue;
    if (found >= 0) twice = true;
    if (found < 0) found = level;
  }
  return found;
}

std::string diagonalRefusal(const ir::AccessNode* access, const ir::IndexVar& var) {
  return "access " + access->tensor.name() + " uses index variable " + var.name() +
         " twice (diagonals are not supported)";
}

int levelOfVar(const ir::AccessNode* access, const ir::IndexVar& var) {
  bool twice = false;
  int level = firstLevelOfVar(access, var, twice);
  if (twice) throw LoweringError(diagonalRefusal(access, var));
  return level;
}

// The accesses of `forall`'s body that a loop over its variable may
// iterate: all but left-hand sides (assembled, in lowerCase) and scalars.
std::vector<const ir::AccessNode*> iterableAccesses(const ir::ForallNode* forall) {
  std::set<const ir::AccessNode*> lhsAccesses;
  for (const auto* assignment : ir::assignmentsOf(forall->body))
    lhsAccesses.insert(static_cast<const ir::AccessNode*>(assignment->lhs.get()));
  std::vector<const ir::AccessNode*> accesses;
  for (const auto* node : accessOccurrences(forall->body))
    if (!lhsAccesses.count(node) && node->tensor.order() > 0) accesses.push_back(node);
  return accesses;
}

// Some lattice point needs only dense (located) operands: the loop visits
// every coordinate of its dimension (lowerDenseDrivenLoop).
bool denseDriven(const std::vector<LevelIterator>& iterators, const std::vector<LatticePoint>& lattice) {
  auto locatable = [&](int id) {
    return std::find_if(iterators.begin(), iterators.end(), [&](const LevelIterator& it) { return it.id == id; })
        ->locatable();
  };
  return std::any_of(lattice.begin(), lattice.end(), [&](const LatticePoint& point) {
    return std::all_of(point.iterators.begin(), point.iterators.end(), locatable);
  });
}

// One unique level (or a workspace's list) drives every lattice point
// alone: lowerSparseDrivenLoops counts over its positions.
bool countedByLoneDriver(const std::vector<LevelIterator>& iterators, const std::vector<LatticePoint>& lattice) {
  if (denseDriven(iterators, lattice) || lattice.size() != 1) return false;
  std::vector<const LevelIterator*> drivers;
  for (int id : lattice[0].iterators) {
    auto it = std::find_if(iterators.begin(), iterators.end(), [&](const LevelIterator& each) { return each.id == id; });
    if (!it->locatable()) drivers.push_back(&*it);
  }
  return drivers.size() == 1 && (drivers[0]->format.unique || drivers[0]->workspaceList);
}

// The accesses in the producers of wheres whose consumer reads nothing the
// producer writes (as a case's consumer may, once its absent operands are
// gone): their producers' results are unused, so a loop may leave them out
// of every case.
std::set<const ir::AccessNode*> accessesOfUnreadProducers(const ir::IndexStmt& stmt) {
  std::set<const ir::AccessNode*> unread;
  for (const auto* where : whereStatements(stmt)) {
    auto read = ir::tensorsRead(where->consumer);
    auto written = ir::tensorsWritten(where->producer);
    bool used = std::any_of(written.begin(), written.end(), [&](const ir::TensorVar& tensor) {
      return std::find(read.begin(), read.end(), tensor) != read.end();
    });
    if (!used)
      for (const auto* access : accessOccurrences(where->producer)) unread.insert(access);
  }
  return unread;
}

}  // namespace

Stmt Lowerer::lower(const ir::IndexStmt& stmt) {
  switch (stmt.kind()) {
    case ir::IndexStmtKind::Assignment: return lowerAssignment(stmt.as<ir::AssignmentNode>());
    case ir::IndexStmtKind::Forall: return lowerForall(stmt.as<ir::ForallNode>());
    case ir::IndexStmtKind::Where: return lowerWhere(stmt.as<ir::WhereNode>());
    case ir::IndexStmtKind::Sequence: {
      const auto* node = stmt.as<ir::SequenceNode>();
      return imp::Block::make({lower(node->definition), lower(node->mutation)});
    }
    case ir::IndexStmtKind::Multi: {
      const auto* node = stmt.as<ir::MultiNode>();
      return imp::Block::make({lower(node->first), lower(node->second)});
    }
    case ir::IndexStmtKind::SuchThat:
      return lower(stmt.as<ir::SuchThatNode>()->stmt);
  }
  return Stmt();
}

Stmt Lowerer::lowerAssignment(const ir::AssignmentNode* assignment) {
  if (workPass_) return addWork(ops::IntImm::make(1, imp::Type::int64()));
  Expr value = lowerExpr(assignment->rhs);
  if (reduction_.receives(assignment->lhs.tensor())) {
    return assignment->accumulate ? imp::Assign::makeCompound(imp::BinaryOp::Add, reduction_.temporary, value)
                                  : imp::Assign::make(reduction_.temporary, value);
  }
  return store(assignment, value, assignment->accumulate);
}

Stmt Lowerer::lowerForall(const ir::ForallNode* forall) {
  std::vector<std::pair<ir::TensorVar, int>> declared;
  std::vector<Stmt> state = declareRepeatedLevels(forall, declared);
  if (!declared.empty()) {
    state.push_back(lowerForall(forall));
    for (const auto& level : declared) repeatedLevels_.erase(level);
    return imp::Block::make(state);
  }
  {
    HoistedSums invariant(hoistedSums_);
    if (std::vector<Stmt> hoisted = hoistLoopInvariantSums(forall, invariant); !hoisted.empty()) {
      hoisted.push_back(lowerForall(forall));
      return imp::Block::make(hoisted);
    }
  }
  if (auto owned = ownedVariable(forall)) return lowerOwnedRanges(forall, *owned);
  if (workPass_ && forall->indexVar == workPass_->owned && workPass_->scans.defined()) {
    // The work pass also counts the segments each range searches.
    Expr scans = workPass_->scans;
    Stmt count = imp::Assign::makeCompound(imp::BinaryOp::Add, scans, ops::IntImm::make(1, imp::Type::int64()));
    workPass_->scans = Expr();
    Stmt loop = lowerForall(forall);
    workPass_->scans = scans;
    return imp::Block::make({count, loop});
  }
  const ir::IndexVar& var = forall->indexVar;
  const ir::AssignmentNode* sole = soleAssignment(forall->body);

  // A reduction loop under a fully located left-hand side accumulates into
  // a scalar temporary, stored once after the loop.
  if (sole && sole->accumulate && !reduction_.receives(sole->lhs.tensor())) {
    const auto& lhsVars = sole->lhs.indices();
    bool varOnLhs = derivesOnlyFrom(var, lhsVars);
    // A variable fixed by the loops over its derived variables runs once.
    bool pinned = pinnedCoordinates_.count(var) || pinnedPositions_.count(var);
    // Atomic updates go to the output itself, not to a temporary each thread
    // shares; a scalar temporary of the kernel's own (a sum below the
    // statement's top) is reduced instead (planLoop).
    bool atomic = forall->attributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics &&
                  (forall->attributes.onThreads() || isGpuUnit(forall->attributes.parallelUnit)) &&
                  !atomicsReduceInstead(forall, sole->lhs.tensor());
    bool lhsBound = std::all_of(lhsVars.begin(), lhsVars.end(),
                                [&](const ir::IndexVar& v) { return coordinates_.count(v) > 0; });
    // Threads that insert into sparse workspaces of their own must each
    // insert what they summed: one temporary around their loop would be
    // shared by all of them, and inserted by none.
    auto onThreads = [](const ir::ForallNode* loop) { return loop->attributes.onThreads(); };
    auto inner = statementsOf<ir::ForallNode>(forall->body);
    bool threadsInsertHere = storageOf(sole->lhs.tensor()).ismHandle.defined() &&
                             (onThreads(forall) || std::any_of(inner.begin(), inner.end(), onThreads));
    // (The work pass counts the loop's iterations, not its stores.)
    if (!varOnLhs && !pinned && !atomic && lhsBound && !threadsInsertHere && !workPass_) {
      Expr temporary = freshVar("t" + sole->lhs.tensor().name(), valueType(sole->lhs.tensor()));
      // With no summed variable outside, this is the entry's only
      // contribution: store it instead of adding it (not in the loops
      // after a pos's positions, which add to what those stored, nor in
      // one range of the variable among the threads' ranges, whose sums
      // threads add: lowerInCoordinateChunks).
      bool onlyContribution =
          remainderRoles_.empty() && !outputsOfSeveralAssignments_.count(sole->lhs.tensor()) &&
          !ownedRanges_.count(var.name()) &&
          std::all_of(coordinates_.begin(), coordinates_.end(), [&](const auto& bound) {
            return derivesOnlyFrom(bound.first, lhsVars);
          });
      ReductionTarget outer = reduction_;
      reduction_ = {sole->lhs.tensor(), temporary};
      Stmt loop = lowerForall(forall);
      reduction_ = outer;
      return imp::Block::make({imp::Declare::make(temporary, ops::cast(temporary.type(), ops::FloatImm::make(0.0))),
                               loop, store(sole, temporary, !onlyContribution)});
    }
  }

  if (auto output = scalarOutputReducedAcrossWhere(forall, sole)) {
    Expr temporary = freshVar("t" + output->name(), valueType(*output));
    bool onlyContribution = coordinates_.empty() && remainderRoles_.empty();
    reduction_ = {*output, temporary};
    Stmt loop = lowerForall(forall);
    reduction_ = {};
    const ir::AssignmentNode* assignment = nullptr;
    for (const auto* each : ir::assignmentsOf(forall->body))
      if (each->lhs.tensor() == *output) assignment = each;
    return imp::Block::make({imp::Declare::make(temporary, ops::cast(temporary.type(), ops::FloatImm::make(0.0))),
                             loop, store(assignment, temporary, !onlyContribution)});
  }

  if (relationOf_.count(var)) return lowerDerivedLoop(forall);

  // Keyed by node address, so cleared before and after: a rewritten forall
  // freed earlier may have had the same address.
  iteratorIds_[forall].clear();
  std::vector<LevelIterator> iterators = iteratorsOf(
      forall,
      [&](const ir::AccessNode* access, int level) { return positions_[canonical(access, level)].count(level) > 0; },
      nextIteratorId_);
  nextIteratorId_ += static_cast<int>(iterators.size());
  for (const auto& it : iterators) iteratorIds_[forall][it.access] = it.id;
  auto twins = shareIterators(forall, iterators);
  std::vector<LatticePoint> lattice = latticeOf(forall, iterators);
  if (laneSlicedRows_ && var == laneSlicedRows_->column && !ownedRanges_.count(var.name()) &&
      (pass_ == OutputPass::Count || pass_ == OutputPass::Fill)) {
    // A row's coordinates in slices, one a lane of the row's warp.
    Stmt sliced = lowerRowInLaneSlices(forall, iterators, denseDriven(iterators, lattice));
    for (const auto& twin : twins) twinOf_.erase(twin);
    iteratorIds_.erase(forall);
    return sliced;
  }
  if (bool counted = countedByLoneDriver(iterators, lattice); mergesInCoordinateChunks(forall, iterators, counted)) {
    bool sparse = std::any_of(iterators.begin(), iterators.end(), [](const LevelIterator& it) { return !it.locatable(); });
    for (const auto& twin : twins) twinOf_.erase(twin);
    iteratorIds_.erase(forall);
    return lowerInCoordinateChunks(forall, counted  ? "each over the positions of the one level that drives the loop, "
                                                      "from the range's first stored coordinate"
                                           : sparse ? "each merging the operands' cursors from the range's first "
                                                      "stored coordinate"
                                                    : "each over its coordinates");
  }
  // (The loops after a pos's positions: lower_position_remainder.cpp.)
  std::vector<Stmt> remainderSetup;
  bool anyPoint = restrictToRemainder(forall, iterators, lattice, remainderSetup);

  Stmt loop = anyPoint ? lowerLoop(forall, iterators, lattice, sole) : imp::Block::make({});
  if (!remainderSetup.empty()) {
    remainderSetup.push_back(loop);
    loop = imp::Block::make(remainderSetup);
  }
  remainderSkips_.erase(var);
  for (const auto& twin : twins) twinOf_.erase(twin);
  iteratorIds_.erase(forall);
  coordinates_.erase(var);
  for (const auto& it : iterators) {
    positions_[it.access].erase(it.level);
    segmentEnds_[it.access].erase(it.level);
  }
  return loop;
}

std::vector<LevelIterator> Lowerer::iteratorsOf(const ir::ForallNode* forall,
                                             const std::function<bool(const ir::AccessNode*, int)>& located,
                                             int firstId) {
  const ir::IndexVar& var = forall->indexVar;
  if (auto refusal = iterationRefusal(forall, located)) throw LoweringError(*refusal);
  std::vector<LevelIterator> iterators;
  for (const auto* node : iterableAccesses(forall)) {
    int level = levelOfVar(node, var);
    if (level < 0) continue;
    const TensorStorage& storage = storageOf(node->tensor);
    if (level > 0 && !located(node, level - 1)) continue;  // dense or a workspace: located once all are bound
    LevelIterator iterator;
    iterator.id = firstId + static_cast<int>(iterators.size());
    iterator.access = node;
    iterator.tensor = node->tensor;
    iterator.level = level;
    iterator.varName = var.name();
    iterator.format = node->tensor.format().level(level);
    iterator.workspaceList = storage.isWorkspace && storage.list.defined();
    iterators.push_back(iterator);
  }
  return iterators;
}

std::optional<std::string> Lowerer::iterationRefusal(const ir::ForallNode* forall,
                                                    const std::function<bool(const ir::AccessNode*, int)>& located) {
  const ir::IndexVar& var = forall->indexVar;
  for (const auto* node : iterableAccesses(forall)) {
    bool twice = false;
    int level = firstLevelOfVar(node, var, twice);
    if (twice) return diagonalRefusal(node, var);
    if (level <= 0 || located(node, level - 1)) continue;
    if (node->tensor.format().isAllDense() || storageOf(node->tensor).isWorkspace) continue;
    return "loop order visits " + var.name() + " before the outer levels of " + node->tensor.name() +
           ", which is stored " + node->tensor.format().toString();
  }
  return std::nullopt;
}

const ir::AccessNode* Lowerer::canonical(const ir::AccessNode* access, int level) const {
  auto twin = twinOf_.find({access, level});
  return twin == twinOf_.end() ? access : twin->second;
}

std::vector<std::pair<const ir::AccessNode*, int>> Lowerer::shareIterators(const ir::ForallNode* forall,
                                                                           std::vector<LevelIterator>& iterators) {
  // The level and those above it unique: its positions are then fixed by
  // their coordinates, so the loops around give both reads the same ones
  // (a nonunique level's duplicates are summed before a product, which one
  // iterator would not; below it, the reads keep iterators of their own).
  auto shareable = [&](const LevelIterator& it) {
    const ir::Format& format = it.tensor.format();
    for (int level = 0; level <= it.level; ++level)
      if (!format.level(level).unique || format.level(level).kind == ir::LevelKind::NM) return false;
    return !it.workspaceList && !storageOf(it.tensor).isWorkspace && !storageOf(it.tensor).isOutput;
  };
  std::vector<std::pair<const ir::AccessNode*, int>> twins;
  std::vector<LevelIterator> kept;
  for (auto& it : iterators) {
    // The same variables at this level and the ones above it (A(i,j) and
    // A(i,k) share their rows).
    auto sameLevels = [&](const LevelIterator& earlier) {
      const ir::Format& format = it.tensor.format();
      for (int level = 0; level <= it.level; ++level) {
        int mode = format.modeOfLevel(level);
        if (!(earlier.access->indices[mode] == it.access->indices[mode])) return false;
      }
      return true;
    };
    auto first = std::find_if(kept.begin(), kept.end(), [&](const LevelIterator& earlier) {
      return earlier.tensor == it.tensor && earlier.level == it.level && sameLevels(earlier) && shareable(earlier) &&
             shareable(it);
    });
    if (first == kept.end()) {
      kept.push_back(it);
      continue;
    }
    iteratorIds_[forall][it.access] = first->id;
    twinOf_[{it.access, it.level}] = first->access;
    twins.push_back({it.access, it.level});
  }
  iterators = std::move(kept);
  return twins;
}

std::vector<LatticePoint> Lowerer::latticeOf(const ir::ForallNode* forall,
                                             const std::vector<LevelIterator>& iterators) {
  auto iteratorOf = [&](const ir::AccessNode* access) {
    for (const auto& it : iterators)
      if (it.access == access) return it.id;
    // A read that shares an earlier read's iterator (shareIterators).
    if (auto ids = iteratorIds_.find(forall); ids != iteratorIds_.end())
      if (auto id = ids->second.find(access); id != ids->second.end())
        for (const auto& it : iterators)
          if (it.id == id->second) return it.id;
    return -1;
  };
  // A where or several statements below: the loop runs over the union of
  // what every statement reads, a producer's operands standing in for the
  // workspace its consumer reads (a read the loop iterates itself times it).
  const ir::AssignmentNode* sole = soleAssignment(forall->body);
  ir::IndexExpr iterated =
    sole ? sole->rhs : iterationExpression(forall->body, [&](const ir::AccessNode* access) { return iteratorOf(access) < 0; });
  std::vector<LatticePoint> lattice = buildMergeLattice(iterated, iteratorOf);
  // Each case drops the operands absent from its point: one in no point
  // would be dropped everywhere, and the statement that reads it with it
  // (a producer computing zeros), unless nothing reads what that statement
  // computes. Refused rather than lowered so.
  if (sole) return lattice;
  std::optional<std::set<const ir::AccessNode*>> unread;
  for (const auto& it : iterators) {
    if (std::any_of(lattice.begin(), lattice.end(), [&](const LatticePoint& point) {
          return std::binary_search(point.iterators.begin(), point.iterators.end(), it.id);
        }))
      continue;
    if (!unread) unread = accessesOfUnreadProducers(forall->body);
    if (unread->count(it.access)) continue;
    throw LoweringError("internal: the loop over " + forall->indexVar.name() + " iterates " + it.tensor.name() +
                        " but no case of it reads " + it.tensor.name() +
                        ", so the statement reading it would be dropped: " + ir::toString(forall->body));
  }
  return lattice;
}

std::optional<ir::IndexVar> Lowerer::ownedVariable(const ir::ForallNode* forall) {
  if (!forall->attributes.onThreads() || insideParallelLoop_ || options_.cudaTarget) return std::nullopt;
  if (relationOf_.count(forall->indexVar)) return std::nullopt;
  auto assignments = ir::assignmentsOf(forall->body);
  if (assignments.empty()) return std::nullopt;
  std::optional<ir::IndexVar> first;  // every output's first-level variable
  for (const auto* assignment : assignments) {
    const ir::TensorVar& output = assignment->lhs.tensor();
    if (isParameter(output) || output.order() == 0) return std::nullopt;
    const TensorStorage& storage = storageOf(output);
    if (!storage.ismPerThread || !storage.ismOptions.ownerPartition) return std::nullopt;
    const ir::IndexVar& var = assignment->lhs.indices()[output.format().modeOfLevel(0)];
    if (first && !(*first == var)) return std::nullopt;
    first = var;
  }
  // Its loop, somewhere in the chain of loops below the thread loop (the
  // loops above it run whole on each thread).
  for (const auto* inner = forall->body.as<ir::ForallNode>(); inner; inner = inner->body.as<ir::ForallNode>()) {
    if (relationOf_.count(inner->indexVar)) return std::nullopt;
    if (inner->indexVar == *first) return first;
  }
  return std::nullopt;
}

// The owned ranges, cut by work: a work pass counts, for each coordinate
// of `owned`, how often the nest's assignments run for it (the products of
// an SpGEMM row), on the threads, each over an equal range of coordinates
// (so each writes only its own counts), and how many segments a range
// searches; tcc_cut_by_work picks the number of ranges and cuts
// [0, extent) where the running sum reaches each range's share; then, for
// part in [0, parts) dynamically, the part's coordinates [first, stop) of
// `owned`, and the thread loop's nest run serially with the loops over
// `owned` cut to them.
Stmt Lowerer::lowerOwnedRanges(const ir::ForallNode* forall, const ir::IndexVar& owned) {
  // Up to four a thread, taken dynamically: a range whose work the count
  // misjudges (a loop's overhead, cache misses) does not hold the team up,
  // while each range scans the thread loop once, so tcc_cut_by_work takes
  // fewer where that scan is not small beside a range's work (eight
  // measured worse on the 16-core host while the ranges held equal numbers
  // of coordinates).
  constexpr int kPartsPerThread = 4;
  usesOpenMP_ = true;
  const imp::Type int64 = imp::Type::int64();
  Expr parts = freshVar("parts", int64);
  Expr part = freshVar("part", int64);
  Expr extent = freshVar(owned.name() + "_extent", int64);
  Expr work = freshVar(owned.name() + "_work", imp::Type::pointerTo(int64));
  Expr cuts = freshVar(owned.name() + "_cuts", imp::Type::pointerTo(int64));
  Expr first = freshVar(owned.name() + "_first", int64);
  Expr stop = freshVar(owned.name() + "_stop", int64);
  Expr one = ops::IntImm::make(1, int64);
  std::vector<Stmt> before{
    imp::Declare::make(parts, ops::mul(ops::IntImm::make(kPartsPerThread, int64),
                                       ops::cast(int64, imp::Call::make("omp_get_max_threads", {}, imp::Type::int32())))),
    imp::Declare::make(extent, ops::cast(int64, dimensionOf(owned)))};

  ir::ForallAttributes serial = forall->attributes;
  serial.parallelUnit = ir::ParallelUnit::NotParallel;
  serial.outputRaceStrategy = ir::OutputRaceStrategy::IgnoreRaces;
  ir::IndexStmt nest = ir::ForallNode::make(forall->indexVar, forall->body, serial);

  // The work pass: the nest once more, its assignments counting, one
  // equal range of `owned` a thread.
  before.push_back(imp::Declare::make(work, Expr()));
  before.push_back(imp::Allocate::make(work, ops::max(extent, one), true));
  Expr threads = freshVar("counting_parts", int64);
  Expr countingPart = freshVar("counting_part", int64);
  Expr countingFirst = freshVar(owned.name() + "_counting_first", int64);
  Expr countingStop = freshVar(owned.name() + "_counting_stop", int64);
  before.push_back(
    imp::Declare::make(threads, ops::cast(int64, imp::Call::make("omp_get_max_threads", {}, imp::Type::int32()))));
  std::vector<Stmt> counting{
    imp::Declare::make(countingFirst, ops::div(ops::mul(countingPart, extent), threads)),
    imp::Declare::make(countingStop, ops::div(ops::mul(ops::add(countingPart, one), extent), threads))};
  Expr scans = freshVar(owned.name() + "_scans", imp::Type::pointerTo(int64));
  before.push_back(imp::Declare::make(scans, Expr()));
  before.push_back(imp::Allocate::make(scans, threads, true));
  Expr scanned = freshVar(owned.name() + "_scanned", int64);
  counting.push_back(imp::Declare::make(scanned, ops::IntImm::make(0, int64)));
  workPass_ = WorkPass{work, owned, scanned};
  {
    OwnedRangeScope countingRange(*this, owned, {countingFirst, countingStop});
    struct EndWorkPass {
      std::optional<WorkPass>& pass;
      ~EndWorkPass() { pass.reset(); }
    } endWorkPass{workPass_};
    counting.push_back(lower(ir::ForallNode::make(forall->indexVar, forall->body, serial)));
  }
  counting.push_back(imp::Store::make(scans, countingPart, scanned));
  before.push_back(imp::For::make(countingPart, ops::IntImm::make(0, int64), threads, imp::Block::make(counting),
                                  imp::LoopKind::Parallel,
                                  "the work of each " + owned.name() + ": how often the loops below run for it",
                                  0, {}, 1));
  before.push_back(imp::Declare::make(cuts, Expr()));
  before.push_back(imp::Allocate::make(cuts, ops::add(parts, one)));
  // As many ranges as the work pays for: each range searches every segment
  // its loops visit (scans[0]), which should cost little beside its work.
  before.push_back(imp::Assign::make(
    parts, imp::Call::make("tcc_cut_by_work",
                           {work, extent, parts, threads, imp::Load::make(scans, ops::IntImm::make(0, int64)), cuts},
                           int64)));
  before.push_back(imp::Free::make(work));
  before.push_back(imp::Free::make(scans));
  // The workspaces cut the output where the ranges are, so that each range
  // is read from its thread's run in place.
  for (const auto& tensor : ir::tensorsWritten(forall->body)) {
    const TensorStorage& storage = storageOf(tensor);
    if (storage.ismPerThread && storage.ismHandle.defined())
      before.push_back(imp::Evaluate::make(imp::Call::make(
        "tcc_ism_kernel_owned_ranges",
        {storage.ismHandle, cuts, ops::cast(imp::Type::int32(), parts)},
        imp::Type::void_())));
  }

  LoopPlan plan;
  plan.kind = imp::LoopKind::Parallel;
  requireParallelizable(forall, !insideVectorLoop_, "a loop inside a vector loop runs in its lanes; it cannot be "
                                                    "parallelized again");
  std::vector<Stmt> body;
  {
    LoopScope scope(*this, plan);
    body = scope.iterationPrologue();
    body.push_back(imp::Declare::make(first, imp::Load::make(cuts, part)));
    body.push_back(imp::Declare::make(stop, imp::Load::make(cuts, ops::add(part, one))));
    OwnedRangeScope ownedRange(*this, owned, {first, stop});
    body.push_back(lower(nest));
  }
  before.push_back(imp::For::make(part, ops::IntImm::make(0, int64), parts, imp::Block::make(body),
                                  imp::LoopKind::Parallel,
                                  "ranges of " + owned.name() + " of about equal work owned by threads, over the loop on " +
                                      forall->indexVar.name(),
                                  0, {}, 1));
  before.push_back(imp::Free::make(cuts));
  return imp::Block::make(before);
}

Stmt Lowerer::addWork(const Expr& amount) {
  Expr coordinate = coordinates_.at(workPass_->owned);
  return imp::Store::make(workPass_->counts, ops::cast(imp::Type::int64(), coordinate),
                          ops::cast(imp::Type::int64(), amount), true);
}

std::optional<ir::TensorVar> Lowerer::scalarOutputReducedAcrossWhere(const ir::ForallNode* forall,
                                                                    const ir::AssignmentNode* sole) const {
  const auto& attributes = forall->attributes;
  bool cpu = attributes.onThreads() || attributes.parallelUnit == ir::ParallelUnit::CPUVector;
  bool reduces = attributes.outputRaceStrategy == ir::OutputRaceStrategy::ParallelReduction ||
                 attributes.outputRaceStrategy == ir::OutputRaceStrategy::Temporary ||
                 attributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics;
  if (!cpu || !reduces || sole || reduction_.defined() || workPass_ || whereStatements(forall->body).empty())
    return std::nullopt;
  // The temporaries the body's wheres fill are private to each iteration;
  // every update of the one scalar it sums into (the output, or the
  // temporary of a sum around the loop) adds to it: the loop's share is
  // their sum, which each thread (or lane) keeps apart until the loop ends.
  std::set<ir::TensorVar> private_;
  for (const auto* where : whereStatements(forall->body))
    for (const auto& tensor : ir::tensorsWritten(where->producer)) private_.insert(tensor);
  std::optional<ir::TensorVar> output;
  for (const auto* assignment : ir::assignmentsOf(forall->body)) {
    const ir::TensorVar& tensor = assignment->lhs.tensor();
    if (private_.count(tensor)) continue;
    if (tensor.order() != 0 || !assignment->accumulate || (output && !(*output == tensor))) return std::nullopt;
    output = tensor;
  }
  // Atomics update a scalar parameter in place.
  if (output && attributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics &&
      !atomicsReduceInstead(forall, *output))
    return std::nullopt;
  return output;
}

bool Lowerer::atomicsReduceInstead(const ir::ForallNode* forall, const ir::TensorVar& tensor) const {
  // A GPUThread loop of a warp or block: its lanes' partial sums are added
  // with shuffles (see planSumIntoTemporary); the temporary is in registers.
  bool gpuLanes = forall->attributes.parallelUnit == ir::ParallelUnit::GPUThread &&
                  (gpuUnit_ == imp::LoopKind::GpuWarp || gpuUnit_ == imp::LoopKind::GpuBlock);
  return forall->attributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics &&
         (forall->attributes.onThreads() || gpuLanes) && tensor.order() == 0 && !isParameter(tensor);
}

bool Lowerer::countsTripsOnly(const ir::ForallNode* forall) const {
  const ir::IndexVar& var = forall->indexVar;
  return workPass_ && forall->body.as<ir::AssignmentNode>() != nullptr && !(var == workPass_->owned) &&
         coordinates_.count(workPass_->owned) && !relationOf_.count(var) && !pinnedCoordinates_.count(var) &&
         !pinnedPositions_.count(var);
}

void Lowerer::requireParallelizable(const ir::ForallNode* forall, bool condition, const std::string& reason) const {
  if (condition) return;
  const auto& attributes = forall->attributes;
  bool defaultMapping = options_.commands.defaultGpuMapping && ir::isGpuUnit(attributes.parallelUnit);
  auto standsFor = loopStandsFor_.find(forall->indexVar);
  const ir::IndexVar& named = standsFor == loopStandsFor_.end() ? forall->indexVar : standsFor->second;
  throw LoweringError(std::string(defaultMapping ? "the default GPU mapping's " : "") + "parallelize(" +
                          named.name() + ", " + ir::toString(attributes.parallelUnit) + ", " +
                          ir::toString(attributes.outputRaceStrategy) + "): " + reason,
                      options_.commands.parallelizeOf(named, attributes.parallelUnit, attributes.outputRaceStrategy));
}

void Lowerer::requireSearchable(const ir::ForallNode* forall, const LevelIterator& it) const {
  const std::string merge = "the loop co-iterates sparse operands, so each GPU iteration searches " +
                            it.tensor.name() + " for its coordinate of " + forall->indexVar.name() + ", but ";
  auto storage = storage_.find(it.tensor);
  const bool workspace = it.workspaceList || (storage != storage_.end() && storage->second.isWorkspace);
  requireParallelizable(forall, !workspace, merge + "it is a workspace, whose coordinates are not searched");
  requireParallelizable(forall,
                        it.format.kind == ir::LevelKind::Compressed || it.format.kind == ir::LevelKind::Singleton,
                        merge + "its " + it.format.toString() + " level cannot be searched");
  requireParallelizable(forall, it.format.ordered, merge + "its level is unordered; store it ordered");
}

LoopPlan Lowerer::planLoop(const ir::ForallNode* forall) {
  using ir::OutputRaceStrategy;
  using ir::ParallelUnit;
  const auto& attributes = forall->attributes;
  LoopPlan plan;
  switch (attributes.parallelUnit) {
    case ParallelUnit::NotParallel: return plan;
    case ParallelUnit::CPUVector: requireCpuTarget(forall); plan.kind = imp::LoopKind::Vectorized; break;
    case ParallelUnit::GPUBlock: case ParallelUnit::GPUWarp: case ParallelUnit::GPUThread:
      return planGpuLoop(forall);
    case ParallelUnit::CPUThread: case ParallelUnit::DefaultUnit:
      requireCpuTarget(forall);
      plan.kind = imp::LoopKind::Parallel;
      break;
  }
  bool threads = plan.kind == imp::LoopKind::Parallel;
  requireParallelizable(forall, !threads || !insideParallelLoop_, "loops nested in a parallel loop run serially");
  requireParallelizable(forall, plan.kind == imp::LoopKind::Serial || !insideVectorLoop_,
                        "a loop inside a vector loop runs in its lanes; it cannot be parallelized again");
  const ir::IndexVar& var = forall->indexVar;
  const OutputRaceStrategy strategy = attributes.outputRaceStrategy;
  std::set<ir::TensorVar> perThreadWorkspaces;
  for (const auto* where : whereStatements(forall->body))
    for (const auto& tensor : ir::tensorsWritten(where->producer)) perThreadWorkspaces.insert(tensor);
  for (const auto* assignment : ir::assignmentsOf(forall->body)) {
    const ir::TensorVar& output = assignment->lhs.tensor();
    bool workspace = !isParameter(output);
    // A workspace filled and drained inside each iteration gets one copy per
    // thread; a scalar one (a sum below the statement's top) is declared in
    // the iteration, so each vector lane has its own too.
    if (workspace && perThreadWorkspaces.count(output) &&
        (threads || (plan.kind == imp::LoopKind::Vectorized && output.order() == 0)))
      continue;
    if (workspace && storageOf(output).ismHandle.defined()) {
      requireParallelizable(forall, plan.kind != imp::LoopKind::Vectorized,
                            "inserting into " + workspaceInWords(output) + " is a call, which vector lanes "
                            "cannot share; run this loop on CPUThread instead (each thread inserts into a "
                            "workspace of its own), or vectorize a loop that inserts nothing");
      continue;  // each thread inserts into a workspace of its own
    }
    if (workspace && plan.kind != imp::LoopKind::Serial && storageOf(output).list.defined())
      requireParallelizable(forall, false, workspaceInWords(output) + " keeps one list of the "
                                           "coordinates written so far, which this loop's iterations would all "
                                           "append to; parallelize a loop around both the loops that fill it and "
                                           "those that copy it into the output (each thread then gets a "
                                           "workspace of its own)");
    bool sparse = output.order() > 0 && !output.format().isAllDense() && !workspace;
    if (sparse) {
      if (auto repeated = visitOrder_.repeatedLevels.find({output, 0}); repeated != visitOrder_.repeatedLevels.end())
        requireParallelizable(forall, false, "the loops from " + repeated->second.name() + " on visit each row of " +
                                             output.name() + " on several iterations, so its rows cannot be "
                                             "assembled in parallel");
      // (Or, in ranges of coordinates, every level in order: rangesAppend.)
      bool inRanges = rangeAppended_ && rangeAppended_->output == output && rangeAppended_->var == var &&
                      rangeAppended_->lowered;
      const std::string inOrder = "output " + output.name() + " is assembled in order";
      requireParallelizable(forall, threads, inOrder + ", an entry at a time, which vector lanes cannot share");
      requireParallelizable(forall, rowsAssembledInParallel(assignment->lhs, var) || inRanges,
                            inOrder + "; threads assemble it only under "
                            "a loop over its first index: its rows (a dense first level followed by a compressed "
                            "one), or ranges of that index appending every level in order (the statement's "
                            "outermost loop, not made by a split, divide or bound, the other writes under it "
                            "into temporaries)");
      continue;
    }
    if (derivesOnlyFrom(var, assignment->lhs.indices())) continue;  // iterations write different entries
    std::string race = var.name() + " is summed into " + insertedWorkspaceInWords(output).value_or(output.name()) +
                       ", so iterations race on its entries";
    switch (strategy) {
      case OutputRaceStrategy::IgnoreRaces: break;
      case OutputRaceStrategy::NoRaces:
        if (workspace && output.order() == 0)
          requireParallelizable(forall, false, race + " (the scalar temporary of a sum below the statement's top); "
                                               "choose ParallelReduction or Temporary (or Atomics on CPU threads), "
                                               "under which each thread or lane keeps a partial sum, added to it "
                                               "after the loop");
        requireParallelizable(forall, false, race + "; parallelize an index of the output, or choose Atomics, "
                                             "Temporary or ParallelReduction");
        break;
      case OutputRaceStrategy::Atomics:
        if (reduction_.receives(output) && atomicsReduceInstead(forall, output)) {
          plan.reductions.push_back({reduction_.temporary, Expr()});
          break;
        }
        requireParallelizable(forall, threads && !workspace, race + " and atomic updates need CPU threads and a "
                                                             "parameter of the kernel");
        plan.atomicStores = true;
        break;
      case OutputRaceStrategy::Workspace:
        // The concretizer sends a statement with this strategy through a
        // sparse workspace, whose stores never reach this check.
        requireParallelizable(forall, false, race + "; Workspace needs the results to go through a sparse workspace");
        break;
      case OutputRaceStrategy::Temporary: case OutputRaceStrategy::ParallelReduction:
        if (reduction_.receives(output)) {
          plan.reductions.push_back({reduction_.temporary, Expr()});
        } else {
          requireParallelizable(forall, !workspace && output.order() > 0,
                                race + "; a reduction needs a scalar temporary or a dense output");
          Expr size = ops::IntImm::make(1, imp::Type::int64());
          for (const auto& dim : storageOf(output).dims) size = ops::mul(size, ops::cast(imp::Type::int64(), dim));
          plan.reductions.push_back({storageOf(output).vals, size});
        }
        break;
    }
  }
  if (threads) usesOpenMP_ = true;
  return plan;
}

bool Lowerer::rowsAssembledInParallel(const ir::Access& lhs, const ir::IndexVar& var) const {
  const ir::Format& format = lhs.tensor().format();
  if (format.order() != 2 || !format.level(0).isDense() || format.level(1).kind != ir::LevelKind::Compressed ||
      !format.level(1).unique)
    return false;
  // (Each row visited once: a row's cursor starts when its row does.)
  if (visitOrder_.repeatedLevels.count({lhs.tensor(), 0})) return false;
  auto origins = originsOf(var);
  return origins.size() == 1 && *origins.begin() == lhs.indices()[format.modeOfLevel(0)];
}

Lowerer::LoopScope::LoopScope(Lowerer& lowerer, const LoopPlan& plan)
    : lowerer_(lowerer), wasParallel_(lowerer.insideParallelLoop_), wasAtomic_(lowerer.atomicStores_),
      wasVectorized_(lowerer.insideVectorLoop_), enclosingGpuUnit_(lowerer.gpuUnit_) {
  lowerer.insideParallelLoop_ = wasParallel_ || plan.kind == imp::LoopKind::Parallel;
  lowerer.insideVectorLoop_ = wasVectorized_ || plan.kind == imp::LoopKind::Vectorized;
  lowerer.atomicStores_ = wasAtomic_ || plan.atomicStores;
  if (imp::isGpuLoop(plan.kind)) lowerer.gpuUnit_ = plan.kind;
  if (plan.kind != imp::LoopKind::Parallel) return;
  for (auto& [tensor, storage] : lowerer.storage_) {
    if (!storage.ismPerThread || storage.ismThreadHandle.defined()) continue;
    storage.ismThreadHandle = lowerer.freshVar(storage.name + "_thread", storage.ismHandle.type());
    prologue_.push_back(imp::Declare::make(
      storage.ismThreadHandle,
      imp::Call::make("tcc_ism_kernel_thread_handle",
                      {storage.ismHandle, imp::Call::make("omp_get_thread_num", {}, imp::Type::int32())},
                      storage.ismHandle.type())));
    boundWorkspaces_.push_back(tensor);
  }
}

Lowerer::LoopScope::~LoopScope() {
  lowerer_.gpuUnit_ = enclosingGpuUnit_;
  lowerer_.insideParallelLoop_ = wasParallel_;
  lowerer_.insideVectorLoop_ = wasVectorized_;
  lowerer_.atomicStores_ = wasAtomic_;
  for (const auto& tensor : boundWorkspaces_) lowerer_.storage_.at(tensor).ismThreadHandle = Expr();
}

LoweringError Lowerer::sparseVariableScheduled(const ir::IndexVar& var, const ir::TensorVar& tensor) const {
  auto storage = storage_.find(tensor);
  // A copy of an input in the loops' order is named as that input's copy.
  const ir::TensorProvenance& provenance = tensor.provenance();
  const bool copied = provenance.kind == ir::TensorProvenance::Kind::StorageOrderCopy;
  const std::string input = copied ? provenance.source.name() : std::string();
  std::string reason =
    storage != storage_.end() && storage->second.isWorkspace
      ? var.name() + " is iterated by a list of the coordinates in " + workspaceInWords(tensor) +
        ", not by a range that a split, divide, fuse or bound can cut; leave out the workspace or this command"
    : copied
      ? var.name() + " is iterated by a sparse level of the copy of " + input +
        " in the loops' order (its levels keep " + input + "'s kinds), not by a range that a split, divide, "
        "fuse or bound can cut; store " + input + " in an order the other inputs agree with, or schedule "
        "another variable"
      : var.name() + " is iterated by a sparse level of " + tensor.name() + ", so a split, divide, fuse or bound of "
        "it must iterate positions instead: pos(" + var.name() + ", " + var.name() + "pos, " + tensor.name() +
        "(...)) first, then schedule " + var.name() + "pos";
  // At the command whose loops fixed the variable (its split, divide,
  // fuse or bound).
  for (const auto& relation : relations_) {
    if (std::holds_alternative<ir::PosRelation>(relation)) continue;
    auto parents = ir::parentVars(relation);
    if (std::find(parents.begin(), parents.end(), var) != parents.end())
      return LoweringError(ir::toString(relation) + ": " + reason, options_.commands.commandOf(relation));
  }
  return LoweringError(reason);
}

Stmt Lowerer::lowerLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                        const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole) {
  if (pinnedPositions_.count(forall->indexVar)) return lowerPinnedPositionLoop(forall, iterators, lattice, sole);
  if (denseDriven(iterators, lattice)) return lowerDenseDrivenLoop(forall, iterators, lattice, sole);
  // A GPU loop's iterations share no cursor: each visits one coordinate of
  // the dimension and searches every sparse operand for it (a lone unique
  // driver's positions are counted instead, one iteration each).
  if (ir::isGpuUnit(forall->attributes.parallelUnit) && !countedByLoneDriver(iterators, lattice))
    return lowerDenseDrivenLoop(forall, iterators, lattice, sole);
  return lowerSparseDrivenLoops(forall, iterators, lattice, sole);
}

Stmt Lowerer::lowerCase(const ir::ForallNode* forall, const LatticePoint& point, const ir::AssignmentNode* sole) {
  const ir::IndexVar& var = forall->indexVar;
  ir::IndexStmt body = forall->body;
  if (sole && point.expr.defined()) {
    body = ReplaceRhs(point.expr).rewrite(body);
  } else if (!sole) {
    // The operands this loop iterates that are not at the point's coordinate.
    std::set<const ir::AccessNode*> absent;
    for (const auto* access : accessOccurrences(body)) {
      const auto& ids = iteratorIds_[forall];
      int id = ids.count(access) ? ids.at(access) : -1;
      if (id >= 0 && !std::binary_search(point.iterators.begin(), point.iterators.end(), id)) absent.insert(access);
    }
    body = withoutAbsentOperands(body, absent);
    if (!body.defined()) return imp::Block::make({});
  }

  // Assembled outputs track positions: workspaces, scalars and all-dense
  // outputs are located from their coordinates at the store.
  std::vector<std::pair<const ir::AccessNode*, int>> assembled;
  std::vector<Stmt> stmts;
  for (const auto* assignment : ir::assignmentsOf(body)) {
    const auto* lhs = static_cast<const ir::AccessNode*>(assignment->lhs.get());
    if (storageOf(lhs->tensor).isWorkspace || lhs->tensor.order() == 0 || lhs->tensor.format().isAllDense()) continue;
    int level = levelOfVar(lhs, var);
    if (level < 0) continue;
    auto prologue = outputPrologue(lhs, level, coordinates_.at(var), assignment->accumulate);
    stmts.insert(stmts.end(), prologue.begin(), prologue.end());
    assembled.push_back({lhs, level});
  }
  stmts.push_back(lower(body));
  // Epilogues after the body is lowered: a prologue may rebind state (a
  // row's own append position) that the body uses and the epilogue restores.
  for (auto it = assembled.rbegin(); it != assembled.rend(); ++it) {
    auto epilogue = outputEpilogue(it->first, it->second, coordinates_.at(var));
    stmts.insert(stmts.end(), epilogue.begin(), epilogue.end());
  }
  return skipStoredCoordinates(var, imp::Block::make(stmts));
}

std::vector<Stmt> Lowerer::locateDenseIterators(std::vector<LevelIterator>& iterators, const Expr& coordinate) {
  std::vector<Stmt> stmts;
  for (auto& it : iterators) {
    if (!it.locatable()) continue;
    const TensorStorage& storage = storageOf(it.tensor);
    Expr size = storage.dims[it.tensor.format().modeOfLevel(it.level)];
    Expr located = ops::add(ops::mul(parentPosition(it.access, it.level), ops::cast(imp::Type::int64(), size)),
                            ops::cast(imp::Type::int64(), coordinate));
    it.pos = freshVar("p" + it.tensor.name() + std::to_string(it.level + 1), imp::Type::int64());
    stmts.push_back(imp::Declare::make(it.pos, located));
    positions_[it.access][it.level] = it.pos;
  }
  return stmts;
}

bool Lowerer::listOrderUnneeded(const ir::ForallNode* forall, const std::vector<LevelIterator>& iterators,
                                const LevelIterator& list) {
  for (const auto& it : iterators)
    if (&it != &list && !it.locatable()) return false;
  auto assignments = ir::assignmentsOf(forall->body);
  if (assignments.empty()) return false;
  for (const auto* assignment : assignments) {
    const auto* lhs = static_cast<const ir::AccessNode*>(assignment->lhs.get());
    auto scope = ismFillScopes_.find(lhs->tensor);
    if (scope == ismFillScopes_.end() || !storageOf(lhs->tensor).ismHandle.defined()) return false;
    auto indexes = [&](const ir::IndexVar& var) {
      return std::find(lhs->indices.begin(), lhs->indices.end(), var) != lhs->indices.end();
    };
    if (!indexes(forall->indexVar)) return false;
    for (const auto& [var, coordinate] : coordinates_)
      if (!scope->second.count(var) && !indexes(var)) return false;
  }
  return true;
}

std::vector<Stmt> Lowerer::initializeSparseIterator(LevelIterator& it, bool inAnyOrder) {
  const TensorStorage& storage = storageOf(it.tensor);
  std::string base = "p" + it.tensor.name() + std::to_string(it.level + 1);
  Expr begin, end;
  std::vector<Stmt> stmts;
  if (it.workspaceList) {
    begin = ops::IntImm::make(0, imp::Type::int64());
    end = storage.listSize;
    // Counting a row's entries needs them in no order.
    if (pass_ != OutputPass::Count && !inAnyOrder)
      stmts.push_back(imp::Evaluate::make(imp::Call::make(
        "tcc_order_touched", {storage.list, storage.listSize, storage.flags, ops::cast(imp::Type::int64(), storage.dims[0])},
        imp::Type::void_())));
  } else if (it.format.kind == ir::LevelKind::Compressed) {
    Expr parent = parentPosition(it.access, it.level);
    begin = imp::Load::make(storage.pos[it.level], parent);
    end = imp::Load::make(storage.pos[it.level], ops::add(parent, ops::IntImm::make(1, imp::Type::int64())));
    // (Where the parent is not at its loop's coordinate, nothing: the end's
    // load is not evaluated then, at a parent position perhaps past the last.)
    if (auto present = emptyBelowUnless_.find({canonical(it.access, it.level - 1), it.level - 1});
        it.level > 0 && present != emptyBelowUnless_.end())
      end = imp::Select::make(present->second, end, begin);
    if (auto owned = ownedRanges_.find(it.varName); owned != ownedRanges_.end()) {
      // The thread's coordinates of the segment: [first, stop) by binary search.
      if (!it.format.ordered)
        throw LoweringError("internal: an owned range of " + it.varName + " over an unordered level of " +
                            it.tensor.name());
      Expr segmentBegin = freshVar("p" + it.tensor.name() + std::to_string(it.level + 1) + "_segment", imp::Type::int64());
      Expr segmentEnd = freshVar("p" + it.tensor.name() + std::to_string(it.level + 1) + "_segment_stop", imp::Type::int64());
      stmts.push_back(imp::Declare::make(segmentBegin, begin));
      stmts.push_back(imp::Declare::make(segmentEnd, end));
      auto search = [&](const Expr& from, const Expr& coordinate) {
        return imp::Call::make("tcc_lower_bound", {storage.crd[it.level], from, segmentEnd, coordinate},
                               imp::Type::int64());
      };
      // The second search starts where the first ended.
      Expr ownedBegin = freshVar("p" + it.tensor.name() + std::to_string(it.level + 1) + "_owned", imp::Type::int64());
      stmts.push_back(imp::Declare::make(ownedBegin, search(segmentBegin, owned->second.begin)));
      begin = ownedBegin;
      end = search(ownedBegin, owned->second.end);
    }
  } else if (it.format.kind == ir::LevelKind::Singleton) {
    Expr parent = parentPosition(it.access, it.level);
    begin = parent;
    auto segment = segmentEnds_[it.access].find(it.level - 1);
    end = segment != segmentEnds_[it.access].end() ? segment->second
                                                    : ops::add(parent, ops::IntImm::make(1, imp::Type::int64()));
  } else {
    throw LoweringError("level format " + it.format.toString() + " of " + it.tensor.name() +
                        " cannot be iterated on the CPU");
  }
  if (ownedRanges_.count(it.varName) && it.format.kind != ir::LevelKind::Compressed)
    throw LoweringError("internal: an owned range of " + it.varName + " over a " + it.format.toString() +
                        " level of " + it.tensor.name());
  it.pos = freshVar(base, imp::Type::int64());
  it.end = freshVar(base + "_end", imp::Type::int64());
  stmts.push_back(imp::Declare::make(it.pos, begin));
  stmts.push_back(imp::Declare::make(it.end, end));
  return stmts;
}

// Reads the coordinate at the iterator's position and, for a level with
// repeated coordinates, finds the end of the run.
std::vector<Stmt> Lowerer::readCoordinate(LevelIterator& it, const Expr& useful) {
  const TensorStorage& storage = storageOf(it.tensor);
  Expr crd = it.workspaceList ? storage.list : storage.crd[it.level];
  it.coord = freshVar(it.varName + it.tensor.name(), imp::Type::int32());
  Expr read = imp::Load::make(crd, it.pos);
  if (useful.defined())
    read = imp::Select::make(useful, read, ops::IntImm::make(std::numeric_limits<int32_t>::max(), imp::Type::int32()));
  std::vector<Stmt> stmts{imp::Declare::make(it.coord, read)};
  if (it.workspaceList) {
    positions_[it.access][it.level] = ops::cast(imp::Type::int64(), it.coord);
  } else {
    positions_[it.access][it.level] = it.pos;
  }
  auto segment = findSegmentEnd(it);
  stmts.insert(stmts.end(), segment.begin(), segment.end());
  return stmts;
}

// On a level with repeated coordinates, the run of positions that share the
// current coordinate: the children iterate [pos, segmentEnd).
std::vector<Stmt> Lowerer::findSegmentEnd(LevelIterator& it) {
  if (it.format.unique || it.workspaceList) return {};
  const Expr& crd = storageOf(it.tensor).crd[it.level];
  it.segmentEnd = freshVar(toString(it.pos) + "_segment_end", imp::Type::int64());
  segmentEnds_[it.access][it.level] = it.segmentEnd;
  Expr one = ops::IntImm::make(1, imp::Type::int64());
  return {imp::Declare::make(it.segmentEnd, ops::add(it.pos, one)),
          imp::While::make(
              ops::land(ops::lt(it.segmentEnd, it.end), ops::eq(imp::Load::make(crd, it.segmentEnd), it.coord)),
              imp::Assign::makeCompound(imp::BinaryOp::Add, it.segmentEnd, one))};
}

namespace {

// Whether a statement breaks out of the loop around it (a break outside a
// nested loop), which a C switch around it would catch instead.
bool leavesLoop(const Stmt& stmt) {
  struct Finder : imp::IRVisitor {
    int loops = 0;
    bool found = false;
    void visit(const imp::Break*) override { found |= loops == 0; }
    void visit(const imp::For* op) override {
      ++loops;
      imp::IRVisitor::visit(op);
      --loops;
    }
    void visit(const imp::While* op) override {
      ++loops;
      imp::IRVisitor::visit(op);
      --loops;
    }
  } finder;
  stmt.accept(finder);
  return finder.found;
}

// A merged loop over more operands tests its cases in turn (a switch would
// list 2^n values; a union of eight CSR matrices, whose 255 cases the
// tests in turn took 8x as long as three statements of unions of four,
// lists 255); so does one of three cases or fewer, which the tests in
// turn reach in two tests at most (a switch measured no faster there:
// bench/compile_latency/RESULTS.md).
constexpr size_t kMostOperandsSwitched = 10;
constexpr size_t kFewestCasesSwitched = 4;
// An innermost co-iteration of this many loops or more (a union of five
// operands has 31) is one loop too: TACO's loops per point print each
// case once per loop having it, 3^n cases for a union of n operands (a sum
// of eight CSR matrices was 49,000 lines, past what is compiled), where the
// one loop prints each of its 2^n - 1 cases once (3,000 lines).
constexpr size_t kFewestLoopsMerged = 16;

}  // namespace

bool Lowerer::mergesInOneLoop(const ir::ForallNode* forall, const std::vector<std::vector<int>>& loops) const {
  // Where a case holds loops (the variables inside, or a sum's), or an
  // innermost co-iteration has many loops: an innermost loop's cases are a
  // few statements each, and its loops after the first run on fewer
  // operands, with fewer tests per entry (a union of four: 12.7 ms per
  // point, 14.0 ms in one loop; of five: 26.8 and 21.4 ms; bench/unions/RESULTS.md).
  return options_.oneMergeLoop && !options_.cudaTarget && loops.size() >= 2 &&
         (!statementsOf<ir::ForallNode>(forall->body).empty() || loops.size() >= kFewestLoopsMerged);
}

// Each case of a union holds the loops below over the operands it has; with
// many operands (`loops`, 3^n in all) the cases become one body over all of
// them, an operand not at the coordinate iterating empty ranges below: the
// lattices below then meet exactly the points of the operands present.
// Where each operand's levels below are unique compressed ones (no dense
// level located from an absent parent, no runs) and nothing but the
// output's own loops lies below (no sums hoisted per case).
bool Lowerer::unitesByEmptyRanges(const ir::ForallNode* forall, const std::vector<LevelIterator*>& driving,
                                  size_t cases, size_t loops, const ir::AssignmentNode* sole) const {
  if (loops < kFewestLoopsMerged || statementsOf<ir::ForallNode>(forall->body).empty()) return false;
  if (!sole || driving.size() >= 8 * sizeof(size_t) || cases != (size_t{1} << driving.size()) - 1) return false;
  if (!whereStatements(forall->body).empty()) return false;
  const auto& outputIndices = sole->lhs.indices();
  for (const auto* inner : statementsOf<ir::ForallNode>(forall->body))
    if (std::find(outputIndices.begin(), outputIndices.end(), inner->indexVar) == outputIndices.end()) return false;
  for (const LevelIterator* it : driving) {
    if (it->workspaceList || !it->format.unique || it->level + 1 >= it->tensor.order()) return false;
    const ir::Format& format = it->tensor.format();
    for (int level = it->level + 1; level < format.order(); ++level)
      if (format.level(level).kind != ir::LevelKind::Compressed || !format.level(level).unique) return false;
  }
  return true;
}

Stmt Lowerer::advance(const LevelIterator& it, const Expr& coordinate) {
  return imp::If::make(ops::eq(it.coord, coordinate), moveOn(it));
}

Stmt Lowerer::moveOn(const LevelIterator& it) {
  Expr next = it.segmentEnd.defined() ? it.segmentEnd : ops::add(it.pos, ops::IntImm::make(1, imp::Type::int64()));
  return imp::Assign::make(it.pos, next);
}

// Some lattice point needs only dense (located) operands, so every
// coordinate of the dimension is visited; sparse operands are checked at
// each coordinate. On a GPU loop (here also where every point has a sparse
// operand) each iteration finds its coordinate in each sparse operand by
// binary search, from the segment's start: the cursor a sequential loop
// carries from one coordinate to the next would be shared by the threads.
Stmt Lowerer::lowerDenseDrivenLoop(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                   const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole) {
  const ir::IndexVar& var = forall->indexVar;
  Expr coordinate = freshVar(var.name(), imp::Type::int32());
  coordinates_[var] = coordinate;
  auto pinned = pinnedCoordinates_.find(var);

  LoopPlan plan = planLoop(forall);
  imp::LoopKind kind = plan.kind;
  std::vector<Stmt> before, loopBody;
  std::vector<LevelIterator*> sparse;
  for (auto& it : iterators) {
    if (it.locatable()) continue;
    auto init = initializeSparseIterator(it);
    before.insert(before.end(), init.begin(), init.end());
    sparse.push_back(&it);
  }
  if (sparse.empty() && countsTripsOnly(forall)) {
    // The work pass: every coordinate runs the body once.
    before.push_back(addWork(dimensionOf(var)));
    return imp::Block::make(before);
  }
  auto locate = locateDenseIterators(iterators, coordinate);
  loopBody.insert(loopBody.end(), locate.begin(), locate.end());
  const bool searched = imp::isGpuLoop(kind);
  std::map<int, Expr> present;
  for (auto* it : sparse) {
    // The coordinate is read only while the iterator has entries left.
    const TensorStorage& storage = storageOf(it->tensor);
    Expr crd = it->workspaceList ? storage.list : storage.crd[it->level];
    if (searched) {
      requireSearchable(forall, *it);
      Expr segmentStart = it->pos;
      it->pos = freshVar(toString(segmentStart) + "_at", imp::Type::int64());
      loopBody.push_back(imp::Declare::make(
        it->pos, imp::Call::make("tcc_lower_bound", {crd, segmentStart, it->end, coordinate}, imp::Type::int64())));
    }
    it->coord = freshVar(it->varName + it->tensor.name(), imp::Type::int32());
    loopBody.push_back(imp::Declare::make(
        it->coord, imp::Select::make(ops::lt(it->pos, it->end), imp::Load::make(crd, it->pos), ops::IntImm::make(-1))));
    positions_[it->access][it->level] = it->workspaceList ? ops::cast(imp::Type::int64(), it->coord) : it->pos;
    auto segment = findSegmentEnd(*it);
    loopBody.insert(loopBody.end(), segment.begin(), segment.end());
    present[it->id] = ops::eq(it->coord, coordinate);
  }
  if (kind != imp::LoopKind::Serial)
    requireParallelizable(forall, sparse.empty() || searched,
                          "the loop merges sparse operands with cursors carried across iterations");
  if (pinned != pinnedCoordinates_.end() && !sparse.empty()) throw sparseVariableScheduled(var, sparse[0]->tensor);
  std::optional<LoopScope> scope(std::in_place, *this, plan);
  loopBody.insert(loopBody.begin(), scope->iterationPrologue().begin(), scope->iterationPrologue().end());

  // if / else-if over the lattice points, most operands first.
  Stmt cases;
  std::vector<std::vector<int>> seen;
  std::vector<const LatticePoint*> points;
  for (const auto& point : lattice) {
    std::vector<int> sparseIds;
    for (int id : point.iterators)
      if (present.count(id)) sparseIds.push_back(id);
    if (std::find(seen.begin(), seen.end(), sparseIds) != seen.end()) continue;
    seen.push_back(sparseIds);
    points.push_back(&point);
    if (sparseIds.empty()) break;  // every later point is covered
  }
  HoistedSums hoisted(hoistedSums_);
  auto sums = hoistSumsOutOfCases(forall, present, seen, hoisted);
  loopBody.insert(loopBody.end(), sums.begin(), sums.end());
  std::vector<std::pair<Expr, Stmt>> branches;
  for (size_t p = 0; p < points.size(); ++p) {
    Expr condition;
    for (int id : seen[p]) condition = ops::land(condition, present[id]);
    branches.push_back({condition, lowerCase(forall, *points[p], sole)});
  }
  for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
    if (!it->first.defined()) {
      cases = it->second;
    } else {
      cases = imp::If::make(it->first, it->second, cases);
    }
  }
  loopBody.push_back(cases);
  scope.reset();
  if (!searched)
    for (auto* it : sparse) loopBody.push_back(advance(*it, coordinate));

  if (pinned != pinnedCoordinates_.end()) {
    // One iteration at the coordinate the derived loops fixed (and guarded).
    before.push_back(imp::Declare::make(coordinate, pinned->second));
    before.push_back(imp::Block::make(loopBody));
    return imp::Block::make(before);
  }
  Expr begin = ops::IntImm::make(0), end = dimensionOf(var);
  if (auto owned = ownedRanges_.find(var.name()); owned != ownedRanges_.end()) {
    // (Its sparse operands' cursors start at the range, initializeSparseIterator.)
    begin = ops::cast(imp::Type::int32(), owned->second.begin);
    end = ops::cast(imp::Type::int32(), owned->second.end);
  }
  // The one-pass row-parallel form, which lowerRowsInOnePass chose for the
  // outermost loop, on the threads, over dense levels only (its chunks are
  // counted once a call).
  if (pass_ == OutputPass::Chunk && chunkedRows_ && var == chunkedRows_->row) {
    bool outermost = std::all_of(coordinates_.begin(), coordinates_.end(),
                                 [&](const auto& bound) { return bound.first == var; });
    if (kind != imp::LoopKind::Parallel || !plan.reductions.empty() || ownedRanges_.count(var.name()) ||
        !sparse.empty() || !outermost || chunkedRows_->lowered)
      throw LoweringError("internal: the loop over " + var.name() + " cannot hand out the rows of " +
                          chunkedRows_->output.name() + " in chunks");
    before.push_back(lowerChunkedRows(coordinate, end, imp::Block::make(loopBody)));
    return imp::Block::make(before);
  }
  before.push_back(imp::For::make(coordinate, begin, end, imp::Block::make(loopBody),
                                  kind, "iterate " + var.name(), forall->attributes.unrollFactor, plan.reductions));
  return imp::Block::make(before);
}

// Every lattice point has a sparse operand: loop over the sparse operands'
// coordinates, one while-loop per point (TACO's co-iteration), or a plain
// for-loop when a single unique level drives.
Stmt Lowerer::lowerSparseDrivenLoops(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                     const std::vector<LatticePoint>& lattice, const ir::AssignmentNode* sole) {
  const ir::IndexVar& var = forall->indexVar;
  auto byId = [&](int id) -> LevelIterator& {
    return *std::find_if(iterators.begin(), iterators.end(), [&](const LevelIterator& it) { return it.id == id; });
  };
  auto sparseOf = [&](const LatticePoint& point) {
    std::vector<int> ids;
    for (int id : point.iterators)
      if (!byId(id).locatable()) ids.push_back(id);
    return ids;
  };

  if (pinnedCoordinates_.count(var)) {
    for (const auto& it : iterators)
      if (!it.locatable()) throw sparseVariableScheduled(var, it.tensor);
  }
  LoopPlan plan = planLoop(forall);
  imp::LoopKind kind = plan.kind;
  std::optional<LoopScope> scope(std::in_place, *this, plan);
  std::vector<Stmt> stmts;
  std::vector<const LevelIterator*> sparse;
  for (auto& it : iterators) {
    if (it.locatable()) continue;
    auto init = initializeSparseIterator(it, it.workspaceList && listOrderUnneeded(forall, iterators, it));
    stmts.insert(stmts.end(), init.begin(), init.end());
    sparse.push_back(&it);
  }
  // Room for this loop's appends, tested once before it; the outputs stay
  // marked while their cases are lowered below.
  std::set<ir::TensorVar> reservedBefore = reservedOutputs_;
  struct Restore {
    std::set<ir::TensorVar>& reserved;
    std::set<ir::TensorVar> before;
    ~Restore() { reserved = std::move(before); }
  } restore{reservedOutputs_, std::move(reservedBefore)};
  if (!countsTripsOnly(forall)) {
    // Each operand's range of positions; a lone driver's position is the
    // counted loop's variable below, declared by the loop: its start here.
    // (The counted loop below is taken when one unique level drives.)
    const LevelIterator* loneDriver = nullptr;
    if (lattice.size() == 1 && sparseOf(lattice[0]).size() == 1) {
      const LevelIterator& driver = byId(sparseOf(lattice[0])[0]);
      if (driver.format.unique || driver.workspaceList) loneDriver = &driver;
    }
    std::vector<std::pair<Expr, Expr>> ranges;
    for (const auto* it : sparse) {
      Expr start = it->pos;
      for (const auto& stmt : stmts)
        if (const auto* declare = stmt.as<imp::Declare>(); it == loneDriver && declare && declare->var.sameAs(it->pos))
          start = declare->init;
      ranges.push_back({start, it->end});
    }
    auto reserve = reserveAppends(forall, sparse, ranges, lattice);
    stmts.insert(stmts.end(), reserve.begin(), reserve.end());
  }

  // One unique level drives: a counted loop the C++ compiler can optimise.
  if (lattice.size() == 1 && sparseOf(lattice[0]).size() == 1) {
    LevelIterator& driver = byId(sparseOf(lattice[0])[0]);
    if ((driver.format.unique || driver.workspaceList) && countsTripsOnly(forall)) {
      // The work pass: the body runs once per position of the driver.
      stmts.push_back(addWork(ops::sub(driver.end, driver.pos)));
      return imp::Block::make(stmts);
    }
    if (driver.format.unique || driver.workspaceList) {
      std::vector<Stmt> body = scope->iterationPrologue();
      auto read = readCoordinate(driver);
      body.insert(body.end(), read.begin(), read.end());
      coordinates_[var] = driver.coord;
      auto locate = locateDenseIterators(iterators, driver.coord);
      body.insert(body.end(), locate.begin(), locate.end());
      body.push_back(lowerCase(forall, lattice[0], sole));
      scope.reset();
      // The iterator's declared start becomes the loop's start.
      auto start = std::find_if(stmts.begin(), stmts.end(), [&](const Stmt& s) {
        const auto* declare = s.as<imp::Declare>();
        return declare && declare->var.sameAs(driver.pos);
      });
      Expr begin = start->as<imp::Declare>()->init;
      stmts.erase(start);
      Stmt loop = imp::For::make(driver.pos, begin, driver.end, imp::Block::make(body), kind,
                                 "iterate " + var.name() + " over " + driver.tensor.name() + "'s level " +
                                     std::to_string(driver.level + 1),
                                 forall->attributes.unrollFactor, plan.reductions);
      stmts.push_back(loop);
      return imp::Block::make(stmts);
    }
  }

  requireParallelizable(forall, kind == imp::LoopKind::Serial,
                        "co-iterating several sparse operands is a while-loop, which cannot be split among threads "
                        "or vector lanes");
  // TACO's loops, one per lattice point in turn as operands run out; or one
  // loop for all of them (oneMergeLoop), where each case's loops and sums
  // are printed once instead of once per loop that has the case.
  std::vector<std::vector<int>> loopsEmitted;
  for (const auto& point : lattice)
    if (auto driving = sparseOf(point);
        std::find(loopsEmitted.begin(), loopsEmitted.end(), driving) == loopsEmitted.end())
      loopsEmitted.push_back(driving);
  const bool oneLoop = mergesInOneLoop(forall, loopsEmitted);
  auto allHaveEntries = [&](const std::vector<int>& point) {
    Expr live;
    for (int id : point) live = ops::land(live, ops::lt(byId(id).pos, byId(id).end));
    return live;
  };
  // In the one loop, an operand is read while some point it is in can still
  // be met: all the point's operands have entries left. Past that its
  // coordinate reads as past every other, at no case's, and its remaining
  // entries are skipped, as the loops per point skip them (A's entries
  // after G's in G(j) * A(j) + E(j) * F(j)).
  auto usefulWhile = [&](int id) {
    std::vector<const std::vector<int>*> points;
    for (const auto& each : loopsEmitted)
      if (std::find(each.begin(), each.end(), id) != each.end()) points.push_back(&each);
    Expr useful;
    for (const auto* point : points)
      if (std::none_of(points.begin(), points.end(),
                       [&](const std::vector<int>* other) { return other != point && isSubset(*other, *point); }))
        useful = ops::lor(useful, allHaveEntries(*point));
    return useful;
  };
  for (size_t l = 0; l < (oneLoop ? 1 : loopsEmitted.size()); ++l) {
    std::vector<int> driving = loopsEmitted[l];
    Expr condition;
    if (oneLoop) {
      // While some point's operands all have entries left (a point holding
      // another adds nothing: a union's test is one per operand).
      driving.clear();
      for (const auto& each : loopsEmitted) {
        if (std::none_of(loopsEmitted.begin(), loopsEmitted.end(),
                         [&](const std::vector<int>& other) { return other != each && isSubset(other, each); }))
          condition = ops::lor(condition, allHaveEntries(each));
        for (int id : each)
          if (std::find(driving.begin(), driving.end(), id) == driving.end()) driving.push_back(id);
      }
      std::sort(driving.begin(), driving.end());
    }
    std::vector<Stmt> body;
    for (int id : driving) {
      LevelIterator& it = byId(id);
      if (!oneLoop) condition = ops::land(condition, ops::lt(it.pos, it.end));
      auto read = readCoordinate(it, oneLoop ? usefulWhile(id) : Expr());
      body.insert(body.end(), read.begin(), read.end());
    }
    Expr coordinate = freshVar(var.name(), imp::Type::int32());
    Expr minimum = byId(driving[0]).coord;
    for (size_t k = 1; k < driving.size(); ++k) minimum = ops::min(minimum, byId(driving[k]).coord);
    body.push_back(imp::Declare::make(coordinate, minimum));
    coordinates_[var] = coordinate;
    auto locate = locateDenseIterators(iterators, coordinate);
    body.insert(body.end(), locate.begin(), locate.end());

    // Cases: the lattice points below this one, most operands first.
    std::vector<std::vector<int>> seen;
    std::vector<const LatticePoint*> subs;
    for (const auto& sub : lattice) {
      std::vector<int> subSparse = sparseOf(sub);
      if (!isSubset(subSparse, driving) || subSparse.empty()) continue;
      if (std::find(seen.begin(), seen.end(), subSparse) != seen.end()) continue;
      seen.push_back(subSparse);
      subs.push_back(&sub);
    }
    // Sums every case computes alike, once before the cases (an exhausted
    // operand's sums are computed by none).
    std::map<int, Expr> presentAt;
    for (const auto* it : sparse)
      presentAt[it->id] = std::find(driving.begin(), driving.end(), it->id) != driving.end()
                              ? ops::eq(it->coord, coordinate)
                              : Expr();
    HoistedSums hoisted(hoistedSums_);
    auto sums = hoistSumsOutOfCases(forall, presentAt, seen, hoisted);
    body.insert(body.end(), sums.begin(), sums.end());
    std::vector<LevelIterator*> drivingIterators;
    for (int id : driving) drivingIterators.push_back(&byId(id));
    if (oneLoop && unitesByEmptyRanges(forall, drivingIterators, subs.size(), loopsEmitted.size(), sole)) {
      const LatticePoint& all = *std::find_if(lattice.begin(), lattice.end(), [&](const LatticePoint& point) {
        return sparseOf(point) == driving;
      });
      for (const LevelIterator* it : drivingIterators)
        emptyBelowUnless_[{canonical(it->access, it->level), it->level}] = ops::eq(it->coord, coordinate);
      body.push_back(lowerCase(forall, all, sole));
      for (const LevelIterator* it : drivingIterators) emptyBelowUnless_.erase({canonical(it->access, it->level), it->level});
      for (int id : driving) body.push_back(advance(byId(id), coordinate));
      stmts.push_back(imp::While::make(condition, imp::Block::make(body), "co-iterate " + var.name()));
      continue;
    }
    std::vector<std::pair<Expr, Stmt>> branches;
    for (size_t s = 0; s < subs.size(); ++s) {
      Expr present;
      for (int id : seen[s]) present = ops::land(present, ops::eq(byId(id).coord, coordinate));
      branches.push_back({present, lowerCase(forall, *subs[s], sole)});
    }
    // When some combination of the operands present has a case (a union
    // of the operands' patterns), each case moves on the operands it
    // consumed, and the last case needs no test: the cursors' next loads
    // then wait on the branch taken, which speculation runs ahead of, not
    // on the comparison (a merge of structured patterns predicts well).
    // Otherwise every operand at the coordinate moves on after the cases.
    const bool everyCombination =
        driving.size() >= 2 && driving.size() < 8 && branches.size() == (1u << driving.size()) - 1;
    if (everyCombination) {
      for (size_t b = 0; b < branches.size(); ++b) {
        std::vector<Stmt> caseBody{branches[b].second};
        for (const auto& sub : seen[b]) caseBody.push_back(moveOn(byId(sub)));
        branches[b].second = imp::Block::make(caseBody);
      }
    }
    Stmt cases;
    if (oneLoop && options_.mergeLoopSwitch && driving.size() <= kMostOperandsSwitched &&
        branches.size() >= kFewestCasesSwitched &&
        std::none_of(branches.begin(), branches.end(), [](const auto& branch) { return leavesLoop(branch.second); })) {
      // One switch on which operands are at the coordinate (a bit each)
      // jumps to the case the tests in turn would reach, the first whose
      // operands are all there: the cases a run-out operand belongs to
      // (never met again) cost nothing, where the tests in turn tried
      // each of them in every iteration.
      Expr mask;
      for (size_t k = 0; k < driving.size(); ++k) {
        Expr bit = ops::mul(ops::cast(imp::Type::int32(), ops::eq(byId(driving[k]).coord, coordinate)),
                            ops::IntImm::make(int64_t{1} << k, imp::Type::int32()));
        mask = mask.defined() ? ops::add(mask, bit) : bit;
      }
      Expr present = freshVar(var.name() + "_present", imp::Type::int32());
      body.push_back(imp::Declare::make(present, mask));
      std::vector<imp::Switch::Case> switched;
      std::vector<bool> taken(size_t{1} << driving.size(), false);
      for (size_t b = 0; b < branches.size(); ++b) {
        int64_t needs = 0;
        for (int id : seen[b])
          needs |= int64_t{1} << (std::find(driving.begin(), driving.end(), id) - driving.begin());
        std::vector<int64_t> values;
        for (int64_t value = 1; value < static_cast<int64_t>(taken.size()); ++value)
          if ((value & needs) == needs && !taken[value]) {
            taken[value] = true;
            values.push_back(value);
          }
        if (!values.empty()) switched.push_back({values, branches[b].second});
      }
      cases = imp::Switch::make(present, std::move(switched));
    } else {
      cases = everyCombination ? branches.back().second : Stmt();
      for (auto it = branches.rbegin() + (everyCombination ? 1 : 0); it != branches.rend(); ++it)
        cases = imp::If::make(it->first, it->second, cases);
    }
    // With one operand driving, its coordinate is the loop's: no test needed.
    if (driving.size() == 1 && branches.size() == 1) cases = branches[0].second;
    body.push_back(cases);
    if (!everyCombination)
      for (int id : driving) body.push_back(advance(byId(id), coordinate));
    stmts.push_back(imp::While::make(condition, imp::Block::make(body), "co-iterate " + var.name()));
  }
  return imp::Block::make(stmts);
}

std::vector<Stmt> Lowerer::reserveAppends(const ir::ForallNode* forall, const std::vector<const LevelIterator*>& sparse,
                                          const std::vector<std::pair<Expr, Expr>>& ranges,
                                          const std::vector<LatticePoint>& lattice) {
  if (workPass_ || (pass_ != OutputPass::Fused && pass_ != OutputPass::Assemble && pass_ != OutputPass::Chunk) ||
      sparse.empty())
    return {};
  std::map<ir::TensorVar, int> writes;
  auto assignments = ir::assignmentsOf(forall->body);
  for (const auto* assignment : assignments) writes[assignment->lhs.tensor()]++;
  // Each iteration of the loops below moves at least one sparse operand on
  // by at least one position, so they iterate at most this many times.
  Expr remaining;
  for (const auto& [start, end] : ranges) {
    Expr left = ops::sub(end, start);
    remaining = remaining.defined() ? ops::add(remaining, left) : left;
  }
  std::vector<Stmt> stmts;
  for (const auto* assignment : assignments) {
    const auto* lhs = static_cast<const ir::AccessNode*>(assignment->lhs.get());
    const ir::TensorVar& tensor = lhs->tensor;
    if (!isParameter(tensor) || writes[tensor] != 1 || tensor.order() == 0 || tensor.format().isAllDense()) continue;
    TensorStorage& storage = storageOf(tensor);
    const int last = tensor.format().order() - 1;
    if (!storage.isOutput || storage.isWorkspace || storage.ismHandle.defined() || reservedOutputs_.count(tensor) ||
        levelOfVar(lhs, forall->indexVar) != last || tensor.format().level(last).isDense() ||
        !storage.crdCapacity[last].defined() || !storage.appendPosition[last].defined())
      continue;
    std::vector<Expr> arrays{storage.crd[last]};
    if (pass_ != OutputPass::Assemble) arrays.push_back(storage.vals);
    stmts.push_back(growToHold(storage.crdCapacity[last], ops::add(storage.appendPosition[last], remaining), arrays));
    reservedOutputs_.insert(tensor);

    // A first capacity (the one-pass form set its bound before lowering).
    if (!storage.firstCapacity.defined()) storage.firstCapacity = storedEntriesBound(sparse, lattice.size() > 1);
  }
  return stmts;
}

Expr Lowerer::storedEntriesBound(const std::vector<const LevelIterator*>& sparse, bool unitesOperands) const {
  Expr entries;
  for (const auto* it : sparse) {
    if (it->workspaceList || it->format.kind != ir::LevelKind::Compressed || !isParameter(it->tensor) ||
        it->level != it->tensor.format().order() - 1)
      return Expr();
    Expr stored = imp::TensorProperty::make(it->tensor.name(), imp::TensorField::ValsSize, 0, imp::Type::int64());
    entries = !entries.defined() ? stored : unitesOperands ? ops::add(entries, stored) : ops::min(entries, stored);
  }
  return entries;
}

Expr Lowerer::onePassBound(const ir::IndexStmt& cin, const ir::AssignmentNode* assignment, const ir::IndexVar& row) {
  const ir::TensorVar& output = assignment->lhs.tensor();
  // The loops around the assignment, outermost first.
  std::vector<const ir::ForallNode*> loops;
  for (const auto* forall : statementsOf<ir::ForallNode>(cin)) {
    auto inside = ir::assignmentsOf(forall->body);
    if (std::find(inside.begin(), inside.end(), assignment) != inside.end()) loops.push_back(forall);
  }
  const ir::IndexVar& appended = assignment->lhs.indices()[output.format().modeOfLevel(1)];
  auto appending = std::find_if(loops.begin(), loops.end(),
                                [&](const ir::ForallNode* loop) { return loop->indexVar == appended; });
  // The rows: the outermost loop, over the variable itself (not split or
  // bounded), whose operands all locate their rows (dense levels).
  if (loops.empty() || !(loops[0]->indexVar == row) || relationOf_.count(row)) return Expr();
  // The loop that appends: over the variable itself, each iteration
  // appending at most once.
  if (appending == loops.end() || relationOf_.count(appended)) return Expr();
  std::vector<ir::IndexVar> around;
  for (auto loop = loops.begin(); loop != appending; ++loop) around.push_back((*loop)->indexVar);
  // Loops that cannot iterate their accesses do not apply (the two-pass
  // lowering refuses them, with the reason).
  auto never = [](const ir::AccessNode*, int) { return false; };
  if (iterationRefusal(loops[0], never)) return Expr();
  for (const auto& it : iteratorsOf(loops[0], never, 0))
    if (!it.locatable()) return Expr();
  // An access's level is located where the loops around have bound its
  // outer levels, outer ones by outer loops.
  auto located = [&](const ir::AccessNode* access, int level) {
    auto from = around.begin();
    for (int outer = 0; outer <= level; ++outer) {
      from = std::find(from, around.end(), access->indices[access->tensor.format().modeOfLevel(outer)]);
      if (from == around.end()) return false;
      ++from;
    }
    return true;
  };
  if (iterationRefusal(*appending, located)) return Expr();
  std::vector<LevelIterator> iterators = iteratorsOf(*appending, located, 0);
  std::vector<LatticePoint> lattice = latticeOf(*appending, iterators);
  if (denseDriven(iterators, lattice)) return Expr();
  std::vector<const LevelIterator*> sparse;
  for (const auto& it : iterators)
    if (!it.locatable()) sparse.push_back(&it);
  // Each stored entry visited once: every loop around this one iterates
  // a variable of each operand (a vector added to every row is visited
  // once a row).
  for (const auto* it : sparse)
    for (const auto& var : around)
      if (std::find(it->access->indices.begin(), it->access->indices.end(), var) == it->access->indices.end())
        return Expr();
  return storedEntriesBound(sparse, lattice.size() > 1);
}

Stmt Lowerer::lowerWhere(const ir::WhereNode* where) {
  // The workspaces this where fills; one that a where inside its producer
  // fills (a precompute among a sum's loops) is that where's.
  std::set<ir::TensorVar> inner;
  for (const auto* nested : whereStatements(where->producer))
    for (const auto& tensor : ir::tensorsWritten(nested->producer)) inner.insert(tensor);
  std::vector<ir::TensorVar> workspaces;
  for (const auto& tensor : ir::tensorsWritten(where->producer))
    if (!isParameter(tensor) && !inner.count(tensor)) workspaces.push_back(tensor);
  // Computed before the lattice cases (hoist_nested_sums.cpp).
  if (!workspaces.empty() && std::all_of(workspaces.begin(), workspaces.end(),
                                         [&](const ir::TensorVar& tensor) { return hoistedSums_.count(tensor) > 0; }))
    return lower(where->consumer);
  // A workspace whose every index the loops around fix holds the one entry
  // its producer writes (a workspace over a variable of a loop outside the
  // where): reset that entry, not the whole workspace.
  std::map<ir::TensorVar, const ir::AccessNode*> oneEntry;
  for (const auto* assignment : ir::assignmentsOf(where->producer)) {
    const auto* lhs = static_cast<const ir::AccessNode*>(assignment->lhs.get());
    if (std::find(workspaces.begin(), workspaces.end(), lhs->tensor) == workspaces.end() || lhs->indices.empty())
      continue;
    bool fixed = std::all_of(lhs->indices.begin(), lhs->indices.end(),
                             [&](const ir::IndexVar& var) { return coordinates_.count(var) > 0; });
    if (fixed) oneEntry.emplace(lhs->tensor, lhs);
  }
  std::vector<Stmt> stmts;
  for (const auto& workspace : workspaces) {
    TensorStorage& storage = storageOf(workspace);
    if (storage.gpuSparse) {
      auto select = selectGpuThreadSparseCopy(storage);
      stmts.insert(stmts.end(), select.begin(), select.end());
    } else if (storage.perGpuThread) {
      auto select = selectGpuThreadCopy(workspace, storage);
      stmts.insert(stmts.end(), select.begin(), select.end());
    } else if (storage.valsOfAllThreads.defined()) {
      auto select = selectThreadCopy(storage);
      stmts.insert(stmts.end(), select.begin(), select.end());
    }
    if (workspace.order() == 0) {
      storage.scalar = freshVar(workspace.name(), valueType(workspace));
      stmts.push_back(imp::Declare::make(storage.scalar, ops::cast(storage.scalar.type(), ops::FloatImm::make(0.0))));
    }
  }
  std::vector<int> storesBefore;
  for (const auto& workspace : workspaces) storesBefore.push_back(storesLowered_[workspace]);
  for (const auto& workspace : workspaces) {
    if (!storageOf(workspace).ismHandle.defined()) continue;
    // (Where several assignments insert into it, one coordinate's inserts
    // come from several loops, whose orders a filled capacity's batches
    // could group differently: those keep their lists sorted.)
    auto assignments = ir::assignmentsOf(where->producer);
    if (std::count_if(assignments.begin(), assignments.end(), [&](const ir::AssignmentNode* assignment) {
          return static_cast<const ir::AccessNode*>(assignment->lhs.get())->tensor == workspace;
        }) != 1) {
      ismFillScopes_.erase(workspace);
      continue;
    }
    std::set<ir::IndexVar>& around = ismFillScopes_[workspace];
    around.clear();
    for (const auto& [var, coordinate] : coordinates_) around.insert(var);
  }
  stmts.push_back(lower(where->producer));
  // (The work pass counts iterations and lowers no store; the loops after
  // a pos's positions keep only the cases without its access, where a
  // producer may have nothing to compute.)
  for (size_t w = 0; w < workspaces.size() && !workPass_ && remainderRoles_.empty(); ++w)
    if (storesLowered_[workspaces[w]] == storesBefore[w])
      throw LoweringError("internal: the producer of " + workspaceInWords(workspaces[w]) +
                          " was lowered to no store into it, so its consumer would read what nothing filled: " +
                          ir::toString(where->producer));
  const ir::TensorVar* sparse = nullptr;
  for (const auto& workspace : workspaces)
    if (storageOf(workspace).ismHandle.defined()) sparse = &workspace;
  for (const auto& workspace : workspaces)
    if (TensorStorage& storage = storageOf(workspace); storage.gpuSparse) {
      auto merge = mergeGpuThreadSparseWorkspace(storage);
      stmts.insert(stmts.end(), merge.begin(), merge.end());
      stmts.push_back(lower(where->consumer));
      return imp::Block::make(stmts);
    }
  if (sparse && storageOf(*sparse).ismDrained) {
    drainSparseWorkspace(*sparse, stmts);
    stmts.push_back(lower(where->consumer));
    return imp::Block::make(stmts);
  }
  if (sparse) {
    stmts.push_back(finishSparseWorkspace(where, *sparse));
    return imp::Block::make(stmts);
  }
  stmts.push_back(lower(where->consumer));

  // Reset the workspaces for the next iteration of the enclosing loops.
  for (const auto& workspace : workspaces) {
    TensorStorage& storage = storageOf(workspace);
    if (workspace.order() == 0 || storage.perGpuThread) continue;  // (zeroed before each fill)
    // On the cuda target the host, which has no loops, runs such a where
    // once, and allocates the workspace zeroed.
    if (storage.sharedOnGpu && gpuUnit_ == imp::LoopKind::Serial) continue;
    if (storage.list.defined()) {
      Expr p = freshVar("p" + storage.name + "_reset", imp::Type::int64());
      Expr coordinate = imp::Load::make(storage.list, p);
      stmts.push_back(imp::For::make(
          p, ops::IntImm::make(0, imp::Type::int64()), storage.listSize,
          imp::Block::make({imp::Store::make(storage.vals, coordinate, ops::cast(valueType(workspace), ops::FloatImm::make(0.0))),
                            imp::Store::make(storage.flags, coordinate, ops::IntImm::make(0, imp::Type::bool_()))}),
          imp::LoopKind::Serial, "reset the touched entries of " + storage.name));
      stmts.push_back(imp::Assign::make(storage.listSize, ops::IntImm::make(0, imp::Type::int64())));
    } else if (auto entry = oneEntry.find(workspace); entry != oneEntry.end()) {
      stmts.push_back(imp::Store::make(storage.vals, valuePositionOf(entry->second),
                                       ops::cast(valueType(workspace), ops::FloatImm::make(0.0))));
    } else {
      Expr size = ops::IntImm::make(1, imp::Type::int64());
      for (const auto& dim : storage.dims) size = ops::mul(size, ops::cast(imp::Type::int64(), dim));
      const imp::ScalarKind kind = valueType(workspace).kind;  // (float32 for a float16 expression's)
      const int width = kind == imp::ScalarKind::Float64 || kind == imp::ScalarKind::Int64 ? 8 : 4;
      Expr bytes = ops::mul(size, ops::IntImm::make(width, imp::Type::int64()));
      stmts.push_back(imp::Evaluate::make(
          imp::Call::make("memset", {storage.vals, ops::IntImm::make(0), bytes}, imp::Type::void_())));
    }
  }
  return imp::Block::make(stmts);
}

}  // namespace tcc::lowering
