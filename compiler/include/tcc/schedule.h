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
#include <vector>

#include "tcc/frontend/schedule.h"
#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"

namespace tcc {

using ir::BoundKind;
using ir::OutputRaceStrategy;
using ir::ParallelUnit;

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
  Schedule& parallelize(const ir::IndexVar& var, ParallelUnit unit, OutputRaceStrategy strategy);
  Schedule& unroll(const ir::IndexVar& var, int factor);
  // Computes the statement on tensor cores (TCA-SpMM for a CSR float16
  // SpMM on the cuda target), or refuses it with the reason.
  Schedule& tensorcore();
  // Assembles `tensor`'s pos and crd in a pass of its own before its values.
  Schedule& assembleSeparately(const std::string& tensor);

  const std::vector<frontend::ScheduleCommand>& commands() const { return commands_; }

 private:
  Schedule& add(std::string name, std::vector<frontend::ScheduleArgument> arguments);
  std::vector<frontend::ScheduleCommand> commands_;
};

}  // namespace tcc
