// tcc's export to MLIR 16 (`tcc compile FILE --emit mlir`): a program's
// statement as a linalg.generic over sparse tensors, which
// `mlir-opt-16 --sparse-compiler` compiles (see tcc/lowering/mlir_export.h
// for the kernel's signature and what is refused).
#pragma once

#include <string>

#include "tcc/lowering/mlir_export.h"
#include "tcc/tcc.h"

namespace tcc {

struct MlirExportOptions {
  std::string functionName = "kernel";
  // Schedules do not change what a statement computes; a caller that wants
  // the computation only (a cross-check) may drop them. Otherwise a
  // schedule command is refused at its line: MLIR 16's sparsifier chooses
  // its own loops.
  bool ignoreSchedule = false;
};

// Throws lowering::MlirExportError ("cannot export `...` to MLIR 16: why")
// for what MLIR 16 cannot express, frontend::DiagnosticError at a schedule
// command.
lowering::MlirKernel exportMlirKernel(const Program& program, const MlirExportOptions& options = {});
// The kernel as a module's text.
std::string exportMlir(const Program& program, const MlirExportOptions& options = {});

}  // namespace tcc
