// tcc compile FILE --emit cin: the statements as concrete index notation.
#include <iostream>

#include "commands.h"
#include "tcc/ir/concretize.h"
#include "tcc/ir/index_printer.h"

namespace tcc::driver {

void addCompileCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::string emit = "cin";
  };
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand("compile", "Compile a DSL file and print the result");
  command->add_option("FILE", options->path, "DSL file (.tc)")->required();
  command->add_option("--emit", options->emit, "What to print: cin (concrete index notation)")
      ->check(CLI::IsMember({"cin"}))
      ->capture_default_str();
  command->callback([options] {
    frontend::Program program = loadProgramOrExit(options->path);
    for (const ir::IndexStmt& statement : program.statements)
      std::cout << ir::toString(ir::concretize(statement)) << "\n";
  });
}

}  // namespace tcc::driver
