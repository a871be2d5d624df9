// Internal to the library: statements that read the tensor they write.
//
// `y(i) += A(i,j) * x(j)` and `y(i) = A(i,j) * y(j)` read y's values from
// before the statement. Every kernel writes its output into fresh storage,
// so the statement is rewritten to read those values from a tensor of
// their own (y_before), which the run binds to y's storage as the
// statement starts: an update in place costs no copy, and a statement
// that reads other entries of its output than it writes (`A(i,j) *
// y(j)`) reads them all from before the update, as the notation says.
#pragma once

#include <set>
#include <string>

#include "tcc/ir/index_stmt.h"
#include "tcc/ir/tensor_var.h"
#include "tcc/lowering/schedule.h"

namespace tcc {

struct PriorValuesRewrite {
  ir::IndexStmt statement;  // reads `prior` where it read its output; `+=` made `=` over `prior`
  ir::TensorVar prior;      // undefined where the statement does not read its output
};

// The statement as above; `prior`'s name is fresh against `takenNames`
// (and taken). A statement that does not read its output is returned as
// it is.
PriorValuesRewrite readPriorValues(const ir::IndexStmt& statement, std::set<std::string>& takenNames);

// The schedule's expressions and accesses that read the output read
// `prior` instead (a precompute of `A(i,j) * y(j)` in `y(i) = A(i,j) *
// y(j)` names the rewritten statement's subexpression).
void readPriorValues(lowering::ScheduleRequest& request, const PriorValuesRewrite& rewrite);

}  // namespace tcc
