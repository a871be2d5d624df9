// Internal to the library: the schedule of a program as lowering requests.
#pragma once

#include "tcc/frontend/program.h"
#include "tcc/lowering/concretize_for_lowering.h"

namespace tcc {

// Throws frontend::DiagnosticError at the command for anything it cannot apply.
lowering::ScheduleRequest scheduleRequestFor(const frontend::Program& program, const ir::IndexStmt& statement);

// Throws frontend::DiagnosticError at the `target cuda(...)` line: this build
// has only the C++ backend.
[[noreturn]] void refuseCudaTarget(const frontend::TargetSpec& target);

}  // namespace tcc
