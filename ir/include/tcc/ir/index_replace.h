// Substitution in index notation. Every function rebuilds only what
// changes and leaves the rest shared.
#pragma once

#include <unordered_map>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

// Replaces subexpressions structurally equal to a key (accesses included;
// an lhs access may only be replaced by another access).
IndexExpr replace(const IndexExpr& expr, const std::unordered_map<IndexExpr, IndexExpr>& substitutions);
IndexStmt replace(const IndexStmt& stmt, const std::unordered_map<IndexExpr, IndexExpr>& substitutions);

// Replaces tensors wherever they appear: accesses, call arguments, lhs.
// The replacement must have the same order.
IndexExpr replace(const IndexExpr& expr, const std::unordered_map<TensorVar, TensorVar>& substitutions);
IndexStmt replace(const IndexStmt& stmt, const std::unordered_map<TensorVar, TensorVar>& substitutions);

// Renames index variables everywhere (accesses, sums, foralls, relations).
IndexExpr replace(const IndexExpr& expr, const std::unordered_map<IndexVar, IndexVar>& substitutions);
IndexStmt replace(const IndexStmt& stmt, const std::unordered_map<IndexVar, IndexVar>& substitutions);

}  // namespace tcc::ir
