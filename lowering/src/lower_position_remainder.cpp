// pos over an access A in an expression with terms without A (a union:
// `C(i,j) = A(i,j) + B(i,j)`, `y(i) = (A(i,j) + B(i,j)) * x(j)`).
//
// The loops over A's positions run the lattice's cases with A, searching
// the other sparse operands for A's coordinate (lowerPinnedPositionLoop).
// The coordinates the other operands store and A does not are then
// visited by the loops the pos replaced: the statement's variables, in
// the order the position loops recover them, lowered as coordinate loops
// with default attributes (the schedule's split, unroll and parallelize
// of the position variables shape the first loops only). At the pos's own
// variable these loops leave A out of the co-iteration, keep the lattice
// points without A, and skip a coordinate that A's segment holds (a
// binary search from a cursor that moves forward with the coordinates);
// at the outer variable of a fused pos they co-iterate A as usual (its
// position locates the segment to skip) but drop the points whose terms
// all have A. Where a case of the loops around has no A at all (a row A
// does not store), the loops over its positions are replaced by those
// coordinate loops alone.
//
// The second loops run after the first ones, outside their threads, so
// reductions into a dense output or a temporary do not race. Refused at
// the pos command: a sparse output stored in the order of a variable the
// loops replaced (appending the second loops' coordinates after the
// first's breaks its order), loops of other variables between the
// position loops, sparse workspaces of threads the second loops are
// outside of, and an unordered level of A.
//
// On the cuda target the second loops of position loops that are a
// kernel's GPU loops are a kernel of their own (a GPU thread per
// coordinate of their outermost variable); inside a GPU loop they run in
// the threads that ran the positions (see lowerPositionLoops).
#include <algorithm>

#include "access_occurrences.h"
#include "lowerer.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

bool sameAccess(const ir::AccessNode* node, const ir::Access& access) {
  return node->tensor == access.tensor() && node->indices == access.indices();
}

bool reads(const ir::IndexStmt& stmt, const ir::Access& access) {
  auto accesses = accessOccurrences(stmt);
  return std::any_of(accesses.begin(), accesses.end(), [&](const ir::AccessNode* node) {
    return sameAccess(node, access);
  });
}

}  // namespace

bool Lowerer::descendsFrom(const ir::IndexVar& var, const ir::IndexVar& ancestor) const {
  if (var == ancestor) return true;
  auto relation = relationOf_.find(var);
  if (relation == relationOf_.end()) return false;
  for (const auto& parent : ir::parentVars(relation->second))
    if (descendsFrom(parent, ancestor)) return true;
  return false;
}

std::vector<ir::IndexVar> Lowerer::statementVarsOf(const ir::IndexVar& var) const {
  auto relation = relationOf_.find(var);
  if (relation == relationOf_.end()) return {var};
  std::vector<ir::IndexVar> vars;
  for (const auto& parent : ir::parentVars(relation->second))  // (a fuse's outer variable first)
    for (const auto& each : statementVarsOf(parent))
      if (std::find(vars.begin(), vars.end(), each) == vars.end()) vars.push_back(each);
  return vars;
}

const ir::ProvenanceRelation* Lowerer::positionLoopsStartingAt(const ir::ForallNode* forall) const {
  for (const auto& relation : relations_) {
    const auto* pos = std::get_if<ir::PosRelation>(&relation);
    if (!pos || !descendsFrom(forall->indexVar, pos->posVar)) continue;
    bool inside = std::any_of(coordinates_.begin(), coordinates_.end(),
                              [&](const auto& bound) { return descendsFrom(bound.first, pos->posVar); });
    if (!inside) return &relation;
  }
  return nullptr;
}

Stmt Lowerer::lowerPositionLoops(const ir::ForallNode* forall, const ir::ProvenanceRelation& relation) {
  const auto& pos = std::get<ir::PosRelation>(relation);
  const std::string command = ir::toString(relation);
  auto refuse = [&](const std::string& reason) {
    throw LoweringError(command + ": " + reason, options_.commands.commandOf(relation));
  };
  // The position loops nested directly in one another, the statement
  // variables they replace, and what they run.
  std::vector<ir::IndexVar> vars = statementVarsOf(forall->indexVar);
  const ir::ForallNode* last = forall;
  auto addVars = [&](const ir::IndexVar& var) {
    for (const auto& each : statementVarsOf(var))
      if (std::find(vars.begin(), vars.end(), each) == vars.end()) vars.push_back(each);
  };
  for (const auto* inner = last->body.as<ir::ForallNode>(); inner && descendsFrom(inner->indexVar, pos.posVar);
       inner = inner->body.as<ir::ForallNode>()) {
    last = inner;
    addVars(inner->indexVar);
  }
  const ir::IndexStmt& body = last->body;
  auto innerLoops = statementsOf<ir::ForallNode>(body);
  bool nested = std::none_of(innerLoops.begin(), innerLoops.end(), [&](const ir::ForallNode* loop) {
    return descendsFrom(loop->indexVar, pos.posVar);
  });
  auto coordinateLoops = [&](ir::ForallAttributes outermost = {}) {
    ir::IndexStmt nest = body;
    for (auto var = vars.rbegin(); var != vars.rend(); ++var)
      nest = ir::ForallNode::make(*var, nest, *var == vars.front() ? outermost : ir::ForallAttributes{});
    return nest;
  };
  // A case of the loops around without A (a row that A does not store):
  // the coordinates are all the other operands'. (Not in GPU kernels,
  // whose loops the schedule maps. A's positions there would be another
  // row's.)
  if (!reads(body, pos.access)) {
    if (!reads(statement_, pos.access) || !nested || options_.cudaTarget)
      refuse("the access is not iterated by the loop over " + pos.indexVar.name());
    return lower(coordinateLoops());
  }

  unitedPositions_.erase(command);
  Stmt positions = lowerDerivedFor(forall);
  if (!unitedPositions_.count(command)) return positions;
  unitedPositions_.erase(command);

  const std::string name = pos.access.tensor().name();
  const std::string sum = "the expression has terms where " + name + " has no entry (a sum), ";
  if (!nested)
    refuse(sum + "which loops over the variables the position loops replace compute after them; other loops "
           "between the position loops leave no place for them");
  for (const auto* assignment : ir::assignmentsOf(body)) {
    const ir::TensorVar& output = assignment->lhs.tensor();
    if (!isParameter(output) || output.order() == 0 || output.format().isAllDense()) continue;
    for (const auto& var : vars) {
      const auto& indices = assignment->lhs.indices();
      if (std::find(indices.begin(), indices.end(), var) == indices.end()) continue;
      refuse(sum + "which a second loop over " + var.name() + " computes after " + name + "'s positions; output " +
             output.name() + " is stored " + output.format().toString() + ", assembled in the order of " +
             var.name() + ", which appending its entries in two passes would break; store " + output.name() +
             " dense, or leave out the pos");
    }
  }
  for (const auto& tensor : ir::tensorsWritten(body)) {
    const TensorStorage& storage = storageOf(tensor);
    if (storage.ismHandle.defined() && storage.ismPerThread && !storage.ismThreadHandle.defined())
      refuse(sum + "which a second loop after the thread loop computes; outside the thread loop no thread's copy of " +
             workspaceInWords(tensor) + " is there to insert into");
  }

  // On the cuda target: position loops that are a kernel's own GPU loops
  // leave the second loops to a kernel of their own, launched after them,
  // a thread per coordinate of the outermost variable (atomic updates
  // where those threads sum into one entry). Inside a GPU loop the second
  // loops run in the threads that ran the positions; in a warp or block
  // every thread runs them alike and one stores, which must not follow
  // atomic updates of the same entries by the warp's or block's threads.
  ir::ForallAttributes remainderAttributes;
  if (options_.cudaTarget) {
    bool positionsOnGpu = false, positionsAtomic = false;
    for (const ir::ForallNode* loop = forall; loop; loop = loop == last ? nullptr : loop->body.as<ir::ForallNode>()) {
      if (!ir::isGpuUnit(loop->attributes.parallelUnit)) continue;
      positionsOnGpu = true;
      positionsAtomic = positionsAtomic || loop->attributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics;
    }
    if (gpuUnit_ == imp::LoopKind::Serial && positionsOnGpu) {
      const auto assignments = ir::assignmentsOf(body);
      bool ownEntries = std::all_of(assignments.begin(), assignments.end(), [&](const ir::AssignmentNode* each) {
        return derivesOnlyFrom(vars.front(), each->lhs.indices());
      });
      remainderAttributes.parallelUnit = ir::ParallelUnit::GPUThread;
      remainderAttributes.outputRaceStrategy =
          ownEntries ? ir::OutputRaceStrategy::NoRaces : ir::OutputRaceStrategy::Atomics;
    } else if ((gpuUnit_ == imp::LoopKind::GpuWarp || gpuUnit_ == imp::LoopKind::GpuBlock) && positionsAtomic) {
      refuse(sum + "which a second loop computes after the positions, in every thread of the " +
             std::string(gpuUnit_ == imp::LoopKind::GpuWarp ? "warp" : "block") + ", one of them storing; its "
             "updates would race with the threads' atomic updates of the positions; sum the positions' threads "
             "with ParallelReduction instead");
    }
  }

  // The roles of the second loops' variables.
  std::map<ir::IndexVar, RemainderRole> rolesBefore = remainderRoles_;
  if (const ir::FuseRelation* fuse = fusedPosition(relation)) {
    remainderRoles_[fuse->outer] = {pos.access, false};
    remainderRoles_[fuse->inner] = {pos.access, true};
  } else {
    remainderRoles_[pos.indexVar] = {pos.access, true};
  }
  Stmt remainder;
  try {
    remainder = lower(coordinateLoops(remainderAttributes));
  } catch (const LoweringError& error) {
    remainderRoles_ = rolesBefore;
    if (!ir::isGpuUnit(remainderAttributes.parallelUnit) || error.command()) throw;
    // The refusal of the loop this lowering mapped (requireParallelizable
    // names it as a parallelize; the user wrote none).
    std::string reason = error.what();
    const std::string mapped = "parallelize(" + vars.front().name() + ", GPUThread, " +
                               ir::toString(remainderAttributes.outputRaceStrategy) + "): ";
    for (const std::string& prefix : {"the default GPU mapping's " + mapped, mapped})
      if (reason.rfind(prefix, 0) == 0) reason = reason.substr(prefix.size());
    refuse(sum + "which a kernel after the positions' would compute, a GPU thread per " + vars.front().name() +
           (remainderAttributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics ? " adding atomically" : "") +
           ", but there " + reason);
  } catch (...) {
    remainderRoles_ = rolesBefore;
    throw;
  }
  remainderRoles_ = rolesBefore;
  return imp::Block::make({positions, remainder});
}

bool Lowerer::restrictToRemainder(const ir::ForallNode* forall, std::vector<LevelIterator>& iterators,
                                  std::vector<LatticePoint>& lattice, std::vector<Stmt>& setup) {
  auto role = remainderRoles_.find(forall->indexVar);
  if (role == remainderRoles_.end()) return true;
  auto driver = std::find_if(iterators.begin(), iterators.end(),
                             [&](const LevelIterator& it) { return sameAccess(it.access, role->second.access); });
  if (driver == iterators.end()) {
    // A case of the loops around without A.
    if (reads(forall->body, role->second.access))
      throw LoweringError("internal: the loop after the positions of " + role->second.access.tensor().name() +
                          " over " + forall->indexVar.name() + " does not iterate it");
    return true;
  }
  const int id = driver->id;
  auto has = [&](const LatticePoint& point, int iterator) {
    return std::binary_search(point.iterators.begin(), point.iterators.end(), iterator);
  };
  std::vector<LatticePoint> kept;
  if (role->second.excludes) {
    for (const auto& point : lattice)
      if (!has(point, id)) kept.push_back(point);
    if (!kept.empty()) {
      if (driver->format.kind != ir::LevelKind::Compressed || !driver->format.ordered)
        throw LoweringError("internal: the coordinates of " + driver->tensor.name() + " over " +
                            forall->indexVar.name() + " are not a sorted compressed level");
      auto init = initializeSparseIterator(*driver);
      setup.insert(setup.end(), init.begin(), init.end());
      remainderSkips_[forall->indexVar] = {storageOf(driver->tensor).crd[driver->level], driver->pos, driver->end,
                                           ir::isGpuUnit(forall->attributes.parallelUnit)};
    }
    iterators.erase(driver);
  } else {
    // A point is needed where some point without A lies below it.
    for (const auto& point : lattice) {
      bool needed = std::any_of(lattice.begin(), lattice.end(), [&](const LatticePoint& below) {
        return !has(below, id) && isSubset(below.iterators, point.iterators);
      });
      if (needed) kept.push_back(point);
    }
  }
  lattice = std::move(kept);
  return !lattice.empty();
}

Stmt Lowerer::skipStoredCoordinates(const ir::IndexVar& var, const Stmt& body) {
  auto skip = remainderSkips_.find(var);
  if (skip == remainderSkips_.end()) return body;
  const StoredCoordinates& stored = skip->second;
  Expr coordinate = ops::cast(imp::Type::int64(), coordinates_.at(var));
  Expr lowerBound =
      imp::Call::make("tcc_lower_bound", {stored.crd, stored.cursor, stored.end, coordinate}, imp::Type::int64());
  Expr at = stored.cursor;
  Stmt search = imp::Assign::make(stored.cursor, lowerBound);
  if (stored.fromSegmentStart) {
    at = freshVar(stored.cursor.as<imp::Var>()->name + "_found", imp::Type::int64());
    search = imp::Declare::make(at, lowerBound);
  }
  Expr there = ops::cast(imp::Type::int64(), imp::Load::make(stored.crd, at));
  Expr found = ops::land(ops::lt(at, stored.end), ops::eq(there, coordinate));
  return imp::Block::make({search, imp::If::make(imp::Unary::make(imp::UnaryOp::Not, found), body)});
}

}  // namespace tcc::lowering
