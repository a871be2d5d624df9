// orderGpuUnits: GPU loops whose units a schedule gives out of order
// (blocks, then warps, then threads) rewritten into the order the kernels
// run them in, where that keeps each iteration running once.
//
// Exchange. A GPU loop whose nearest GPU loops below all have one unit of
// a lower rank (a GPUBlock loop inside a GPUThread loop) gives its unit to
// them and takes theirs. The iteration space is the same: each (i, j)
// iteration still runs once, on a block index and a thread index; which
// loop a unit splits decides only which iterations share a block. The
// loops keep their order (a compressed level's loop stays inside its
// parent's) and each keeps its race strategy, which the lowering checks
// against the loop's new place (a reduction over GPU threads needs a
// GPUThread loop inside a GPUWarp or GPUBlock loop).
//
// Collapse. A GPU loop directly inside one of the same unit (nothing
// between) becomes one loop over fuse(i, j, ij) on that unit, as CUDA's
// 2-D grid or OpenMP's collapse spread both loops' iterations: the units'
// indices range over |i| * |j| iterations. Only rectangles: neither
// variable may iterate a sparse level or positions (a compressed level's
// range depends on its parent's position), index a workspace, or be
// unrolled. The fused loop races where either loop does; both racing
// need one strategy.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/gpu_default_mapping.h"
#include "../access_occurrences.h"

namespace tcc::lowering {

namespace {

int rankOf(ir::ParallelUnit unit) {
  switch (unit) {
    case ir::ParallelUnit::GPUBlock: return 1;
    case ir::ParallelUnit::GPUWarp: return 2;
    case ir::ParallelUnit::GPUThread: return 3;
    default: return 0;
  }
}

bool onGpu(const ir::ForallNode* loop) { return ir::isGpuUnit(loop->attributes.parallelUnit); }

// The GPU loops below `stmt` that no other GPU loop below it holds.
void nearestGpuLoops(const ir::IndexStmt& stmt, std::vector<const ir::ForallNode*>& found) {
  if (!stmt.defined()) return;
  if (const auto* loop = stmt.as<ir::ForallNode>()) {
    if (onGpu(loop)) found.push_back(loop);
    else nearestGpuLoops(loop->body, found);
  } else if (const auto* where = stmt.as<ir::WhereNode>()) {
    nearestGpuLoops(where->consumer, found);
    nearestGpuLoops(where->producer, found);
  } else if (const auto* sequence = stmt.as<ir::SequenceNode>()) {
    nearestGpuLoops(sequence->definition, found);
    nearestGpuLoops(sequence->mutation, found);
  } else if (const auto* multi = stmt.as<ir::MultiNode>()) {
    nearestGpuLoops(multi->first, found);
    nearestGpuLoops(multi->second, found);
  } else if (const auto* scheduled = stmt.as<ir::SuchThatNode>()) {
    nearestGpuLoops(scheduled->stmt, found);
  }
}

// `stmt` with its nearest GPU loops (nearestGpuLoops) on `unit`.
ir::IndexStmt withNearestUnit(const ir::IndexStmt& stmt, ir::ParallelUnit unit) {
  if (!stmt.defined()) return stmt;
  if (const auto* loop = stmt.as<ir::ForallNode>()) {
    if (!onGpu(loop)) return ir::ForallNode::make(loop->indexVar, withNearestUnit(loop->body, unit), loop->attributes);
    ir::ForallAttributes attributes = loop->attributes;
    attributes.parallelUnit = unit;
    return ir::ForallNode::make(loop->indexVar, loop->body, attributes);
  }
  if (const auto* where = stmt.as<ir::WhereNode>())
    return ir::WhereNode::make(withNearestUnit(where->consumer, unit), withNearestUnit(where->producer, unit));
  if (const auto* sequence = stmt.as<ir::SequenceNode>())
    return ir::SequenceNode::make(withNearestUnit(sequence->definition, unit),
                                  withNearestUnit(sequence->mutation, unit));
  if (const auto* multi = stmt.as<ir::MultiNode>())
    return ir::MultiNode::make(withNearestUnit(multi->first, unit), withNearestUnit(multi->second, unit));
  return stmt;
}

class UnitOrder {
 public:
  UnitOrder(const ir::IndexStmt& whole, std::vector<ir::ProvenanceRelation>& relations,
            std::vector<std::string>& reasons, std::map<std::string, std::string>& kept)
      : relations_(relations), reasons_(reasons), kept_(kept) {
    for (const auto& access : ir::accessesOf(whole)) {
      const ir::Format& format = access.tensor().format();
      for (int level = 0; level < format.order(); ++level)
        if (!format.level(level).isDense()) sparseLevelVars_.insert(access.indices()[format.modeOfLevel(level)]);
    }
    for (const auto* assignment : ir::assignmentsOf(whole))
      for (const auto& var : assignment->lhs.indices())
        if (!assignment->lhs.tensor().format().isAllDense()) sparseLevelVars_.insert(var);
    for (const auto* where : whereStatements(whole))
      for (const auto* assignment : ir::assignmentsOf(where->producer))
        for (const auto& var : assignment->lhs.indices()) workspaceIndices_.insert(var);
  }

  // Exchanges units until every chain of GPU loops is in order (or none
  // can be exchanged); true if one was.
  bool exchange(ir::IndexStmt& stmt) {
    bool any = false;
    for (int round = 0; round < 8; ++round) {
      bool changed = false;
      stmt = exchangeIn(stmt, changed);
      if (!changed) break;
      any = true;
    }
    return any;
  }

  ir::IndexStmt collapse(const ir::IndexStmt& stmt) {
    if (!stmt.defined()) return stmt;
    if (const auto* loop = stmt.as<ir::ForallNode>()) {
      const auto* inner = loop->body.as<ir::ForallNode>();
      if (onGpu(loop) && inner && inner->attributes.parallelUnit == loop->attributes.parallelUnit) {
        if (auto fused = collapsed(loop, inner)) return collapse(*fused);
      } else if (onGpu(loop)) {
        std::vector<const ir::ForallNode*> below;
        nearestGpuLoops(loop->body, below);
        for (const auto* other : below)
          if (other->attributes.parallelUnit == loop->attributes.parallelUnit)
            kept_[other->indexVar.name()] = "its loop and the loop over " + loop->indexVar.name() + " are both on " +
                                     ir::toString(other->attributes.parallelUnit) + ", and two such loops run as "
                                     "one (their fuse) only where the inner one is all the outer one's body";
      }
      return ir::ForallNode::make(loop->indexVar, collapse(loop->body), loop->attributes);
    }
    if (const auto* where = stmt.as<ir::WhereNode>())
      return ir::WhereNode::make(collapse(where->consumer), collapse(where->producer));
    if (const auto* sequence = stmt.as<ir::SequenceNode>())
      return ir::SequenceNode::make(collapse(sequence->definition), collapse(sequence->mutation));
    if (const auto* multi = stmt.as<ir::MultiNode>())
      return ir::MultiNode::make(collapse(multi->first), collapse(multi->second));
    return stmt;
  }

 private:
  ir::IndexStmt exchangeIn(const ir::IndexStmt& stmt, bool& changed) {
    if (!stmt.defined()) return stmt;
    if (const auto* loop = stmt.as<ir::ForallNode>()) {
      if (onGpu(loop)) {
        std::vector<const ir::ForallNode*> below;
        nearestGpuLoops(loop->body, below);
        const ir::ParallelUnit unit = loop->attributes.parallelUnit;
        bool oneUnit = !below.empty() && std::all_of(below.begin(), below.end(), [&](const ir::ForallNode* other) {
          return other->attributes.parallelUnit == below.front()->attributes.parallelUnit;
        });
        for (const auto* other : below)
          if (!oneUnit && rankOf(other->attributes.parallelUnit) < rankOf(unit))
            kept_[other->indexVar.name()] = "the GPU loops nearest below " + loop->indexVar.name() + " have different "
                                     "units, so none can exchange its unit with " + loop->indexVar.name() + "'s";
        if (oneUnit && rankOf(below.front()->attributes.parallelUnit) < rankOf(unit)) {
          const ir::ParallelUnit lower = below.front()->attributes.parallelUnit;
          std::string names;
          for (const auto* other : below) names += (names.empty() ? "" : ", ") + other->indexVar.name();
          reasons_.push_back("GPU units: " + loop->indexVar.name() + " on " + ir::toString(lower) + " and " + names +
                             " on " + ir::toString(unit) + " (the schedule gave them the other way round; blocks "
                             "hold warps, which hold threads): each iteration still runs once, on one " +
                             ir::toString(lower) + " and one " + ir::toString(unit) +
                             ", each loop keeping its race strategy");
          ir::ForallAttributes attributes = loop->attributes;
          attributes.parallelUnit = lower;
          changed = true;
          return ir::ForallNode::make(loop->indexVar, withNearestUnit(loop->body, unit), attributes);
        }
      }
      return ir::ForallNode::make(loop->indexVar, exchangeIn(loop->body, changed), loop->attributes);
    }
    if (const auto* where = stmt.as<ir::WhereNode>()) {
      ir::IndexStmt consumer = exchangeIn(where->consumer, changed);
      return ir::WhereNode::make(consumer, exchangeIn(where->producer, changed));
    }
    if (const auto* sequence = stmt.as<ir::SequenceNode>()) {
      ir::IndexStmt definition = exchangeIn(sequence->definition, changed);
      return ir::SequenceNode::make(definition, exchangeIn(sequence->mutation, changed));
    }
    if (const auto* multi = stmt.as<ir::MultiNode>()) {
      ir::IndexStmt first = exchangeIn(multi->first, changed);
      return ir::MultiNode::make(first, exchangeIn(multi->second, changed));
    }
    return stmt;
  }

  // Why `var` does not range over a rectangle: derived through a pos, or
  // from a variable that iterates a sparse level or indexes a workspace;
  // nothing where it does.
  std::optional<std::string> notDense(const ir::IndexVar& var) const {
    for (std::vector<ir::IndexVar> work{var}; !work.empty();) {
      ir::IndexVar current = work.back();
      work.pop_back();
      const std::string named = current == var ? var.name() : var.name() + " (from " + current.name() + ")";
      if (sparseLevelVars_.count(current))
        return named + " iterates a sparse level, whose range depends on its parent's position";
      if (workspaceIndices_.count(current)) return named + " indexes a workspace, which a fused loop cannot fill";
      for (const auto& relation : relations_) {
        auto derived = ir::derivedVars(relation);
        if (std::find(derived.begin(), derived.end(), current) == derived.end()) continue;
        if (std::holds_alternative<ir::PosRelation>(relation))
          return named + " iterates positions (" + ir::toString(relation) + ")";
        for (const auto& parent : ir::parentVars(relation)) work.push_back(parent);
      }
    }
    return std::nullopt;
  }

  // Whether iterations of `var` in `body` can write the same entry: an
  // assignment outside every where in `body` (whose temporaries are each
  // iteration's own) whose entries `var` does not pick.
  bool races(const ir::IndexVar& var, const ir::IndexStmt& body) const {
    std::set<ir::TensorVar> own;
    for (const auto* where : whereStatements(body))
      for (const auto& tensor : ir::tensorsWritten(where->producer)) own.insert(tensor);
    auto origins = ir::originVars(var, relations_);
    for (const auto* assignment : ir::assignmentsOf(body)) {
      if (own.count(assignment->lhs.tensor())) continue;
      const auto& indices = assignment->lhs.indices();
      for (const auto& origin : origins) {
        bool picked = std::any_of(indices.begin(), indices.end(), [&](const ir::IndexVar& index) {
          auto indexOrigins = ir::originVars(index, relations_);
          return indexOrigins.count(origin) > 0;
        });
        if (!picked) return true;
      }
    }
    return false;
  }

  std::optional<ir::IndexStmt> collapsed(const ir::ForallNode* outer, const ir::ForallNode* inner) {
    const std::string unit = ir::toString(outer->attributes.parallelUnit);
    const std::string pair = outer->indexVar.name() + " and " + inner->indexVar.name();
    const std::string notCollapsed = "its loop and the loop over " + outer->indexVar.name() + " around it, both on " +
                                     unit + " with nothing between, would run as one " + unit + " loop over their "
                                     "fuse, but ";
    auto keep = [&](const std::string& why) -> std::optional<ir::IndexStmt> {
      kept_[inner->indexVar.name()] = notCollapsed + why;
      return std::nullopt;
    };
    for (const auto* loop : {outer, inner}) {
      if (loop->attributes.unrollFactor > 0)
        return keep(loop->indexVar.name() + " is unrolled, which a fused loop cannot be");
      if (auto why = notDense(loop->indexVar)) return keep(*why + " (the iterations of both loops are no rectangle)");
    }
    const bool outerRaces = races(outer->indexVar, inner->body), innerRaces = races(inner->indexVar, inner->body);
    const ir::OutputRaceStrategy outerStrategy = outer->attributes.outputRaceStrategy;
    const ir::OutputRaceStrategy innerStrategy = inner->attributes.outputRaceStrategy;
    if (outerRaces && innerRaces && outerStrategy != innerStrategy)
      return keep("both are summed, under different race strategies (" + ir::toString(outerStrategy) + ", " +
                  ir::toString(innerStrategy) + "), and one loop takes one; give both the same");
    ir::ForallAttributes attributes = outer->attributes;
    attributes.outputRaceStrategy = innerRaces ? innerStrategy : outerStrategy;
    ir::IndexVar fused(outer->indexVar.name() + inner->indexVar.name());
    relations_.push_back(ir::FuseRelation{outer->indexVar, inner->indexVar, fused});
    reasons_.push_back("GPU units: " + pair + ", both on " + unit + " with nothing between, run as one " + unit +
                       " loop over fuse(" + outer->indexVar.name() + ", " + inner->indexVar.name() + ", " +
                       fused.name() + ") (every (" + outer->indexVar.name() + ", " + inner->indexVar.name() +
                       ") iteration on one " + unit + "), " + ir::toString(attributes.outputRaceStrategy) +
                       (outerRaces || innerRaces ? " for the races of its sum" : ""));
    return ir::ForallNode::make(fused, inner->body, attributes);
  }

  std::vector<ir::ProvenanceRelation>& relations_;
  std::vector<std::string>& reasons_;
  std::map<std::string, std::string>& kept_;
  std::set<ir::IndexVar> sparseLevelVars_, workspaceIndices_;
};

}  // namespace

ir::IndexStmt orderGpuUnits(const ir::IndexStmt& concrete, std::vector<std::string>& reasons,
                            std::map<std::string, std::string>& kept) {
  const auto* scheduled = concrete.as<ir::SuchThatNode>();
  ir::IndexStmt stmt = scheduled ? scheduled->stmt : concrete;
  std::vector<ir::ProvenanceRelation> relations;
  if (scheduled) relations = scheduled->relations;
  const size_t relationsBefore = relations.size();
  std::vector<std::string> said;
  UnitOrder order(concrete, relations, said, kept);
  const bool exchanged = order.exchange(stmt);
  stmt = order.collapse(stmt);
  if (!exchanged && relations.size() == relationsBefore) return concrete;
  reasons.insert(reasons.end(), said.begin(), said.end());
  return relations.empty() ? stmt : ir::SuchThatNode::make(stmt, relations);
}

}  // namespace tcc::lowering
