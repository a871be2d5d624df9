#include "schedule_history.h"

#include <algorithm>
#include <set>

#include "tcc/ir/index_printer.h"

namespace tcc::lowering {

namespace {

using ir::IndexVar;

std::optional<ir::ProvenanceRelation> asRelation(const ScheduleCommand& command) {
  return std::visit(
      [](const auto& kind) -> std::optional<ir::ProvenanceRelation> {
        using Kind = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<Kind, ir::SplitRelation> || std::is_same_v<Kind, ir::DivideRelation> ||
                      std::is_same_v<Kind, ir::FuseRelation> || std::is_same_v<Kind, ir::PosRelation> ||
                      std::is_same_v<Kind, ir::BoundRelation>)
          return ir::ProvenanceRelation(kind);
        else
          return std::nullopt;
      },
      command.kind);
}

bool names(const std::vector<IndexVar>& vars, const IndexVar& var) {
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

// "kp was split into kp0 and kp1 by `split(kp, kp0, kp1, 4)` at line 7".
std::string replacementSentence(const ir::ProvenanceRelation& relation, const ScheduleCommand& command) {
  std::string by = " by " + commandReference(command);
  if (const auto* split = std::get_if<ir::SplitRelation>(&relation))
    return split->parent.name() + " was split into " + split->outer.name() + " and " + split->inner.name() + by;
  if (const auto* divide = std::get_if<ir::DivideRelation>(&relation))
    return divide->parent.name() + " was divided into " + divide->outer.name() + " and " + divide->inner.name() + by;
  if (const auto* fuse = std::get_if<ir::FuseRelation>(&relation))
    return fuse->outer.name() + " and " + fuse->inner.name() + " were fused into " + fuse->fused.name() + by;
  if (const auto* pos = std::get_if<ir::PosRelation>(&relation))
    return pos->indexVar.name() + " was replaced by " + pos->posVar.name() + ", the positions of " +
           ir::toString(pos->access) + "," + by;
  const auto& bound = std::get<ir::BoundRelation>(relation);
  return bound.var.name() + " was replaced by " + bound.boundVar.name() + ", bounded by " +
         std::to_string(bound.value) + "," + by;
}

// The first command in [from, before) that replaced `var`'s loop.
std::optional<size_t> replacingCommand(const IndexVar& var, const std::vector<ScheduleCommand>& commands, size_t from,
                                       size_t before) {
  for (size_t c = from; c < before && c < commands.size(); ++c)
    if (auto relation = asRelation(commands[c]); relation && names(ir::parentVars(*relation), var)) return c;
  return std::nullopt;
}

void appendReplacements(const IndexVar& var, const std::vector<ScheduleCommand>& commands, size_t from,
                        size_t before, std::vector<std::string>& sentences, std::set<size_t>& told) {
  auto c = replacingCommand(var, commands, from, before);
  if (!c) return;
  if (told.insert(*c).second) sentences.push_back(replacementSentence(*asRelation(commands[*c]), commands[*c]));
  for (const auto& derived : ir::derivedVars(*asRelation(commands[*c])))
    appendReplacements(derived, commands, *c + 1, before, sentences, told);
}

// The commands before `before` that `var` derives through, and the
// variables no command introduced that it derives from.
void collectDerivation(const IndexVar& var, const std::vector<ScheduleCommand>& commands, size_t before,
                       std::set<size_t>& through, std::vector<IndexVar>& origins) {
  for (size_t c = 0; c < before && c < commands.size(); ++c) {
    auto relation = asRelation(commands[c]);
    if (!relation || !names(ir::derivedVars(*relation), var)) continue;
    through.insert(c);
    for (const auto& parent : ir::parentVars(*relation)) collectDerivation(parent, commands, c, through, origins);
    return;
  }
  if (!names(origins, var)) origins.push_back(var);
}

// "a, b and c" (`last` "or": "a, b or c").
std::string joinAnd(const std::vector<std::string>& parts, const std::string& last = "and") {
  std::string text;
  for (size_t p = 0; p < parts.size(); ++p)
    text += (p == 0 ? "" : p + 1 == parts.size() ? " " + last + " " : ", ") + parts[p];
  return text;
}

}  // namespace

std::string commandName(const ScheduleCommand& command) { return command.text.substr(0, command.text.find('(')); }

std::string commandReference(const ScheduleCommand& command) {
  std::string text = "`" + command.text + "`";
  if (command.line > 0) text += " at line " + std::to_string(command.line);
  return text;
}

std::optional<std::string> replacementHistory(const IndexVar& var, const std::vector<ScheduleCommand>& commands,
                                              size_t before) {
  std::vector<std::string> sentences;
  std::set<size_t> told;
  appendReplacements(var, commands, 0, before, sentences, told);
  if (sentences.empty()) return std::nullopt;
  std::string text = sentences.front();
  for (size_t s = 1; s < sentences.size(); ++s) text += (s + 1 == sentences.size() ? ", and " : ", ") + sentences[s];
  return text;
}

std::optional<std::string> derivationHistory(const IndexVar& var, const std::vector<ScheduleCommand>& commands,
                                             size_t before) {
  std::set<size_t> through;
  std::vector<IndexVar> origins;
  collectDerivation(var, commands, before, through, origins);
  if (through.empty()) return std::nullopt;
  std::vector<std::string> originNames, references;
  for (const auto& origin : origins) originNames.push_back(origin.name());
  for (size_t c : through) references.push_back(commandReference(commands[c]));
  return "derived from " + joinAnd(originNames) + " by " + joinAnd(references);
}

std::string missingLoopMessage(const IndexVar& var, const std::vector<ScheduleCommand>& commands, size_t before,
                               const std::string& loops) {
  if (auto history = replacementHistory(var, commands, before))
    return "no loop over " + var.name() + " is left: " + *history + "; the statement's loops are now " + loops;
  return var.name() + " is not a loop of this statement at this point (its loops: " + loops + ")";
}

std::string notAStatementVariable(const IndexVar& var, const std::string& command,
                                  const std::vector<IndexVar>& statementVars,
                                  const std::vector<ScheduleCommand>& commands, size_t before) {
  std::vector<std::string> own;
  for (const auto& statementVar : statementVars) own.push_back(statementVar.name());
  std::string takes = command + " takes " +
                      (own.empty() ? std::string("a variable of the statement, which has none")
                      : own.size() == 1 ? "the statement's own variable " + own.front()
                                        : "one of the statement's own variables: " + joinAnd(own, "or"));
  if (auto history = derivationHistory(var, commands, before))
    return var.name() + " is no variable of the statement but " + *history + "; " + takes;
  return var.name() + " is not an index variable of the statement; " + takes;
}

}  // namespace tcc::lowering
