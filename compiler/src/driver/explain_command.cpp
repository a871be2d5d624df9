// tcc explain FILE: the tensors with their formats, then for each statement
// its concrete index notation and the decisions lowering made (loop order,
// workspaces, format conversions) with their reasons.
#include <utility>
#include <iostream>

#include "commands.h"
#include "tcc/ir/index_printer.h"
#include "tcc/tcc.h"

namespace tcc::driver {

void addExplainCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* command = app.add_subcommand(
      "explain", "Explain how a DSL file is compiled: formats, concrete index notation, loop order and workspaces");
  command->add_option("FILE", *path, "DSL file (.tc)")->required();
  auto target = std::make_shared<std::string>();
  command->add_option("--target", *target, "cpu or cuda (overrides the program's `target` line)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto floatingPoint = std::make_shared<std::string>();
  addFloatingPointOption(command, *floatingPoint);
  command->callback([path, target, floatingPoint] {
    Program program = Program::fromSyntax(loadComputationOrExit(*path));
    std::cout << "tensors:\n";
    for (const ir::TensorVar& tensor : program.tensors())
      std::cout << "  " << ir::declarationString(tensor) << "\n";
    for (const frontend::WorkspaceDeclaration& workspace : program.syntax().workspaces)
      std::cout << "  " << frontend::workspaceDeclarationString(workspace) << " (a workspace; precompute fills it)\n";
    Lowered lowered;
    try {
      CompileOptions options;
      if (!target->empty()) options.target = *target == "cuda" ? frontend::Target::Cuda : frontend::Target::Cpu;
      options.floatingPoint = floatingPointOption(*floatingPoint);
      lowered = lowerProgram(program, options);
    } catch (const frontend::DiagnosticError& error) {
      std::cerr << error.what();
      throw CLI::RuntimeError(kExitUserError);
    } catch (const std::exception& error) {
      std::cerr << *path << ": error: " << error.what() << "\n";
      throw CLI::RuntimeError(kExitUserError);
    }
    if (lowered.target == frontend::Target::Cpu)
      std::cout << "floating point: " << frontend::toString(lowered.floatingPoint) << " ("
                << (!floatingPoint->empty()          ? "--fp"
                    : program.syntax().floatingPoint ? "the program's fp line"
                                                     : "the default")
                << ")\n";
    // A sum split out of a statement (cuda) is shown above the statement.
    std::string split;
    for (const CompiledStatement& statement : lowered.statements) {
      if (statement.temporary) {
        split += "  sum into " + statement.output.name() + ": " + ir::toString(statement.statement) + "\n" +
                 "    concrete index notation: " + ir::toString(statement.concrete) + "\n";
        for (const auto& decision : statement.decisions) split += "    - " + decision + "\n";
        continue;
      }
      std::cout << "statement " << statement.programStatement + 1 << ": "
                << ir::toString(program.statements()[statement.programStatement]) << "\n"
                << std::exchange(split, "") << "  concrete index notation: " << ir::toString(statement.concrete)
                << "\n";
      for (const auto& decision : statement.decisions) std::cout << "  - " << decision << "\n";
    }
  });
}

}  // namespace tcc::driver
