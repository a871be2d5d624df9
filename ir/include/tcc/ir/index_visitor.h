// Read-only traversal of index notation. walk() dispatches on the node
// kind; each visit() defaults to walking the node's children, so a pass
// overrides only the nodes it cares about and calls the base to go deeper.
#pragma once

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

class IndexNotationVisitor {
 public:
  virtual ~IndexNotationVisitor() = default;

  void walk(const IndexExpr& expr);  // undefined handles are skipped
  void walk(const IndexStmt& stmt);

 protected:
  virtual void visit(const LiteralNode* node);
  virtual void visit(const AccessNode* node);
  virtual void visit(const NegNode* node);
  virtual void visit(const AddNode* node);
  virtual void visit(const SubNode* node);
  virtual void visit(const MulNode* node);
  virtual void visit(const DivNode* node);
  virtual void visit(const ReductionNode* node);
  virtual void visit(const CallNode* node);  // walks expression arguments

  virtual void visit(const AssignmentNode* node);  // walks lhs, then rhs
  virtual void visit(const ForallNode* node);
  virtual void visit(const WhereNode* node);     // consumer, then producer
  virtual void visit(const SequenceNode* node);
  virtual void visit(const MultiNode* node);
  virtual void visit(const SuchThatNode* node);  // walks stmt only
};

}  // namespace tcc::ir
