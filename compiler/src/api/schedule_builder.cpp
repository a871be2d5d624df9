#include <algorithm>
#include <set>

#include "schedule_request.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/schedule.h"
#include "tcc/tcc.h"

namespace tcc {

namespace {

using Argument = frontend::ScheduleArgument;

Argument name(const std::string& identifier) {
  Argument argument;
  argument.kind = Argument::Kind::Identifier;
  argument.identifier = identifier;
  argument.text = identifier;
  return argument;
}

Argument var(const ir::IndexVar& indexVar) { return name(indexVar.name()); }

Argument integer(int64_t value) {
  Argument argument;
  argument.kind = Argument::Kind::Integer;
  argument.integer = value;
  argument.text = std::to_string(value);
  return argument;
}

Argument expression(const ir::IndexExpr& expr) {
  Argument argument;
  argument.kind = Argument::Kind::Expression;
  argument.expression = expr;
  argument.text = ir::toString(expr);
  return argument;
}

Argument indexList(const std::vector<ir::IndexVar>& vars) {
  Argument argument;
  argument.kind = Argument::Kind::IndexList;
  argument.text = "{";
  for (size_t v = 0; v < vars.size(); ++v) {
    argument.identifiers.push_back(vars[v].name());
    argument.text += (v ? ", " : "") + vars[v].name();
  }
  argument.text += "}";
  return argument;
}

Argument keyword(const std::string& key, const std::string& value) {
  Argument argument = name(value);
  argument.kind = Argument::Kind::Keyword;
  argument.keyword = key;
  argument.text = key + " = " + value;
  return argument;
}

Argument keyword(const std::string& key, int64_t value) {
  Argument argument = integer(value);
  argument.kind = Argument::Kind::Keyword;
  argument.keyword = key;
  argument.valueIsInteger = true;
  argument.text = key + " = " + std::to_string(value);
  return argument;
}

}  // namespace

Workspace::Workspace(std::string name, std::vector<ir::Dimension> shape, SparseWorkspaceFormat format,
                     ir::Datatype type)
    : name(std::move(name)), shape(std::move(shape)), format(std::move(format)), type(type) {}

Schedule& Schedule::precompute(const ir::IndexExpr& expr, const std::vector<ir::IndexVar>& inputVars,
                               const std::vector<ir::IndexVar>& outputVars, const Workspace& workspace) {
  bool known = false;
  for (const auto& declared : workspaces_) known = known || declared.name == workspace.name;
  if (!known) workspaces_.push_back(workspace);
  return add("precompute", {expression(expr), indexList(inputVars), indexList(outputVars), name(workspace.name)});
}

Schedule& Schedule::sparseWorkspace(const SparseWorkspaceFormat& format, const std::optional<ir::IndexVar>& v) {
  std::vector<Argument> arguments;
  if (v) arguments.push_back(var(*v));
  if (!format.policy.empty()) arguments.push_back(keyword("policy", format.policy));
  if (format.pipelining) arguments.push_back(keyword("pipeline", std::string("on")));
  if (format.doubleBuffering) arguments.push_back(keyword("double_buffer", std::string("on")));
  if (format.capacity) arguments.push_back(keyword("capacity", *format.capacity));
  return add("sparse_workspace", std::move(arguments));
}

Schedule& Schedule::add(std::string commandName, std::vector<Argument> arguments) {
  frontend::ScheduleCommand command;
  command.name = std::move(commandName);
  command.arguments = std::move(arguments);
  command.location.file = "<schedule>";  // errors name the command itself
  commands_.push_back(std::move(command));
  return *this;
}

Schedule& Schedule::reorder(const std::vector<ir::IndexVar>& order) {
  std::vector<Argument> arguments;
  for (const auto& indexVar : order) arguments.push_back(var(indexVar));
  return add("reorder", std::move(arguments));
}

Schedule& Schedule::split(const ir::IndexVar& v, const ir::IndexVar& outer, const ir::IndexVar& inner, int64_t factor) {
  return add("split", {var(v), var(outer), var(inner), integer(factor)});
}

Schedule& Schedule::divide(const ir::IndexVar& v, const ir::IndexVar& outer, const ir::IndexVar& inner, int64_t parts) {
  return add("divide", {var(v), var(outer), var(inner), integer(parts)});
}

Schedule& Schedule::fuse(const ir::IndexVar& outer, const ir::IndexVar& inner, const ir::IndexVar& fused) {
  return add("fuse", {var(outer), var(inner), var(fused)});
}

Schedule& Schedule::pos(const ir::IndexVar& v, const ir::IndexVar& posVar, const ir::Access& access) {
  return add("pos", {var(v), var(posVar), expression(access)});
}

Schedule& Schedule::bound(const ir::IndexVar& v, const ir::IndexVar& boundVar, int64_t value, BoundKind kind) {
  return add("bound", {var(v), var(boundVar), integer(value), name(ir::toString(kind))});
}

Schedule& Schedule::precompute(const ir::IndexExpr& expr, const ir::IndexVar& v, const ir::IndexVar& workspaceVar) {
  return add("precompute", {expression(expr), var(v), var(workspaceVar)});
}

Schedule& Schedule::parallelize(const ir::IndexVar& v, ParallelUnit unit, OutputRaceStrategy strategy) {
  return add("parallelize", {var(v), name(ir::toString(unit)), name(ir::toString(strategy))});
}

Schedule& Schedule::unroll(const ir::IndexVar& v, int factor) { return add("unroll", {var(v), integer(factor)}); }

Schedule& Schedule::tensorcore() { return add("tensorcore", {}); }

Schedule& Schedule::assembleSeparately(const std::string& tensor) {
  return add("assemble", {name(tensor), name("Append"), name("true")});
}

Program Program::fromStatements(std::vector<ir::IndexStmt> statements, std::vector<TensorVar> tensors,
                                const Schedule& schedule) {
  Program program = fromStatements(std::move(statements), std::move(tensors));
  // The DSL's checker sees these mistakes in a file; here they are the caller's.
  std::set<std::string> known;
  for (const auto& statement : program.statements())
    for (const auto& indexVar : ir::indexVarsOf(statement)) known.insert(indexVar.name());
  for (const auto& command : schedule.commands()) {
    const auto* spec = frontend::findScheduleCommand(command.name);
    std::string text = commandText(command);
    for (size_t a = 0; a < command.arguments.size() && spec; ++a) {
      if (command.arguments[a].kind == frontend::ScheduleArgument::Kind::Keyword) continue;
      bool repeats = spec->variadic && a >= spec->required.size();
      const frontend::ScheduleParameter* found =
        repeats                           ? &spec->required.back()
        : a < spec->required.size()       ? &spec->required[a]
        : a - spec->required.size() < spec->optional.size() ? &spec->optional[a - spec->required.size()]
                                          : nullptr;
      if (!found) throw Error("schedule command " + text + " takes fewer arguments; usage: " + spec->signature);
      const auto& parameter = *found;
      const std::string& identifier = command.arguments[a].identifier;
      if (parameter.kind == frontend::ScheduleParameterKind::IndexVariable && !known.count(identifier))
        throw Error("schedule command " + text + ": " + identifier + " is not an index variable of the program "
                    "or of an earlier command");
      if (parameter.kind == frontend::ScheduleParameterKind::NewIndexVariable && known.count(identifier))
        throw Error("schedule command " + text + ": " + identifier + " already names an index variable");
      if (parameter.kind == frontend::ScheduleParameterKind::NewIndexVariable ||
          parameter.kind == frontend::ScheduleParameterKind::IndexVariableOrNew)
        known.insert(identifier);
      if (parameter.kind == frontend::ScheduleParameterKind::Integer && command.arguments[a].integer <= 0)
        throw Error("schedule command " + text + ": the " + parameter.name + " must be positive");
    }
  }
  for (const auto& workspace : schedule.workspaces()) {
    const int order = static_cast<int>(workspace.shape.size());
    if (order < 1 || order > 4)
      throw Error("workspace " + workspace.name + ": a sparse workspace has order 1 to 4, not " + std::to_string(order));
    if (workspace.format.capacity && *workspace.format.capacity < 1)
      throw Error("workspace " + workspace.name + ": the first capacity must be positive, not " +
                  std::to_string(*workspace.format.capacity));
    std::vector<int> modes = workspace.format.outputOrder;
    if (modes.empty())
      for (int mode = 0; mode < order; ++mode) modes.push_back(mode);
    std::vector<int> sorted = modes;
    std::sort(sorted.begin(), sorted.end());
    for (int mode = 0; mode < static_cast<int>(sorted.size()); ++mode)
      if (sorted[mode] != mode || static_cast<int>(sorted.size()) != order)
        throw Error("workspace " + workspace.name + ": its output order must list each mode 0.." +
                    std::to_string(order - 1) + " exactly once");
    if (workspace.type != ir::Datatype::Float64 && workspace.type != ir::Datatype::Float32)
      throw Error("workspace " + workspace.name + ": a sparse workspace holds float64 or float32 values");
    frontend::WorkspaceDeclaration declaration;
    std::vector<ir::LevelFormat> levels(order, ir::LevelFormat::compressed());
    declaration.tensor = ir::TensorVar(workspace.name, workspace.shape, ir::Format(levels, modes), workspace.type);
    declaration.policy = workspace.format.policy;
    declaration.capacity = workspace.format.capacity.value_or(0);
    declaration.pipelining = workspace.format.pipelining;
    declaration.doubleBuffering = workspace.format.doubleBuffering;
    declaration.location.file = "<schedule>";
    declaration.policyLocation.file = "<schedule>";
    program.program_.workspaces.push_back(declaration);
  }
  program.program_.schedule = schedule.commands();
  return program;
}

}  // namespace tcc
