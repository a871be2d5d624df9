#include "tcc/ir/index_rewriter.h"

#include <stdexcept>

namespace tcc::ir {

IndexExpr IndexNotationRewriter::rewrite(const IndexExpr& expr) {
  if (!expr.defined()) return expr;
  switch (expr.kind()) {
    case IndexExprKind::Literal: return visit(expr.as<LiteralNode>(), expr);
    case IndexExprKind::Access: return visit(expr.as<AccessNode>(), expr);
    case IndexExprKind::Neg: return visit(expr.as<NegNode>(), expr);
    case IndexExprKind::Add: return visit(expr.as<AddNode>(), expr);
    case IndexExprKind::Sub: return visit(expr.as<SubNode>(), expr);
    case IndexExprKind::Mul: return visit(expr.as<MulNode>(), expr);
    case IndexExprKind::Div: return visit(expr.as<DivNode>(), expr);
    case IndexExprKind::Reduction: return visit(expr.as<ReductionNode>(), expr);
    case IndexExprKind::Call: return visit(expr.as<CallNode>(), expr);
  }
  return expr;
}

IndexStmt IndexNotationRewriter::rewrite(const IndexStmt& stmt) {
  if (!stmt.defined()) return stmt;
  switch (stmt.kind()) {
    case IndexStmtKind::Assignment: return visit(stmt.as<AssignmentNode>(), stmt);
    case IndexStmtKind::Forall: return visit(stmt.as<ForallNode>(), stmt);
    case IndexStmtKind::Where: return visit(stmt.as<WhereNode>(), stmt);
    case IndexStmtKind::Sequence: return visit(stmt.as<SequenceNode>(), stmt);
    case IndexStmtKind::Multi: return visit(stmt.as<MultiNode>(), stmt);
    case IndexStmtKind::SuchThat: return visit(stmt.as<SuchThatNode>(), stmt);
  }
  return stmt;
}

IndexExpr IndexNotationRewriter::visit(const LiteralNode*, const IndexExpr& self) { return self; }
IndexExpr IndexNotationRewriter::visit(const AccessNode*, const IndexExpr& self) { return self; }

IndexExpr IndexNotationRewriter::visit(const NegNode* node, const IndexExpr& self) {
  IndexExpr operand = rewrite(node->operand);
  return operand.sameAs(node->operand) ? self : NegNode::make(operand);
}

namespace {
template <typename Node>
IndexExpr rebuildBinary(const Node* node, const IndexExpr& self,
                        IndexExpr a, IndexExpr b) {
  if (a.sameAs(node->a) && b.sameAs(node->b)) return self;
  return Node::make(std::move(a), std::move(b));
}
}  // namespace

IndexExpr IndexNotationRewriter::visit(const AddNode* node, const IndexExpr& self) {
  return rebuildBinary(node, self, rewrite(node->a), rewrite(node->b));
}
IndexExpr IndexNotationRewriter::visit(const SubNode* node, const IndexExpr& self) {
  return rebuildBinary(node, self, rewrite(node->a), rewrite(node->b));
}
IndexExpr IndexNotationRewriter::visit(const MulNode* node, const IndexExpr& self) {
  return rebuildBinary(node, self, rewrite(node->a), rewrite(node->b));
}
IndexExpr IndexNotationRewriter::visit(const DivNode* node, const IndexExpr& self) {
  return rebuildBinary(node, self, rewrite(node->a), rewrite(node->b));
}

IndexExpr IndexNotationRewriter::visit(const ReductionNode* node, const IndexExpr& self) {
  IndexExpr body = rewrite(node->body);
  return body.sameAs(node->body) ? self : ReductionNode::make(node->var, body);
}

IndexExpr IndexNotationRewriter::visit(const CallNode* node, const IndexExpr& self) {
  std::vector<CallArgument> args;
  bool changed = false;
  for (const auto& arg : node->args) {
    if (const auto* expr = std::get_if<IndexExpr>(&arg)) {
      IndexExpr rewritten = rewrite(*expr);
      changed = changed || !rewritten.sameAs(*expr);
      args.push_back(rewritten);
    } else {
      args.push_back(arg);
    }
  }
  return changed ? CallNode::make(node->name, std::move(args)) : self;
}

IndexStmt IndexNotationRewriter::visit(const AssignmentNode* node, const IndexStmt& self) {
  IndexExpr lhs = rewrite(node->lhs);
  IndexExpr rhs = rewrite(node->rhs);
  if (lhs.sameAs(node->lhs) && rhs.sameAs(node->rhs)) return self;
  if (!lhs.isa<AccessNode>())
    throw std::logic_error("rewriter turned the left-hand side of an assignment into a non-access");
  return AssignmentNode::make(Access(lhs), rhs, node->accumulate);
}

IndexStmt IndexNotationRewriter::visit(const ForallNode* node, const IndexStmt& self) {
  IndexStmt body = rewrite(node->body);
  return body.sameAs(node->body) ? self : ForallNode::make(node->indexVar, body, node->attributes);
}

IndexStmt IndexNotationRewriter::visit(const WhereNode* node, const IndexStmt& self) {
  IndexStmt consumer = rewrite(node->consumer);
  IndexStmt producer = rewrite(node->producer);
  if (consumer.sameAs(node->consumer) && producer.sameAs(node->producer)) return self;
  return WhereNode::make(consumer, producer);
}

IndexStmt IndexNotationRewriter::visit(const SequenceNode* node, const IndexStmt& self) {
  IndexStmt definition = rewrite(node->definition);
  IndexStmt mutation = rewrite(node->mutation);
  if (definition.sameAs(node->definition) && mutation.sameAs(node->mutation)) return self;
  return SequenceNode::make(definition, mutation);
}

IndexStmt IndexNotationRewriter::visit(const MultiNode* node, const IndexStmt& self) {
  IndexStmt first = rewrite(node->first);
  IndexStmt second = rewrite(node->second);
  if (first.sameAs(node->first) && second.sameAs(node->second)) return self;
  return MultiNode::make(first, second);
}

IndexStmt IndexNotationRewriter::visit(const SuchThatNode* node, const IndexStmt& self) {
  IndexStmt stmt = rewrite(node->stmt);
  return stmt.sameAs(node->stmt) ? self : SuchThatNode::make(stmt, node->relations);
}

}  // namespace tcc::ir
