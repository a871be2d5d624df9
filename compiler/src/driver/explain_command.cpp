// tcc explain FILE: the tensors with their formats, then each statement in
// concrete index notation.
#include <iostream>

#include "commands.h"
#include "tcc/ir/concretize.h"
#include "tcc/ir/index_printer.h"

namespace tcc::driver {

void addExplainCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* command = app.add_subcommand(
      "explain", "Explain how a DSL file is compiled: tensor formats and concrete index notation");
  command->add_option("FILE", *path, "DSL file (.tc)")->required();
  command->callback([path] {
    frontend::Program program = loadProgramOrExit(*path);
    std::cout << "tensors:\n";
    for (const ir::TensorVar& tensor : program.tensors)
      std::cout << "  " << ir::declarationString(tensor) << "\n";
    for (size_t index = 0; index < program.statements.size(); ++index) {
      const ir::IndexStmt& statement = program.statements[index];
      std::cout << "statement " << index + 1 << ": " << ir::toString(statement) << "\n"
                << "  concrete index notation: " << ir::toString(ir::concretize(statement))
                << "\n";
    }
  });
}

}  // namespace tcc::driver
