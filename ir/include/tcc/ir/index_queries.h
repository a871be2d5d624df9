// Questions passes ask of index notation. Lists come in order of first
// appearance (pre-order, left to right) without repeats, so results are
// deterministic.
#pragma once

#include <vector>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

// Every index variable used: access indices, sum variables, forall
// variables, and variables of provenance relations.
std::vector<IndexVar> indexVarsOf(const IndexExpr& expr);
std::vector<IndexVar> indexVarsOf(const IndexStmt& stmt);

// Of an Assignment statement (throws std::invalid_argument otherwise):
// the lhs variables, and the rhs variables not on the lhs (implicitly or
// explicitly summed), in order of first appearance.
std::vector<IndexVar> freeVars(const IndexStmt& assignment);
// Variables of the accesses in expr that no sum inside expr binds.
std::vector<IndexVar> unsummedVars(const IndexExpr& expr);
std::vector<IndexVar> reductionVars(const IndexStmt& assignment);

// Accesses in the expression / statement (left-hand sides included).
std::vector<Access> accessesOf(const IndexExpr& expr);
std::vector<Access> accessesOf(const IndexStmt& stmt);
std::vector<const AssignmentNode*> assignmentsOf(const IndexStmt& stmt);
// Tensors whose only occurrence is the left-hand side of one assignment
// (= or +=): written once and named by no other access of the statement.
std::vector<TensorVar> tensorsOnlyWrittenOnce(const IndexStmt& stmt);

// Tensors read (rhs accesses, whole-tensor call arguments, and the lhs of
// a += assignment) and written (every lhs).
std::vector<TensorVar> tensorsRead(const IndexExpr& expr);
std::vector<TensorVar> tensorsRead(const IndexStmt& stmt);
std::vector<TensorVar> tensorsWritten(const IndexStmt& stmt);

// Tensor index notation: one Assignment with no foralls.
bool isEinsum(const IndexStmt& stmt);
// Concrete index notation: every variable of every assignment is bound by
// an enclosing forall or a sum inside the rhs, and no forall variable is
// bound twice on one path.
bool isConcrete(const IndexStmt& stmt);

}  // namespace tcc::ir
