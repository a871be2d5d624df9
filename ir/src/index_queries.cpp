#include "tcc/ir/index_queries.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "tcc/ir/index_visitor.h"

namespace tcc::ir {

namespace {

template <typename T>
void appendUnique(std::vector<T>& list, const T& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

class IndexVarCollector : public IndexNotationVisitor {
 public:
  std::vector<IndexVar> vars;

 protected:
  void visit(const AccessNode* node) override {
    for (const auto& var : node->indices) appendUnique(vars, var);
  }
  void visit(const ReductionNode* node) override {
    appendUnique(vars, node->var);
    IndexNotationVisitor::visit(node);
  }
  void visit(const ForallNode* node) override {
    appendUnique(vars, node->indexVar);
    IndexNotationVisitor::visit(node);
  }
  void visit(const SuchThatNode* node) override {
    IndexNotationVisitor::visit(node);
    for (const auto& relation : node->relations) {
      for (const auto& var : parentVars(relation)) appendUnique(vars, var);
      for (const auto& var : derivedVars(relation)) appendUnique(vars, var);
    }
  }
};

class AccessCollector : public IndexNotationVisitor {
 public:
  std::vector<Access> accesses;
  std::vector<const AssignmentNode*> assignments;
  std::vector<TensorVar> read, written;

 protected:
  void visit(const AccessNode* node) override {
    appendUnique(accesses, Access(node->tensor(node->indices)));
    appendUnique(read, node->tensor);
  }
  void visit(const CallNode* node) override {
    for (const auto& arg : node->args)
      if (const auto* tensor = std::get_if<TensorVar>(&arg)) appendUnique(read, *tensor);
    IndexNotationVisitor::visit(node);
  }
  void visit(const AssignmentNode* node) override {
    assignments.push_back(node);
    appendUnique(accesses, node->lhs);
    if (node->accumulate) appendUnique(read, node->lhs.tensor());
    walk(node->rhs);
    appendUnique(written, node->lhs.tensor());
  }
};

const AssignmentNode* requireAssignment(const IndexStmt& stmt, const char* what) {
  const auto* node = stmt.as<AssignmentNode>();
  if (!node) throw std::invalid_argument(std::string(what) + ": expected an assignment");
  return node;
}

// Variables a statement's accesses may use at a point: forall variables in
// scope, plus parents of relations whose derived variables are all in scope.
std::set<IndexVar> closeOverRelations(std::set<IndexVar> bound, const std::vector<ProvenanceRelation>& relations) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& relation : relations) {
      auto derived = derivedVars(relation);
      bool allBound = std::all_of(derived.begin(), derived.end(), [&](const IndexVar& v) { return bound.count(v); });
      if (!allBound) continue;
      for (const auto& parent : parentVars(relation)) changed = bound.insert(parent).second || changed;
    }
  }
  return bound;
}

class ConcreteChecker : public IndexNotationVisitor {
 public:
  bool concrete = true;

 protected:
  void visit(const ForallNode* node) override {
    if (inScope_.count(node->indexVar)) concrete = false;
    inScope_.insert(node->indexVar);
    IndexNotationVisitor::visit(node);
    inScope_.erase(node->indexVar);
  }
  void visit(const SuchThatNode* node) override {
    relations_.insert(relations_.end(), node->relations.begin(), node->relations.end());
    IndexNotationVisitor::visit(node);
    relations_.resize(relations_.size() - node->relations.size());
  }
  void visit(const AssignmentNode* node) override {
    std::set<IndexVar> bound = closeOverRelations(inScope_, relations_);
    for (const auto& var : node->lhs.indices())
      if (!bound.count(var)) concrete = false;
    // rhs variables are bound by the scope or by a sum around their use.
    for (const auto& var : unsummedVars(node->rhs))
      if (!bound.count(var)) concrete = false;
  }

 private:
  std::set<IndexVar> inScope_;
  std::vector<ProvenanceRelation> relations_;
};

}  // namespace

std::vector<IndexVar> unsummedVars(const IndexExpr& expr) {
  class Collector : public IndexNotationVisitor {
   public:
    std::vector<IndexVar> vars;
    std::vector<IndexVar> sums;

   protected:
    void visit(const AccessNode* node) override {
      for (const auto& var : node->indices)
        if (std::find(sums.begin(), sums.end(), var) == sums.end() &&
            std::find(vars.begin(), vars.end(), var) == vars.end())
          vars.push_back(var);
    }
    void visit(const ReductionNode* node) override {
      sums.push_back(node->var);
      IndexNotationVisitor::visit(node);
      sums.pop_back();
    }
  } collector;
  collector.walk(expr);
  return collector.vars;
}

std::vector<IndexVar> indexVarsOf(const IndexExpr& expr) {
  IndexVarCollector collector;
  collector.walk(expr);
  return collector.vars;
}

std::vector<IndexVar> indexVarsOf(const IndexStmt& stmt) {
  IndexVarCollector collector;
  collector.walk(stmt);
  return collector.vars;
}

std::vector<IndexVar> freeVars(const IndexStmt& assignment) {
  std::vector<IndexVar> vars;
  for (const auto& var : requireAssignment(assignment, "freeVars")->lhs.indices()) appendUnique(vars, var);
  return vars;
}

std::vector<IndexVar> reductionVars(const IndexStmt& assignment) {
  const auto* node = requireAssignment(assignment, "reductionVars");
  std::vector<IndexVar> vars;
  for (const auto& var : indexVarsOf(node->rhs)) {
    const auto& lhs = node->lhs.indices();
    if (std::find(lhs.begin(), lhs.end(), var) == lhs.end()) vars.push_back(var);
  }
  return vars;
}

std::vector<Access> accessesOf(const IndexExpr& expr) {
  AccessCollector collector;
  collector.walk(expr);
  return collector.accesses;
}

std::vector<Access> accessesOf(const IndexStmt& stmt) {
  AccessCollector collector;
  collector.walk(stmt);
  return collector.accesses;
}

std::vector<const AssignmentNode*> assignmentsOf(const IndexStmt& stmt) {
  AccessCollector collector;
  collector.walk(stmt);
  return collector.assignments;
}

std::vector<TensorVar> tensorsOnlyWrittenOnce(const IndexStmt& stmt) {
  class Counter : public IndexNotationVisitor {
   public:
    std::vector<TensorVar> tensors;  // in order of first appearance
    std::map<TensorVar, int> writes, occurrences;

   protected:
    void visit(const AccessNode* node) override {
      appendUnique(tensors, node->tensor);
      occurrences[node->tensor]++;
    }
    void visit(const AssignmentNode* node) override {
      writes[node->lhs.tensor()]++;
      IndexNotationVisitor::visit(node);
    }
  } counter;
  counter.walk(stmt);
  std::vector<TensorVar> once;
  for (const auto& tensor : counter.tensors)
    if (counter.writes[tensor] == 1 && counter.occurrences[tensor] == 1) once.push_back(tensor);
  return once;
}

std::vector<TensorVar> tensorsRead(const IndexExpr& expr) {
  AccessCollector collector;
  collector.walk(expr);
  return collector.read;
}

std::vector<TensorVar> tensorsRead(const IndexStmt& stmt) {
  AccessCollector collector;
  collector.walk(stmt);
  return collector.read;
}

std::vector<TensorVar> tensorsWritten(const IndexStmt& stmt) {
  AccessCollector collector;
  collector.walk(stmt);
  return collector.written;
}

bool isEinsum(const IndexStmt& stmt) { return stmt.isa<AssignmentNode>(); }

bool isConcrete(const IndexStmt& stmt) {
  if (!stmt.defined()) return false;
  ConcreteChecker checker;
  checker.walk(stmt);
  return checker.concrete;
}

}  // namespace tcc::ir
