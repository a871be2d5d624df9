// tcc compile FILE [--emit cin|ir|cpp|mlir] [-o FILE]: lower a DSL file and
// print (or write) concrete index notation, the imperative IR, C++, or the
// computation as MLIR 16 for its sparsifier.
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "tcc/ir/imperative_printer.h"
#include "tcc/ir/index_printer.h"
#include "tcc/mlir.h"
#include "tcc/tcc.h"

namespace tcc::driver {

namespace {

std::string render(const Program& program, const std::string& emit) {
  if (emit == "mlir") return exportMlir(program);
  Lowered lowered = lowerProgram(program);
  std::ostringstream out;
  if (emit == "cpp") return lowered.cpp;
  for (const auto& statement : lowered.statements) {
    if (emit == "cin") out << ir::toString(statement.concrete) << "\n";
    if (emit == "ir") out << ir::imp::toString(statement.function) << "\n";
  }
  return out.str();
}

// Writes next to the target and renames, so a failure leaves no partial file.
void writeFileAtomically(const std::string& path, const std::string& text) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary);
    file << text;
    if (!file.good()) throw Error("cannot write " + path);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error("cannot write " + path);
  }
}

}  // namespace

void addCompileCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::string emit = "cpp";
    std::string output;
  };
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand("compile", "Compile a DSL file to C++ (or show an intermediate form, or export it to MLIR 16)");
  command->add_option("FILE", options->path, "DSL file (.tc)")->required();
  command->add_option("--emit", options->emit,
                      "What to produce: cin (concrete index notation), ir (imperative IR), cpp (C++ source), "
                      "mlir (MLIR 16 linalg.generic on sparse tensors, for mlir-opt-16 --sparse-compiler)")
      ->check(CLI::IsMember({"cin", "ir", "cpp", "mlir"}))
      ->capture_default_str();
  command->add_option("-o,--output", options->output, "Write to this file instead of standard output");
  command->callback([options] {
    Program program = Program::fromSyntax(loadProgramOrExit(options->path));
    std::string text;
    try {
      text = render(program, options->emit);
    } catch (const frontend::DiagnosticError& error) {
      std::cerr << error.what();
      throw CLI::RuntimeError(kExitUserError);
    } catch (const std::exception& error) {
      std::cerr << options->path << ": error: " << error.what() << "\n";
      throw CLI::RuntimeError(kExitUserError);
    }
    if (options->output.empty()) {
      std::cout << text;
    } else {
      try {
        writeFileAtomically(options->output, text);
      } catch (const std::exception& error) {
        std::cerr << "tcc: error: " << error.what() << "\n";
        throw CLI::RuntimeError(kExitUserError);
      }
    }
  });
}

}  // namespace tcc::driver
