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
// outside of, GPU kernels, and an unordered level of A.
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
  auto coordinateLoops = [&] {
    ir::IndexStmt nest = body;
    for (auto var = vars.rbegin(); var != vars.rend(); ++var) nest = ir::ForallNode::make(*var, nest);
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
    remainder = lower(coordinateLoops());
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
      remainderSkips_[forall->indexVar] = {storageOf(driver->tensor).crd[driver->level], driver->pos, driver->end};
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
  Stmt search = imp::Assign::make(
      stored.cursor, imp::Call::make("tcc_lower_bound", {stored.crd, stored.cursor, stored.end, coordinate},
                                     imp::Type::int64()));
  Expr there = ops::cast(imp::Type::int64(), imp::Load::make(stored.crd, stored.cursor));
  Expr found = ops::land(ops::lt(stored.cursor, stored.end), ops::eq(there, coordinate));
  return imp::Block::make({search, imp::If::make(imp::Unary::make(imp::UnaryOp::Not, found), body)});
}

}  // namespace tcc::lowering
