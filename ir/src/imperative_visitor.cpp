#include "tcc/ir/imperative_visitor.h"

namespace tcc::ir::imp {

namespace {
void visitIfDefined(const Expr& e, IRVisitor& v) { if (e.defined()) e.accept(v); }
void visitIfDefined(const Stmt& s, IRVisitor& v) { if (s.defined()) s.accept(v); }
}  // namespace

void IRVisitor::visit(const Cast* op) { op->value.accept(*this); }
void IRVisitor::visit(const Binary* op) { op->a.accept(*this); op->b.accept(*this); }
void IRVisitor::visit(const Unary* op) { op->a.accept(*this); }
void IRVisitor::visit(const Select* op) {
  op->condition.accept(*this); op->ifTrue.accept(*this); op->ifFalse.accept(*this);
}
void IRVisitor::visit(const Load* op) { op->buffer.accept(*this); op->index.accept(*this); }
void IRVisitor::visit(const Call* op) { for (const auto& arg : op->args) arg.accept(*this); }
void IRVisitor::visit(const Declare* op) { op->var.accept(*this); visitIfDefined(op->init, *this); }
void IRVisitor::visit(const Assign* op) { op->var.accept(*this); op->value.accept(*this); }
void IRVisitor::visit(const Store* op) {
  op->buffer.accept(*this); op->index.accept(*this); op->value.accept(*this);
}
void IRVisitor::visit(const For* op) {
  op->var.accept(*this); op->begin.accept(*this); op->end.accept(*this); op->body.accept(*this);
  for (const auto& reduction : op->reductions) {
    reduction.var.accept(*this);
    visitIfDefined(reduction.size, *this);
  }
}
void IRVisitor::visit(const While* op) { op->condition.accept(*this); op->body.accept(*this); }
void IRVisitor::visit(const If* op) {
  op->condition.accept(*this); op->thenCase.accept(*this); visitIfDefined(op->elseCase, *this);
}
void IRVisitor::visit(const Switch* op) {
  op->value.accept(*this);
  for (const auto& each : op->cases) each.body.accept(*this);
  visitIfDefined(op->otherwise, *this);
}
void IRVisitor::visit(const Block* op) { for (const auto& s : op->stmts) s.accept(*this); }
void IRVisitor::visit(const Allocate* op) {
  op->buffer.accept(*this);
  op->count.accept(*this);
  visitIfDefined(op->keptCount, *this);
}
void IRVisitor::visit(const Free* op) { op->buffer.accept(*this); }
void IRVisitor::visit(const SetTensorProperty* op) { op->value.accept(*this); }
void IRVisitor::visit(const Evaluate* op) { op->value.accept(*this); }
void IRVisitor::visit(const Return* op) { visitIfDefined(op->value, *this); }
void IRVisitor::visit(const Intrinsic* op) { for (const auto& arg : op->args) arg.accept(*this); }

Expr IRMutator::mutate(const Expr& expr) {
  if (!expr.defined()) return expr;
  switch (expr->kind) {
    case ExprKind::IntImm: return visit(expr.as<IntImm>(), expr);
    case ExprKind::FloatImm: return visit(expr.as<FloatImm>(), expr);
    case ExprKind::Var: return visit(expr.as<Var>(), expr);
    case ExprKind::Cast: return visit(expr.as<Cast>(), expr);
    case ExprKind::Binary: return visit(expr.as<Binary>(), expr);
    case ExprKind::Unary: return visit(expr.as<Unary>(), expr);
    case ExprKind::Select: return visit(expr.as<Select>(), expr);
    case ExprKind::Load: return visit(expr.as<Load>(), expr);
    case ExprKind::Call: return visit(expr.as<Call>(), expr);
    case ExprKind::TensorProperty: return visit(expr.as<TensorProperty>(), expr);
  }
  return expr;
}

Stmt IRMutator::mutate(const Stmt& stmt) {
  if (!stmt.defined()) return stmt;
  switch (stmt->kind) {
    case StmtKind::Declare: return visit(stmt.as<Declare>(), stmt);
    case StmtKind::Assign: return visit(stmt.as<Assign>(), stmt);
    case StmtKind::Store: return visit(stmt.as<Store>(), stmt);
    case StmtKind::For: return visit(stmt.as<For>(), stmt);
    case StmtKind::While: return visit(stmt.as<While>(), stmt);
    case StmtKind::If: return visit(stmt.as<If>(), stmt);
    case StmtKind::Switch: return visit(stmt.as<Switch>(), stmt);
    case StmtKind::Block: return visit(stmt.as<Block>(), stmt);
    case StmtKind::Allocate: return visit(stmt.as<Allocate>(), stmt);
    case StmtKind::Free: return visit(stmt.as<Free>(), stmt);
    case StmtKind::SetTensorProperty: return visit(stmt.as<SetTensorProperty>(), stmt);
    case StmtKind::Evaluate: return visit(stmt.as<Evaluate>(), stmt);
    case StmtKind::Comment: return visit(stmt.as<Comment>(), stmt);
    case StmtKind::Break: return visit(stmt.as<Break>(), stmt);
    case StmtKind::Return: return visit(stmt.as<Return>(), stmt);
    case StmtKind::Intrinsic: return visit(stmt.as<Intrinsic>(), stmt);
  }
  return stmt;
}

Expr IRMutator::visit(const Cast* op, const Expr& self) {
  Expr value = mutate(op->value);
  return value.sameAs(op->value) ? self : Cast::make(op->type, value);
}
Expr IRMutator::visit(const Binary* op, const Expr& self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  return a.sameAs(op->a) && b.sameAs(op->b) ? self : Binary::make(op->op, a, b);
}
Expr IRMutator::visit(const Unary* op, const Expr& self) {
  Expr a = mutate(op->a);
  return a.sameAs(op->a) ? self : Unary::make(op->op, a);
}
Expr IRMutator::visit(const Select* op, const Expr& self) {
  Expr c = mutate(op->condition), t = mutate(op->ifTrue), f = mutate(op->ifFalse);
  if (c.sameAs(op->condition) && t.sameAs(op->ifTrue) && f.sameAs(op->ifFalse)) return self;
  return Select::make(c, t, f);
}
Expr IRMutator::visit(const Load* op, const Expr& self) {
  Expr buffer = mutate(op->buffer), index = mutate(op->index);
  return buffer.sameAs(op->buffer) && index.sameAs(op->index) ? self : Load::make(buffer, index);
}
Expr IRMutator::visit(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const auto& arg : op->args) {
    args.push_back(mutate(arg));
    changed |= !args.back().sameAs(arg);
  }
  return changed ? Call::make(op->name, args, op->type) : self;
}
Stmt IRMutator::visit(const Declare* op, const Stmt& self) {
  Expr init = mutate(op->init);
  return init.sameAs(op->init) ? self : Declare::make(op->var, init);
}
Stmt IRMutator::visit(const Assign* op, const Stmt& self) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value)) return self;
  return op->hasCompound ? Assign::makeCompound(op->compound, op->var, value) : Assign::make(op->var, value);
}
Stmt IRMutator::visit(const Store* op, const Stmt& self) {
  Expr buffer = mutate(op->buffer), index = mutate(op->index), value = mutate(op->value);
  if (buffer.sameAs(op->buffer) && index.sameAs(op->index) && value.sameAs(op->value)) return self;
  return Store::make(buffer, index, value, op->accumulate, op->atomic, op->streaming);
}
Stmt IRMutator::visit(const For* op, const Stmt& self) {
  Expr begin = mutate(op->begin), end = mutate(op->end);
  Stmt body = mutate(op->body);
  if (begin.sameAs(op->begin) && end.sameAs(op->end) && body.sameAs(op->body)) return self;
  return For::make(op->var, begin, end, body, op->loopKind, op->comment, op->unrollFactor, op->reductions,
                   op->parallelChunk);
}
Stmt IRMutator::visit(const While* op, const Stmt& self) {
  Expr condition = mutate(op->condition);
  Stmt body = mutate(op->body);
  if (condition.sameAs(op->condition) && body.sameAs(op->body)) return self;
  return While::make(condition, body, op->comment);
}
Stmt IRMutator::visit(const If* op, const Stmt& self) {
  Expr condition = mutate(op->condition);
  Stmt thenCase = mutate(op->thenCase), elseCase = mutate(op->elseCase);
  if (condition.sameAs(op->condition) && thenCase.sameAs(op->thenCase) && elseCase.sameAs(op->elseCase))
    return self;
  return If::make(condition, thenCase, elseCase);
}
Stmt IRMutator::visit(const Switch* op, const Stmt& self) {
  Expr value = mutate(op->value);
  bool changed = !value.sameAs(op->value);
  std::vector<Switch::Case> cases;
  for (const auto& each : op->cases) {
    cases.push_back({each.values, mutate(each.body)});
    changed |= !cases.back().body.sameAs(each.body);
  }
  Stmt otherwise = mutate(op->otherwise);
  changed |= !otherwise.sameAs(op->otherwise);
  return changed ? Switch::make(value, std::move(cases), otherwise) : self;
}
Stmt IRMutator::visit(const Block* op, const Stmt& self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const auto& s : op->stmts) {
    stmts.push_back(mutate(s));
    changed |= !stmts.back().sameAs(s);
  }
  return changed ? Block::make(stmts) : self;
}
Stmt IRMutator::visit(const Allocate* op, const Stmt& self) {
  Expr count = mutate(op->count);
  Expr kept = op->keptCount.defined() ? mutate(op->keptCount) : Expr();
  return count.sameAs(op->count) && kept.sameAs(op->keptCount)
             ? self
             : Allocate::make(op->buffer, count, op->zeroInitialize, kept);
}
Stmt IRMutator::visit(const Free* op, const Stmt& self) { return self; }
Stmt IRMutator::visit(const SetTensorProperty* op, const Stmt& self) {
  Expr value = mutate(op->value);
  return value.sameAs(op->value) ? self : SetTensorProperty::make(op->tensor, op->field, op->index, value);
}
Stmt IRMutator::visit(const Evaluate* op, const Stmt& self) {
  Expr value = mutate(op->value);
  return value.sameAs(op->value) ? self : Evaluate::make(value);
}
Stmt IRMutator::visit(const Return* op, const Stmt& self) {
  Expr value = mutate(op->value);
  return value.sameAs(op->value) ? self : Return::make(value);
}
Stmt IRMutator::visit(const Intrinsic* op, const Stmt& self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const auto& arg : op->args) {
    args.push_back(mutate(arg));
    changed |= !args.back().sameAs(arg);
  }
  return changed ? Intrinsic::make(op->name, op->tensors, args) : self;
}

}  // namespace tcc::ir::imp
