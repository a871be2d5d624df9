// What a schedule asks of one statement's loop nest: TACO's iteration-space
// transformations, in the order they were written. Each command rewrites
// the loop nest left by the ones before it (see schedule_loops.h), so a
// command may name the variables an earlier one introduced.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"
#include "tcc/ir/tensor_var.h"
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

// precompute(expr, i_vars, o_vars, W) with W a workspace tensor in a
// sparse format (the §6.1 form): `expr` is computed into W(i_vars) by
// loops of its own (the producer: every component inserted into an ISM
// workspace with these options, its coordinates sorted in W's mode order),
// and the statement reads W(o_vars) in place of `expr` (the consumer).
// The other commands of the statement schedule the producer's loops.
struct SparsePrecomputeCommand {
  ir::IndexExpr expr;
  std::vector<ir::IndexVar> inputVars, outputVars;
  ir::TensorVar workspace;
  SparseWorkspaceOptions options;
  bool policyGiven = false;
};

// Split, divide, fuse, pos and bound are the provenance relations they add.
using ScheduleCommandKind = std::variant<ReorderCommand, ir::SplitRelation, ir::DivideRelation, ir::FuseRelation,
                                         ir::PosRelation, ir::BoundRelation, PrecomputeCommand, ParallelizeCommand,
                                         UnrollCommand, SparseWorkspaceCommand, SparsePrecomputeCommand>;

struct ScheduleCommand {
  ScheduleCommandKind kind;
  std::string text;  // as the user wrote it, for messages: "split(i, i0, i1, 32)"
  int line = 0;      // its line in the schedule block, for messages; 0 when it has none
};

struct ScheduleRequest {
  std::vector<ScheduleCommand> commands;  // in the order written
  // Outputs assembled in a pass of their own before the values are computed.
  std::vector<std::string> separatelyAssembled;
  // tensorcore(): the statement is computed on tensor cores (an intrinsic
  // that recognises it, see intrinsics.h), or refused with the reason.
  bool tensorCore = false;
  // The statement is lowered for the cuda target: the terms of a sum that
  // reduce over different variables into a dense output each add into it
  // in a kernel of their own, atomically where a nest's outer loop sums
  // (concretize_for_lowering.h).
  bool cudaTarget = false;
  // Inputs read in their own order, never from a converted copy (a
  // workspace tensor that a precompute fills).
  std::vector<std::string> keptInOrder;
  // Names the tensors tcc inserts (copies of inputs, workspaces: see
  // inserted_tensor_names.h) do not take: the program's tensors' and those
  // of the copies inserted before (the statement's own are never taken).
  std::set<std::string> takenNames;
};

// An illegal or unsupported command: names the command (its index in the
// request's list) and the reason.
class ScheduleError : public LoweringError {
 public:
  ScheduleError(size_t command, const std::string& message) : LoweringError(message, command) {}
  size_t command() const { return *LoweringError::command(); }
};

// The commands behind the loops of a statement scheduled by `request`
// (LowerOptions::commands); `outputOrderCommand`: see
// ConcretizedStatement::outputOrderCommand.
LoopCommands loopCommandsOf(const ScheduleRequest& request, std::optional<size_t> outputOrderCommand = std::nullopt);

}  // namespace tcc::lowering
