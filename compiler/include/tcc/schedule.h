// Scheduling from C++: the commands of the DSL's schedule block, built with
// TACO's names and argument order, for programs made with the C++ builder.
//
//   tcc::IndexVar i("i"), j("j"), k("k"), i0("i0"), i1("i1"), jpos("jpos"), jpos0("jpos0"), jpos1("jpos1");
//   tcc::Schedule schedule;
//   schedule.split(i, i0, i1, 32)
//       .pos(j, jpos, A(i, j))
//       .split(jpos, jpos0, jpos1, 4)
//       .reorder({i0, i1, jpos0, k, jpos1})
//       .parallelize(i0, tcc::ParallelUnit::CPUThread, tcc::OutputRaceStrategy::NoRaces);
//   auto program = tcc::Program::fromStatements({C(i, k) = A(i, j) * B(j, k)}, {C, A, B}, schedule);
//
// Commands apply in order, each to the loops the ones before it left, and
// are checked exactly as the DSL's are when the program is compiled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tcc/frontend/schedule.h"
#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"
#include "tcc/ir/tensor_var.h"

namespace tcc {

using ir::BoundKind;
using ir::OutputRaceStrategy;
using ir::ParallelUnit;

// The options of a sparse (insert-sort-merge) workspace: its policy
// (bucket, hash, coord, map, vector; empty: tcc's documented rule picks
// one), first accumulation capacity (unset: the ISM's default; set, it must
// be positive), pipelining, double buffering and, for a workspace tensor,
// its output order (the mode its coordinates are sorted by first, then
// the next; empty: mode order 0, 1, ...).
struct SparseWorkspaceFormat {
  std::string policy;
  std::optional<int64_t> capacity;
  bool pipelining = false;
  bool doubleBuffering = false;
  std::vector<int> outputOrder;
};

// A workspace tensor for Schedule::precompute(expr, i_vars, o_vars, W), the
// C++ form of `tensor W(I, J) : sparse_workspace(...) order (...)`:
//   tcc::Workspace W("W", {"I", "J"}, {.policy = "coord", .capacity = 1024, .outputOrder = {1, 0}});
// It is no parameter of the kernel; only the precompute fills it.
struct Workspace {
  Workspace(std::string name, std::vector<ir::Dimension> shape, SparseWorkspaceFormat format = {},
            ir::Datatype type = ir::Datatype::Float64);
  std::string name;
  std::vector<ir::Dimension> shape;
  SparseWorkspaceFormat format;
  ir::Datatype type;
};

class Schedule {
 public:
  Schedule& reorder(const std::vector<ir::IndexVar>& order);
  Schedule& split(const ir::IndexVar& var, const ir::IndexVar& outer, const ir::IndexVar& inner, int64_t factor);
  Schedule& divide(const ir::IndexVar& var, const ir::IndexVar& outer, const ir::IndexVar& inner, int64_t parts);
  Schedule& fuse(const ir::IndexVar& outer, const ir::IndexVar& inner, const ir::IndexVar& fused);
  Schedule& pos(const ir::IndexVar& var, const ir::IndexVar& posVar, const ir::Access& access);
  Schedule& bound(const ir::IndexVar& var, const ir::IndexVar& boundVar, int64_t value, BoundKind kind);
  // Computes `expr` into a dense workspace indexed by `var` (`workspaceVar`
  // where the workspace is filled).
  Schedule& precompute(const ir::IndexExpr& expr, const ir::IndexVar& var, const ir::IndexVar& workspaceVar);
  // The §6.1 form: computes `expr` into workspace W indexed by `inputVars`
  // and reads W(outputVars) in its place (outputVars must equal inputVars
  // for now); the statement's other commands schedule the loops that fill W.
  Schedule& precompute(const ir::IndexExpr& expr, const std::vector<ir::IndexVar>& inputVars,
                       const std::vector<ir::IndexVar>& outputVars, const Workspace& workspace);
  // sparse_workspace([var], ...): the results go through a sparse workspace
  // (starting at `var`'s level, when given; see the DSL's command).
  Schedule& sparseWorkspace(const SparseWorkspaceFormat& format = {},
                            const std::optional<ir::IndexVar>& var = std::nullopt);
  Schedule& parallelize(const ir::IndexVar& var, ParallelUnit unit, OutputRaceStrategy strategy);
  Schedule& unroll(const ir::IndexVar& var, int factor);
  // Computes the statement on tensor cores (TCA-SpMM for a CSR float16
  // SpMM on the cuda target), or refuses it with the reason.
  Schedule& tensorcore();
  // Assembles `tensor`'s pos and crd in a pass of its own before its values.
  Schedule& assembleSeparately(const std::string& tensor);

  const std::vector<frontend::ScheduleCommand>& commands() const { return commands_; }
  const std::vector<Workspace>& workspaces() const { return workspaces_; }

 private:
  Schedule& add(std::string name, std::vector<frontend::ScheduleArgument> arguments);
  std::vector<frontend::ScheduleCommand> commands_;
  std::vector<Workspace> workspaces_;
};

}  // namespace tcc
