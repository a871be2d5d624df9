// A program -> its MLIR 16 kernel, with the refusals a program (rather than
// a statement) can earn: several statements, a schedule.
#include "tcc/mlir.h"

#include "prior_values.h"
#include "schedule_request.h"
#include "tcc/ir/index_printer.h"

namespace tcc {

namespace {

// A refusal of the export, at the program's statement `index` where the
// program has a source.
[[noreturn]] void refuseExport(const Program& program, size_t index, const std::string& message) {
  if (auto diagnostic = statementDiagnostic(program.syntax(), index, message))
    throw MlirExportDiagnosticError({*diagnostic});
  throw lowering::MlirExportError(message);
}

}  // namespace

lowering::MlirKernel exportMlirKernel(const Program& program, const MlirExportOptions& options) {
  const auto& statements = program.statements();
  if (statements.size() != 1)
    refuseExport(program, statements.empty() ? 0 : 1,
                 "cannot export to MLIR 16: the program has " + std::to_string(statements.size()) +
                     " statements; the export takes a program of one statement");
  if (!options.ignoreSchedule && !program.syntax().schedule.empty()) {
    const frontend::ScheduleCommand& command = program.syntax().schedule.front();
    refuseScheduleCommand(program.syntax(), command,
                          commandText(command) + ": schedules are not exported to MLIR 16, whose sparsifier "
                                                 "chooses its own loops; export the program without its schedule");
  }
  // `+=` and a statement reading its output read the output's prior
  // values from a tensor of their own (y_before), an argument of the kernel.
  std::set<std::string> takenNames;
  for (const auto& tensor : program.tensors()) takenNames.insert(tensor.name());
  ir::IndexStmt statement = readPriorValues(statements.front(), takenNames).statement;
  try {
    return lowering::exportToMlir(statement, options.functionName);
  } catch (const lowering::MlirExportError& error) {
    refuseExport(program, 0, "cannot export `" + ir::toString(statements.front()) + "` to MLIR 16: " + error.what());
  }
}

std::string exportMlir(const Program& program, const MlirExportOptions& options) {
  return exportMlirKernel(program, options).module();
}

}  // namespace tcc
