// The front end's result: a DSL file parsed and checked, as tensor index
// notation over declared tensors, plus the schedule AST and the target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tcc/frontend/diagnostic.h"
#include "tcc/frontend/schedule.h"
#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/ir/tensor_var.h"

namespace tcc::frontend {

enum class Target { Cpu, Cuda };

struct TargetSpec {
  Target target = Target::Cpu;
  std::string sm;  // Cuda only: "sm_90"; empty when the file names none
  SourceLocation location;
};

// How generated CPU code may evaluate floating-point arithmetic.
//  Strict: as written. No fused multiply-add the source does not spell, sums
//    in loop order: the same bits from every backend and every run.
//  Fast: fused multiply-adds, reassociated (vectorized) scalar sums, the
//    host's full vector width. Results differ from strict in the last bits;
//    infinities and NaNs still propagate.
enum class FloatingPointMode { Strict, Fast };

const char* toString(FloatingPointMode mode);  // "strict" or "fast"
std::optional<FloatingPointMode> parseFloatingPointMode(std::string_view text);

struct FloatingPointSpec {
  FloatingPointMode mode = FloatingPointMode::Strict;
  SourceLocation location;
};

// tensor W(I, J) : sparse_workspace(policy = coord, capacity = 1024,
//                                   pipeline = on, double_buffer = on) order (1, 0)
// A workspace tensor that precompute(expr, i_vars, o_vars, W) fills: no
// kernel parameter, its coordinates sorted in its mode order (the output
// order), with the ISM options given.
struct WorkspaceDeclaration {
  ir::TensorVar tensor;   // unique compressed levels in its mode order
  std::string policy;     // bucket, hash, coord, map, vector, a registered one; empty: tcc's rule
  SourceLocation policyLocation;
  std::int64_t capacity = 0;  // first accumulation capacity; 0: the default
  bool pipelining = false;
  bool doubleBuffering = false;
  SourceLocation location;  // the name in the declaration
};

// `W(I, J) : sparse_workspace(policy = coord, capacity = 1024) order (1,0)
// of float64`, as a declaration would write it.
std::string workspaceDeclarationString(const WorkspaceDeclaration& workspace);

struct Program {
  std::vector<ir::TensorVar> tensors;     // in declaration order
  std::vector<WorkspaceDeclaration> workspaces;
  std::vector<ir::IndexStmt> statements;  // tensor index notation, in file order
  // Where each statement begins (its output), for refusals of the statement
  // as a whole; empty for a program from the C++ builder.
  std::vector<SourceLocation> statementLocations;
  std::vector<ScheduleCommand> schedule;
  std::optional<TargetSpec> target;
  std::optional<FloatingPointSpec> floatingPoint;  // the `fp` line, if any
  std::string sourcePath;
  std::string sourceText;  // for diagnostics found after parsing (schedule legality)

  // The declared tensor of that name, or null.
  const ir::TensorVar* findTensor(const std::string& name) const;
  const WorkspaceDeclaration* findWorkspace(const std::string& name) const;
};

// Parse and check DSL text; `fileName` is what diagnostics call the text.
// Throws DiagnosticError holding every error found, in source order.
Program parseProgram(std::string_view text, std::string fileName);
// Same for a file; a file that cannot be read is a DiagnosticError too.
Program parseProgramFile(const std::string& path);

}  // namespace tcc::frontend
