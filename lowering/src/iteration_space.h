// The iteration space of a loop whose body is more than one assignment (a
// where-statement, a sequence), and the body specialised to one region of it.
//
// A loop over i whose body is `where(y(i) = t + z(i), forall(j, t += A(i,j) * x(j)))`
// must visit every i where A's row or z has an entry: the consumer's terms
// united with the producer's. The lattice of a loop is therefore built from
// the body's iteration expression, in which each workspace read by a
// consumer stands for the expression its producer computes; and in each
// lattice region the body is lowered with the operands absent there
// removed, which drops a producer that has nothing to compute and reads its
// workspace as zero.
#pragma once

#include <functional>
#include <set>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::lowering {

// The expression whose merge lattice is the iteration space of `stmt`:
// an assignment's right-hand side; a where's consumer with each read of a
// workspace the producer writes replaced by the producer's expression
// (where `inlinable` says that read is iterated itself, by the read times
// that expression); the sum of a sequence's parts.
ir::IndexExpr iterationExpression(const ir::IndexStmt& stmt,
                                  const std::function<bool(const ir::AccessNode*)>& inlinable);

// `stmt` where the accesses in `absent` are zero: terms they multiply
// vanish, accumulations of nothing are dropped, a producer left with
// nothing to compute is removed and its workspace read as zero. Returns an
// undefined statement when nothing is left to do.
ir::IndexStmt withoutAbsentOperands(const ir::IndexStmt& stmt, const std::set<const ir::AccessNode*>& absent);

}  // namespace tcc::lowering
