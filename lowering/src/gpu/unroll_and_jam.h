// Unroll-and-jam of a GPU kernel's serial loops that carry an unroll factor
// and hold an inner loop (see unroll_and_jam.cpp for when it applies).
#pragma once

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

// `speculativeLoads`: a guarded copy's sums run unguarded, their loads at
// a live copy's index (see unroll_and_jam.cpp); off, every statement of a
// guarded copy runs under its `if`.
ir::imp::Stmt unrollAndJam(const ir::imp::Stmt& stmt, bool speculativeLoads = true);

}  // namespace tcc::lowering
