// Every access node of a statement, occurrence by occurrence (left-hand
// sides included). The lowerer keys iterators and positions on these
// nodes, so two reads of the same tensor get iterators of their own.
#pragma once

#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/ir/index_visitor.h"

namespace tcc::lowering {

inline std::vector<const ir::AccessNode*> accessOccurrences(const ir::IndexStmt& stmt) {
  struct Collector : ir::IndexNotationVisitor {
    std::vector<const ir::AccessNode*> found;
    using ir::IndexNotationVisitor::visit;
    void visit(const ir::AccessNode* node) override { found.push_back(node); }
  } collector;
  collector.walk(stmt);
  return collector.found;
}

// Every statement node of one kind (Where, Forall, SuchThat), outermost first.
template <typename Node>
std::vector<const Node*> statementsOf(const ir::IndexStmt& stmt) {
  struct Collector : ir::IndexNotationVisitor {
    std::vector<const Node*> found;
    using ir::IndexNotationVisitor::visit;
    void visit(const Node* node) override {
      found.push_back(node);
      ir::IndexNotationVisitor::visit(node);
    }
  } collector;
  collector.walk(stmt);
  return collector.found;
}

inline std::vector<const ir::WhereNode*> whereStatements(const ir::IndexStmt& stmt) {
  return statementsOf<ir::WhereNode>(stmt);
}

}  // namespace tcc::lowering
