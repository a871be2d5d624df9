#include "tcc/ir/imperative_dead_code.h"

#include <map>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::ir::imp {

namespace {

// Counts the uses of every variable; a Declare's own name is not a use.
class UseCounter : public IRVisitor {
 public:
  std::map<const ExprNode*, int> uses;
  using IRVisitor::visit;
  void visit(const Var* op) override { ++uses[op]; }
  void visit(const Declare* op) override {
    if (op->init.defined()) op->init.accept(*this);
  }
};

bool hasCall(const Expr& expr) {
  struct Finder : IRVisitor {
    bool found = false;
    using IRVisitor::visit;
    void visit(const Call*) override { found = true; }
  } finder;
  if (expr.defined()) expr.accept(finder);
  return finder.found;
}

class DeclarationRemover : public IRMutator {
 public:
  explicit DeclarationRemover(const std::map<const ExprNode*, int>& uses) : uses_(uses) {}
  bool removedAny = false;

 protected:
  using IRMutator::visit;
  Stmt visit(const Block* op, const Stmt& self) override {
    std::vector<Stmt> kept;
    bool changed = false;
    for (const auto& stmt : op->stmts) {
      if (const auto* declare = stmt.as<Declare>()) {
        auto found = uses_.find(declare->var.get());
        if ((found == uses_.end() || found->second == 0) && !hasCall(declare->init)) {
          changed = removedAny = true;
          continue;
        }
      }
      Stmt mutated = mutate(stmt);
      changed |= !mutated.sameAs(stmt);
      kept.push_back(mutated);
    }
    return changed ? Block::make(kept) : self;
  }

 private:
  const std::map<const ExprNode*, int>& uses_;
};

}  // namespace

Stmt removeUnusedDeclarations(const Stmt& stmt) {
  Stmt result = stmt;
  for (bool again = true; again;) {
    UseCounter counter;
    result.accept(counter);
    DeclarationRemover remover(counter.uses);
    result = remover.mutate(result);
    again = remover.removedAny;
  }
  return result;
}

}  // namespace tcc::ir::imp
