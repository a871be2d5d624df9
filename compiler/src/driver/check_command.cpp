// tcc check FILE: parse and check, print nothing on success (a warning when
// the program has nothing to compute).
#include <iostream>

#include "commands.h"

namespace tcc::driver {

void addCheckCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "check", "Check a DSL file: print nothing and exit 0 if it is valid, else print every "
               "error (file:line:col) to stderr and exit 1");
  auto path = std::make_shared<std::string>();
  command->add_option("FILE", *path, "DSL file (.tc)")->required();
  command->callback([path] {
    if (hasNothingToCompute(loadProgramOrExit(*path))) std::cerr << "tcc: warning: " << nothingToComputeMessage(*path) << "\n";
  });
}

}  // namespace tcc::driver
