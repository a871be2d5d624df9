// What a schedule asks of one statement's loop nest: TACO's iteration-space
// transformations, in the order they were written. Each command rewrites
// the loop nest left by the ones before it (see schedule_loops.h), so a
// command may name the variables an earlier one introduced.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"
#include "tcc/lowering/lower.h"

namespace tcc::lowering {

// The named variables take the loop positions they hold now, in this
// relative order.
struct ReorderCommand {
  std::vector<ir::IndexVar> order;
};

// Computes `expr` into a dense workspace indexed by `var` (renamed
// `workspaceVar` in the loops that fill it), in a where-statement placed
// just above the first loop that only the workspace needs.
struct PrecomputeCommand {
  ir::IndexExpr expr;
  ir::IndexVar var, workspaceVar;
};

struct ParallelizeCommand {
  ir::IndexVar var;
  ir::ParallelUnit unit = ir::ParallelUnit::CPUThread;
  ir::OutputRaceStrategy strategy = ir::OutputRaceStrategy::NoRaces;
};

struct UnrollCommand {
  ir::IndexVar var;
  int factor = 0;
};

// The statement's results go through a sparse (ISM) workspace holding the
// whole output, with these options, whether or not they scatter. `var`,
// when given, names where the workspace starts: the output's first index.
struct SparseWorkspaceCommand {
  std::optional<ir::IndexVar> var;
  SparseWorkspaceOptions options;
  bool policyGiven = false;
};

// Split, divide, fuse, pos and bound are the provenance relations they add.
using ScheduleCommandKind = std::variant<ReorderCommand, ir::SplitRelation, ir::DivideRelation, ir::FuseRelation,
                                         ir::PosRelation, ir::BoundRelation, PrecomputeCommand, ParallelizeCommand,
                                         UnrollCommand, SparseWorkspaceCommand>;

struct ScheduleCommand {
  ScheduleCommandKind kind;
  std::string text;  // as the user wrote it, for messages: "split(i, i0, i1, 32)"
};

struct ScheduleRequest {
  std::vector<ScheduleCommand> commands;  // in the order written
  // Outputs assembled in a pass of their own before the values are computed.
  std::vector<std::string> separatelyAssembled;
  // tensorcore(): the statement is computed on tensor cores (an intrinsic
  // that recognises it, see intrinsics.h), or refused with the reason.
  bool tensorCore = false;
};

// An illegal or unsupported command: names the command (its index in the
// request's list) and the reason.
class ScheduleError : public LoweringError {
 public:
  ScheduleError(size_t command, const std::string& message) : LoweringError(message), command_(command) {}
  size_t command() const { return command_; }

 private:
  size_t command_;
};

}  // namespace tcc::lowering
