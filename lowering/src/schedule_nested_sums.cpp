#include "schedule_nested_sums.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "schedule_history.h"
#include "schedule_loops.h"
#include "statement_terms.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/lowering/inserted_tensor_names.h"

namespace tcc::lowering {

namespace {

using ir::IndexVar;

// Perfectly nested foralls around an assignment, or around a where or a
// sequence of two chains in turn.
struct LoopChain {
  std::vector<IndexVar> loops;  // outermost first
  std::map<IndexVar, ir::ForallAttributes> attributes;
  ir::IndexStmt assignment;  // the body, when it is neither a where nor a sequence
  bool sequence = false;     // else a where: first is its consumer, second its producer
  std::unique_ptr<LoopChain> first, second;
  const LoopChain* parent = nullptr;
  // A where's consumer that copies a workspace into the output (the loops
  // of a statement whose terms fill one workspace): no command moves it.
  bool frozen = false;
};

std::unique_ptr<LoopChain> chainOf(const ir::IndexStmt& stmt, const LoopChain* parent) {
  auto chain = std::make_unique<LoopChain>();
  chain->parent = parent;
  ir::IndexStmt body = stmt;
  while (const auto* forall = body.as<ir::ForallNode>()) {
    chain->loops.push_back(forall->indexVar);
    if (!forall->attributes.isDefault()) chain->attributes[forall->indexVar] = forall->attributes;
    body = forall->body;
  }
  if (const auto* where = body.as<ir::WhereNode>()) {
    chain->first = chainOf(where->consumer, chain.get());
    chain->first->frozen = true;
    chain->second = chainOf(where->producer, chain.get());
  } else if (const auto* sequence = body.as<ir::SequenceNode>()) {
    chain->sequence = true;
    chain->first = chainOf(sequence->definition, chain.get());
    chain->second = chainOf(sequence->mutation, chain.get());
  } else if (body.isa<ir::AssignmentNode>()) {
    chain->assignment = body;
  } else {
    throw LoweringError("internal: a statement with nested sums concretized to " + ir::toString(body));
  }
  return chain;
}

// Every chain a command may act on, outermost first (a chain before its
// consumer, then its producer); frozen ones only `withFrozen`.
void collectChains(LoopChain& chain, std::vector<LoopChain*>& chains, bool withFrozen = false) {
  if (!chain.frozen || withFrozen) chains.push_back(&chain);
  if (chain.first) collectChains(*chain.first, chains, withFrozen);
  if (chain.second) collectChains(*chain.second, chains, withFrozen);
}

// The accesses the chain's assignments read.
std::vector<ir::Access> accessesRead(const LoopChain& chain) {
  if (chain.assignment.defined()) return ir::accessesOf(chain.assignment.as<ir::AssignmentNode>()->rhs);
  auto accesses = accessesRead(*chain.first);
  for (const auto& access : accessesRead(*chain.second))
    if (std::find(accesses.begin(), accesses.end(), access) == accesses.end()) accesses.push_back(access);
  return accesses;
}

// The chain's reads of inputs' copies in the loops' order, each with the
// access as written: refusals show the statement the user wrote.
std::unordered_map<ir::IndexExpr, ir::IndexExpr> accessesAsWritten(const LoopChain& chain) {
  std::unordered_map<ir::IndexExpr, ir::IndexExpr> written;
  for (const auto& access : accessesRead(chain))
    if (auto input = convertedFrom(access.tensor()))
      written.emplace(ir::IndexExpr(access), ir::IndexExpr((*input)(access.indices())));
  return written;
}

bool encloses(const LoopChain* outer, const LoopChain* inner) {
  for (const LoopChain* chain = inner->parent; chain; chain = chain->parent)
    if (chain == outer) return true;
  return false;
}

template <typename T>
bool contains(const std::vector<T>& list, const T& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

struct LoopAt {
  LoopChain* chain;
  size_t position;
};

class NestedScheduler {
 public:
  NestedScheduler(const ir::IndexStmt& concrete, const ir::AssignmentNode& assignment,
                  std::vector<std::string>& decisions, std::set<std::string> takenNames, bool workspaceTaken,
                  bool termsAddIntoOutput)
      : root_(chainOf(concrete, nullptr)), assignment_(assignment), decisions_(decisions),
        takenNames_(std::move(takenNames)), workspaceTaken_(workspaceTaken), termsAddIntoOutput_(termsAddIntoOutput) {
    for (const auto& var : ir::indexVarsOf(concrete)) statementVars_.insert(var);
    for (const auto& var : ir::indexVarsOf(assignment.rhs)) statementVars_.insert(var);
    for (const auto& var : assignment.lhs.indices()) statementVars_.insert(var);
  }

  void apply(const std::vector<ScheduleCommand>& commands) {
    commands_ = &commands;
    for (size_t index = 0; index < commands.size(); ++index) {
      command_ = &commands[index];
      index_ = index;
      std::visit([&](const auto& kind) { (*this)(kind); }, commands[index].kind);
    }
    for (const auto& [fused, where] : unpositionedFuses_) {
      command_ = &commands[where.first];
      index_ = where.first;
      const auto& fuse = std::get<ir::FuseRelation>(commands[where.first].kind);
      for (const auto* chain : where.second) {
        requireDenseIteration(fuse.outer, *chain);
        requireDenseIteration(fuse.inner, *chain);
      }
    }
    if (commands.empty()) return;
    if (auto refusal = brokenStorageOrder())
      throw ScheduleError(commands.size() - 1, "the schedule " + *refusal);
  }

  ir::IndexStmt statement() {
    ir::IndexStmt stmt = statementOf(*root_);
    return relations_.empty() ? stmt : ir::suchThat(stmt, relations_);
  }

  void operator()(const ReorderCommand& reorder) {
    std::vector<std::vector<LoopAt>> at;
    for (const auto& var : reorder.order) at.push_back(loopsOver(var));
    // Each pair in the order given: the first named stays outside the second
    // wherever both loops stand in one nest.
    for (size_t a = 0; a < at.size(); ++a)
      for (size_t b = a + 1; b < at.size(); ++b) {
        const IndexVar &first = reorder.order[a], &second = reorder.order[b];
        if (first == second) fail("names a loop twice");
        bool related = false;
        for (const auto& outer : at[a])
          for (const auto& inner : at[b]) {
            if (encloses(inner.chain, outer.chain))
              fail(first.name() + " is a loop of a sum computed into a temporary inside the loop over " +
                   second.name() + "; it cannot move outside it (each sum below the statement's top is computed by "
                   "loops of its own)");
            related = related || outer.chain == inner.chain || encloses(outer.chain, inner.chain);
          }
        if (!related)
          fail(first.name() + " and " + second.name() +
               " are loops of different sums, each computed by loops of its own; no loop order relates them");
      }
    // Within each nest, the named loops take their slots in the order given.
    std::map<LoopChain*, std::vector<size_t>> slots;
    for (const auto& loops : at)
      for (const auto& loop : loops) slots[loop.chain].push_back(loop.position);
    for (auto& [chain, positions] : slots) {
      std::sort(positions.begin(), positions.end());
      std::vector<IndexVar> named;
      for (const auto& var : reorder.order)
        if (contains(chain->loops, var)) named.push_back(var);
      for (size_t v = 0; v < named.size(); ++v) chain->loops[positions[v]] = named[v];
    }
    if (auto refusal = brokenStorageOrder()) fail(*refusal);
    decisions_.push_back(command_->text + ": the loops as reordered: " + loopsText());
  }

  void operator()(const ir::SplitRelation& split) {
    requirePositive(split.factor, "split factor");
    for (const auto& loop : loopsOver(split.parent)) requireIterationInBlocks(split.parent, *loop.chain);
    std::string levels = searchedLevels(split.parent);
    replaceLoops(split.parent, {split.outer, split.inner}, split);
    decisions_.push_back(splitDecision(split, levels));
  }

  void operator()(const ir::DivideRelation& divide) {
    requirePositive(divide.factor, "number of parts");
    for (const auto& loop : loopsOver(divide.parent)) requireIterationInBlocks(divide.parent, *loop.chain);
    std::string levels = searchedLevels(divide.parent);
    replaceLoops(divide.parent, {divide.outer, divide.inner}, divide);
    decisions_.push_back(divideDecision(divide, levels));
  }

  void operator()(const ir::BoundRelation& bound) {
    if (bound.kind == ir::BoundKind::MinExact || bound.kind == ir::BoundKind::MinConstraint)
      fail("lower bounds (" + ir::toString(bound.kind) + ") are not supported; every loop starts at 0");
    requirePositive(bound.value, "bound");
    auto loops = loopsOver(bound.var);
    if (!statementVars_.count(bound.var)) fail(derivedVariableRefusal(bound.var, "bound"));
    for (const auto& loop : loops) requireIterationInBlocks(bound.var, *loop.chain);
    std::string levels = searchedLevels(bound.var);
    replaceLoops(bound.var, {bound.boundVar}, bound);
    decisions_.push_back(boundDecision(bound, levels));
  }

  void operator()(const ir::FuseRelation& fuse) {
    // The nests that loop over both variables fuse them; another sum's loops
    // over one of them alone stay.
    std::vector<LoopAt> fused;
    for (const auto& loop : loopsOver(fuse.outer)) {
      const auto& loops = loop.chain->loops;
      if (loop.position + 1 < loops.size() && loops[loop.position + 1] == fuse.inner) {
        fused.push_back(loop);
      } else if (contains(loops, fuse.inner)) {
        fail(fuse.inner.name() + " must be the loop directly inside " + fuse.outer.name() + " (loops: " +
             joinNames(loops) + ")");
      }
    }
    if (fused.empty()) {
      for (const auto& outer : loopsOver(fuse.outer))
        for (const auto& inner : loopsOver(fuse.inner))
          if (encloses(outer.chain, inner.chain))
            fail(fuse.inner.name() + " is a loop of a sum computed into a temporary inside the loop over " +
                 fuse.outer.name() + ", not a loop of the same nest; a fuse takes a loop and the one directly inside it");
      fail(fuse.inner.name() + " must be the loop directly inside " + fuse.outer.name() + " (loops: " + loopsText() +
           ")");
    }
    for (const auto& loop : fused) {
      auto& loops = loop.chain->loops;
      loops[loop.position] = fuse.fused;
      loops.erase(loops.begin() + static_cast<long>(loop.position) + 1);
      moveAttributes(*loop.chain, fuse.outer, fuse.fused);
    }
    relations_.push_back(fuse);
    std::vector<const LoopChain*> chains;
    for (const auto& loop : fused) chains.push_back(loop.chain);
    unpositionedFuses_[fuse.fused] = {index_, chains};
    decisions_.push_back(ir::toString(ir::ProvenanceRelation(fuse)) + ": " + fuse.outer.name() + " = " +
                         fuse.fused.name() + " / |" + fuse.inner.name() + "|, " + fuse.inner.name() + " = " +
                         fuse.fused.name() + " % |" + fuse.inner.name() + "|");
  }

  void operator()(const ir::PosRelation& pos) {
    auto loops = loopsOver(pos.indexVar);
    auto accesses = ir::accessesOf(assignment_.rhs);
    if (!contains(accesses, pos.access))
      fail(ir::toString(pos.access) + " is not read by `" +
           ir::toString(ir::IndexStmt(ir::AssignmentNode::make(assignment_.lhs, assignment_.rhs))) + "`");
    IndexVar stored = pos.indexVar;
    if (!statementVars_.count(pos.indexVar)) {
      const ir::FuseRelation* fuse = nullptr;
      for (const auto& relation : relations_)
        if (const auto* candidate = std::get_if<ir::FuseRelation>(&relation); candidate && candidate->fused == pos.indexVar)
          fuse = candidate;
      std::string derivation =
          derivationHistory(pos.indexVar, *commands_, index_).value_or("derived by an earlier command");
      if (auto refusal = fusedPositionRefusal(pos, fuse, derivation)) fail(*refusal);
      stored = fuse->inner;
    }
    if (auto refusal = positionLevelRefusal(pos, stored)) fail(*refusal);
    // Positions of one access replace a loop only where that loop's body
    // reads it: another sum over the same variable keeps its own loop.
    std::vector<LoopAt> reading;
    for (const auto& loop : loops)
      if (contains(accessesRead(*loop.chain), pos.access)) reading.push_back(loop);
    if (reading.empty())
      fail("no loop over " + pos.indexVar.name() + " reads " + ir::toString(pos.access));
    replaceLoops(reading, {pos.posVar}, pos);
    unpositionedFuses_.erase(pos.indexVar);
    decisions_.push_back(ir::toString(ir::ProvenanceRelation(pos)) + ": " + pos.posVar.name() +
                         " iterates the positions of " + pos.access.tensor().name() + " that store " + stored.name());
  }

  void operator()(const ParallelizeCommand& parallelize) {
    for (const auto& loop : loopsOver(parallelize.var)) {
      auto& attributes = loop.chain->attributes[parallelize.var];
      attributes.parallelUnit = parallelize.unit;
      attributes.outputRaceStrategy = parallelize.strategy;
    }
    decisions_.push_back(command_->text + ": every loop over " + parallelize.var.name() + " runs in parallel");
  }

  void operator()(const UnrollCommand& unroll) {
    requirePositive(unroll.factor, "unroll factor");
    for (const auto& loop : loopsOver(unroll.var)) loop.chain->attributes[unroll.var].unrollFactor = unroll.factor;
  }

  // precompute(expr, i, iw) where expr is part of one sum's (or the
  // statement's) assignment and i one of that assignment's own loops: the
  // dense workspace's where goes among those loops, as in a perfect nest
  // (buildConcreteNest, once every command has run).
  void operator()(const PrecomputeCommand& precompute) {
    ir::IndexExpr whole = assignment_.rhs;
    while (const auto* sum = whole.as<ir::ReductionNode>()) whole = sum->body;
    // (The whole right-hand side's workspace is filled by the statement's
    // nests of sums, not by one nest of loops a later where could go in.)
    if (wholeWorkspace_)
      fail("the whole right-hand side goes into a dense workspace already, by `" + precomputes_.front().text +
           "`, which takes no other precompute in a statement whose sums are computed into temporaries");
    if (auto clash = clashWithEarlierPrecomputes(precomputes_, precompute, accessesAsWritten(*root_))) fail(*clash);
    if (!statementVars_.count(precompute.var)) fail(derivedVariableRefusal(precompute.var, commandName(*command_)));
    if (precompute.expr == whole) {
      if (!precomputes_.empty())
        fail(workspaceTaken_
               ? "the whole right-hand side goes into a dense workspace per term, which takes no precompute before "
                 "it in a statement whose terms each " +
                   (termsAddIntoOutput_ ? "add into " + assignment_.lhs.tensor().name()
                                        : std::string("insert into the statement's sparse workspace")) +
                   " in a loop nest of their own, and `" + precomputes_.front().text +
                   "` comes before it (a precompute after it goes among the loops that fill its term's workspace)"
               : "a dense workspace for the whole right-hand side takes no other precompute in a statement whose "
                 "sums are computed into temporaries, and `" + precomputes_.front().text + "` comes before it");
      return precomputeWhole(precompute);
    }
    if (!contains(ir::indexVarsOf(precompute.expr), precompute.var))
      fail("the precomputed expression is not indexed by " + precompute.var.name());
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains, /*withFrozen=*/true);
    LoopChain* holder = nullptr;
    for (auto* chain : chains) {
      if (!chain->assignment.defined()) continue;
      if (!isSubexpression(precompute.expr, chain->assignment.as<ir::AssignmentNode>()->rhs)) continue;
      if (holder) fail("the expression stands in more than one sum; precompute takes a part of one");
      holder = chain;
    }
    if (!holder && workspaceTaken_) {
      if (auto spanned = termsSpannedBy(precompute.expr); spanned.size() > 1)
        fail("the precomputed expression spans the terms " + spanned + ", which reduce over different variables and " +
             (termsAddIntoOutput_ ? "each add into " + assignment_.lhs.tensor().name()
                                  : std::string("each insert into the statement's sparse workspace")) +
             " in a loop nest of their own; no one loop nest fills its workspace (precompute a part of one term, "
             "or the whole right-hand side: dense_workspace gives each term a workspace of its own)");
    }
    if (!holder)
      fail("not a part of one assignment of " + ir::toString(ir::replace(statement(), accessesAsWritten(*root_))) +
           " (a part that holds a sum, or spans the sums computed into temporaries, cannot be precomputed)");
    if (!contains(holder->loops, precompute.var))
      fail(precompute.var.name() + " is not a loop of the nest that computes " +
           ir::toString(ir::replace(precompute.expr, accessesAsWritten(*holder))) +
           " (its loops: " + (holder->loops.empty() ? std::string("none") : joinNames(holder->loops)) +
           "); the workspace's where stands among that nest's loops");
    if (!(precompute.workspaceVar == precompute.var)) requireFreshWorkspaceVar(precompute, holder->loops);
    precomputes_.push_back(
        {precompute, index_, command_->text, denseWorkspaceName(assignment_.lhs.tensor(), takenNames_)});
    holders_[holder].push_back(precomputes_.back());
  }

  // dense_workspace([j]), or precompute of the whole right-hand side over
  // j: the loops from j's on fill a dense workspace over j with what the
  // statement computes (each sum below its top still in its scalar
  // temporary), and a loop over j copies it into the output (adds it, where
  // j is summed), both inside the loops outside j's. The workspace holds one
  // entry per j, so every other index of the output must be fixed outside it.
  void precomputeWhole(const PrecomputeCommand& precompute) {
    const ir::Access& lhs = assignment_.lhs;
    const IndexVar& var = precompute.var;
    if (workspaceTaken_) return precomputeEachTerm(precompute);
    if (!contains(root_->loops, var))
      fail(var.name() + " is not a loop around the whole statement (its loops: " +
           (root_->loops.empty() ? std::string("none") : joinNames(root_->loops)) +
           "); a workspace for the whole right-hand side is indexed by an index of the output or a variable its "
           "top-level sum runs over");
    auto at = std::find(root_->loops.begin(), root_->loops.end(), var);
    for (auto loop = at + 1; loop != root_->loops.end(); ++loop)
      for (const auto& origin : ir::originVars(*loop, relations_))
        if (contains(lhs.indices(), origin) && !(origin == var))
          fail("the workspace holds one entry per " + var.name() + ", but the loop over " + loop->name() +
               ", which runs inside it, picks the entries of " + lhs.tensor().name() + " along " + origin.name() +
               " too; reorder " + loop->name() + " outside " + var.name() + ", or name the output's innermost index");
    if (!(precompute.workspaceVar == var)) requireFreshWorkspaceVar(precompute, root_->loops);
    precomputes_.push_back(
        {precompute, index_, command_->text, denseWorkspaceName(assignment_.lhs.tensor(), takenNames_)});
    wholeWorkspace_ = true;
  }

  // The whole right-hand side of a statement whose terms fill one sparse
  // workspace, or add into the dense output, each by loops of its own: each
  // term that loops over the index goes into a dense workspace of its own
  // among its loops, which its loop over the index then inserts into the
  // sparse one (whose merge adds the terms, as without the workspaces) or
  // adds into the output.
  void precomputeEachTerm(const PrecomputeCommand& precompute) {
    const IndexVar& var = precompute.var;
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains);
    // Every term loops over every index of the output, but only a term
    // indexed by var fills a workspace over var (not `3` or `A(i,m) * x(m)`
    // in Y(i,j) over j: the same along j, they are added as they are).
    std::vector<LoopChain*> terms;
    size_t termCount = 0;
    for (auto* chain : chains) {
      if (!chain->assignment.defined()) continue;
      ++termCount;
      if (contains(chain->loops, var) &&
          contains(ir::indexVarsOf(chain->assignment.as<ir::AssignmentNode>()->rhs), var))
        terms.push_back(chain);
    }
    if (terms.empty()) {
      std::vector<IndexVar> loops;
      for (const auto* chain : chains)
        if (chain->assignment.defined() &&
            contains(ir::indexVarsOf(chain->assignment.as<ir::AssignmentNode>()->rhs), var))
          appendUnique(loops, chain->loops);
      fail(var.name() + " is no loop of the nests that " +
           (termsAddIntoOutput_ ? "add into " + assignment_.lhs.tensor().name()
                                : std::string("fill the statement's sparse workspace")) +
           ", one per term, of the terms indexed by " + var.name() + " (their loops: " +
           (loops.empty() ? std::string("none") : joinNames(loops)) +
           "); each term's dense workspace is indexed by one of its own loops");
    }
    if (!(precompute.workspaceVar == var)) requireFreshWorkspaceVar(precompute, {});
    precomputes_.push_back({precompute, index_, command_->text, ""});
    std::string values;
    for (auto* chain : terms) {
      PrecomputeCommand term = precompute;
      term.expr = chain->assignment.as<ir::AssignmentNode>()->rhs;
      holders_[chain].push_back(
          {term, index_, command_->text, denseWorkspaceName(assignment_.lhs.tensor(), takenNames_)});
      values += (values.empty() ? "" : ", ") + ir::toString(term.expr);
    }
    const std::string& output = assignment_.lhs.tensor().name();
    std::string others = terms.size() == termCount ? ""
                         : termsAddIntoOutput_     ? "; the terms not indexed by " + var.name() + " add into " +
                                                   output + " as they are"
                                                   : "; the terms not indexed by " + var.name() + " insert as they are";
    decisions_.push_back(command_->text + ": the statement's terms " +
                         (termsAddIntoOutput_ ? "add into " + output + " (dense)" : std::string("fill one sparse workspace")) +
                         " by loops of their own, so each term over " + var.name() +
                         " goes into a dense workspace of its own (" + values + ")" + others +
                         (termsAddIntoOutput_ ? ", which a loop over " + var.name() + " then adds into " + output : ""));
  }

  // "A(i,j) * x(i) and c(j)": the terms' nests whose value (up to its
  // sign) stands inside `expr`, in the statement's order.
  std::string termsSpannedBy(const ir::IndexExpr& expr) const {
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains);
    std::vector<std::string> spanned;
    for (const auto* chain : chains) {
      if (!chain->assignment.defined()) continue;
      ir::IndexExpr value = chain->assignment.as<ir::AssignmentNode>()->rhs;
      if (const auto* neg = value.as<ir::NegNode>()) value = neg->operand;
      if (isSubexpression(value, expr)) spanned.push_back(ir::toString(value));
    }
    std::string text;
    for (size_t t = 0; t < spanned.size(); ++t)
      text += (t == 0 ? "" : t + 1 == spanned.size() ? " and " : ", ") + spanned[t];
    return spanned.size() > 1 ? text : "";
  }

  ir::Dimension dimensionOf(const IndexVar& var) const {
    std::vector<ir::Access> accesses = ir::accessesOf(assignment_.rhs);
    accesses.insert(accesses.begin(), assignment_.lhs);
    for (const auto& access : accesses)
      for (size_t mode = 0; mode < access.indices().size(); ++mode)
        if (access.indices()[mode] == var) return access.tensor().dimension(static_cast<int>(mode));
    throw LoweringError("internal: no access is indexed by " + var.name());
  }

  void requireFreshWorkspaceVar(const PrecomputeCommand& precompute, const std::vector<IndexVar>& loops) const {
    for (const auto& loop : loops)
      if (!(loop == precompute.var) && ir::originVars(loop, relations_).count(precompute.var))
        fail(precompute.var.name() + " is split or fused by an earlier command; precompute it under its own name");
    std::vector<LoopChain*> schedulable;
    collectChains(*root_, schedulable);
    for (const auto* chain : schedulable)
      if (contains(chain->loops, precompute.workspaceVar) || statementVars_.count(precompute.workspaceVar))
        fail(precompute.workspaceVar.name() + " is already a loop variable");
  }
  void operator()(const SparseWorkspaceCommand&) {
    if (!workspaceTaken_) refuseWorkspace();
  }
  void operator()(const SparsePrecomputeCommand&) { refuseWorkspace(); }

 private:
  ir::IndexStmt statementOf(const LoopChain& chain) {
    if (auto held = holders_.find(&chain); held != holders_.end()) {
      LoopNest nest;
      nest.loops = chain.loops;
      nest.attributes = chain.attributes;
      nest.relations = relations_;
      nest.precomputes = held->second;
      nest.takenNames = takenNames_;
      nest.readAs = accessesAsWritten(chain);
      std::vector<IndexVar> enclosing;
      for (const LoopChain* outer = chain.parent; outer; outer = outer->parent)
        for (const auto& loop : outer->loops) {
          appendUnique(enclosing, {loop});
          for (const auto& origin : ir::originVars(loop, relations_)) appendUnique(enclosing, {origin});
        }
      const auto* assignment = chain.assignment.as<ir::AssignmentNode>();
      ir::IndexStmt built =
          buildConcreteNest(nest, assignment->lhs, assignment->rhs, assignment->accumulate, enclosing,
                            /*addsToOtherNests=*/termsAddIntoOutput_);
      takenNames_ = nest.takenNames;
      decisions_.insert(decisions_.end(), nest.decisions.begin(), nest.decisions.end());
      if (const auto* relations = built.as<ir::SuchThatNode>()) built = relations->stmt;  // one such-that, around all
      return built;
    }
    ir::IndexStmt body;
    if (chain.assignment.defined())
      body = chain.assignment;
    else {
      // (In turn: each nest's decisions follow the nests before it.)
      ir::IndexStmt first = statementOf(*chain.first);
      ir::IndexStmt second = statementOf(*chain.second);
      body = chain.sequence ? ir::sequence(first, second) : ir::where(first, second);
    }
    if (&chain == root_.get() && wholeWorkspace_) return wholeWorkspaceStatement(chain, body);
    return nestLoops(chain.loops, body, chain.attributes);
  }

  ir::IndexStmt wholeWorkspaceStatement(const LoopChain& chain, const ir::IndexStmt& body) {
    const ir::Access& lhs = assignment_.lhs;
    const ir::TensorVar& output = lhs.tensor();
    const NestPrecompute& precompute = precomputes_.front();
    const IndexVar &var = precompute.command.var, &workspaceVar = precompute.command.workspaceVar;
    auto at = std::find(chain.loops.begin(), chain.loops.end(), var);
    std::vector<IndexVar> outer(chain.loops.begin(), at), inner(at, chain.loops.end());
    ir::TensorVar workspace(precompute.workspaceName, {dimensionOf(var)}, ir::Format::denseOfOrder(1),
                            output.datatype(), ir::TensorProvenance::denseWorkspace(output, precompute.text));
    // Every update of the output (a term's, in a sequence of terms) goes
    // to the workspace instead.
    ir::IndexStmt producer = ir::replace(nestLoops(inner, body, chain.attributes),
                                         std::unordered_map<ir::IndexExpr, ir::IndexExpr>{
                                             {ir::IndexExpr(lhs), ir::IndexExpr(workspace(var))}});
    if (!(workspaceVar == var))
      producer = ir::replace(producer, std::unordered_map<IndexVar, IndexVar>{{var, workspaceVar}});
    // A summed variable outside the where adds each of its workspaces, and
    // a summed workspace index adds its entries.
    bool sums = !contains(lhs.indices(), var);
    for (const auto& loop : outer)
      for (const auto& origin : ir::originVars(loop, relations_))
        sums = sums || !contains(lhs.indices(), origin);
    auto copy = chain.attributes.find(var);
    std::map<IndexVar, ir::ForallAttributes> copyAttributes;
    if (copy != chain.attributes.end()) copyAttributes[var] = copy->second;
    ir::IndexStmt consumer =
        nestLoops({var}, ir::AssignmentNode::make(lhs, workspace(var), sums), copyAttributes);
    decisions_.push_back(precompute.text + ": the whole right-hand side into dense workspace " + workspace.name() +
                         "(" + workspaceVar.name() + ") inside the loops over " +
                         (outer.empty() ? std::string("nothing") : joinNames(outer)) +
                         ", each sum below the top still in its scalar temporary");
    return nestLoops(outer, ir::where(consumer, producer), chain.attributes);
  }

  static bool isSubexpression(const ir::IndexExpr& part, const ir::IndexExpr& whole) {
    ir::IndexExpr marker = ir::LiteralNode::make(0.0);
    return !(ir::replace(whole, {{part, marker}}) == whole);
  }

  [[noreturn]] void fail(const std::string& reason) const {
    throw ScheduleError(index_, command_->text + ": " + reason);
  }

  [[noreturn]] void refuseWorkspace() const {
    fail("workspaces are not supported yet in a statement with sums below its top (each such sum is computed into "
         "a scalar temporary by loops of its own); schedule those loops, or write the sum as a statement of its own");
  }

  void requirePositive(int64_t value, const std::string& what) const {
    if (value <= 0) fail("the " + what + " must be positive, not " + std::to_string(value));
  }

  void requireDenseIteration(const IndexVar& var, const LoopChain& chain) const {
    if (!statementVars_.count(var)) return;
    if (auto refusal = sparseIterationRefusal(var, accessesRead(chain))) fail(*refusal);
  }

  // A split, divide or bound of a variable ordered compressed levels
  // iterate: the inner loop visits their coordinates in its block, found
  // by binary search (Lowerer::lowerDerivedFor), as without sums below the top.
  void requireIterationInBlocks(const IndexVar& var, const LoopChain& chain) const {
    if (!statementVars_.count(var)) return;
    if (auto refusal = sparseIterationRefusal(var, accessesRead(chain), true)) fail(*refusal);
  }

  // The sparse levels the loops over `var` read, whose blocks are searched
  // (searchedLevelsText over every nest that loops over it).
  std::string searchedLevels(const IndexVar& var) const {
    if (!statementVars_.count(var)) return "";
    std::vector<ir::Access> reads;
    for (const auto& loop : loopsOver(var))
      for (const auto& access : accessesRead(*loop.chain)) reads.push_back(access);
    return searchedLevelsText(var, reads);
  }

  std::vector<LoopAt> loopsOver(const IndexVar& var) const {
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains);
    std::vector<LoopAt> found;
    for (auto* chain : chains)
      for (size_t p = 0; p < chain->loops.size(); ++p)
        if (chain->loops[p] == var) found.push_back({chain, p});
    if (found.empty()) fail(missingLoopMessage(var, *commands_, index_, loopsText()));
    return found;
  }

  std::string derivedVariableRefusal(const IndexVar& var, const std::string& command) const {
    std::vector<IndexVar> own = assignment_.lhs.indices();
    appendUnique(own, ir::indexVarsOf(assignment_.rhs));
    return notAStatementVariable(var, command, own, *commands_, index_);
  }

  std::string loopsText() const {
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains);
    std::vector<IndexVar> loops;
    for (const auto* chain : chains) appendUnique(loops, chain->loops);
    return joinNames(loops);
  }

  static void moveAttributes(LoopChain& chain, const IndexVar& from, const IndexVar& to) {
    auto attributes = chain.attributes.find(from);
    if (attributes == chain.attributes.end()) return;
    chain.attributes[to] = attributes->second;
    chain.attributes.erase(from);
  }

  void replaceLoops(const IndexVar& var, const std::vector<IndexVar>& derived, const ir::ProvenanceRelation& relation) {
    replaceLoops(loopsOver(var), derived, relation);
  }

  void replaceLoops(const std::vector<LoopAt>& loops, const std::vector<IndexVar>& derived,
                    const ir::ProvenanceRelation& relation) {
    const IndexVar var = loops.front().chain->loops[loops.front().position];
    for (const auto& precompute : precomputes_)
      if (precompute.command.var == var || precompute.command.workspaceVar == var)
        fail(var.name() + " indexes the workspace of the precompute before this command; schedule " + var.name() +
             " before the precompute");
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains);
    for (const auto& fresh : derived) {
      bool taken = statementVars_.count(fresh) > 0;
      for (const auto* chain : chains) taken = taken || contains(chain->loops, fresh);
      if (taken) fail(fresh.name() + " is already a loop variable");
    }
    for (const auto& loop : loops) {
      auto& list = loop.chain->loops;
      list.erase(list.begin() + static_cast<long>(loop.position));
      list.insert(list.begin() + static_cast<long>(loop.position), derived.begin(), derived.end());
      // Attributes set on the variable before it was replaced move to its outer part.
      moveAttributes(*loop.chain, var, derived.front());
    }
    relations_.push_back(relation);
  }

  // Where some assignment's loops (its chain's and every enclosing chain's)
  // visit a sparse input's levels out of storage order: what they break.
  std::optional<std::string> brokenStorageOrder() const {
    std::vector<LoopChain*> chains;
    collectChains(*root_, chains, /*withFrozen=*/true);
    for (const auto* chain : chains) {
      if (!chain->assignment.defined()) continue;
      LoopNest path;
      for (const LoopChain* outer = chain; outer; outer = outer->parent)
        path.loops.insert(path.loops.begin(), outer->loops.begin(), outer->loops.end());
      path.relations = relations_;
      std::vector<StorageEdge> edges;
      for (const auto& access : accessesRead(*chain)) {
        if (!hasSparseLevel(access.tensor())) continue;
        auto vars = varsInStorageOrder(access);
        for (size_t l = 0; l + 1 < vars.size(); ++l)
          if (!(vars[l] == vars[l + 1])) edges.push_back({vars[l], vars[l + 1], tensorInWords(access)});
      }
      if (auto edge = brokenEdge(path, edges))
        return "visits " + edge->below.name() + " outside " + edge->above.name() + ", but " + edge->owner +
               " stores " + edge->above.name() + " above " + edge->below.name() +
               " and sparse levels are visited in storage order (loops: " + joinNames(path.loops) + ")";
    }
    return std::nullopt;
  }

  std::unique_ptr<LoopChain> root_;
  const ir::AssignmentNode& assignment_;
  std::vector<std::string>& decisions_;
  // The names a workspace this statement inserts must not take.
  std::set<std::string> takenNames_;
  bool workspaceTaken_;
  bool termsAddIntoOutput_;
  std::set<IndexVar> statementVars_;
  std::vector<ir::ProvenanceRelation> relations_;
  // A fused variable no pos took yet -> its fuse command and the nests it fused.
  std::map<IndexVar, std::pair<size_t, std::vector<const LoopChain*>>> unpositionedFuses_;
  // The precomputes in the order asked, and by the nest whose assignment
  // holds each one's expression.
  std::vector<NestPrecompute> precomputes_;
  std::map<const LoopChain*, std::vector<NestPrecompute>> holders_;
  // The (sole) precompute is of the whole right-hand side (dense_workspace).
  bool wholeWorkspace_ = false;
  const std::vector<ScheduleCommand>* commands_ = nullptr;
  const ScheduleCommand* command_ = nullptr;
  size_t index_ = 0;
};

}  // namespace

ir::IndexStmt scheduleNestedSums(const ir::IndexStmt& concrete, const std::vector<ScheduleCommand>& commands,
                                 const ir::AssignmentNode& assignment, std::vector<std::string>& decisions,
                                 const std::set<std::string>& takenNames, bool workspaceTaken,
                                 bool termsAddIntoOutput) {
  NestedScheduler scheduler(concrete, assignment, decisions, takenNames, workspaceTaken, termsAddIntoOutput);
  scheduler.apply(commands);
  return scheduler.statement();
}

}  // namespace tcc::lowering
