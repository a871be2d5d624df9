// Unroll-and-jam of a GPU kernel's serial loops that carry an unroll factor
// and hold an inner loop (see unroll_and_jam.cpp for when it applies).
#pragma once

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

ir::imp::Stmt unrollAndJam(const ir::imp::Stmt& stmt);

}  // namespace tcc::lowering
