// Index notation in TACO's textual form:
//   A(i,j) = B(i,k) * C(k,j)
//   forall(i, forall(j, forall(k, A(i,j) += B(i,k) * C(k,j))))
//   where(forall(j, A(i,j) = w(j)), forall(k, forall(j, w(j) += B(i,k) * C(k,j))))
// A scalar access prints as its bare name; parentheses appear only where
// precedence needs them. Forall attributes other than the defaults print
// as extra arguments: forall(i, S, CPUThread, NoRaces, unroll 4).
#pragma once

#include <ostream>
#include <string>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

std::string toString(const IndexExpr& expr);
std::string toString(const IndexStmt& stmt);

std::ostream& operator<<(std::ostream& os, const IndexExpr& expr);
std::ostream& operator<<(std::ostream& os, const IndexStmt& stmt);

}  // namespace tcc::ir
