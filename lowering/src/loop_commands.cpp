// The schedule commands behind a statement's loops, which refusals name
// (LoopCommands, lower.h).
#include <algorithm>
#include <set>
#include <type_traits>
#include <variant>

#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

LoopCommands loopCommandsOf(const ScheduleRequest& request, std::optional<size_t> outputOrderCommand) {
  LoopCommands commands;
  for (size_t c = 0; c < request.commands.size(); ++c) {
    std::visit(
        [&](const auto& kind) {
          using Kind = std::decay_t<decltype(kind)>;
          if constexpr (std::is_convertible_v<Kind, ir::ProvenanceRelation>)
            commands.relations.emplace_back(kind, c);
          else if constexpr (std::is_same_v<Kind, ParallelizeCommand>)
            commands.parallelizes.push_back({kind.var, kind.unit, kind.strategy, c});
          else if constexpr (std::is_same_v<Kind, PrecomputeCommand> || std::is_same_v<Kind, SparseWorkspaceCommand> ||
                             std::is_same_v<Kind, SparsePrecomputeCommand>)
            if (!commands.workspace) commands.workspace = LoopCommands::Precompute{c, request.commands[c].text};
        },
        request.commands[c].kind);
  }
  if (outputOrderCommand)
    commands.outputOrder = LoopCommands::Precompute{*outputOrderCommand, request.commands.at(*outputOrderCommand).text};
  return commands;
}

std::optional<size_t> LoopCommands::commandOf(const ir::ProvenanceRelation& relation) const {
  auto introduced = ir::derivedVars(relation);
  for (const auto& [added, command] : relations)
    for (const auto& var : ir::derivedVars(added))
      if (std::find(introduced.begin(), introduced.end(), var) != introduced.end()) return command;
  return std::nullopt;
}

std::optional<size_t> LoopCommands::parallelizeOf(const ir::IndexVar& loop, ir::ParallelUnit unit,
                                                  ir::OutputRaceStrategy strategy) const {
  auto asked = [&](const Parallelize& parallelize) {
    return parallelize.unit == unit && parallelize.strategy == strategy;
  };
  for (const auto& parallelize : parallelizes)
    if (parallelize.var == loop && asked(parallelize)) return parallelize.command;
  // The variables `loop` derives from, through every relation that
  // introduced one of them.
  std::set<ir::IndexVar> ancestors{loop};
  for (std::vector<ir::IndexVar> work{loop}; !work.empty();) {
    ir::IndexVar var = work.back();
    work.pop_back();
    for (const auto& [relation, command] : relations) {
      auto derived = ir::derivedVars(relation);
      if (std::find(derived.begin(), derived.end(), var) == derived.end()) continue;
      for (const auto& parent : ir::parentVars(relation))
        if (ancestors.insert(parent).second) work.push_back(parent);
    }
  }
  // (The same parallelize written twice is one.)
  const Parallelize* found = nullptr;
  for (const auto& parallelize : parallelizes) {
    if (!ancestors.count(parallelize.var) || !asked(parallelize)) continue;
    if (found && !(found->var == parallelize.var)) return std::nullopt;
    if (!found) found = &parallelize;
  }
  if (!found) return std::nullopt;
  return found->command;
}

}  // namespace tcc::lowering
