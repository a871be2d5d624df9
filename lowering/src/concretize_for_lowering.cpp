#include "tcc/lowering/concretize_for_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tcc/ir/builder.h"
#include "tcc/ir/concretize.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/lower.h"

namespace tcc::lowering {

namespace {

using ir::Access;
using ir::IndexExpr;
using ir::IndexStmt;
using ir::IndexVar;
using ir::TensorVar;

bool hasSparseLevel(const TensorVar& tensor) {
  return tensor.order() > 0 && !tensor.format().isAllDense();
}

// The access's index variables in the order its levels store them.
std::vector<IndexVar> varsInStorageOrder(const Access& access) {
  std::vector<IndexVar> vars;
  const auto& format = access.tensor().format();
  for (int level = 0; level < format.order(); ++level) vars.push_back(access.indices()[format.modeOfLevel(level)]);
  return vars;
}

using Edges = std::set<std::pair<IndexVar, IndexVar>>;

void addChain(Edges& edges, const std::vector<IndexVar>& chain) {
  for (size_t l = 0; l + 1 < chain.size(); ++l)
    if (!(chain[l] == chain[l + 1])) edges.insert({chain[l], chain[l + 1]});
}

// Kahn's algorithm, taking the most preferred available variable each step.
std::optional<std::vector<IndexVar>> topologicalOrder(const std::vector<IndexVar>& preference, const Edges& edges) {
  std::vector<IndexVar> order;
  std::set<IndexVar> placed;
  while (order.size() < preference.size()) {
    bool progress = false;
    for (const auto& candidate : preference) {
      if (placed.count(candidate)) continue;
      bool ready = std::none_of(edges.begin(), edges.end(), [&](const auto& edge) {
        return edge.second == candidate && !placed.count(edge.first);
      });
      if (!ready) continue;
      order.push_back(candidate);
      placed.insert(candidate);
      progress = true;
      break;
    }
    if (!progress) return std::nullopt;
  }
  return order;
}

void appendUnique(std::vector<IndexVar>& list, const std::vector<IndexVar>& vars) {
  for (const auto& var : vars)
    if (std::find(list.begin(), list.end(), var) == list.end()) list.push_back(var);
}

std::string joinNames(const std::vector<IndexVar>& vars) {
  std::string text;
  for (size_t i = 0; i < vars.size(); ++i) text += (i ? ", " : "") + vars[i].name();
  return text;
}

IndexStmt nest(const std::vector<IndexVar>& vars, IndexStmt body, const ScheduleRequest& request) {
  for (auto it = vars.rbegin(); it != vars.rend(); ++it) {
    auto attributes = request.loopAttributes.find(*it);
    body = ir::forall(*it, body, attributes == request.loopAttributes.end() ? ir::ForallAttributes{} : attributes->second);
  }
  return body;
}

// The default order with the requested variables permuted among the
// positions they occupy.
std::vector<IndexVar> applyReorder(const std::vector<IndexVar>& order, const std::vector<IndexVar>& reorder) {
  std::vector<size_t> slots;
  for (size_t p = 0; p < order.size(); ++p)
    if (std::find(reorder.begin(), reorder.end(), order[p]) != reorder.end()) slots.push_back(p);
  std::vector<IndexVar> result = order;
  size_t next = 0;
  for (const auto& var : reorder)
    if (std::find(order.begin(), order.end(), var) != order.end()) result[slots[next++]] = var;
  return result;
}

}  // namespace

ConcretizedStatement concretizeForLowering(const IndexStmt& statement, const ScheduleRequest& request) {
  if (ir::isConcrete(statement) && !ir::isEinsum(statement)) return {statement, {}, {"already concrete"}};
  const auto* assignment = statement.as<ir::AssignmentNode>();
  if (!assignment) throw LoweringError("expected one tensor assignment to compile");

  // Peel top-level sums; a sum nested deeper is left to ir::concretize,
  // which computes it into a scalar temporary.
  IndexStmt reduced = ir::makeReductionNotation(statement);
  IndexExpr rhs = reduced.as<ir::AssignmentNode>()->rhs;
  std::vector<IndexVar> reductionVars;
  while (const auto* sum = rhs.as<ir::ReductionNode>()) {
    reductionVars.push_back(sum->var);
    rhs = sum->body;
  }
  bool nestedSum = false;
  {
    struct Finder {
      static bool hasReduction(const IndexExpr& e) {
        switch (e.kind()) {
          case ir::IndexExprKind::Reduction: return true;
          case ir::IndexExprKind::Neg: return hasReduction(e.as<ir::NegNode>()->operand);
          case ir::IndexExprKind::Add: return hasReduction(e.as<ir::AddNode>()->a) || hasReduction(e.as<ir::AddNode>()->b);
          case ir::IndexExprKind::Sub: return hasReduction(e.as<ir::SubNode>()->a) || hasReduction(e.as<ir::SubNode>()->b);
          case ir::IndexExprKind::Mul: return hasReduction(e.as<ir::MulNode>()->a) || hasReduction(e.as<ir::MulNode>()->b);
          case ir::IndexExprKind::Div: return hasReduction(e.as<ir::DivNode>()->a) || hasReduction(e.as<ir::DivNode>()->b);
          default: return false;
        }
      }
    };
    nestedSum = Finder::hasReduction(rhs);
  }
  if (nestedSum) {
    if (!request.reorder.empty() || !request.loopAttributes.empty())
      throw LoweringError("schedules of statements with nested sums are not supported yet");
    IndexStmt concrete = ir::concretize(statement);
    return {concrete, {}, {"a sum nested inside the expression is computed into a scalar temporary (where)"}};
  }

  const Access& lhs = assignment->lhs;
  const TensorVar& output = lhs.tensor();
  std::vector<std::string> decisions;

  // Preference: sparse output order, sparse inputs' orders, then the rest.
  std::vector<IndexVar> preference;
  Edges inputEdges, outputEdges;
  std::map<std::pair<IndexVar, IndexVar>, std::string> edgeOwners;
  if (hasSparseLevel(output)) {
    appendUnique(preference, varsInStorageOrder(lhs));
    addChain(outputEdges, varsInStorageOrder(lhs));
  }
  for (const auto& access : ir::accessesOf(rhs)) {
    if (!hasSparseLevel(access.tensor())) continue;
    appendUnique(preference, varsInStorageOrder(access));
    addChain(inputEdges, varsInStorageOrder(access));
    auto chain = varsInStorageOrder(access);
    for (size_t l = 0; l + 1 < chain.size(); ++l) edgeOwners.emplace(std::make_pair(chain[l], chain[l + 1]), access.tensor().name());
  }
  if (output.order() > 0) appendUnique(preference, varsInStorageOrder(lhs));
  appendUnique(preference, reductionVars);
  appendUnique(preference, ir::indexVarsOf(rhs));

  Edges allEdges = inputEdges;
  allEdges.insert(outputEdges.begin(), outputEdges.end());
  auto order = topologicalOrder(preference, allEdges);
  if (!order) {
    if (topologicalOrder(preference, inputEdges)) {
      throw LoweringError("the result scatters out of " + output.name() + "'s storage order: no loop order visits " +
                          output.name() + "'s levels (" + joinNames(varsInStorageOrder(lhs)) +
                          ") and every sparse input's levels in order; this needs a sparse workspace, which "
                          "tcc does not support yet (store " + output.name() +
                          " in an order the inputs share, or convert an input)");
    }
    throw LoweringError("the sparse inputs disagree on the loop order: no order of (" + joinNames(preference) +
                        ") visits every sparse input's levels in storage order; convert one input to a format "
                        "whose mode order matches the others");
  }
  std::vector<ir::ProvenanceRelation> relations;
  for (const auto& split : request.splits) {
    auto parent = std::find(order->begin(), order->end(), split.parent);
    if (parent == order->end()) continue;
    *parent = split.inner;
    order->insert(parent, split.outer);
    relations.push_back(split);
    decisions.push_back("split " + split.parent.name() + " into " + split.outer.name() + " * " +
                        std::to_string(split.factor) + " + " + split.inner.name());
  }
  if (!request.reorder.empty()) {
    order = applyReorder(*order, request.reorder);
    // A split variable stands where its outer loop is.
    auto positionOf = [&](const IndexVar& var) {
      for (const auto& split : request.splits)
        if (split.parent == var) return std::find(order->begin(), order->end(), split.outer);
      return std::find(order->begin(), order->end(), var);
    };
    for (const auto& edge : inputEdges) {
      auto first = positionOf(edge.first);
      auto second = positionOf(edge.second);
      if (second < first)
        throw LoweringError("reorder(" + joinNames(request.reorder) + ") visits " + edge.second.name() + " before " +
                            edge.first.name() + ", but " + edgeOwners.at(edge) + " stores " + edge.first.name() +
                            " above " + edge.second.name() + " and sparse levels are iterated in storage order");
    }
    decisions.push_back("loop order: " + joinNames(*order) + " (as reordered by the schedule)");
  } else {
    decisions.push_back("loop order: " + joinNames(*order) +
                        " (sparse tensors are iterated in storage order; the output's order is preferred)");
  }

  IndexStmt body = ir::AssignmentNode::make(lhs, rhs, !reductionVars.empty());

  // A summed variable between a sparse output's variables: the trailing
  // output coordinates would arrive out of order.
  if (hasSparseLevel(output)) {
    auto outputVars = varsInStorageOrder(lhs);
    size_t firstReduction = order->size();
    auto parentOf = [&](const IndexVar& var) {
      for (const auto& split : request.splits)
        if (split.outer == var || split.inner == var) return split.parent;
      return var;
    };
    for (size_t p = 0; p < order->size(); ++p) {
      bool isOutputVar = std::find(outputVars.begin(), outputVars.end(), parentOf((*order)[p])) != outputVars.end();
      if (!isOutputVar) { firstReduction = p; break; }
    }
    std::vector<IndexVar> trailing;
    for (size_t p = firstReduction; p < order->size(); ++p)
      if (std::find(outputVars.begin(), outputVars.end(), parentOf((*order)[p])) != outputVars.end())
        trailing.push_back((*order)[p]);
    if (!trailing.empty()) {
      if (trailing.size() != 1 || !(trailing.back() == outputVars.back()))
        throw LoweringError("results for " + output.name() + " arrive out of storage order across " +
                            std::to_string(trailing.size()) + " levels; this needs a sparse workspace, which tcc "
                            "does not support yet");
      const IndexVar& j = trailing.back();
      int mode = output.format().modeOfLevel(output.order() - 1);
      TensorVar workspace("w_" + output.name(), {output.dimension(mode)}, ir::Format::denseOfOrder(1),
                          output.datatype());
      std::vector<IndexVar> outer(order->begin(), order->begin() + firstReduction);
      std::vector<IndexVar> producerVars(order->begin() + firstReduction, order->end());
      IndexStmt producer = nest(producerVars, ir::AssignmentNode::make(workspace(j), rhs, true), request);
      IndexStmt consumer = nest({j}, ir::AssignmentNode::make(lhs, IndexExpr(workspace(j)), false), request);
      decisions.push_back("summing over " + (*order)[firstReduction].name() + " between " + output.name() +
                          "'s coordinates would append " + j.name() + " out of order: inserted dense workspace " +
                          workspace.name() + "(" + j.name() + ") with a list of touched coordinates (Gustavson)");
      if (!relations.empty()) throw LoweringError("split of a statement that needs a workspace is not supported yet");
      return {nest(outer, ir::where(consumer, producer), request), *order, decisions};
    }
  }
  IndexStmt concrete = nest(*order, body, request);
  if (!relations.empty()) concrete = ir::suchThat(concrete, relations);
  return {concrete, *order, decisions};
}

}  // namespace tcc::lowering
