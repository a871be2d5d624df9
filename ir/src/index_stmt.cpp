#include "tcc/ir/index_stmt.h"

#include <algorithm>
#include <stdexcept>

#include "index_hash.h"
#include "tcc/ir/index_visitor.h"

namespace tcc::ir {

using detail::hashCombine;

namespace {

size_t startHash(IndexStmtKind kind) { return static_cast<size_t>(kind) * 131 + 17; }

void requireDefined(const IndexStmt& stmt, const char* what) {
  if (!stmt.defined()) throw std::invalid_argument(std::string(what) + ": undefined statement");
}

class SumVarCollector : public IndexNotationVisitor {
 public:
  std::vector<IndexVar> vars;

 protected:
  void visit(const ReductionNode* node) override {
    vars.push_back(node->var);
    IndexNotationVisitor::visit(node);
  }
};

bool equalNodes(const IndexStmtNode* a, const IndexStmtNode* b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->hash != b->hash) return false;
  switch (a->kind) {
    case IndexStmtKind::Assignment: {
      auto* x = static_cast<const AssignmentNode*>(a);
      auto* y = static_cast<const AssignmentNode*>(b);
      return x->accumulate == y->accumulate && x->lhs == y->lhs && x->rhs == y->rhs;
    }
    case IndexStmtKind::Forall: {
      auto* x = static_cast<const ForallNode*>(a);
      auto* y = static_cast<const ForallNode*>(b);
      return x->indexVar == y->indexVar && x->attributes == y->attributes && x->body == y->body;
    }
    case IndexStmtKind::Where: {
      auto* x = static_cast<const WhereNode*>(a);
      auto* y = static_cast<const WhereNode*>(b);
      return x->consumer == y->consumer && x->producer == y->producer;
    }
    case IndexStmtKind::Sequence: {
      auto* x = static_cast<const SequenceNode*>(a);
      auto* y = static_cast<const SequenceNode*>(b);
      return x->definition == y->definition && x->mutation == y->mutation;
    }
    case IndexStmtKind::Multi: {
      auto* x = static_cast<const MultiNode*>(a);
      auto* y = static_cast<const MultiNode*>(b);
      return x->first == y->first && x->second == y->second;
    }
    case IndexStmtKind::SuchThat: {
      auto* x = static_cast<const SuchThatNode*>(a);
      auto* y = static_cast<const SuchThatNode*>(b);
      return x->relations == y->relations && x->stmt == y->stmt;
    }
  }
  return false;
}

}  // namespace

bool IndexStmt::operator==(const IndexStmt& other) const {
  return equalNodes(node_.get(), other.node_.get());
}

std::string toString(ParallelUnit unit) {
  switch (unit) {
    case ParallelUnit::NotParallel: return "NotParallel";
    case ParallelUnit::DefaultUnit: return "DefaultUnit";
    case ParallelUnit::CPUThread: return "CPUThread";
    case ParallelUnit::CPUVector: return "CPUVector";
    case ParallelUnit::GPUBlock: return "GPUBlock";
    case ParallelUnit::GPUWarp: return "GPUWarp";
    case ParallelUnit::GPUThread: return "GPUThread";
  }
  return "?";
}

std::string toString(OutputRaceStrategy strategy) {
  switch (strategy) {
    case OutputRaceStrategy::IgnoreRaces: return "IgnoreRaces";
    case OutputRaceStrategy::NoRaces: return "NoRaces";
    case OutputRaceStrategy::Atomics: return "Atomics";
    case OutputRaceStrategy::Temporary: return "Temporary";
    case OutputRaceStrategy::ParallelReduction: return "ParallelReduction";
    case OutputRaceStrategy::Workspace: return "Workspace";
  }
  return "?";
}

IndexStmt AssignmentNode::make(Access lhs, IndexExpr rhs, bool accumulate) {
  if (!lhs.defined()) throw std::invalid_argument("assignment: undefined left-hand side");
  if (!rhs.defined())
    throw std::invalid_argument("assignment to " + lhs.tensor().name() + ": undefined right-hand side");
  SumVarCollector sums;
  sums.walk(rhs);
  for (const auto& var : sums.vars)
    if (std::find(lhs.indices().begin(), lhs.indices().end(), var) != lhs.indices().end())
      throw std::invalid_argument("assignment to " + lhs.tensor().name() + ": sum over " + var.name() +
                                  ", which indexes the left-hand side");
  auto node = std::make_shared<AssignmentNode>();
  node->hash = hashCombine(hashCombine(hashCombine(startHash(kKind), lhs.hash()), rhs.hash()), accumulate);
  node->lhs = std::move(lhs);
  node->rhs = std::move(rhs);
  node->accumulate = accumulate;
  return IndexStmt(node);
}

IndexStmt ForallNode::make(IndexVar indexVar, IndexStmt body, ForallAttributes attributes) {
  requireDefined(body, "forall");
  if (attributes.unrollFactor < 0)
    throw std::invalid_argument("forall " + indexVar.name() + ": negative unroll factor");
  auto node = std::make_shared<ForallNode>();
  size_t hash = hashCombine(startHash(kKind), std::hash<IndexVar>()(indexVar));
  hash = hashCombine(hash, body.hash());
  hash = hashCombine(hash, static_cast<size_t>(attributes.parallelUnit) * 64 +
                               static_cast<size_t>(attributes.outputRaceStrategy) * 8 +
                               static_cast<size_t>(attributes.unrollFactor) * 4096);
  node->hash = hash;
  node->indexVar = std::move(indexVar);
  node->body = std::move(body);
  node->attributes = attributes;
  return IndexStmt(node);
}

namespace {
template <typename Node>
IndexStmt makePair(IndexStmt first, IndexStmt second, const char* what,
                   IndexStmt Node::*firstField, IndexStmt Node::*secondField) {
  requireDefined(first, what);
  requireDefined(second, what);
  auto node = std::make_shared<Node>();
  node->hash = hashCombine(hashCombine(startHash(Node::kKind), first.hash()), second.hash());
  node.get()->*firstField = std::move(first);
  node.get()->*secondField = std::move(second);
  return IndexStmt(node);
}
}  // namespace

IndexStmt WhereNode::make(IndexStmt consumer, IndexStmt producer) {
  return makePair<WhereNode>(std::move(consumer), std::move(producer), "where", &WhereNode::consumer,
                             &WhereNode::producer);
}

IndexStmt SequenceNode::make(IndexStmt definition, IndexStmt mutation) {
  return makePair<SequenceNode>(std::move(definition), std::move(mutation), "sequence",
                                &SequenceNode::definition, &SequenceNode::mutation);
}

IndexStmt MultiNode::make(IndexStmt first, IndexStmt second) {
  return makePair<MultiNode>(std::move(first), std::move(second), "multi", &MultiNode::first,
                             &MultiNode::second);
}

IndexStmt SuchThatNode::make(IndexStmt stmt, std::vector<ProvenanceRelation> relations) {
  requireDefined(stmt, "suchthat");
  for (const auto& relation : relations) {
    for (const auto& var : derivedVars(relation))
      for (const auto& parent : parentVars(relation))
        if (var == parent)
          throw std::invalid_argument("suchthat: " + toString(relation) + " derives " + var.name() +
                                      " from itself");
    if (const auto* split = std::get_if<SplitRelation>(&relation); split && split->factor < 1)
      throw std::invalid_argument("suchthat: " + toString(relation) + " needs a factor of at least 1");
    if (const auto* divide = std::get_if<DivideRelation>(&relation); divide && divide->factor < 1)
      throw std::invalid_argument("suchthat: " + toString(relation) + " needs a factor of at least 1");
    if (const auto* pos = std::get_if<PosRelation>(&relation); pos && !pos->access.defined())
      throw std::invalid_argument("suchthat: pos relation without an access");
  }
  auto node = std::make_shared<SuchThatNode>();
  size_t hash = hashCombine(startHash(kKind), stmt.hash());
  for (const auto& relation : relations) hash = hashCombine(hash, hashOf(relation));
  node->hash = hash;
  node->stmt = std::move(stmt);
  node->relations = std::move(relations);
  return IndexStmt(node);
}

}  // namespace tcc::ir
