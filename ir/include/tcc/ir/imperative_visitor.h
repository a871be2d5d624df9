// Visitor and mutator for the imperative IR. A pass subclasses one of them
// and overrides only the node kinds it cares about.
#pragma once

#include "tcc/ir/imperative.h"

namespace tcc::ir::imp {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const IntImm*) {}
  virtual void visit(const FloatImm*) {}
  virtual void visit(const Var*) {}
  virtual void visit(const Cast*);
  virtual void visit(const Binary*);
  virtual void visit(const Unary*);
  virtual void visit(const Select*);
  virtual void visit(const Load*);
  virtual void visit(const Call*);
  virtual void visit(const TensorProperty*) {}
  virtual void visit(const Declare*);
  virtual void visit(const Assign*);
  virtual void visit(const Store*);
  virtual void visit(const For*);
  virtual void visit(const While*);
  virtual void visit(const If*);
  virtual void visit(const Switch*);
  virtual void visit(const Block*);
  virtual void visit(const Allocate*);
  virtual void visit(const Free*);
  virtual void visit(const SetTensorProperty*);
  virtual void visit(const Evaluate*);
  virtual void visit(const Comment*) {}
  virtual void visit(const Break*) {}
  virtual void visit(const Return*);
  virtual void visit(const Intrinsic*);
};

// Rebuilds the tree bottom-up; returns the same handle when nothing changed.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& expr);
  virtual Stmt mutate(const Stmt& stmt);

 protected:
  virtual Expr visit(const IntImm*, const Expr& self) { return self; }
  virtual Expr visit(const FloatImm*, const Expr& self) { return self; }
  virtual Expr visit(const Var*, const Expr& self) { return self; }
  virtual Expr visit(const TensorProperty*, const Expr& self) { return self; }
  virtual Expr visit(const Cast*, const Expr& self);
  virtual Expr visit(const Binary*, const Expr& self);
  virtual Expr visit(const Unary*, const Expr& self);
  virtual Expr visit(const Select*, const Expr& self);
  virtual Expr visit(const Load*, const Expr& self);
  virtual Expr visit(const Call*, const Expr& self);
  virtual Stmt visit(const Declare*, const Stmt& self);
  virtual Stmt visit(const Assign*, const Stmt& self);
  virtual Stmt visit(const Store*, const Stmt& self);
  virtual Stmt visit(const For*, const Stmt& self);
  virtual Stmt visit(const While*, const Stmt& self);
  virtual Stmt visit(const If*, const Stmt& self);
  virtual Stmt visit(const Switch*, const Stmt& self);
  virtual Stmt visit(const Block*, const Stmt& self);
  virtual Stmt visit(const Allocate*, const Stmt& self);
  virtual Stmt visit(const Free*, const Stmt& self);
  virtual Stmt visit(const SetTensorProperty*, const Stmt& self);
  virtual Stmt visit(const Evaluate*, const Stmt& self);
  virtual Stmt visit(const Comment*, const Stmt& self) { return self; }
  virtual Stmt visit(const Break*, const Stmt& self) { return self; }
  virtual Stmt visit(const Return*, const Stmt& self);
  virtual Stmt visit(const Intrinsic*, const Stmt& self);
};

}  // namespace tcc::ir::imp
