// Merge lattices (Kjolstad et al.): how the iterators over one index
// variable must be co-iterated for an expression. A point is a set of
// iterators that are all at the current coordinate plus the expression that
// is non-zero there; multiplication intersects, addition and subtraction
// unite. Points are ordered from most iterators to fewest.
#pragma once

#include <functional>
#include <vector>

#include "tcc/ir/index_expr.h"

namespace tcc::lowering {

struct LatticePoint {
  std::vector<int> iterators;  // iterator ids, sorted
  ir::IndexExpr expr;          // the expression with absent operands removed
};

// `iteratorOf` returns the id of the iterator an access contributes for the
// lattice's index variable, or -1 when the access does not depend on it.
std::vector<LatticePoint> buildMergeLattice(const ir::IndexExpr& expr,
                                            const std::function<int(const ir::AccessNode*)>& iteratorOf);

bool isSubset(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace tcc::lowering
