// Pieces of concretization that more than one file uses: where a sparse
// tensor's storage puts its variables, the terms of a sum, and the loops
// that insert one term into a workspace holding the whole output. Internal
// to lowering/.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/concretize_for_lowering.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// Whether the tensor has a level that is not dense.
bool hasSparseLevel(const ir::TensorVar& tensor);
// The access's index variables in the order its levels store them.
std::vector<ir::IndexVar> varsInStorageOrder(const ir::Access& access);
// Appends the variables `list` does not hold yet, in order.
void appendUnique(std::vector<ir::IndexVar>& list, const std::vector<ir::IndexVar>& vars);

// The input that `tensor` is a copy of in the loops' order (its
// provenance: convertOneDisagreeingInput made it); none when it is not
// such a copy, whatever its name.
std::optional<ir::TensorVar> convertedFrom(const ir::TensorVar& tensor);
// How refusals name the tensor `access` reads: a copy as the copy of the
// input (its name is the compiler's), any other by its name.
std::string tensorInWords(const ir::Access& access);

// One term of the reduction notation's top-level sum or difference.
struct SignedTerm {
  bool negated = false;
  std::vector<ir::IndexVar> summed;  // its own sums, outermost first
  ir::IndexExpr body;
  // The accesses of the body as written that termLoopOrder made read
  // copies in the term's loop order (the original access, the copy's).
  std::unordered_map<ir::IndexExpr, ir::IndexExpr> readFromCopies;
};

// The loops that insert `term` into a workspace written `lhs`: its sparse
// inputs in storage order (one converted if they disagree, recorded in
// `decisions` and `convertedInputs`), `lhs`'s storage order where they leave
// a choice; indices of `lhs` the term does not use are looped over innermost.
// `keptAccesses` (the accesses a pos iterates) are never converted; a copy
// takes a name none of `takenNames` has, and adds it there.
std::vector<ir::IndexVar> termLoopOrder(const ir::Access& lhs, SignedTerm& term, std::vector<std::string>& decisions,
                                        std::vector<std::pair<std::string, ir::TensorVar>>& convertedInputs,
                                        std::set<std::string>& takenNames,
                                        const std::vector<ir::Access>& keptAccesses = {});
// The names a copy tcc makes for `assignment` must not take: `request`'s
// and those of the assignment's tensors.
std::set<std::string> namesTakenIn(const ir::AssignmentNode& assignment, const ScheduleRequest& request);

// precompute(expr, i_vars, o_vars, W) with W a sparse workspace tensor, the
// request's command `commandIndex` (sparse_precompute.cpp).
ConcretizedStatement precomputeIntoSparseWorkspace(const ir::AssignmentNode& assignment,
                                                   const ScheduleRequest& request, size_t commandIndex);

}  // namespace tcc::lowering
