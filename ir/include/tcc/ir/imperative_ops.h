// Readable construction of imperative IR with trivial simplification on
// the way (x + 0, x * 1, constant folding of integer immediates), so that
// lowering code can write `add(pB, 1)` and emitted code stays clean.
#pragma once

#include <optional>

#include "tcc/ir/imperative.h"

namespace tcc::ir::imp {

Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr land(Expr a, Expr b);  // undefined operands are dropped
Expr lor(Expr a, Expr b);
Expr neg(Expr a);
Expr cast(Type type, Expr a);
Expr int64Imm(int64_t value);  // an int64 immediate

// Binary arithmetic on mixed types promotes like C++ (int32 < int64 < float).
Type promote(Type a, Type b);

bool isConstInt(const Expr& e, int64_t value);
bool isConstZero(const Expr& e);
std::optional<int64_t> constIntValue(const Expr& e);

// Folds trivial arithmetic throughout a statement.
Stmt simplify(const Stmt& stmt);
Expr simplify(const Expr& expr);

}  // namespace tcc::ir::imp
