#include <iostream>

#include "commands.h"

namespace tcc::driver {

frontend::Program loadProgramOrExit(const std::string& path) {
  try {
    return frontend::parseProgramFile(path);
  } catch (const frontend::DiagnosticError& error) {
    std::cerr << error.what();
    throw CLI::RuntimeError(kExitUserError);
  }
}

}  // namespace tcc::driver
