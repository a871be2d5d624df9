// Turns one einsum assignment into concrete index notation that the
// lowerer can compile, and says why it chose what it chose.
//
// Loop order: a topological order of the storage-order constraints of every
// tensor with a sparse level (an iterator over level l+1 needs level l's
// position), preferring the sparse output's order, then the sparse inputs'
// orders, then the remaining variables. Dense tensors are located in any
// order and constrain nothing.
//
// Schedule: the request's commands are applied in order to that loop nest
// (schedule.h); a command that is illegal there throws ScheduleError.
//
// Workspaces: when a summed variable sits between two of a sparse output's
// variables (row-wise SpGEMM: i, k, j), the output's trailing coordinates
// would arrive out of order; the trailing part is then computed into a dense
// workspace with a list of touched coordinates (Gustavson's algorithm) and
// copied out in order. Results that scatter across the output's outer
// levels (or that sparse_workspace(...) asks for) go through a sparse ISM
// workspace holding the whole output (sparse_workspace_insertion.cpp).
//
// Terms that reduce over different variables (`y(i) = A(j,i) * x(j) +
// z(i)`, no one loop order visiting every term's sparse inputs in storage
// order) each fill that workspace in a loop nest of their own. A dense
// output needs none: each term's nest adds into the output itself (zeroed
// before the first nest runs), one nest after another, so each entry gets
// its additions in loop order, term after term (the order strict mode
// keeps; the workspace adds a batch's sums to the earlier batches' instead
// once its capacity fills). A sparse workspace there would be a second
// copy of the output's coordinates, sorted and merged only to be scattered
// back into a dense array. On the cuda target each nest is a kernel, its
// GPU threads racing only where the nest's outer loop sums (Atomics); on
// the cpu target a loop on threads that sums keeps the workspace (one per
// thread, under any race strategy), since its iterations would race.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

struct ConcretizedStatement {
  ir::IndexStmt stmt;                  // concrete index notation
  std::vector<ir::IndexVar> loopOrder;  // outermost first
  std::vector<std::string> decisions;  // human-readable reasons, for `tcc explain`
  // Options of the sparse (ISM) workspaces in `stmt`, by workspace name.
  std::map<std::string, SparseWorkspaceOptions> sparseWorkspaces;
  // Inputs read from a copy in another storage order: (input name, copy).
  std::vector<std::pair<std::string, ir::TensorVar>> convertedInputs;
  // The request's precompute (its index in request.commands), where the
  // loops sum between a sparse output's coordinates and that precompute
  // stands where the output's workspace would go (a statement takes one):
  // lowering's refusal of the output's order, where no other command made
  // it, is the precompute's (LoopCommands::outputOrder).
  std::optional<size_t> outputOrderCommand;
  // Sums nested in the expression are computed into scalar temporaries
  // (where statements under the output's loops; loopOrder is empty).
  bool sumsInTemporaries = false;
  // Terms that reduce over different variables add into the dense output
  // directly, each in a loop nest of its own (a sequence of nests at the
  // statement's top; loopOrder is the first's).
  bool termsAddIntoOutput = false;
};

ConcretizedStatement concretizeForLowering(const ir::IndexStmt& assignment, const ScheduleRequest& request = {});

}  // namespace tcc::lowering
