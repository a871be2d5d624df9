// precompute(expr, i_vars, o_vars, W) into a workspace tensor W declared in
// a sparse format (§6.1 of the sparse-workspace paper): checks the command
// against the statement, builds the loops that insert expr into W (the
// producer, scheduled by the statement's other commands) and concretizes
// the statement that reads W in its place (the consumer) like any other.
#include <algorithm>
#include <unordered_map>

#include "schedule_history.h"
#include "schedule_loops.h"
#include "statement_terms.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"

namespace tcc::lowering {

namespace {

bool isPartOf(const ir::IndexExpr& part, const ir::IndexExpr& whole) {
  return !(ir::replace(whole, {{part, ir::IndexExpr(0.0)}}) == whole);
}

}  // namespace

using ir::Access;
using ir::IndexExpr;
using ir::IndexVar;
using ir::TensorVar;

// precompute(expr, i_vars, o_vars, W) with W a sparse workspace tensor:
// where(the statement with W(i_vars) in place of expr, concretized as any
// statement reading W; loops that insert expr, its i_vars renamed o_vars,
// into W(o_vars), scheduled by the statement's other commands).
ConcretizedStatement precomputeIntoSparseWorkspace(const ir::AssignmentNode& assignment,
                                                   const ScheduleRequest& request, size_t commandIndex) {
  const ScheduleCommand& command = request.commands[commandIndex];
  const auto& precompute = std::get<SparsePrecomputeCommand>(command.kind);
  const TensorVar& workspace = precompute.workspace;
  auto fail = [&](const std::string& reason) { throw ScheduleError(commandIndex, command.text + ": " + reason); };
  const Access& lhs = assignment.lhs;

  // The workspace's indices: as many as its order, each used by expr, and
  // every variable of expr that the rest of the statement also uses.
  if (static_cast<int>(precompute.inputVars.size()) != workspace.order())
    fail("workspace " + workspace.name() + " has order " + std::to_string(workspace.order()) + ", but " +
         std::to_string(precompute.inputVars.size()) + " index variable(s) are given for it");
  if (precompute.outputVars.size() != precompute.inputVars.size())
    fail("i_vars (" + joinNames(precompute.inputVars) + ") and o_vars (" + joinNames(precompute.outputVars) +
         ") differ in length");
  IndexExpr marker = workspace(precompute.inputVars);
  IndexExpr consumerRhs = ir::replace(assignment.rhs, {{precompute.expr, marker}});
  if (consumerRhs.sameAs(assignment.rhs) || ir::toString(consumerRhs) == ir::toString(assignment.rhs))
    fail(ir::toString(precompute.expr) + " is not a subexpression of " + ir::toString(assignment.rhs) +
         " (as written, with the same grouping)");
  std::vector<IndexVar> exprVars = ir::indexVarsOf(precompute.expr);
  std::vector<IndexVar> outside = lhs.indices();
  appendUnique(outside, ir::indexVarsOf(ir::replace(consumerRhs, {{marker, IndexExpr(0.0)}})));
  for (const auto& var : precompute.inputVars)
    if (std::find(exprVars.begin(), exprVars.end(), var) == exprVars.end())
      fail(var.name() + " indexes workspace " + workspace.name() + " but does not appear in " +
           ir::toString(precompute.expr));
  std::vector<IndexVar> summed;
  for (const auto& var : exprVars) {
    bool indexed = std::find(precompute.inputVars.begin(), precompute.inputVars.end(), var) != precompute.inputVars.end();
    bool usedOutside = std::find(outside.begin(), outside.end(), var) != outside.end();
    if (usedOutside && !indexed)
      fail(var.name() + " is used outside " + ir::toString(precompute.expr) + ", so it must index workspace " +
           workspace.name() + " (its indices are " + joinNames(precompute.inputVars) + ")");
    if (!indexed) summed.push_back(var);
  }
  // o_vars name W's indices in the producer (TACO's iw_vars): each is its
  // i_var or a variable the statement does not use, and no two are one.
  std::unordered_map<IndexVar, IndexVar> renamed;
  std::vector<IndexVar> statementVars = lhs.indices();
  appendUnique(statementVars, ir::indexVarsOf(assignment.rhs));
  for (size_t m = 0; m < precompute.outputVars.size(); ++m) {
    const IndexVar& in = precompute.inputVars[m];
    const IndexVar& out = precompute.outputVars[m];
    if (std::count(precompute.outputVars.begin(), precompute.outputVars.end(), out) > 1)
      fail(out.name() + " names two indices of workspace " + workspace.name());
    if (out == in) continue;
    if (std::find(statementVars.begin(), statementVars.end(), out) != statementVars.end())
      fail(out.name() + " renames " + in.name() + " where workspace " + workspace.name() +
           " is filled, but the statement already uses " + out.name() + "; rename to a new variable");
    renamed.emplace(in, out);
  }

  // Sizes: each mode of the workspace as its index ranges in the statement.
  for (int mode = 0; mode < workspace.order(); ++mode) {
    const IndexVar& var = precompute.inputVars[mode];
    for (const auto& access : ir::accessesOf(assignment.rhs)) {
      const auto& indices = access.indices();
      auto at = std::find(indices.begin(), indices.end(), var);
      if (at == indices.end()) continue;
      const ir::Dimension& size = access.tensor().dimension(static_cast<int>(at - indices.begin()));
      const ir::Dimension& declared = workspace.dimension(mode);
      if (!size.isUnknown() && !declared.isUnknown() && !(size == declared))
        fail("mode " + std::to_string(mode) + " of workspace " + workspace.name() + " has size " + declared.toString() +
             ", but " + var.name() + " ranges over " + size.toString() + " in " + ir::toString(access));
      break;
    }
  }

  // The producer: expr's loops (its inputs in storage order, W's order
  // where they leave a choice) over W's o_vars, then the statement's other
  // commands.
  Access workspaceAccess = workspace(precompute.outputVars);
  SignedTerm term;
  term.summed = summed;
  term.body = renamed.empty() ? precompute.expr : ir::replace(precompute.expr, renamed);
  exprVars = ir::indexVarsOf(term.body);
  std::vector<std::string> decisions;
  std::vector<std::pair<std::string, TensorVar>> convertedInputs;
  LoopNest nest;
  std::set<std::string> takenNames = namesTakenIn(assignment, request);
  takenNames.insert(workspace.name());
  nest.loops = termLoopOrder(workspaceAccess, term, decisions, convertedInputs, takenNames);
  nest.takenNames = takenNames;
  nest.loops.erase(std::remove_if(nest.loops.begin(), nest.loops.end(),
                                  [&](const IndexVar& var) {
                                    return std::find(exprVars.begin(), exprVars.end(), var) == exprVars.end();
                                  }),
                   nest.loops.end());
  std::vector<StorageEdge> storageEdges;
  for (const auto& access : ir::accessesOf(term.body)) {
    if (!hasSparseLevel(access.tensor())) continue;
    auto chain = varsInStorageOrder(access);
    for (size_t l = 0; l + 1 < chain.size(); ++l) storageEdges.push_back({chain[l], chain[l + 1], access.tensor().name()});
  }
  // The other commands: a precompute of a part of the statement that reads
  // W (another workspace tensor's too), and sparse_workspace (the output's
  // workspace), go to that statement; the rest schedule the loops that
  // fill W, a precompute among them of a part of expr.
  std::vector<ScheduleCommand> others, consumerCommands;
  std::vector<size_t> originalIndex, consumerIndex;
  for (size_t c = 0; c < request.commands.size(); ++c) {
    if (c == commandIndex) continue;
    ScheduleCommand other = request.commands[c];
    bool forConsumer = std::holds_alternative<SparseWorkspaceCommand>(other.kind);
    if (auto* dense = std::get_if<PrecomputeCommand>(&other.kind)) {
      IndexExpr part = renamed.empty() ? dense->expr : ir::replace(dense->expr, renamed);
      if (isPartOf(part, term.body)) {
        dense->expr = part;
        if (auto var = renamed.find(dense->var); var != renamed.end()) {
          if (dense->workspaceVar == dense->var) dense->workspaceVar = var->second;
          dense->var = var->second;
        }
      } else {
        forConsumer = isPartOf(dense->expr, consumerRhs);
      }
    }
    if (const auto* sparse = std::get_if<SparsePrecomputeCommand>(&other.kind)) {
      if (!isPartOf(sparse->expr, consumerRhs))
        throw ScheduleError(c, other.text + ": " + ir::toString(sparse->expr) + " is not a part of " +
                                   ir::toString(consumerRhs) + ", the statement that reads workspace " +
                                   workspace.name() + " (by " + commandReference(command) + "); a second workspace "
                                   "tensor filled inside the loops that fill " + workspace.name() + " would need its "
                                   "insertions nested in " + workspace.name() + "'s, which the ISM lowering does not "
                                   "do yet (precompute a part of the rest, or " + workspace.name() + "'s whole "
                                   "expression with a dense precompute inside it)");
      forConsumer = true;
    }
    if (forConsumer)
      consumerCommands.push_back(other), consumerIndex.push_back(c);
    else
      others.push_back(other), originalIndex.push_back(c);
  }
  for (const auto& [in, out] : renamed)
    nest.absentBecause[in] = in.name() + " is renamed " + out.name() + " where workspace " + workspace.name() +
                             " is filled, by " + commandReference(command) + ", and the other commands schedule "
                             "the loops that fill it";
  ir::IndexStmt producerAssignment = ir::AssignmentNode::make(workspaceAccess, term.body, true);
  try {
    applySchedule(nest, others, *producerAssignment.as<ir::AssignmentNode>(), storageEdges);
  } catch (const ScheduleError& error) {
    throw ScheduleError(originalIndex.at(error.command()), error.what());
  }
  // A dense precompute's where stands among the loops that insert into W.
  ir::IndexStmt producer;
  try {
    producer = nest.precomputes.empty()
                 ? nestLoops(nest.loops, producerAssignment, nest.attributes)
                 : placePrecomputesInSparseFill(nest, nest.loops, workspaceAccess, term.body, workspace, {});
  } catch (const ScheduleError& error) {
    throw ScheduleError(originalIndex.at(error.command()), error.what());
  }
  if (!nest.relations.empty()) producer = ir::suchThat(producer, nest.relations);

  // The consumer: the statement reading W, concretized as any other.
  ir::IndexStmt consumerStatement = ir::AssignmentNode::make(lhs, consumerRhs, assignment.accumulate);
  ScheduleRequest consumerRequest;
  consumerRequest.keptInOrder = request.keptInOrder;
  consumerRequest.keptInOrder.push_back(workspace.name());
  consumerRequest.takenNames = nest.takenNames;  // with the producer's copies and workspaces
  consumerRequest.cudaTarget = request.cudaTarget;
  consumerRequest.commands = consumerCommands;
  ConcretizedStatement consumer;
  try {
    consumer = concretizeForLowering(consumerStatement, consumerRequest);
  } catch (const LoweringError& error) {
    if (!error.command() || *error.command() >= consumerIndex.size()) throw;
    throw ScheduleError(consumerIndex[*error.command()], error.what());
  }
  for (const auto& [name, copy] : consumer.convertedInputs)
    if (name == workspace.name())
      fail("the statement would read workspace " + workspace.name() + " in another order (" + copy.name() + ") than its output order " +
           copy.format().toString() + "; declare " + workspace.name() + " with an order (...) its readers share");

  std::string why;
  SparseWorkspaceOptions options =
    chosenWorkspaceOptions(workspace, precompute.options, precompute.policyGiven, why);
  std::vector<IndexVar> outputOrder;
  for (int level = 0; level < workspace.order(); ++level)
    outputOrder.push_back(precompute.outputVars[workspace.format().modeOfLevel(level)]);
  decisions.push_back(command.text + ": " + ir::toString(term.body) + " goes into sparse workspace " +
                      workspace.name() + " of order " + std::to_string(workspace.order()) + " (policy " + why +
                      workspaceOptionFlags(options) + "), inserted by loops over " + joinNames(nest.loops) +
                      (summed.empty() ? "" : " (summing " + joinNames(summed) + ")") +
                      ", sorted in its output order " + joinNames(outputOrder) + "; the statement reads " +
                      ir::toString(marker) + ": " + ir::toString(consumerStatement));
  for (const auto& decision : nest.decisions) decisions.push_back("producer: " + decision);
  for (const auto& decision : consumer.decisions) decisions.push_back("consumer: " + decision);
  ConcretizedStatement result;
  result.stmt = ir::where(consumer.stmt, producer);
  result.loopOrder = nest.loops;
  result.decisions = decisions;
  result.sparseWorkspaces = consumer.sparseWorkspaces;
  result.sparseWorkspaces[workspace.name()] = options;
  result.convertedInputs = convertedInputs;
  for (const auto& entry : consumer.convertedInputs) {
    bool known = std::any_of(result.convertedInputs.begin(), result.convertedInputs.end(),
                             [&](const auto& other) { return other.second == entry.second; });
    if (!known) result.convertedInputs.push_back(entry);
  }
  return result;
}

}  // namespace tcc::lowering
