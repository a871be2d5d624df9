#include "tcc/ir/index_replace.h"

#include <stdexcept>

#include "tcc/ir/index_rewriter.h"

namespace tcc::ir {

namespace {

class ExprReplacer : public IndexNotationRewriter {
 public:
  explicit ExprReplacer(const std::unordered_map<IndexExpr, IndexExpr>& substitutions)
      : substitutions_(substitutions) {}

  using IndexNotationRewriter::rewrite;
  IndexExpr rewrite(const IndexExpr& expr) override {
    if (auto found = substitutions_.find(expr); found != substitutions_.end()) return found->second;
    return IndexNotationRewriter::rewrite(expr);
  }

 protected:
  IndexStmt visit(const AssignmentNode* node, const IndexStmt& self) override {
    IndexExpr lhs = rewrite(node->lhs);
    if (!lhs.isa<AccessNode>())
      throw std::invalid_argument("replace: the left-hand side " + node->lhs.tensor().name() +
                                  " can only be replaced by an access");
    return IndexNotationRewriter::visit(node, self);
  }

 private:
  const std::unordered_map<IndexExpr, IndexExpr>& substitutions_;
};

class TensorReplacer : public IndexNotationRewriter {
 public:
  explicit TensorReplacer(const std::unordered_map<TensorVar, TensorVar>& substitutions)
      : substitutions_(substitutions) {}

 protected:
  IndexExpr visit(const AccessNode* node, const IndexExpr& self) override {
    auto found = substitutions_.find(node->tensor);
    if (found == substitutions_.end()) return self;
    return AccessNode::make(found->second, node->indices);
  }
  IndexExpr visit(const CallNode* node, const IndexExpr& self) override {
    std::vector<CallArgument> args;
    bool changed = false;
    for (const auto& arg : node->args) {
      if (const auto* tensor = std::get_if<TensorVar>(&arg)) {
        auto found = substitutions_.find(*tensor);
        changed = changed || found != substitutions_.end();
        args.push_back(found == substitutions_.end() ? *tensor : found->second);
      } else {
        IndexExpr rewritten = rewrite(std::get<IndexExpr>(arg));
        changed = changed || !rewritten.sameAs(std::get<IndexExpr>(arg));
        args.push_back(rewritten);
      }
    }
    return changed ? CallNode::make(node->name, std::move(args)) : self;
  }
  IndexStmt visit(const SuchThatNode* node, const IndexStmt& self) override {
    std::vector<ProvenanceRelation> relations = node->relations;
    for (auto& relation : relations)
      if (auto* pos = std::get_if<PosRelation>(&relation)) pos->access = Access(rewrite(pos->access));
    IndexStmt stmt = rewrite(node->stmt);
    if (stmt.sameAs(node->stmt) && relations == node->relations) return self;
    return SuchThatNode::make(stmt, std::move(relations));
  }

 private:
  const std::unordered_map<TensorVar, TensorVar>& substitutions_;
};

class IndexVarReplacer : public IndexNotationRewriter {
 public:
  explicit IndexVarReplacer(const std::unordered_map<IndexVar, IndexVar>& substitutions)
      : substitutions_(substitutions) {}

 protected:
  IndexExpr visit(const AccessNode* node, const IndexExpr& self) override {
    std::vector<IndexVar> indices;
    bool changed = false;
    for (const auto& var : node->indices) {
      indices.push_back(renamed(var));
      changed = changed || !(indices.back() == var);
    }
    return changed ? AccessNode::make(node->tensor, std::move(indices)) : self;
  }
  IndexExpr visit(const ReductionNode* node, const IndexExpr& self) override {
    IndexExpr body = rewrite(node->body);
    IndexVar var = renamed(node->var);
    if (body.sameAs(node->body) && var == node->var) return self;
    return ReductionNode::make(var, body);
  }
  IndexStmt visit(const ForallNode* node, const IndexStmt& self) override {
    IndexStmt body = rewrite(node->body);
    IndexVar var = renamed(node->indexVar);
    if (body.sameAs(node->body) && var == node->indexVar) return self;
    return ForallNode::make(var, body, node->attributes);
  }
  IndexStmt visit(const SuchThatNode* node, const IndexStmt& self) override {
    std::vector<ProvenanceRelation> relations;
    for (const auto& relation : node->relations) relations.push_back(renamed(relation));
    IndexStmt stmt = rewrite(node->stmt);
    if (stmt.sameAs(node->stmt) && relations == node->relations) return self;
    return SuchThatNode::make(stmt, std::move(relations));
  }

 private:
  IndexVar renamed(const IndexVar& var) const {
    auto found = substitutions_.find(var);
    return found == substitutions_.end() ? var : found->second;
  }
  ProvenanceRelation renamed(const ProvenanceRelation& relation) {
    if (const auto* r = std::get_if<SplitRelation>(&relation))
      return SplitRelation{renamed(r->parent), renamed(r->outer), renamed(r->inner), r->factor};
    if (const auto* r = std::get_if<DivideRelation>(&relation))
      return DivideRelation{renamed(r->parent), renamed(r->outer), renamed(r->inner), r->factor};
    if (const auto* r = std::get_if<FuseRelation>(&relation))
      return FuseRelation{renamed(r->outer), renamed(r->inner), renamed(r->fused)};
    if (const auto* r = std::get_if<PosRelation>(&relation))
      return PosRelation{renamed(r->indexVar), renamed(r->posVar), Access(rewrite(r->access))};
    const auto& r = std::get<BoundRelation>(relation);
    return BoundRelation{renamed(r.var), renamed(r.boundVar), r.value, r.kind};
  }

  const std::unordered_map<IndexVar, IndexVar>& substitutions_;
};

}  // namespace

IndexExpr replace(const IndexExpr& expr, const std::unordered_map<IndexExpr, IndexExpr>& substitutions) {
  return ExprReplacer(substitutions).rewrite(expr);
}
IndexStmt replace(const IndexStmt& stmt, const std::unordered_map<IndexExpr, IndexExpr>& substitutions) {
  return ExprReplacer(substitutions).rewrite(stmt);
}
IndexExpr replace(const IndexExpr& expr, const std::unordered_map<TensorVar, TensorVar>& substitutions) {
  return TensorReplacer(substitutions).rewrite(expr);
}
IndexStmt replace(const IndexStmt& stmt, const std::unordered_map<TensorVar, TensorVar>& substitutions) {
  return TensorReplacer(substitutions).rewrite(stmt);
}
IndexExpr replace(const IndexExpr& expr, const std::unordered_map<IndexVar, IndexVar>& substitutions) {
  return IndexVarReplacer(substitutions).rewrite(expr);
}
IndexStmt replace(const IndexStmt& stmt, const std::unordered_map<IndexVar, IndexVar>& substitutions) {
  return IndexVarReplacer(substitutions).rewrite(stmt);
}

}  // namespace tcc::ir
