// Combining a GPU thread's atomic additions to one entry in a register
// (see combine_atomics.cpp for when it applies).
#pragma once

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

ir::imp::Stmt combineAtomics(const ir::imp::Stmt& stmt);

}  // namespace tcc::lowering
