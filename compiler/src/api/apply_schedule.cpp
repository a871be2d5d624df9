// The scheduling front: turns the checked schedule block of a program into
// what the lowering stage applies to each statement. Commands it cannot
// apply yet are refused at their source location, never silently ignored.
#include <fstream>

#include "schedule_request.h"
#include "tcc/ir/index_queries.h"

namespace tcc {

namespace {

std::string sourceLine(const frontend::SourceLocation& location) {
  std::ifstream file(location.file);
  std::string line;
  for (int number = 1; number <= location.line && std::getline(file, line); ++number) {
  }
  return line;
}

[[noreturn]] void refuse(const frontend::ScheduleCommand& command, const std::string& message) {
  throw frontend::DiagnosticError({frontend::Diagnostic{command.location, message, sourceLine(command.location)}});
}

std::optional<ir::ParallelUnit> parallelUnit(const std::string& name) {
  using ir::ParallelUnit;
  for (auto unit : {ParallelUnit::NotParallel, ParallelUnit::DefaultUnit, ParallelUnit::CPUThread,
                    ParallelUnit::CPUVector, ParallelUnit::GPUBlock, ParallelUnit::GPUWarp, ParallelUnit::GPUThread})
    if (ir::toString(unit) == name) return unit;
  return std::nullopt;
}

std::optional<ir::OutputRaceStrategy> raceStrategy(const std::string& name) {
  using ir::OutputRaceStrategy;
  for (auto strategy : {OutputRaceStrategy::IgnoreRaces, OutputRaceStrategy::NoRaces, OutputRaceStrategy::Atomics,
                        OutputRaceStrategy::Temporary, OutputRaceStrategy::ParallelReduction})
    if (ir::toString(strategy) == name) return strategy;
  return std::nullopt;
}

}  // namespace

lowering::ScheduleRequest scheduleRequestFor(const frontend::Program& program, const ir::IndexStmt& statement) {
  lowering::ScheduleRequest request;
  auto vars = ir::indexVarsOf(statement);
  auto findVar = [&](const std::string& name) -> std::optional<ir::IndexVar> {
    for (const auto& var : vars)
      if (var.name() == name) return var;
    return std::nullopt;
  };
  for (const auto& command : program.schedule) {
    if (command.name == "reorder") {
      std::vector<ir::IndexVar> order;
      for (const auto& argument : command.arguments)
        if (auto var = findVar(argument.identifier)) order.push_back(*var);
      if (order.size() > 1) request.reorder = order;
    } else if (command.name == "parallelize") {
      auto var = findVar(command.arguments.at(0).identifier);
      if (!var) continue;
      ir::ForallAttributes& attributes = request.loopAttributes[*var];
      attributes.parallelUnit = parallelUnit(command.arguments.at(1).identifier).value();
      attributes.outputRaceStrategy = raceStrategy(command.arguments.at(2).identifier).value();
    } else if (command.name == "split") {
      auto parent = findVar(command.arguments.at(0).identifier);
      if (!parent) continue;
      ir::IndexVar outer(command.arguments.at(1).identifier), inner(command.arguments.at(2).identifier);
      request.splits.push_back({*parent, outer, inner, command.arguments.at(3).integer});
      vars.push_back(outer);
      vars.push_back(inner);
    } else if (command.name == "unroll") {
      auto var = findVar(command.arguments.at(0).identifier);
      if (!var) continue;
      request.loopAttributes[*var].unrollFactor = static_cast<int>(command.arguments.at(1).integer);
    } else if (command.name == "assemble") {
      if (command.arguments.at(1).identifier != "Append")
        refuse(command, "assemble(..., Insert) needs insertion into sparse levels, which tcc does not support yet");
      bool separate = command.arguments.size() > 2 && command.arguments[2].identifier == "true";
      if (separate) request.separatelyAssembled.push_back(command.arguments.at(0).identifier);
    } else {
      refuse(command, "schedule command '" + command.name +
                          "' is checked but not applied by this version of tcc; supported now: reorder, "
                          "split, parallelize (CPU, NoRaces), unroll, assemble (Append); workspaces are inserted automatically");
    }
  }
  return request;
}

void refuseCudaTarget(const frontend::TargetSpec& target) {
  throw frontend::DiagnosticError({frontend::Diagnostic{
      target.location, "the CUDA backend is not available in this version of tcc; use `target cpu`",
      sourceLine(target.location)}});
}

}  // namespace tcc
