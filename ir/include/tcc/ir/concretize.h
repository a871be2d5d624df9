// Concretization: tensor index notation (einsum) to concrete index notation.
//
// The output's variables become foralls in the output's storage order (the
// format's mode ordering), followed by the summed variables in order of
// first appearance; the summation then becomes `+=`. Implicit summation
// follows TACO: each term of a top-level sum or difference is summed over
// its own variables that do not appear on the left. A sum(k, e) that is the
// whole right-hand side (after making implicit sums explicit) is hoisted into
// loops; one nested deeper (e.g. B(i) + sum(k, C(i,k))) is computed into a
// scalar temporary by a where inside the loops over the variables it needs.
//
//   A(i,j) = B(i,k) * C(k,j)  with A csc
//     -> forall(j, forall(i, forall(k, A(i,j) += B(i,k) * C(k,j))))
//
// A sum over a variable that an enclosing loop already iterates is renamed
// (k -> k1) so that no loop variable is bound twice; a sum whose body does
// not use its variable (sum(k, 2.0)) is rejected, since no access would
// give its loop a range.
//
// A statement that is already concrete is returned unchanged; anything else
// that is not a single assignment throws std::invalid_argument.
#pragma once

#include <vector>

#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

IndexStmt concretize(const IndexStmt& assignment);
// The same with the output's loops in `outputLoopOrder` (a permutation of
// the output's distinct variables) instead of its storage order: a dense
// output may be filled in any order, and the sparse operands' storage
// orders may admit only some.
IndexStmt concretize(const IndexStmt& assignment, const std::vector<IndexVar>& outputLoopOrder);

// The einsum rule alone: the same assignment with implicit sums made
// explicit sum(...) nodes, outermost first in order of first appearance.
IndexStmt makeReductionNotation(const IndexStmt& assignment);

}  // namespace tcc::ir
