// Internal to the library: the schedule of a program as lowering requests.
#pragma once

#include <optional>

#include "tcc/frontend/program.h"
#include "tcc/lowering/concretize_for_lowering.h"

namespace tcc {

struct ScheduleForStatement {
  lowering::ScheduleRequest request;
  // The schedule command behind each of request.commands, for locating errors.
  std::vector<const frontend::ScheduleCommand*> sources;
  // The tensorcore() command, where the schedule has one.
  const frontend::ScheduleCommand* tensorCoreSource = nullptr;
};

// The commands of the schedule block that name this statement's variables,
// in order. Throws frontend::DiagnosticError at a command it cannot apply.
ScheduleForStatement scheduleRequestFor(const frontend::Program& program, const ir::IndexStmt& statement);

// The command as written: "parallelize(i, CPUThread, NoRaces)".
std::string commandText(const frontend::ScheduleCommand& command);

// Throws frontend::DiagnosticError at the command, with the source line.
[[noreturn]] void refuseScheduleCommand(const frontend::Program& program, const frontend::ScheduleCommand& command,
                                       const std::string& message);

// A refusal of the program's statement `index` as a whole: a
// frontend::DiagnosticError at the statement (its output), with the source
// line, where the program has a source; tcc::Error for a program from the
// C++ builder.
[[noreturn]] void refuseStatement(const frontend::Program& program, size_t index, const std::string& message);

// The diagnostic at the program's statement `index` (its output, with the
// source line), or nothing for a program from the C++ builder.
std::optional<frontend::Diagnostic> statementDiagnostic(const frontend::Program& program, size_t index,
                                                        const std::string& message);

}  // namespace tcc
