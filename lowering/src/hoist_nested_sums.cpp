// Sums below a statement's top, computed once rather than in every lattice
// case of the loops around them.
//
// Concretization puts `where(consumer, producer)` for a nested sum inside
// the innermost loop of the output, and each lattice case of those loops
// lowers the where again: a statement over many sparse operands printed
// the sum's loops hundreds of times (a 30,000-line kernel the JIT takes a
// minute to compile). Two places compute it once instead, each the same
// producer over the same values in the same order, so results are
// bit-identical in strict mode:
//
// - before a loop whose variable the sum does not read (nor any variable of
//   the loops inside): `Y(i,j) = A(i,j) + B(i,j) * sum(l, C(i,l))` sums
//   each row of C once per i, before the loop over j;
// - before the cases of one iteration, where the sum's operands at the
//   loop's variable intersect (every case that computes it computes it
//   whole): `Y(i,j) = E(i,j) * (F(i,j) + G(i,j)) + sum(l, A(i,j,l) * B(l))`
//   sums A's fiber once per j where A has one, guarded by A's presence, and
//   the cases read the temporary. A sum whose operands unite at the loop
//   (`sum(l, (A(i,j,l) + D(i,j,l)) * B(l))`) differs from case to case,
//   and stays in them.
#include <algorithm>

#include "access_occurrences.h"
#include "iteration_space.h"
#include "lowerer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

namespace {

namespace ops = ir::imp;

// The wheres reachable from `stmt` through consumers (and, with
// `throughLoops`, through loop bodies), with the variables of the loops
// passed on the way.
void collectWheres(const ir::IndexStmt& stmt, bool throughLoops, std::vector<ir::IndexVar> loops,
                   std::vector<std::pair<const ir::WhereNode*, std::vector<ir::IndexVar>>>& found) {
  if (const auto* where = stmt.as<ir::WhereNode>()) {
    found.push_back({where, loops});
    collectWheres(where->consumer, throughLoops, loops, found);
  } else if (const auto* forall = stmt.as<ir::ForallNode>(); forall && throughLoops) {
    loops.push_back(forall->indexVar);
    collectWheres(forall->body, throughLoops, loops, found);
  } else if (const auto* suchThat = stmt.as<ir::SuchThatNode>()) {
    collectWheres(suchThat->stmt, throughLoops, loops, found);
  }
}

// The variables the producer reads that its own loops do not bind.
std::vector<ir::IndexVar> freeVariables(const ir::IndexStmt& producer) {
  std::set<ir::IndexVar> bound;
  for (const auto* forall : statementsOf<ir::ForallNode>(producer)) bound.insert(forall->indexVar);
  std::vector<ir::IndexVar> free;
  for (const auto* access : accessOccurrences(producer))
    for (const auto& var : access->indices)
      if (!bound.count(var) && std::find(free.begin(), free.end(), var) == free.end()) free.push_back(var);
  return free;
}

}  // namespace

bool Lowerer::hoistsSums() const {
  // The CUDA target's loops become kernels and host steps, and derived
  // loops (split, fuse, pos) recover their variables inside: both keep
  // their sums where concretization put them.
  return options_.hoistNestedSums && !options_.cudaTarget && !workPass_ && relations_.empty();
}

std::vector<ir::TensorVar> Lowerer::hoistableTemporaries(const ir::WhereNode* where, const ir::IndexStmt& scope) const {
  const ir::IndexStmt& producer = where->producer;
  std::set<ir::TensorVar> inner;
  for (const auto* nested : whereStatements(producer))
    for (const auto& tensor : ir::tensorsWritten(nested->producer)) inner.insert(tensor);
  std::vector<ir::TensorVar> temporaries;
  for (const auto& tensor : ir::tensorsWritten(producer)) {
    if (inner.count(tensor)) continue;
    if (tensor.order() != 0 || tensor.provenance().kind != ir::TensorProvenance::Kind::SumTemporary ||
        isParameter(tensor) || hoistedSums_.count(tensor))
      return {};
    temporaries.push_back(tensor);
  }
  for (const auto* forall : statementsOf<ir::ForallNode>(producer))
    if (!forall->attributes.isDefault()) return {};
  // Computed earlier than before: it must read nothing the statements
  // around it write.
  auto written = ir::tensorsWritten(scope);
  auto own = ir::tensorsWritten(producer);
  for (const auto& tensor : ir::tensorsRead(producer))
    if (std::find(written.begin(), written.end(), tensor) != written.end() &&
        std::find(own.begin(), own.end(), tensor) == own.end())
      return {};
  return temporaries;
}

std::vector<imp::Stmt> Lowerer::computeHoistedSum(const ir::WhereNode* where,
                                                  const std::vector<ir::TensorVar>& temporaries,
                                                  const imp::Expr& guard, HoistedSums& hoisted) {
  std::vector<imp::Stmt> stmts;
  for (const auto& temporary : temporaries) {
    TensorStorage& storage = storageOf(temporary);
    storage.scalar = freshVar(temporary.name(), valueType(temporary));
    stmts.push_back(imp::Declare::make(storage.scalar, ops::cast(storage.scalar.type(), ops::FloatImm::make(0.0))));
  }
  imp::Stmt producer = lower(where->producer);
  stmts.push_back(guard.defined() ? imp::If::make(guard, producer) : producer);
  for (const auto& temporary : temporaries)
    if (hoistedSums_.insert(temporary).second) hoisted.temporaries.push_back(temporary);
  return stmts;
}

std::vector<imp::Stmt> Lowerer::hoistLoopInvariantSums(const ir::ForallNode* forall, HoistedSums& hoisted) {
  std::vector<imp::Stmt> stmts;
  if (!hoistsSums() || forall->attributes.parallelUnit != ir::ParallelUnit::NotParallel) return stmts;
  std::vector<std::pair<const ir::WhereNode*, std::vector<ir::IndexVar>>> wheres;
  collectWheres(forall->body, /*throughLoops=*/true, {forall->indexVar}, wheres);
  for (const auto& [where, loops] : wheres) {
    auto temporaries = hoistableTemporaries(where, forall->body);
    if (temporaries.empty()) continue;
    bool invariant = true;
    for (const auto& var : freeVariables(where->producer))
      invariant = invariant && coordinates_.count(var) && std::find(loops.begin(), loops.end(), var) == loops.end();
    if (!invariant) continue;
    auto computed = computeHoistedSum(where, temporaries, imp::Expr(), hoisted);
    stmts.insert(stmts.end(), computed.begin(), computed.end());
  }
  return stmts;
}

std::vector<imp::Stmt> Lowerer::hoistSumsOutOfCases(const ir::ForallNode* forall,
                                                    const std::map<int, imp::Expr>& presentAt,
                                                    const std::vector<std::vector<int>>& cases,
                                                    HoistedSums& hoisted) {
  std::vector<imp::Stmt> stmts;
  if (!hoistsSums() || cases.size() < 2) return stmts;
  const auto& ids = iteratorIds_[forall];
  std::vector<std::pair<const ir::WhereNode*, std::vector<ir::IndexVar>>> wheres;
  collectWheres(forall->body, /*throughLoops=*/false, {}, wheres);
  for (const auto& [where, loops] : wheres) {
    auto temporaries = hoistableTemporaries(where, forall->body);
    if (temporaries.empty()) continue;
    bool bound = true;
    for (const auto& var : freeVariables(where->producer)) bound = bound && coordinates_.count(var);
    if (!bound) continue;
    // The producer's iterators at this loop; it is computed whole or not
    // at all when losing any one of them leaves it nothing to compute.
    std::set<int> own;
    for (const auto* access : accessOccurrences(where->producer))
      if (auto id = ids.find(access); id != ids.end()) own.insert(id->second);
    if (own.empty()) continue;  // loop-invariant, but kept here (hoistLoopInvariantSums)
    bool intersects = true;
    for (int id : own) {
      std::set<const ir::AccessNode*> absent;
      for (const auto& [access, each] : ids)
        if (each == id) absent.insert(access);
      intersects = intersects && !withoutAbsentOperands(where->producer, absent).defined();
    }
    if (!intersects) continue;
    std::vector<int> sparse;
    imp::Expr guard;
    bool exhausted = false;
    for (int id : own)
      if (auto present = presentAt.find(id); present != presentAt.end()) {
        exhausted = exhausted || !present->second.defined();
        sparse.push_back(id);
        guard = ops::land(guard, present->second);
      }
    if (exhausted) continue;  // no case of this loop computes it
    auto computing = std::count_if(cases.begin(), cases.end(), [&](const std::vector<int>& point) {
      return std::all_of(sparse.begin(), sparse.end(),
                         [&](int id) { return std::find(point.begin(), point.end(), id) != point.end(); });
    });
    if (computing < 2) continue;
    auto computed = computeHoistedSum(where, temporaries, guard, hoisted);
    stmts.insert(stmts.end(), computed.begin(), computed.end());
  }
  return stmts;
}

}  // namespace tcc::lowering
