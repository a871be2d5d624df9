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

bool hasNothingToCompute(const frontend::Program& program) { return program.statements.empty(); }

std::string nothingToComputeMessage(const std::string& path) {
  return path + ": nothing to compute: the program has no statement (such as 'y(i) = A(i,j) * x(j)')";
}

frontend::Program loadComputationOrExit(const std::string& path) {
  frontend::Program program = loadProgramOrExit(path);
  if (hasNothingToCompute(program)) {
    std::cerr << "tcc: error: " << nothingToComputeMessage(path) << "\n";
    throw CLI::RuntimeError(kExitUserError);
  }
  return program;
}

}  // namespace tcc::driver
