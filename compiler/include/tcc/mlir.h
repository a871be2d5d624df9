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

// What a program from the DSL asks that MLIR 16 cannot express: a
// frontend::DiagnosticError at the statement (file:line:col, the source line
// and a caret; for a program of several statements, at the second), whose
// message is the lowering::MlirExportError's ("cannot export `...` to MLIR
// 16: why"). A caller that skips what cannot be exported catches this type
// and lowering::MlirExportError (a program from the C++ builder, which has
// no source to point at).
class MlirExportDiagnosticError : public frontend::DiagnosticError {
 public:
  using frontend::DiagnosticError::DiagnosticError;
};

// Throws MlirExportDiagnosticError (a program from the DSL) or
// lowering::MlirExportError (from the C++ builder) for what MLIR 16 cannot
// express, frontend::DiagnosticError at a schedule command.
lowering::MlirKernel exportMlirKernel(const Program& program, const MlirExportOptions& options = {});
// The kernel as a module's text.
std::string exportMlir(const Program& program, const MlirExportOptions& options = {});

}  // namespace tcc
