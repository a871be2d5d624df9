// Rebuilding traversal of index notation (Halide's IRMutator). rewrite()
// dispatches on the node kind; each visit() defaults to rewriting the
// children and rebuilding the node only if a child changed, so untouched
// subtrees stay shared. rewrite() is virtual so a pass can look at every
// subtree before dispatch (add `using IndexNotationRewriter::rewrite;` when
// overriding one of the two).
#pragma once

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

class IndexNotationRewriter {
 public:
  virtual ~IndexNotationRewriter() = default;

  virtual IndexExpr rewrite(const IndexExpr& expr);  // undefined stays undefined
  virtual IndexStmt rewrite(const IndexStmt& stmt);

 protected:
  virtual IndexExpr visit(const LiteralNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const AccessNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const NegNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const AddNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const SubNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const MulNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const DivNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const ReductionNode* node, const IndexExpr& self);
  virtual IndexExpr visit(const CallNode* node, const IndexExpr& self);

  // The lhs is rewritten too; it must stay an access.
  virtual IndexStmt visit(const AssignmentNode* node, const IndexStmt& self);
  virtual IndexStmt visit(const ForallNode* node, const IndexStmt& self);
  virtual IndexStmt visit(const WhereNode* node, const IndexStmt& self);
  virtual IndexStmt visit(const SequenceNode* node, const IndexStmt& self);
  virtual IndexStmt visit(const MultiNode* node, const IndexStmt& self);
  virtual IndexStmt visit(const SuchThatNode* node, const IndexStmt& self);
};

}  // namespace tcc::ir
