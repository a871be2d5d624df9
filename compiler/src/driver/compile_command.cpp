// tcc compile FILE [--target cpu|cuda] [--fp strict|fast] [--emit cin|ir|cpp|cuda|mlir] [-o FILE]:
// lower a DSL file and print (or write) concrete index notation, the
// imperative IR, the target's source (C++, or CUDA that nvcc compiles
// alone), or the computation as MLIR 16 for its sparsifier.
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

std::string render(const Lowered& lowered, const std::string& emit) {
  std::ostringstream out;
  if (emit.empty()) return lowered.source();
  if (emit == "cpp" || emit == "cuda") {
    bool cuda = lowered.target == frontend::Target::Cuda;
    if ((emit == "cuda") != cuda)
      throw Error("--emit " + emit + " needs the " + (cuda ? "cpu" : "cuda") + " target; this program is compiled for " +
                  (cuda ? "cuda" : "cpu") + " (see --target)");
    return lowered.source();
  }
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
    std::string emit;  // empty: the target's source
    std::string output;
    std::string target;
    std::string floatingPoint;
  };
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand("compile", "Compile a DSL file to C++ or CUDA (or show an intermediate form, or "
                                                "export it to MLIR 16)");
  command->add_option("FILE", options->path, "DSL file (.tc)")->required();
  command->add_option("--emit", options->emit,
                      "What to produce: cin (concrete index notation), ir (imperative IR), cpp (C++ source), cuda "
                      "(CUDA source), mlir (MLIR 16 linalg.generic on sparse tensors, for mlir-opt-16 "
                      "--sparse-compiler); by default the target's source")
      ->check(CLI::IsMember({"cin", "ir", "cpp", "cuda", "mlir"}));
  command->add_option("--target", options->target, "cpu or cuda (overrides the program's `target` line)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  addFloatingPointOption(command, options->floatingPoint);
  command->add_option("-o,--output", options->output, "Write to this file instead of standard output");
  command->callback([options] {
    Program program = Program::fromSyntax(loadComputationOrExit(options->path));
    std::string text;
    try {
      if (options->emit == "mlir") {
        text = exportMlir(program);
      } else {
        CompileOptions compileOptions;
        if (!options->target.empty())
          compileOptions.target = options->target == "cuda" ? frontend::Target::Cuda : frontend::Target::Cpu;
        compileOptions.floatingPoint = floatingPointOption(options->floatingPoint);
        Lowered lowered = lowerProgram(program, compileOptions);
        text = render(lowered, options->emit);
      }
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
