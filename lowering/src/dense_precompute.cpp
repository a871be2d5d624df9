// Dense-workspace precomputes in a perfect loop nest: buildConcreteNest
// carves the nest's loops into a where-statement per precompute (TACO's
// precompute transformation), nesting each later precompute in the part of
// the statement that holds its expression.
#include <algorithm>

#include "schedule_loops.h"
#include "tcc/lowering/inserted_tensor_names.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"

namespace tcc::lowering {

namespace {

using ir::IndexVar;

bool contains(const std::vector<IndexVar>& vars, const IndexVar& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

bool isSubexpression(const ir::IndexExpr& part, const ir::IndexExpr& whole) {
  ir::IndexExpr marker = ir::LiteralNode::make(0.0);
  return !(ir::replace(whole, {{part, marker}}) == whole);
}

// How an expression depends on `part`: not at all, as a multiple of it
// (c * part, c free of it: a sum over variables only `part` has then moves
// into `part`), or otherwise (part * part, c / part, (part + 2) * c, a
// builtin of part).
enum class Dependence { None, Multiple, Other };

Dependence dependenceOn(const ir::IndexExpr& expr, const ir::IndexExpr& part) {
  if (expr == part) return Dependence::Multiple;
  if (!isSubexpression(part, expr)) return Dependence::None;
  auto both = [&](const ir::IndexExpr& a, const ir::IndexExpr& b) {
    return std::pair{dependenceOn(a, part), dependenceOn(b, part)};
  };
  if (const auto* neg = expr.as<ir::NegNode>()) return dependenceOn(neg->operand, part);
  if (const auto* mul = expr.as<ir::MulNode>()) {
    auto [a, b] = both(mul->a, mul->b);
    if (a == Dependence::None) return b;
    return b == Dependence::None ? a : Dependence::Other;
  }
  if (const auto* div = expr.as<ir::DivNode>()) {
    auto [a, b] = both(div->a, div->b);
    return b == Dependence::None ? a : Dependence::Other;
  }
  const ir::IndexExpr *a = nullptr, *b = nullptr;
  if (const auto* add = expr.as<ir::AddNode>()) a = &add->a, b = &add->b;
  if (const auto* sub = expr.as<ir::SubNode>()) a = &sub->a, b = &sub->b;
  if (a) {
    auto [da, db] = both(*a, *b);
    return da == db ? da : Dependence::Other;
  }
  return Dependence::Other;
}

// The first term of `rhs` (its top-level sums and differences are terms,
// each summed over its own variables) that depends on `part` other than as
// a multiple of it, if any.
std::optional<ir::IndexExpr> termNotAMultiple(const ir::IndexExpr& rhs, const ir::IndexExpr& part) {
  const ir::IndexExpr *a = nullptr, *b = nullptr;
  if (const auto* add = rhs.as<ir::AddNode>()) a = &add->a, b = &add->b;
  if (const auto* sub = rhs.as<ir::SubNode>()) a = &sub->a, b = &sub->b;
  if (a) {
    if (auto term = termNotAMultiple(*a, part)) return term;
    return termNotAMultiple(*b, part);
  }
  if (const auto* neg = rhs.as<ir::NegNode>()) return termNotAMultiple(neg->operand, part);
  // An explicit sum(v, ...) of the whole term: its body is summed.
  const auto* sum = rhs.as<ir::ReductionNode>();
  const ir::IndexExpr& term = sum ? sum->body : rhs;
  if (dependenceOn(term, part) == Dependence::Other) return term;
  return std::nullopt;
}

ir::IndexExpr renamed(const ir::IndexExpr& expr, const IndexVar& from, const IndexVar& to) {
  if (from == to) return expr;
  return ir::replace(expr, std::unordered_map<IndexVar, IndexVar>{{from, to}});
}

// Places a nest's precomputes one at a time, outermost first: the first
// splits the loops into the loops around its where, its producer's and its
// consumer's; each later one goes on into the part that holds its
// expression (TACO's nested precomputes: a row workspace filled by loops
// that themselves precompute a product into another).
class PrecomputePlacer {
 public:
  PrecomputePlacer(LoopNest& nest, const ir::TensorVar& output) : nest_(nest), output_(output) {}

  [[noreturn]] void refuse(const NestPrecompute& precompute, const std::string& reason) const {
    if (precompute.commandIndex) throw ScheduleError(*precompute.commandIndex, precompute.text + ": " + reason);
    throw LoweringError("precompute(" + ir::toString(precompute.command.expr) + ", ...): " + reason);
  }

  std::string notAPart(const ir::IndexExpr& rhs) const {
    return "not a subexpression of " + shown(rhs) +
           " (products group from the left: parenthesize to precompute a different part)";
  }

  // Foralls over `loops` around `lhs = rhs`, with a where for each of
  // `pending`, inside loops that fix `enclosing`. `sumsAround`: the loops
  // around `loops`, inside the where (or kernel) that starts lhs's tensor
  // afresh, sum into it. `among`: where the loops stand, for explain
  // (", among the loops that fill w_A").
  ir::IndexStmt place(const std::vector<IndexVar>& loops, const ir::Access& lhs, const ir::IndexExpr& rhs,
                      bool accumulate, bool sumsAround, const std::vector<IndexVar>& enclosing,
                      std::vector<NestPrecompute> pending, const std::string& among = "") {
    if (pending.empty()) return nestLoops(loops, ir::AssignmentNode::make(lhs, rhs, accumulate), nest_.attributes);
    const NestPrecompute placed = pending.front();
    pending.erase(pending.begin());
    const PrecomputeCommand& precompute = placed.command;
    auto refuseThis = [&](const std::string& reason) { refuse(placed, reason); };
    if (!isSubexpression(precompute.expr, rhs)) refuseThis(notAPart(rhs));
    ir::Dimension dimension;
    bool sized = false;
    for (const auto& access : ir::accessesOf(rhs)) {
      const auto& indices = access.indices();
      for (size_t mode = 0; mode < indices.size() && !sized; ++mode)
        if (indices[mode] == precompute.var) {
          dimension = access.tensor().dimension(static_cast<int>(mode));
          sized = true;
        }
    }
    ir::TensorVar workspace(placed.workspaceName, {dimension}, ir::Format::denseOfOrder(1), output_.datatype(),
                            ir::TensorProvenance::denseWorkspace(output_, placed.text));
    ir::IndexExpr consumerRhs = ir::replace(rhs, {{precompute.expr, ir::IndexExpr(workspace(precompute.var))}});

    std::vector<IndexVar> lhsVars = lhs.indices();
    std::vector<IndexVar> exprVars = ir::indexVarsOf(precompute.expr);
    std::vector<IndexVar> consumerVars = lhsVars;
    for (const auto& var : enclosing)
      if (!contains(consumerVars, var)) consumerVars.push_back(var);
    for (const auto& var : ir::indexVarsOf(consumerRhs))
      if (!contains(consumerVars, var)) consumerVars.push_back(var);
    std::vector<IndexVar> producerOnly;
    for (const auto& var : exprVars)
      if (!contains(consumerVars, var)) producerOnly.push_back(var);
    // The workspace sums the expression over the variables only it has;
    // the statement sums each term over them: the same only where the term
    // is a multiple of the expression.
    if (!producerOnly.empty())
      if (auto term = termNotAMultiple(rhs, precompute.expr))
        refuseThis("the workspace would sum " + shown(precompute.expr) + " over " + joinNames(producerOnly) +
                   ", but the statement sums the term " + shown(*term) + ", which is not " +
                   shown(precompute.expr) + " times a factor without it, so the two sums differ (precompute the "
                   "whole term, or a part with no variable of its own)");

    // Placed among an earlier workspace's loops, the index may be fixed by
    // a loop around them: the workspace would hold one entry, filled and
    // read at each iteration of loops that are not its own. The lowering
    // computes such a where right (workspace_at_fixed_coordinate_test.cpp),
    // but it is a temporary of one value, not the workspace over the index
    // that the command asks for, and a workspace index of its own
    // (precompute(..., i, iw)) would have no loop at all: refused.
    if (std::none_of(loops.begin(), loops.end(), [&](const IndexVar& loop) {
          return derivesFromAny(loop, {precompute.var});
        }))
      refuseThis("its workspace is indexed by " + precompute.var.name() + ", but no loop over " +
                 precompute.var.name() + " runs where it would be filled" + among +
                 (loops.empty() ? std::string(" (no loops there)") : " (the loops there: " + joinNames(loops) + ")") +
                 "; the loop over " + precompute.var.name() + " runs around them (reorder it inside, or "
                 "precompute over another index)");
    std::vector<IndexVar> splitters = producerOnly;
    splitters.push_back(precompute.var);
    size_t first = 0;
    while (first < loops.size() && !derivesFromAny(loops[first], splitters)) ++first;
    // A variable both parts use (other than the workspace's index) is fixed
    // for the workspace's whole life: its loops must enclose the where.
    std::vector<IndexVar> shared;
    for (const auto& var : exprVars)
      if (contains(consumerVars, var) && !(var == precompute.var)) shared.push_back(var);
    for (size_t p = first; p < loops.size(); ++p) {
      if (!derivesFromAny(loops[p], shared)) continue;
      refuseThis("the precomputed expression depends on " + loops[p].name() + ", which the rest of " + shown(rhs) +
                 " also uses, so the workspace must be filled inside the loop over " + loops[p].name() +
                 "; but that loop runs inside the loop over " + loops[first].name() +
                 ", where the workspace is filled (reorder " + loops[p].name() + " outside " + loops[first].name() +
                 ", or precompute a different part)");
    }
    std::vector<IndexVar> outer(loops.begin(), loops.begin() + static_cast<long>(first));
    std::vector<IndexVar> consumerLoops, producerLoops;
    for (size_t p = first; p < loops.size(); ++p) {
      const IndexVar& loop = loops[p];
      if (derivesOnlyFrom(loop, consumerVars)) consumerLoops.push_back(loop);
      if (derivesOnlyFrom(loop, exprVars)) {
        producerLoops.push_back(loop == precompute.var ? precompute.workspaceVar : loop);
      } else if (derivesFromAny(loop, producerOnly)) {
        refuseThis("loop " + loop.name() + " mixes the precomputed expression's variables with others; it cannot "
                   "be placed in either the workspace's loops or the result's");
      }
    }
    bool outerSums = sumsAround;
    for (const auto& loop : outer)
      if (!derivesOnlyFrom(loop, lhsVars)) outerSums = true;
    bool consumerSums = outerSums;
    for (const auto& loop : consumerLoops)
      if (!derivesOnlyFrom(loop, lhsVars)) consumerSums = true;

    ir::IndexExpr producerExpr = renamed(precompute.expr, precompute.var, precompute.workspaceVar);
    nest_.decisions.push_back("precompute " + shown(precompute.expr) + " into dense workspace " + workspace.name() +
                              "(" + precompute.workspaceVar.name() + ") inside the loops over " +
                              (outer.empty() ? std::string("nothing") : joinNames(outer)) + among);

    // The later precomputes: inside this one's expression (its workspace's
    // index renamed as where the workspace is filled), or in the rest.
    std::vector<NestPrecompute> inProducer, inConsumer;
    for (NestPrecompute later : pending) {
      ir::IndexExpr producerPart = renamed(later.command.expr, precompute.var, precompute.workspaceVar);
      ir::IndexExpr consumerPart =
          ir::replace(later.command.expr, {{precompute.expr, ir::IndexExpr(workspace(precompute.var))}});
      bool inItsExpression = isSubexpression(producerPart, producerExpr);
      bool inTheRest = isSubexpression(consumerPart, consumerRhs);
      if (inItsExpression && inTheRest)
        refuse(later, shown(later.command.expr) + " stands both in " + shown(precompute.expr) + ", which `" +
                          placed.text + "` computes into workspace " + workspace.name() + ", and in the rest of " +
                          shown(rhs) + "; one workspace cannot serve both (precompute the two parts apart)");
      if (!inItsExpression && !inTheRest) refuse(later, notAPart(rhs));
      if (inItsExpression) {
        later.command.expr = producerPart;
        if (later.command.var == precompute.var) later.command.var = precompute.workspaceVar;
        if (later.command.workspaceVar == precompute.var) later.command.workspaceVar = precompute.workspaceVar;
        inProducer.push_back(later);
      } else {
        later.command.expr = consumerPart;
        inConsumer.push_back(later);
      }
    }
    std::vector<IndexVar> inside = enclosing;
    for (const auto& loop : outer) {
      if (!contains(inside, loop)) inside.push_back(loop);
      for (const auto& origin : nest_.originsOf(loop))
        if (!contains(inside, origin)) inside.push_back(origin);
    }
    ir::IndexStmt producer = place(producerLoops, workspace(precompute.workspaceVar), producerExpr,
                                   !producerOnly.empty(), /*sumsAround=*/false, inside, inProducer,
                                   ", among the loops that fill " + workspace.name());
    ir::IndexStmt consumer = place(consumerLoops, lhs, consumerRhs, consumerSums && accumulate, outerSums, inside,
                                   inConsumer, ", among the loops that read " + workspace.name());
    return nestLoops(outer, ir::where(consumer, producer), nest_.attributes);
  }

 private:
  std::string shown(const ir::IndexExpr& expr) const { return ir::toString(ir::replace(expr, nest_.readAs)); }

  bool derivesFromAny(const IndexVar& loop, const std::vector<IndexVar>& vars) const {
    for (const auto& origin : nest_.originsOf(loop))
      if (contains(vars, origin)) return true;
    return false;
  }
  bool derivesOnlyFrom(const IndexVar& loop, const std::vector<IndexVar>& vars) const {
    for (const auto& origin : nest_.originsOf(loop))
      if (!contains(vars, origin)) return false;
    return true;
  }

  LoopNest& nest_;
  const ir::TensorVar& output_;
};

}  // namespace

std::string denseWorkspaceName(const ir::TensorVar& output, std::set<std::string>& taken) {
  return takeFreshName("w_" + output.name(), taken);
}

std::optional<std::string> clashWithEarlierPrecomputes(
  const std::vector<NestPrecompute>& earlier, const PrecomputeCommand& precompute,
  const std::unordered_map<ir::IndexExpr, ir::IndexExpr>& readAs) {
  for (const auto& before : earlier) {
    if (before.command.expr == precompute.expr)
      return ir::toString(ir::replace(precompute.expr, readAs)) + " is precomputed already, by `" + before.text +
             "`; each precompute takes a different part";
    if (before.command.workspaceVar == precompute.workspaceVar && !(before.command.var == precompute.var))
      return precompute.workspaceVar.name() + " already names the index of the workspace of `" + before.text +
             "`, over " + before.command.var.name() + "; give this one's another name";
  }
  return std::nullopt;
}

ir::IndexStmt buildConcreteNest(LoopNest& nest, const ir::Access& lhs, const ir::IndexExpr& rhs, bool accumulate,
                                const std::vector<IndexVar>& enclosing, bool addsToOtherNests) {
  PrecomputePlacer placer(nest, lhs.tensor());
  for (const auto& precompute : nest.precomputes)
    if (!isSubexpression(precompute.command.expr, rhs)) placer.refuse(precompute, placer.notAPart(rhs));
  ir::IndexStmt body = placer.place(nest.loops, lhs, rhs, accumulate || addsToOtherNests,
                                    /*sumsAround=*/addsToOtherNests, enclosing, nest.precomputes);
  if (!nest.relations.empty()) body = ir::suchThat(body, nest.relations);
  return body;
}

ir::IndexStmt placePrecomputesInSparseFill(LoopNest& nest, const std::vector<IndexVar>& loops,
                                           const ir::Access& workspace, const ir::IndexExpr& rhs,
                                           const ir::TensorVar& output, const std::vector<IndexVar>& enclosing) {
  PrecomputePlacer placer(nest, output);
  for (const auto& precompute : nest.precomputes)
    if (!isSubexpression(precompute.command.expr, rhs)) placer.refuse(precompute, placer.notAPart(rhs));
  // (Every store into a sparse workspace is an insertion, which its merge
  // adds to the others at that coordinate: the loops around sum into it.)
  return placer.place(loops, workspace, rhs, /*accumulate=*/true, /*sumsAround=*/true, enclosing, nest.precomputes,
                      ", among the loops that fill sparse workspace " + workspace.tensor().name());
}

}  // namespace tcc::lowering
