// Removes declarations of scalar and pointer variables that nothing reads
// (for example a tensor's dimension that no loop bound needs), repeating
// until none is left. Only declarations whose initial value has no side
// effects (no call) are removed. Keeps generated code free of unused names.
#pragma once

#include "tcc/ir/imperative.h"

namespace tcc::ir::imp {

Stmt removeUnusedDeclarations(const Stmt& stmt);

}  // namespace tcc::ir::imp
