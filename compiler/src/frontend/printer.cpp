#include "tcc/frontend/printer.h"

#include "tcc/ir/index_printer.h"

namespace tcc::frontend {
namespace {

std::string printDeclaration(const ir::TensorVar& tensor) {
  std::string text = "tensor " + tensor.name();
  if (!tensor.isScalar()) {
    text += "(";
    for (int mode = 0; mode < tensor.order(); ++mode)
      text += (mode ? ", " : "") + tensor.dimension(mode).toString();
    text += ") : " + tensor.format().toString();
  }
  return text + " of " + ir::toString(tensor.datatype());
}

std::string printArgument(const ScheduleArgument& argument) {
  switch (argument.kind) {
    case ScheduleArgument::Kind::Identifier: return argument.identifier;
    case ScheduleArgument::Kind::Integer: return std::to_string(argument.integer);
    case ScheduleArgument::Kind::Keyword:
      return argument.keyword + " = " +
             (argument.valueIsInteger ? std::to_string(argument.integer) : argument.identifier);
    case ScheduleArgument::Kind::Expression:
      return argument.expression ? ir::toString(*argument.expression) : argument.text;
    case ScheduleArgument::Kind::IndexList: {
      std::string text = "{";
      for (size_t i = 0; i < argument.identifiers.size(); ++i) text += (i ? ", " : "") + argument.identifiers[i];
      return text + "}";
    }
  }
  return argument.text;
}

}  // namespace

std::string printScheduleCommand(const ScheduleCommand& command) {
  std::string text = command.name + "(";
  for (size_t i = 0; i < command.arguments.size(); ++i)
    text += (i ? ", " : "") + printArgument(command.arguments[i]);
  return text + ")";
}

std::string printProgram(const Program& program) {
  std::string text;
  for (const ir::TensorVar& tensor : program.tensors) text += printDeclaration(tensor) + "\n";
  for (const WorkspaceDeclaration& workspace : program.workspaces)
    text += "tensor " + workspaceDeclarationString(workspace) + "\n";
  if (!program.statements.empty()) text += "\n";
  for (const ir::IndexStmt& statement : program.statements) text += ir::toString(statement) + "\n";
  if (!program.schedule.empty()) {
    text += "\nschedule {\n";
    for (const ScheduleCommand& command : program.schedule)
      text += "  " + printScheduleCommand(command) + "\n";
    text += "}\n";
  }
  if (program.target) {
    text += "\ntarget ";
    if (program.target->target == Target::Cpu) text += "cpu";
    else text += program.target->sm.empty() ? "cuda" : "cuda(" + program.target->sm + ")";
    text += "\n";
  }
  if (program.floatingPoint) text += std::string("\nfp ") + toString(program.floatingPoint->mode) + "\n";
  return text;
}

}  // namespace tcc::frontend
