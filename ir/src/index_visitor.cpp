#include "tcc/ir/index_visitor.h"

namespace tcc::ir {

void IndexNotationVisitor::walk(const IndexExpr& expr) {
  if (!expr.defined()) return;
  switch (expr.kind()) {
    case IndexExprKind::Literal: return visit(expr.as<LiteralNode>());
    case IndexExprKind::Access: return visit(expr.as<AccessNode>());
    case IndexExprKind::Neg: return visit(expr.as<NegNode>());
    case IndexExprKind::Add: return visit(expr.as<AddNode>());
    case IndexExprKind::Sub: return visit(expr.as<SubNode>());
    case IndexExprKind::Mul: return visit(expr.as<MulNode>());
    case IndexExprKind::Div: return visit(expr.as<DivNode>());
    case IndexExprKind::Reduction: return visit(expr.as<ReductionNode>());
    case IndexExprKind::Call: return visit(expr.as<CallNode>());
  }
}

void IndexNotationVisitor::walk(const IndexStmt& stmt) {
  if (!stmt.defined()) return;
  switch (stmt.kind()) {
    case IndexStmtKind::Assignment: return visit(stmt.as<AssignmentNode>());
    case IndexStmtKind::Forall: return visit(stmt.as<ForallNode>());
    case IndexStmtKind::Where: return visit(stmt.as<WhereNode>());
    case IndexStmtKind::Sequence: return visit(stmt.as<SequenceNode>());
    case IndexStmtKind::Multi: return visit(stmt.as<MultiNode>());
    case IndexStmtKind::SuchThat: return visit(stmt.as<SuchThatNode>());
  }
}

void IndexNotationVisitor::visit(const LiteralNode*) {}
void IndexNotationVisitor::visit(const AccessNode*) {}
void IndexNotationVisitor::visit(const NegNode* node) { walk(node->operand); }
void IndexNotationVisitor::visit(const AddNode* node) { walk(node->a); walk(node->b); }
void IndexNotationVisitor::visit(const SubNode* node) { walk(node->a); walk(node->b); }
void IndexNotationVisitor::visit(const MulNode* node) { walk(node->a); walk(node->b); }
void IndexNotationVisitor::visit(const DivNode* node) { walk(node->a); walk(node->b); }
void IndexNotationVisitor::visit(const ReductionNode* node) { walk(node->body); }
void IndexNotationVisitor::visit(const CallNode* node) {
  for (const auto& arg : node->args)
    if (const auto* expr = std::get_if<IndexExpr>(&arg)) walk(*expr);
}

void IndexNotationVisitor::visit(const AssignmentNode* node) { walk(node->lhs); walk(node->rhs); }
void IndexNotationVisitor::visit(const ForallNode* node) { walk(node->body); }
void IndexNotationVisitor::visit(const WhereNode* node) { walk(node->consumer); walk(node->producer); }
void IndexNotationVisitor::visit(const SequenceNode* node) { walk(node->definition); walk(node->mutation); }
void IndexNotationVisitor::visit(const MultiNode* node) { walk(node->first); walk(node->second); }
void IndexNotationVisitor::visit(const SuchThatNode* node) { walk(node->stmt); }

}  // namespace tcc::ir
