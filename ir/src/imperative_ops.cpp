#include "tcc/ir/imperative_ops.h"

#include <algorithm>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::ir::imp {

namespace {

int rank(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Void: return 0;
    case ScalarKind::Bool: return 1;
    case ScalarKind::Int32: return 2;
    case ScalarKind::Int64: return 3;
    case ScalarKind::Float16: return 4;
    case ScalarKind::Float32: return 5;
    case ScalarKind::Float64: return 6;
  }
  return 0;
}

// Folds integer immediates and identities; returns an undefined Expr when
// nothing applies.
Expr fold(BinaryOp op, const Expr& a, const Expr& b) {
  auto ca = constIntValue(a), cb = constIntValue(b);
  if (ca && cb && a.type().isInteger() && b.type().isInteger()) {
    Type type = promote(a.type(), b.type());
    switch (op) {
      case BinaryOp::Add: return IntImm::make(*ca + *cb, type);
      case BinaryOp::Sub: return IntImm::make(*ca - *cb, type);
      case BinaryOp::Mul: return IntImm::make(*ca * *cb, type);
      case BinaryOp::Div: if (*cb != 0) return IntImm::make(*ca / *cb, type); break;
      case BinaryOp::Mod: if (*cb != 0) return IntImm::make(*ca % *cb, type); break;
      case BinaryOp::Min: return IntImm::make(std::min(*ca, *cb), type);
      case BinaryOp::Max: return IntImm::make(std::max(*ca, *cb), type);
      default: break;
    }
  }
  bool integers = a.type().isInteger() && b.type().isInteger();
  switch (op) {
    case BinaryOp::Add:
      if (integers && cb == 0 && promote(a.type(), b.type()) == a.type()) return a;
      if (integers && ca == 0 && promote(a.type(), b.type()) == b.type()) return b;
      break;
    case BinaryOp::Sub:
      if (integers && cb == 0 && promote(a.type(), b.type()) == a.type()) return a;
      break;
    case BinaryOp::Mul:
      if (integers && (ca == 0 || cb == 0)) return IntImm::make(0, promote(a.type(), b.type()));
      if (integers && cb == 1 && promote(a.type(), b.type()) == a.type()) return a;
      if (integers && ca == 1 && promote(a.type(), b.type()) == b.type()) return b;
      break;
    case BinaryOp::Div:
      if (integers && cb == 1) return a;
      break;
    default:
      break;
  }
  return Expr();
}

Expr binary(BinaryOp op, Expr a, Expr b) {
  if (Expr folded = fold(op, a, b); folded.defined()) return folded;
  return Binary::make(op, std::move(a), std::move(b));
}

class Simplifier : public IRMutator {
 protected:
  using IRMutator::visit;
  Expr visit(const Binary* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr folded = fold(op->op, a, b); folded.defined()) return folded;
    return a.sameAs(op->a) && b.sameAs(op->b) ? self : Binary::make(op->op, a, b);
  }
};

}  // namespace

Type promote(Type a, Type b) {
  if (a.isPointer) return a;
  if (b.isPointer) return b;
  ScalarKind kind = rank(a.kind) >= rank(b.kind) ? a.kind : b.kind;
  if (kind == ScalarKind::Bool) kind = ScalarKind::Int32;
  return Type{kind};
}

std::optional<int64_t> constIntValue(const Expr& e) {
  if (const auto* imm = e.as<IntImm>()) return imm->value;
  return std::nullopt;
}
bool isConstInt(const Expr& e, int64_t value) { return constIntValue(e) == value; }
bool isConstZero(const Expr& e) {
  if (isConstInt(e, 0)) return true;
  const auto* imm = e.as<FloatImm>();
  return imm && imm->value == 0.0;
}

Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
Expr mod(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return Binary::make(BinaryOp::Eq, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return Binary::make(BinaryOp::Ne, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return Binary::make(BinaryOp::Lt, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return Binary::make(BinaryOp::Le, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return Binary::make(BinaryOp::Gt, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return Binary::make(BinaryOp::Ge, std::move(a), std::move(b)); }
Expr land(Expr a, Expr b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return Binary::make(BinaryOp::And, std::move(a), std::move(b));
}
Expr lor(Expr a, Expr b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return Binary::make(BinaryOp::Or, std::move(a), std::move(b));
}
Expr neg(Expr a) {
  if (auto c = constIntValue(a)) return IntImm::make(-*c, a.type());
  if (const auto* f = a.as<FloatImm>()) return FloatImm::make(-f->value, f->type);
  return Unary::make(UnaryOp::Neg, std::move(a));
}
Expr int64Imm(int64_t value) { return IntImm::make(value, Type::int64()); }

Expr cast(Type type, Expr a) {
  if (a.type() == type) return a;
  if (auto c = constIntValue(a); c && type.isInteger()) return IntImm::make(*c, type);
  if (auto c = constIntValue(a); c && type.isFloat()) return FloatImm::make(double(*c), type);
  return Cast::make(type, std::move(a));
}

Stmt simplify(const Stmt& stmt) { return Simplifier().mutate(stmt); }
Expr simplify(const Expr& expr) { return Simplifier().mutate(expr); }

}  // namespace tcc::ir::imp
