// Applies scheduling commands to a statement whose sums sit below its top
// (`Y(i,j) = A(i,j,m) - B(i)`, `y(i) = A(i,j) * sum(k, B(j,k) * x(k))`).
// ir::concretize computes each such sum into a scalar temporary by loops
// of its own, inside the loops over the output's variables:
//
//   forall(i, forall(j, where(Y(i,j) = tm - B(i), forall(m, tm += A(i,j,m)))))
//
// The loops form a tree of chains (perfectly nested foralls): the outer
// chain around the where, one chain per sum in its producer, and so on for
// sums inside sums. A command acts on every loop over the variable it
// names, wherever that loop stands: split, divide, bound, pos and fuse
// replace it in its chain (pos only where the loop's body reads the access;
// fuse with the loop directly inside it in the same chain), parallelize and
// unroll set its attributes, and reorder permutes the named loops within
// each chain (a sum's loops cannot move outside the loops its temporary is
// computed in, nor among another sum's). precompute(expr, i, iw) takes a
// part of one chain's assignment and one of that chain's loops: its dense
// workspace's where stands among them, as in a perfect nest. A precompute
// of the whole right-hand side over j (dense_workspace) puts the top chain's
// loops from j's on, with everything inside them, into the producer of a
// dense workspace over j, and a loop over j copies it into the output.
// sparse_workspace is refused at its command. Relations go into one
// such-that around the whole statement, as for a perfect nest.
//
// The same applies to a statement whose terms each fill one sparse
// workspace by loops of their own (buildTermwiseSparseWorkspace: a where
// whose producer is a sequence of the terms' loop nests); the loops that
// copy the workspace into the output (the where's consumer) stay as they are.
// And to one whose terms each add into the dense output by loops of their
// own (buildTermwiseAccumulation: a sequence of the terms' nests), where
// every store into the output adds, a dense workspace's copy too. There a
// precompute takes a part of one term, in that term's nest; a precompute of
// the whole right-hand side (dense_workspace) gives each term that loops
// over its index a dense workspace of its own; a part spanning terms is
// refused (no one nest fills it).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// `concrete` is ir::concretize's statement for `assignment`, or the
// termwise workspace's. Throws ScheduleError naming the command that cannot
// apply; records what each command did in `decisions`. A dense workspace
// it inserts takes a name none of `takenNames` has. `workspaceTaken`:
// sparse_workspace commands configured the statement's workspace already
// (they are skipped, not refused). `termsAddIntoOutput`: the terms' nests
// add into the dense output itself.
ir::IndexStmt scheduleNestedSums(const ir::IndexStmt& concrete, const std::vector<ScheduleCommand>& commands,
                                 const ir::AssignmentNode& assignment, std::vector<std::string>& decisions,
                                 const std::set<std::string>& takenNames, bool workspaceTaken = false,
                                 bool termsAddIntoOutput = false);

}  // namespace tcc::lowering
