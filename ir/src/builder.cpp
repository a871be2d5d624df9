#include "tcc/ir/builder.h"

namespace tcc::ir {

IndexExpr operator-(const IndexExpr& operand) { return NegNode::make(operand); }
IndexExpr operator+(const IndexExpr& a, const IndexExpr& b) { return AddNode::make(a, b); }
IndexExpr operator-(const IndexExpr& a, const IndexExpr& b) { return SubNode::make(a, b); }
IndexExpr operator*(const IndexExpr& a, const IndexExpr& b) { return MulNode::make(a, b); }
IndexExpr operator/(const IndexExpr& a, const IndexExpr& b) { return DivNode::make(a, b); }

IndexExpr sum(const IndexVar& var, const IndexExpr& body) { return ReductionNode::make(var, body); }
IndexExpr perm(const TensorVar& matrix) { return CallNode::make("perm", {matrix}); }
IndexExpr call(const std::string& name, std::vector<CallArgument> args) {
  return CallNode::make(name, std::move(args));
}

IndexStmt forall(const IndexVar& var, const IndexStmt& body, ForallAttributes attributes) {
  return ForallNode::make(var, body, attributes);
}
IndexStmt where(const IndexStmt& consumer, const IndexStmt& producer) {
  return WhereNode::make(consumer, producer);
}
IndexStmt sequence(const IndexStmt& definition, const IndexStmt& mutation) {
  return SequenceNode::make(definition, mutation);
}
IndexStmt multi(const IndexStmt& first, const IndexStmt& second) { return MultiNode::make(first, second); }
IndexStmt suchThat(const IndexStmt& stmt, std::vector<ProvenanceRelation> relations) {
  return SuchThatNode::make(stmt, std::move(relations));
}

}  // namespace tcc::ir
