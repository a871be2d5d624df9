// Prints the imperative IR as indented pseudo-code (for `--emit ir`, tests
// and debugging). The C++ and CUDA emitters live in lowering/.
#pragma once

#include <iosfwd>
#include <string>

#include "tcc/ir/imperative.h"

namespace tcc::ir::imp {

std::string toString(const Expr& expr);
std::string toString(const Stmt& stmt);
std::string toString(const Function& function);
const char* toString(ScalarKind kind);

}  // namespace tcc::ir::imp
