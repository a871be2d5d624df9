// The tcc command's subcommands. Each registers itself on the app; when it
// runs, it returns its exit code by throwing CLI::RuntimeError(code) for
// failures (main turns that into the process exit code).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "tcc/frontend/program.h"

namespace tcc::driver {

// Exit codes: 0 success, 1 an error in the user's input, 2 bad usage.
constexpr int kExitUserError = 1;
constexpr int kExitUsageError = 2;

void addCheckCommand(CLI::App& app);
void addCompileCommand(CLI::App& app);
void addExplainCommand(CLI::App& app);
void addRunCommand(CLI::App& app);

// Parses and checks a DSL file; on errors prints every diagnostic to
// stderr and throws CLI::RuntimeError(kExitUserError).
frontend::Program loadProgramOrExit(const std::string& path);
// The same for commands that compute (compile, run, explain): a program
// without a statement is refused, since it would silently do nothing.
frontend::Program loadComputationOrExit(const std::string& path);
// Whether a checked program has nothing to compute, and the message that says so.
bool hasNothingToCompute(const frontend::Program& program);
std::string nothingToComputeMessage(const std::string& path);

// --fp strict|fast on a command that compiles; "" when not given.
extern const char* const kFloatingPointHelp;
void addFloatingPointOption(CLI::App* command, std::string& mode);
std::optional<frontend::FloatingPointMode> floatingPointOption(const std::string& mode);

}  // namespace tcc::driver
