// The scheduling front: turns the checked schedule block of a program into
// what the lowering stage applies to each statement. Commands it cannot
// apply yet are refused at their source location, never silently ignored.
#include <algorithm>
#include <map>
#include <sstream>

#include "schedule_request.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ism/policy_registry.h"
#include "tcc/ir/index_replace.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_rewriter.h"
#include "tcc/ir/index_visitor.h"
#include "tcc/tcc.h"

namespace tcc {

namespace {

std::string sourceLine(const frontend::Program& program, const frontend::SourceLocation& location) {
  std::istringstream text(program.sourceText);
  std::string line;
  for (int number = 1; number <= location.line && std::getline(text, line); ++number) {
  }
  return line;
}

[[noreturn]] void refuse(const frontend::Program& program, const frontend::ScheduleCommand& command,
                         const std::string& message) {
  throw frontend::DiagnosticError(
      {frontend::Diagnostic{command.location, message, sourceLine(program, command.location)}});
}

std::optional<ir::ParallelUnit> parallelUnit(const std::string& name) {
  using ir::ParallelUnit;
  for (auto unit : {ParallelUnit::NotParallel, ParallelUnit::DefaultUnit, ParallelUnit::CPUThread,
                    ParallelUnit::CPUVector, ParallelUnit::GPUBlock, ParallelUnit::GPUWarp, ParallelUnit::GPUThread})
    if (ir::toString(unit) == name) return unit;
  return std::nullopt;
}

std::optional<lowering::WorkspacePolicy> workspacePolicy(const std::string& name) {
  using lowering::WorkspacePolicy;
  for (auto policy : {WorkspacePolicy::Bucket, WorkspacePolicy::Hash, WorkspacePolicy::Coord, WorkspacePolicy::Map,
                      WorkspacePolicy::Vector})
    if (lowering::toString(policy) == name) return policy;
  return std::nullopt;
}

const char* const kPolicyChoices =
  "expected bucket, hash, coord, map, vector or a policy registered with tcc::ism::registerPolicy";

// A built-in policy or one the program registered (policy_registry.h).
bool setPolicy(lowering::SparseWorkspaceOptions& options, const std::string& name) {
  if (auto policy = workspacePolicy(name)) {
    options.policy = *policy;
    return true;
  }
  int id = ism::policyId(name);
  if (id < 0) return false;
  options.policy = lowering::WorkspacePolicy::User;
  options.userPolicy = name;
  options.userPolicyId = id;
  return true;
}

std::optional<ir::OutputRaceStrategy> raceStrategy(const std::string& name) {
  using ir::OutputRaceStrategy;
  for (auto strategy : {OutputRaceStrategy::IgnoreRaces, OutputRaceStrategy::NoRaces, OutputRaceStrategy::Atomics,
                        OutputRaceStrategy::Temporary, OutputRaceStrategy::ParallelReduction,
                        OutputRaceStrategy::Workspace})
    if (ir::toString(strategy) == name) return strategy;
  return std::nullopt;
}

// A schedule's expressions are checked before any statement is known, so
// their float literals are float64; a statement's take its output's float
// type (`0.5` in a float32 statement is a float32 literal). A precompute's
// `0.5 * C(i,j)` names the statement's part only with the statement's
// literal types, so each float literal takes the type of the statement's
// float literal of the same value, where there is one.
class LiteralTypesOfStatement : public ir::IndexNotationRewriter {
 public:
  explicit LiteralTypesOfStatement(const ir::IndexExpr& statementRhs) {
    struct Collect : ir::IndexNotationVisitor {
      std::map<double, ir::Datatype>* types;
      using ir::IndexNotationVisitor::visit;
      void visit(const ir::LiteralNode* node) override {
        if (ir::isFloat(node->type)) types->emplace(node->floatValue, node->type);
      }
    } collect;
    collect.types = &types_;
    collect.walk(statementRhs);
  }

 protected:
  using ir::IndexNotationRewriter::visit;
  ir::IndexExpr visit(const ir::LiteralNode* node, const ir::IndexExpr& self) override {
    if (!ir::isFloat(node->type)) return self;
    auto found = types_.find(node->floatValue);
    if (found == types_.end() || found->second == node->type) return self;
    return ir::LiteralNode::make(node->floatValue, found->second);
  }

 private:
  std::map<double, ir::Datatype> types_;
};

ir::IndexExpr withLiteralTypesOf(const ir::IndexExpr& expr, const ir::IndexStmt& statement) {
  return LiteralTypesOfStatement(statement.as<ir::AssignmentNode>()->rhs).rewrite(expr);
}

}  // namespace

std::string commandText(const frontend::ScheduleCommand& command) {
  std::string text = command.name + "(";
  for (size_t i = 0; i < command.arguments.size(); ++i) text += (i ? ", " : "") + command.arguments[i].text;
  return text + ")";
}

[[noreturn]] void refuseScheduleCommand(const frontend::Program& program, const frontend::ScheduleCommand& command,
                                       const std::string& message) {
  refuse(program, command, message);
}

std::optional<frontend::Diagnostic> statementDiagnostic(const frontend::Program& program, size_t index,
                                                        const std::string& message) {
  if (index >= program.statementLocations.size() || program.statementLocations[index].line <= 0) return std::nullopt;
  const frontend::SourceLocation& location = program.statementLocations[index];
  return frontend::Diagnostic{location, message, sourceLine(program, location)};
}

[[noreturn]] void refuseStatement(const frontend::Program& program, size_t index, const std::string& message) {
  if (auto diagnostic = statementDiagnostic(program, index, message)) throw frontend::DiagnosticError({*diagnostic});
  throw Error(message);
}

ScheduleForStatement scheduleRequestFor(const frontend::Program& program, const ir::IndexStmt& statement) {
  ScheduleForStatement result;
  lowering::ScheduleRequest& request = result.request;
  auto vars = ir::indexVarsOf(statement);
  auto findVar = [&](const std::string& name) -> std::optional<ir::IndexVar> {
    for (const auto& var : vars)
      if (var.name() == name) return var;
    return std::nullopt;
  };
  // A variable a command introduces; later commands find it by name.
  auto introduce = [&](const std::string& name) {
    if (auto existing = findVar(name)) return *existing;
    ir::IndexVar var(name);
    vars.push_back(var);
    return var;
  };
  auto add = [&](const frontend::ScheduleCommand& command, lowering::ScheduleCommandKind kind) {
    request.commands.push_back({std::move(kind), commandText(command), command.location.line});
    result.sources.push_back(&command);
  };
  for (const auto& command : program.schedule) {
    const auto& arguments = command.arguments;
    // Commands naming a variable another statement owns apply to that one.
    auto var = arguments.empty() ? std::nullopt : findVar(arguments[0].identifier);
    if (command.name == "reorder") {
      std::vector<ir::IndexVar> order;
      for (const auto& argument : arguments)
        if (auto found = findVar(argument.identifier)) order.push_back(*found);
      if (order.size() > 1) add(command, lowering::ReorderCommand{order});
    } else if (command.name == "split" || command.name == "divide") {
      if (!var) continue;
      ir::IndexVar outer = introduce(arguments.at(1).identifier), inner = introduce(arguments.at(2).identifier);
      if (command.name == "split") add(command, ir::SplitRelation{*var, outer, inner, arguments.at(3).integer});
      else add(command, ir::DivideRelation{*var, outer, inner, arguments.at(3).integer});
    } else if (command.name == "fuse") {
      auto inner = findVar(arguments.at(1).identifier);
      if (!var || !inner) continue;
      add(command, ir::FuseRelation{*var, *inner, introduce(arguments.at(2).identifier)});
    } else if (command.name == "pos") {
      if (!var) continue;
      const auto& expression = arguments.at(2).expression;
      if (!expression || !expression->isa<ir::AccessNode>()) refuse(program, command, "pos takes an access such as B(i,j)");
      add(command, ir::PosRelation{*var, introduce(arguments.at(1).identifier), ir::Access(*expression)});
    } else if (command.name == "bound") {
      if (!var) continue;
      ir::BoundKind kind = ir::BoundKind::MaxExact;
      for (auto candidate : {ir::BoundKind::MinExact, ir::BoundKind::MinConstraint, ir::BoundKind::MaxExact,
                             ir::BoundKind::MaxConstraint})
        if (ir::toString(candidate) == arguments.at(3).identifier) kind = candidate;
      add(command, ir::BoundRelation{*var, introduce(arguments.at(1).identifier), arguments.at(2).integer, kind});
    } else if (command.name == "precompute" && arguments.size() == 4) {
      if (!arguments.at(0).expression) continue;
      const auto expression = std::optional(withLiteralTypesOf(*arguments.at(0).expression, statement));
      const auto* declared = program.findWorkspace(arguments.at(3).identifier);
      if (!declared) refuse(program, command, arguments.at(3).identifier + " is not a declared workspace");
      // Applies to the statement whose right-hand side holds the expression.
      if (ir::toString(ir::replace(statement.as<ir::AssignmentNode>()->rhs, {{*expression, ir::IndexExpr(0.0)}})) ==
          ir::toString(statement.as<ir::AssignmentNode>()->rhs))
        continue;
      lowering::SparsePrecomputeCommand precompute;
      precompute.expr = *expression;
      for (const auto& name : arguments.at(1).identifiers) precompute.inputVars.push_back(introduce(name));
      for (const auto& name : arguments.at(2).identifiers) precompute.outputVars.push_back(introduce(name));
      precompute.workspace = declared->tensor;
      precompute.options.capacity = declared->capacity;
      precompute.options.pipelining = declared->pipelining;
      precompute.options.doubleBuffering = declared->doubleBuffering;
      if (!declared->policy.empty()) {
        if (!setPolicy(precompute.options, declared->policy))
          throw frontend::DiagnosticError({frontend::Diagnostic{
            declared->policyLocation,
            "unknown policy '" + declared->policy + "' for workspace " + declared->tensor.name() + "; " +
              kPolicyChoices,
            sourceLine(program, declared->policyLocation)}});
        precompute.policyGiven = true;
      }
      add(command, precompute);
    } else if (command.name == "precompute") {
      auto index = findVar(arguments.at(1).identifier);
      const auto& expression = arguments.at(0).expression;
      if (!index || !expression) continue;
      add(command, lowering::PrecomputeCommand{withLiteralTypesOf(*expression, statement), *index,
                                               introduce(arguments.at(2).identifier)});
    } else if (command.name == "dense_workspace") {
      // The whole right-hand side into a dense workspace over `index`
      // (default: the output's last index in storage order).
      const auto* assignment = statement.as<ir::AssignmentNode>();
      const ir::Access& lhs = assignment->lhs;
      if (lhs.tensor().order() == 0) {
        // (In a program of several statements the command is for those
        // with indices.)
        if (std::none_of(program.statements.begin(), program.statements.end(), [](const ir::IndexStmt& each) {
              const auto* other = each.as<ir::AssignmentNode>();
              return other && other->lhs.tensor().order() > 0;
            }))
          refuse(program, command, "a scalar result needs no workspace");
        continue;
      }
      const ir::Format& format = lhs.tensor().format();
      auto index = arguments.empty() ? std::optional(lhs.indices()[format.modeOfLevel(format.order() - 1)]) : var;
      if (!index) continue;
      ir::IndexExpr rhs = assignment->rhs;
      while (const auto* sum = rhs.as<ir::ReductionNode>()) rhs = sum->body;
      add(command, lowering::PrecomputeCommand{rhs, *index, *index});
    } else if (command.name == "parallelize") {
      if (!var) continue;
      lowering::ParallelizeCommand parallelize;
      parallelize.var = *var;
      parallelize.unit = parallelUnit(arguments.at(1).identifier).value();
      parallelize.strategy = raceStrategy(arguments.at(2).identifier).value();
      add(command, parallelize);
    } else if (command.name == "unroll") {
      if (!var) continue;
      add(command, lowering::UnrollCommand{*var, static_cast<int>(arguments.at(1).integer)});
    } else if (command.name == "sparse_workspace") {
      // One over a variable applies to the statement that has it (the
      // checker knows every variable a command names is some statement's).
      bool anotherStatements = false;
      for (const auto& argument : arguments)
        if (argument.kind != frontend::ScheduleArgument::Kind::Keyword && !findVar(argument.identifier))
          anotherStatements = true;
      if (anotherStatements) continue;
      lowering::SparseWorkspaceCommand workspace;
      for (const auto& argument : arguments) {
        if (argument.kind != frontend::ScheduleArgument::Kind::Keyword) {
          workspace.var = findVar(argument.identifier);
        } else if (argument.keyword == "policy") {
          if (!setPolicy(workspace.options, argument.identifier))
            refuse(program, command, "unknown policy '" + argument.identifier + "'; " + kPolicyChoices);
          workspace.policyGiven = true;
        } else if (argument.keyword == "pipeline") {
          workspace.options.pipelining = argument.identifier == "on";
        } else if (argument.keyword == "double_buffer") {
          workspace.options.doubleBuffering = argument.identifier == "on";
        } else if (argument.keyword == "capacity") {
          if (argument.integer <= 0)
            refuse(program, command, "the capacity must be positive, not " + std::to_string(argument.integer));
          workspace.options.capacity = argument.integer;
        }
      }
      add(command, workspace);
    } else if (command.name == "tensorcore") {
      // The MMA shape TCA-SpMM and the N:M tiles issue is m16n8k8; a shape
      // given must be it.
      for (const auto& argument : arguments) {
        int64_t expected = argument.keyword == "m" ? 16 : 8;
        if (argument.integer != expected)
          refuse(program, command, "tensorcore() issues mma.sync m16n8k8 (float16 or TF32 in, float32 accumulate); " + argument.keyword +
                                       " = " + std::to_string(argument.integer) + " is not that shape");
      }
      request.tensorCore = true;  // no loop transformation: it chooses an intrinsic
      result.tensorCoreSource = &command;
    } else if (command.name == "assemble") {
      if (arguments.at(1).identifier != "Append")
        refuse(program, command, "assemble(..., Insert) needs insertion into sparse levels, which tcc does not support yet");
      bool separate = arguments.size() > 2 && arguments[2].identifier == "true";
      if (separate) request.separatelyAssembled.push_back(arguments.at(0).identifier);
    } else {
      refuse(program, command, "schedule command '" + command.name +
                          "' is checked but not applied by this version of tcc: GPU mappings come with the CUDA "
                          "backend");
    }
  }
  return result;
}

}  // namespace tcc
