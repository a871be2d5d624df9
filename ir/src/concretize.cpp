#include "tcc/ir/concretize.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/ir/index_visitor.h"

namespace tcc::ir {

namespace {

// TACO's einsum rule: each term of a top-level sum or difference is summed
// over its own variables missing from the left-hand side.
IndexExpr makeSumsExplicit(const IndexExpr& expr, const std::vector<IndexVar>& lhsVars) {
  if (const auto* add = expr.as<AddNode>())
    return AddNode::make(makeSumsExplicit(add->a, lhsVars), makeSumsExplicit(add->b, lhsVars));
  if (const auto* sub = expr.as<SubNode>())
    return SubNode::make(makeSumsExplicit(sub->a, lhsVars), makeSumsExplicit(sub->b, lhsVars));
  std::vector<IndexVar> summed;
  for (const auto& var : unsummedVars(expr))
    if (std::find(lhsVars.begin(), lhsVars.end(), var) == lhsVars.end()) summed.push_back(var);
  IndexExpr result = expr;
  for (auto var = summed.rbegin(); var != summed.rend(); ++var) result = ReductionNode::make(*var, result);
  return result;
}

// Builds CIN for one assignment whose rhs may hold sums below the top.
class Concretizer {
 public:
  explicit Concretizer(const IndexStmt& stmt) {
    for (const auto& tensor : tensorsRead(stmt)) tensorNames_.insert(tensor.name());
    for (const auto& tensor : tensorsWritten(stmt)) tensorNames_.insert(tensor.name());
    for (const auto& var : indexVarsOf(stmt)) varNames_.insert(var.name());
  }

  // Loops over `loopVars` around `lhs (+)= rhs`; sums at the top of rhs
  // become inner loops and `+=`, deeper ones become where-producers.
  // `enclosing` holds variables that loops outside this statement bind; a
  // sum over one of them is renamed so no loop variable is bound twice.
  IndexStmt build(const Access& lhs, IndexExpr rhs, bool accumulate, std::vector<IndexVar> loopVars,
                  const std::vector<IndexVar>& enclosing) {
    while (const auto* reduction = rhs.as<ReductionNode>()) {
      IndexVar var = reduction->var;
      IndexExpr body = reduction->body;
      // Its loop would have no access to take a range from.
      if (!contains(unsummedVars(body), var))
        throw std::invalid_argument("concretize: sum(" + var.name() + ", " + toString(body) +
                                    ") sums over " + var.name() + ", which its body does not use");
      if (contains(loopVars, var) || contains(enclosing, var)) {
        IndexVar fresh(freshVarName(var.name()));
        body = replace(body, std::unordered_map<IndexVar, IndexVar>{{var, fresh}});
        var = fresh;
      }
      loopVars.push_back(var);
      rhs = body;
      accumulate = true;
    }
    std::vector<IndexVar> inScope = enclosing;
    inScope.insert(inScope.end(), loopVars.begin(), loopVars.end());
    std::vector<IndexStmt> producers;
    rhs = hoistNestedSums(rhs, producers, inScope);
    IndexStmt stmt = AssignmentNode::make(lhs, rhs, accumulate);
    for (const auto& producer : producers) stmt = WhereNode::make(stmt, producer);
    for (auto var = loopVars.rbegin(); var != loopVars.rend(); ++var) stmt = ForallNode::make(*var, stmt);
    return stmt;
  }

 private:
  // Replaces each outermost sum in expr by a fresh scalar temporary and
  // appends the statement that computes it.
  IndexExpr hoistNestedSums(const IndexExpr& expr, std::vector<IndexStmt>& producers,
                            const std::vector<IndexVar>& inScope) {
    if (const auto* reduction = expr.as<ReductionNode>()) {
      TensorVar temporary(freshTensorName("t" + reduction->var.name()), {}, Format(), expr.type(),
                          TensorProvenance::sumTemporary());
      producers.push_back(build(temporary({}), expr, /*accumulate=*/true, {}, inScope));
      return temporary({});
    }
    if (const auto* neg = expr.as<NegNode>()) {
      IndexExpr operand = hoistNestedSums(neg->operand, producers, inScope);
      return operand.sameAs(neg->operand) ? expr : NegNode::make(operand);
    }
    if (const auto* node = expr.as<AddNode>()) return rebuild(node, expr, producers, inScope);
    if (const auto* node = expr.as<SubNode>()) return rebuild(node, expr, producers, inScope);
    if (const auto* node = expr.as<MulNode>()) return rebuild(node, expr, producers, inScope);
    if (const auto* node = expr.as<DivNode>()) return rebuild(node, expr, producers, inScope);
    if (const auto* call = expr.as<CallNode>()) {
      std::vector<CallArgument> args;
      bool changed = false;
      for (const auto& arg : call->args) {
        if (const auto* operand = std::get_if<IndexExpr>(&arg)) {
          IndexExpr hoisted = hoistNestedSums(*operand, producers, inScope);
          changed = changed || !hoisted.sameAs(*operand);
          args.push_back(hoisted);
        } else {
          args.push_back(arg);
        }
      }
      return changed ? CallNode::make(call->name, std::move(args)) : expr;
    }
    return expr;
  }

  template <typename Node>
  IndexExpr rebuild(const Node* node, const IndexExpr& self, std::vector<IndexStmt>& producers,
                    const std::vector<IndexVar>& inScope) {
    IndexExpr a = hoistNestedSums(node->a, producers, inScope);
    IndexExpr b = hoistNestedSums(node->b, producers, inScope);
    return a.sameAs(node->a) && b.sameAs(node->b) ? self : Node::make(a, b);
  }

  static bool contains(const std::vector<IndexVar>& vars, const IndexVar& var) {
    return std::find(vars.begin(), vars.end(), var) != vars.end();
  }

  static std::string freshName(const std::string& base, std::set<std::string>& used) {
    std::string name = base;
    for (int suffix = 1; used.count(name); ++suffix) name = base + std::to_string(suffix);
    used.insert(name);
    return name;
  }
  std::string freshTensorName(const std::string& base) { return freshName(base, tensorNames_); }
  std::string freshVarName(const std::string& base) { return freshName(base, varNames_); }

  std::set<std::string> tensorNames_;
  std::set<std::string> varNames_;
};

}  // namespace

IndexStmt makeReductionNotation(const IndexStmt& assignment) {
  const auto* node = assignment.as<AssignmentNode>();
  if (!node) throw std::invalid_argument("makeReductionNotation: expected an assignment, got " + toString(assignment));
  IndexExpr rhs = makeSumsExplicit(node->rhs, node->lhs.indices());
  if (rhs.sameAs(node->rhs)) return assignment;
  return AssignmentNode::make(node->lhs, rhs, node->accumulate);
}

namespace {
std::string joinedNames(const std::vector<IndexVar>& vars) {
  std::string text = "(";
  for (size_t v = 0; v < vars.size(); ++v) text += (v ? "," : "") + vars[v].name();
  return text + ")";
}

bool containsSum(const IndexStmt& stmt) {
  struct Finder : IndexNotationVisitor {
    bool found = false;
    using IndexNotationVisitor::visit;
    void visit(const ReductionNode*) override { found = true; }
  } finder;
  finder.walk(stmt);
  return finder.found;
}
}  // namespace

IndexStmt concretize(const IndexStmt& stmt) {
  if (!stmt.defined()) throw std::invalid_argument("concretize: undefined statement");
  if (!stmt.isa<AssignmentNode>()) {
    if (isConcrete(stmt)) return stmt;
    throw std::invalid_argument("concretize: expected an assignment or concrete index notation, got " +
                                toString(stmt));
  }
  // e.g. a = b * c, nothing to loop over; a sum inside still needs a where.
  if (isConcrete(stmt) && !containsSum(stmt)) return stmt;
  const auto* assignment = stmt.as<AssignmentNode>();
  // Output variables in the order the output's levels store them.
  const Format& format = assignment->lhs.tensor().format();
  std::vector<IndexVar> loopVars;
  for (int level = 0; level < format.order(); ++level) {
    const IndexVar& var = assignment->lhs.indices().at(format.modeOfLevel(level));
    if (std::find(loopVars.begin(), loopVars.end(), var) == loopVars.end()) loopVars.push_back(var);
  }
  return concretize(stmt, loopVars);
}

IndexStmt concretize(const IndexStmt& stmt, const std::vector<IndexVar>& outputLoopOrder) {
  if (!stmt.defined()) throw std::invalid_argument("concretize: undefined statement");
  if (!stmt.isa<AssignmentNode>()) return concretize(stmt);
  if (isConcrete(stmt) && !containsSum(stmt)) return stmt;
  IndexStmt reductionNotation = makeReductionNotation(stmt);
  const auto* node = reductionNotation.as<AssignmentNode>();
  const Access& lhs = node->lhs;
  std::set<IndexVar> outputVars(lhs.indices().begin(), lhs.indices().end());
  std::set<IndexVar> ordered(outputLoopOrder.begin(), outputLoopOrder.end());
  if (ordered != outputVars || ordered.size() != outputLoopOrder.size())
    throw std::invalid_argument("concretize: the loop order " + joinedNames(outputLoopOrder) +
                                " is not a permutation of the output's variables in " + toString(stmt));
  return Concretizer(stmt).build(lhs, node->rhs, node->accumulate, outputLoopOrder, {});
}

}  // namespace tcc::ir
