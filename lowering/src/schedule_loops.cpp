#include "schedule_loops.h"

#include <algorithm>

#include "schedule_history.h"
#include "statement_terms.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/lowering/inserted_tensor_names.h"

namespace tcc::lowering {

namespace {

using ir::IndexVar;

bool contains(const std::vector<IndexVar>& vars, const IndexVar& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

// Applies one command; `fail` throws a ScheduleError for it.
class CommandApplier {
 public:
  CommandApplier(LoopNest& nest, const std::vector<ScheduleCommand>& commands, size_t index,
                 const ir::AssignmentNode& assignment, const std::vector<StorageEdge>& edges,
                 std::map<IndexVar, size_t>& unpositionedFuses)
      : nest_(nest), commands_(commands), command_(commands[index]), index_(index), assignment_(assignment),
        edges_(edges), unpositionedFuses_(unpositionedFuses) {}

  // A fused loop that still iterates coordinates must not fuse sparse levels.
  void requireDenseFusion(const ir::FuseRelation& fuse) const {
    requireDenseIteration(fuse.outer);
    requireDenseIteration(fuse.inner);
  }

  void operator()(const ReorderCommand& reorder) {
    std::vector<size_t> slots;
    for (const auto& var : reorder.order) slots.push_back(loopPosition(var));
    std::sort(slots.begin(), slots.end());
    if (std::adjacent_find(slots.begin(), slots.end()) != slots.end()) fail("names a loop twice");
    for (size_t k = 0; k < slots.size(); ++k) nest_.loops[slots[k]] = reorder.order[k];
    if (auto edge = brokenEdge(nest_, edges_))
      fail("visits " + edge->below.name() + " before " + edge->above.name() + ", but " + edge->owner + " stores " +
           edge->above.name() + " above " + edge->below.name() + " and sparse levels are visited in storage order");
    nest_.decisions.push_back("loop order: " + joinNames(nest_.loops) + " (as reordered by the schedule)");
  }

  void operator()(const ir::SplitRelation& split) {
    requirePositive(split.factor, "split factor");
    loopPosition(split.parent);
    requireIterationInBlocks(split.parent);
    replaceLoop(split.parent, {split.outer, split.inner}, split);
    nest_.decisions.push_back(splitDecision(split, searchedLevels(split.parent)));
  }

  void operator()(const ir::DivideRelation& divide) {
    requirePositive(divide.factor, "number of parts");
    loopPosition(divide.parent);
    requireIterationInBlocks(divide.parent);
    replaceLoop(divide.parent, {divide.outer, divide.inner}, divide);
    nest_.decisions.push_back(divideDecision(divide, searchedLevels(divide.parent)));
  }

  void operator()(const ir::FuseRelation& fuse) {
    // Sparse levels may be fused only to iterate their positions (pos next).
    size_t outer = loopPosition(fuse.outer), inner = loopPosition(fuse.inner);
    requireNoWorkspaceIndex(fuse.outer, true);
    requireNoWorkspaceIndex(fuse.inner, true);
    if (inner != outer + 1)
      fail(fuse.inner.name() + " must be the loop directly inside " + fuse.outer.name() + " (loops: " +
           joinNames(nest_.loops) + ")");
    nest_.loops[outer] = fuse.fused;
    nest_.loops.erase(nest_.loops.begin() + static_cast<long>(inner));
    nest_.relations.push_back(fuse);
    unpositionedFuses_[fuse.fused] = index_;
    nest_.decisions.push_back(ir::toString(ir::ProvenanceRelation(fuse)) + ": " + fuse.outer.name() + " = " +
                              fuse.fused.name() + " / |" + fuse.inner.name() + "|, " + fuse.inner.name() + " = " +
                              fuse.fused.name() + " % |" + fuse.inner.name() + "|");
  }

  void operator()(const ir::PosRelation& pos) {
    loopPosition(pos.indexVar);
    auto accesses = ir::accessesOf(assignment_.rhs);
    if (std::find(accesses.begin(), accesses.end(), pos.access) == accesses.end())
      fail(ir::toString(pos.access) + " is not read by `" + ir::toString(ir::IndexStmt(
                                                                 ir::AssignmentNode::make(assignment_.lhs, assignment_.rhs))) +
           "`");
    const ir::Format& format = pos.access.tensor().format();
    const auto& indices = pos.access.indices();
    IndexVar stored = pos.indexVar;
    if (!isStatementVar(pos.indexVar)) {
      const ir::FuseRelation* fuse = fuseOf(pos.indexVar);
      std::string derivation =
          derivationHistory(pos.indexVar, commands_, index_).value_or("derived by an earlier command");
      if (auto refusal = fusedPositionRefusal(pos, fuse, derivation)) fail(*refusal);
      stored = fuse->inner;
    }
    if (auto refusal = positionLevelRefusal(pos, stored)) fail(*refusal);
    int level = format.levelOfMode(static_cast<int>(std::find(indices.begin(), indices.end(), stored) - indices.begin()));
    replaceLoop(pos.indexVar, {pos.posVar}, pos);
    unpositionedFuses_.erase(pos.indexVar);
    std::string recovery = stored == pos.indexVar
                               ? pos.indexVar.name() + " is read from its crd"
                               : "the row is the segment holding the position (a cursor per thread, moved forward "
                                 "or found by binary search) and " + stored.name() + " is read from crd";
    nest_.decisions.push_back(ir::toString(ir::ProvenanceRelation(pos)) + ": " + pos.posVar.name() +
                              " iterates the positions of " + pos.access.tensor().name() + "'s level " +
                              std::to_string(level + 1) + "; " + recovery);
  }

  void operator()(const ir::BoundRelation& bound) {
    if (bound.kind == ir::BoundKind::MinExact || bound.kind == ir::BoundKind::MinConstraint)
      fail("lower bounds (" + ir::toString(bound.kind) + ") are not supported; every loop starts at 0");
    requirePositive(bound.value, "bound");
    loopPosition(bound.var);
    if (!isStatementVar(bound.var)) fail(derivedVariableRefusal(bound.var, "bound"));
    requireIterationInBlocks(bound.var);
    replaceLoop(bound.var, {bound.boundVar}, bound);
    nest_.decisions.push_back(boundDecision(bound, searchedLevels(bound.var)));
  }

  void operator()(const SparsePrecomputeCommand&) {
    fail("a statement takes one precompute into a workspace tensor");
  }

  void operator()(const PrecomputeCommand& precompute) {
    if (auto clash = clashWithEarlierPrecomputes(nest_.precomputes, precompute, nest_.readAs)) fail(*clash);
    if (!(precompute.workspaceVar == precompute.var) && isStatementVar(precompute.workspaceVar))
      fail(precompute.workspaceVar.name() + " is a variable of the statement; name the workspace's index afresh, or " +
           precompute.var.name() + " itself");
    if (!isStatementVar(precompute.var)) fail(derivedVariableRefusal(precompute.var, commandName(command_)));
    auto vars = ir::indexVarsOf(precompute.expr);
    if (!contains(vars, precompute.var))
      fail("the precomputed expression is not indexed by " + precompute.var.name());
    if (!(precompute.workspaceVar == precompute.var)) {
      for (const auto& loop : nest_.loops)
        if (!(loop == precompute.var) && nest_.originsOf(loop).count(precompute.var))
          fail(precompute.var.name() + " is split or fused by an earlier command; precompute it under its own name");
    }
    // The workspace's index needs loops over it alone (a split's parts
    // recover it; a fused loop mixes it with another variable).
    for (const auto& loop : nest_.loops)
      if (nest_.originsOf(loop).count(precompute.var) && nest_.originsOf(loop).size() > 1)
        fail(precompute.var.name() + " is fused with another variable by an earlier command, so no loop iterates it "
             "alone, as the workspace's index needs; a workspace indexed by " + precompute.var.name() + " takes no fuse of it");
    nest_.precomputes.push_back(
        {precompute, index_, command_.text, denseWorkspaceName(assignment_.lhs.tensor(), nest_.takenNames)});
  }

  void operator()(const ParallelizeCommand& parallelize) {
    loopPosition(parallelize.var);
    using ir::ParallelUnit;
    // GPU units are checked against the target when the loop is lowered.
    std::string where = parallelize.unit == ParallelUnit::CPUVector  ? "in vector lanes (omp simd)"
                        : parallelize.unit == ParallelUnit::GPUBlock ? "over GPU thread blocks"
                        : parallelize.unit == ParallelUnit::GPUWarp  ? "over GPU warps"
                        : parallelize.unit == ParallelUnit::GPUThread ? "over GPU threads"
                                                                      : "on CPU threads (OpenMP)";
    bool threads = parallelize.unit == ParallelUnit::CPUThread || parallelize.unit == ParallelUnit::DefaultUnit;
    if (threads && parallelize.strategy == ir::OutputRaceStrategy::Workspace && assignment_.lhs.tensor().order() == 0)
      fail("the Workspace race strategy needs an output with indices; a scalar is reduced by ParallelReduction");
    nest_.decisions.push_back(command_.text + ": the loop over " + parallelize.var.name() + " runs " + where);
    nest_.attributes[parallelize.var].parallelUnit = parallelize.unit;
    nest_.attributes[parallelize.var].outputRaceStrategy = parallelize.strategy;
  }

  void operator()(const UnrollCommand& unroll) {
    loopPosition(unroll.var);
    requirePositive(unroll.factor, "unroll factor");
    nest_.attributes[unroll.var].unrollFactor = unroll.factor;
  }

  void operator()(const SparseWorkspaceCommand& workspace) {
    // (Its results go through one: the output's, which one command
    // configures; a workspace of a part is a precompute's.)
    if (nest_.sparseWorkspace)
      fail("a statement takes one sparse workspace, for its output, which " +
           (nest_.sparseWorkspaceCommand ? commandReference(commands_[*nest_.sparseWorkspaceCommand])
                                         : std::string("the Workspace race strategy")) +
           " asks for already; drop one, or put a part into a workspace of its own with precompute(expr, {i_vars}, "
           "{o_vars}, W) and a tensor W declared sparse_workspace(...)");
    const ir::Access& lhs = assignment_.lhs;
    const ir::Format& format = lhs.tensor().format();
    if (lhs.tensor().order() == 0) fail("a scalar result needs no workspace");
    if (lhs.tensor().order() > 4) fail("sparse workspaces have order 1 to 4; " + lhs.tensor().name() + " has order " +
                                       std::to_string(lhs.tensor().order()));
    if (workspace.var) {
      // The workspace starts at the named index's level; the levels above
      // it are hoisted out as common iteration (checked once the loops stand).
      bool found = false;
      for (int level = 0; level < format.order(); ++level)
        if (lhs.indices()[format.modeOfLevel(level)] == *workspace.var) found = true;
      if (!found)
        fail(workspace.var->name() + " is not an index of " + lhs.tensor().name() + "; the workspace starts at one of " +
             lhs.tensor().name() + "'s indices");
    }
    nest_.sparseWorkspace = workspace;
    nest_.sparseWorkspaceCommand = index_;
    nest_.sparseWorkspaceText = command_.text;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const { throw ScheduleError(index_, command_.text + ": " + reason); }

  void requirePositive(int64_t value, const std::string& what) const {
    if (value <= 0) fail("the " + what + " must be positive, not " + std::to_string(value));
  }

  size_t loopPosition(const IndexVar& var) const {
    auto found = std::find(nest_.loops.begin(), nest_.loops.end(), var);
    if (found != nest_.loops.end()) return static_cast<size_t>(found - nest_.loops.begin());
    if (auto why = nest_.absentBecause.find(var); why != nest_.absentBecause.end())
      fail("no loop over " + var.name() + " is here: " + why->second + "; the loops are " + joinNames(nest_.loops));
    fail(missingLoopMessage(var, commands_, index_, joinNames(nest_.loops)));
  }

  // Coordinates of a sparse level come from its crd array, not from a range
  // a loop could be cut into: such a variable is scheduled through pos.
  void requireDenseIteration(const IndexVar& var) const {
    if (!isStatementVar(var)) return;
    if (auto refusal = sparseIterationRefusal(var, ir::accessesOf(assignment_.rhs))) fail(*refusal);
  }

  // A split, divide or bound of a variable that ordered compressed levels
  // iterate: its inner loop iterates the coordinates they store in its
  // block, found by binary search (lowerDerivedFor); other sparse levels
  // (singleton, unordered) cannot be searched.
  void requireIterationInBlocks(const IndexVar& var) const {
    if (!isStatementVar(var)) return;
    if (auto refusal = sparseIterationRefusal(var, ir::accessesOf(assignment_.rhs), true)) fail(*refusal);
  }

  // The sparse levels whose blocks the loops over `var`'s parts search
  // (searchedLevelsText), an input's copy in the loops' order in place of
  // the input.
  std::string searchedLevels(const IndexVar& var) const {
    if (!isStatementVar(var)) return "";
    std::vector<ir::Access> reads;
    for (const auto& access : ir::accessesOf(assignment_.rhs)) {
      reads.push_back(access);
      for (const auto& [copy, original] : nest_.readAs)
        if (original == ir::IndexExpr(access)) reads.back() = ir::Access(copy);
    }
    return searchedLevelsText(var, reads);
  }

  // (A split's parts may come before the precompute; no fuse may, see the
  // precompute's own check.)
  void requireNoWorkspaceIndex(const IndexVar& var, bool fuse = false) const {
    for (const auto& precompute : nest_.precomputes) {
      if (!(precompute.command.var == var || precompute.command.workspaceVar == var)) continue;
      if (fuse)
        fail(var.name() + " indexes the workspace of the precompute before this command, which needs loops over " +
             var.name() + " alone; a workspace indexed by " + var.name() + " takes no fuse of it");
      fail(var.name() + " indexes the workspace of the precompute before this command; schedule " + var.name() +
           " before the precompute");
    }
  }

  std::string derivedVariableRefusal(const IndexVar& var, const std::string& command) const {
    std::vector<IndexVar> own = assignment_.lhs.indices();
    for (const auto& rhsVar : ir::indexVarsOf(assignment_.rhs))
      if (!contains(own, rhsVar)) own.push_back(rhsVar);
    return notAStatementVariable(var, command, own, commands_, index_);
  }

  const ir::FuseRelation* fuseOf(const IndexVar& fused) const {
    for (const auto& relation : nest_.relations)
      if (const auto* fuse = std::get_if<ir::FuseRelation>(&relation); fuse && fuse->fused == fused) return fuse;
    return nullptr;
  }

  bool isStatementVar(const IndexVar& var) const {
    const auto& lhs = assignment_.lhs.indices();
    auto rhs = ir::indexVarsOf(assignment_.rhs);
    return contains(lhs, var) || contains(rhs, var);
  }

  void replaceLoop(const IndexVar& var, const std::vector<IndexVar>& derived, const ir::ProvenanceRelation& relation) {
    size_t position = loopPosition(var);
    requireNoWorkspaceIndex(var);
    for (const auto& fresh : derived)
      if (contains(nest_.loops, fresh) || isStatementVar(fresh)) fail(fresh.name() + " is already a loop variable");
    nest_.loops.erase(nest_.loops.begin() + static_cast<long>(position));
    nest_.loops.insert(nest_.loops.begin() + static_cast<long>(position), derived.begin(), derived.end());
    // Attributes set on the variable before it was replaced move to its outer part.
    if (auto attributes = nest_.attributes.find(var); attributes != nest_.attributes.end()) {
      nest_.attributes[derived.front()] = attributes->second;
      nest_.attributes.erase(var);
    }
    nest_.relations.push_back(relation);
  }

  LoopNest& nest_;
  const std::vector<ScheduleCommand>& commands_;
  const ScheduleCommand& command_;
  size_t index_;
  const ir::AssignmentNode& assignment_;
  const std::vector<StorageEdge>& edges_;
  std::map<IndexVar, size_t>& unpositionedFuses_;  // fused variable -> its fuse command
};


}  // namespace

std::string searchedLevelsText(const IndexVar& var, const std::vector<ir::Access>& reads) {
  std::vector<std::string> levels;
  for (const auto& access : reads) {
    const ir::Format& format = access.tensor().format();
    auto input = convertedFrom(access.tensor());
    for (int level = 0; level < format.order(); ++level) {
      const ir::LevelFormat& kind = format.level(level);
      if (kind.isDense() || !(access.indices()[format.modeOfLevel(level)] == var)) continue;
      if (!kind.isOrderedCompressed()) return "";
      std::string named = kind.toString() + " level " + std::to_string(level + 1);
      std::string text = input ? "the " + named + " of " + input->name() + "'s copy in the loops' order"
                               : access.tensor().name() + "'s " + named;
      if (std::find(levels.begin(), levels.end(), text) == levels.end()) levels.push_back(text);
    }
  }
  std::string text;
  for (size_t k = 0; k < levels.size(); ++k)
    text += (k == 0 ? "" : k + 1 == levels.size() ? " and " : ", ") + levels[k];
  return text.empty() ? text : text + (levels.size() == 1 ? " stores" : " store");
}

std::string splitDecision(const ir::SplitRelation& split, const std::string& levels) {
  std::string factor = std::to_string(split.factor), first = split.outer.name() + " * " + factor;
  return ir::toString(ir::ProvenanceRelation(split)) + ": " +
         (levels.empty() ? split.parent.name() + " = " + first + " + " + split.inner.name()
                         : split.inner.name() + " visits " + split.parent.name() + "'s coordinates in each block of " +
                               factor + ", [" + first + ", min(" + first + " + " + factor + ", |" +
                               split.parent.name() + "|)), not every " + split.parent.name() + " = " + first + " + " +
                               split.inner.name() + ": the block's first and last positions in what " + levels +
                               " are found by binary search in each segment");
}

std::string divideDecision(const ir::DivideRelation& divide, const std::string& levels) {
  return ir::toString(ir::ProvenanceRelation(divide)) + ": " + divide.outer.name() + " picks one of " +
         std::to_string(divide.factor) + " equal parts of " + divide.parent.name() +
         (levels.empty() ? ""
                         : "; " + divide.inner.name() + " visits " + divide.parent.name() +
                               "'s coordinates in that part: its first and last positions in what " + levels +
                               " are found by binary search in each segment");
}

std::string boundDecision(const ir::BoundRelation& bound, const std::string& levels) {
  const std::string relation = ir::toString(ir::ProvenanceRelation(bound)) + ": ";
  if (levels.empty())
    return relation + bound.boundVar.name() + " runs to " + std::to_string(bound.value) +
           (bound.kind == ir::BoundKind::MaxExact ? ", which must be the dimension of "
                                                  : ", guarded by the dimension of ") +
           bound.var.name();
  return relation + bound.boundVar.name() + " iterates " + bound.var.name() + " as without the bound, what " + levels +
         " read whole, not cut at " + std::to_string(bound.value) + "; the bound is checked when the kernel starts " +
         "(the dimension of " + bound.var.name() + " must be " +
         (bound.kind == ir::BoundKind::MaxExact ? "" : "at most ") + std::to_string(bound.value) + ")";
}

std::optional<std::string> sparseIterationRefusal(const IndexVar& var, const std::vector<ir::Access>& accesses,
                                                  bool searchedBlocks) {
  for (const auto& access : accesses) {
    const ir::Format& format = access.tensor().format();
    for (int level = 0; level < format.order(); ++level) {
      if (format.level(level).isDense() || !(access.indices()[format.modeOfLevel(level)] == var)) continue;
      if (searchedBlocks && format.level(level).isOrderedCompressed()) continue;
      // A copy's positions are not the user's to name in a pos.
      if (auto input = convertedFrom(access.tensor()))
        return var.name() + " is iterated by a sparse level of the copy of " + input->name() +
               " in the loops' order (its levels keep " + input->name() + "'s kinds), not by a range that a split, "
               "divide, fuse or bound can cut; store " + input->name() +
               " in an order the other inputs agree with, or schedule another variable";
      return var.name() + " is iterated by a " + format.level(level).toString() + " level of " +
             access.tensor().name() + ", whose coordinates cannot be cut into ranges; schedule its positions instead: "
             "pos(" + var.name() + ", " + var.name() + "pos, " + ir::toString(access) + "), then schedule " +
             var.name() + "pos";
    }
  }
  return std::nullopt;
}

std::optional<std::string> fusedPositionRefusal(const ir::PosRelation& pos, const ir::FuseRelation* fuse,
                                                const std::string& derivation) {
  // A fused pair of the access's two outer levels: their positions are the
  // positions of the second level.
  const ir::Format& format = pos.access.tensor().format();
  const auto& indices = pos.access.indices();
  if (!fuse || format.order() < 2 || !(indices[format.modeOfLevel(0)] == fuse->outer) ||
      !(indices[format.modeOfLevel(1)] == fuse->inner))
    return pos.indexVar.name() + " is " + derivation + "; pos applies to a variable of the statement, "
           "or to the fusion of the access's first two levels";
  const ir::LevelFormat& first = format.level(0);
  if (!first.isDense() && !(first.kind == ir::LevelKind::Compressed && first.unique))
    return pos.access.tensor().name() + "'s first level is " + first.toString() +
           "; fused positions need a dense or unique compressed first level";
  return std::nullopt;
}

std::optional<std::string> positionLevelRefusal(const ir::PosRelation& pos, const IndexVar& stored) {
  const ir::Format& format = pos.access.tensor().format();
  const auto& indices = pos.access.indices();
  auto mode = std::find(indices.begin(), indices.end(), stored);
  if (mode == indices.end()) return ir::toString(pos.access) + " is not indexed by " + pos.indexVar.name();
  const ir::LevelFormat& levelFormat = format.level(format.levelOfMode(static_cast<int>(mode - indices.begin())));
  if (levelFormat.isDense())
    return pos.access.tensor().name() + " stores " + stored.name() + " in a dense level, which has no positions "
           "to iterate; pos needs a compressed level";
  if (levelFormat.kind != ir::LevelKind::Compressed || !levelFormat.unique)
    return pos.access.tensor().name() + " stores " + stored.name() + " in a " + levelFormat.toString() +
           " level; pos supports unique compressed levels";
  return std::nullopt;
}

std::string joinNames(const std::vector<IndexVar>& vars) {
  std::string text;
  for (size_t i = 0; i < vars.size(); ++i) text += (i ? ", " : "") + vars[i].name();
  return text;
}

ir::IndexStmt nestLoops(const std::vector<IndexVar>& loops, ir::IndexStmt body,
                        const std::map<IndexVar, ir::ForallAttributes>& attributes) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    auto found = attributes.find(*it);
    body = ir::forall(*it, body, found == attributes.end() ? ir::ForallAttributes{} : found->second);
  }
  return body;
}

std::set<IndexVar> LoopNest::originsOf(const IndexVar& var) const { return ir::originVars(var, relations); }


void applySchedule(LoopNest& nest, const std::vector<ScheduleCommand>& commands, const ir::AssignmentNode& assignment,
                   const std::vector<StorageEdge>& inputEdges) {
  std::map<IndexVar, size_t> unpositionedFuses;
  for (size_t index = 0; index < commands.size(); ++index)
    std::visit(CommandApplier(nest, commands, index, assignment, inputEdges, unpositionedFuses),
               commands[index].kind);
  for (const auto& [fused, index] : unpositionedFuses)
    CommandApplier(nest, commands, index, assignment, inputEdges, unpositionedFuses)
        .requireDenseFusion(std::get<ir::FuseRelation>(commands[index].kind));
  if (commands.empty()) return;
  if (auto edge = brokenEdge(nest, inputEdges))
    throw ScheduleError(commands.size() - 1,
                        "the schedule visits " + edge->below.name() + " outside " + edge->above.name() + ", but " +
                            edge->owner + " stores " + edge->above.name() + " above " + edge->below.name() +
                            " and sparse levels are visited in storage order (loops: " + joinNames(nest.loops) + ")");
}

std::optional<StorageEdge> brokenEdge(const LoopNest& nest, const std::vector<StorageEdge>& edges) {
  for (const auto& edge : edges) {
    std::optional<size_t> lastAbove, firstBelow;
    for (size_t p = 0; p < nest.loops.size(); ++p) {
      auto origins = nest.originsOf(nest.loops[p]);
      bool above = origins.count(edge.above) > 0, below = origins.count(edge.below) > 0;
      if (above && below) continue;  // a fused loop visits both in storage order
      if (above) lastAbove = p;
      if (below && !firstBelow) firstBelow = p;
    }
    if (lastAbove && firstBelow && *firstBelow < *lastAbove) return edge;
  }
  return std::nullopt;
}


}  // namespace tcc::lowering
