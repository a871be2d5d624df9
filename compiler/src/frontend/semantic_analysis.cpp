#include "semantic_analysis.h"

#include <stdexcept>

#include "expression_builder.h"
#include "format_resolution.h"
#include "permanent_placement.h"
#include "schedule_checker.h"
#include "semantic_context.h"

namespace tcc::frontend {
namespace {

bool operandUsesIndex(const syntax::Operand& operand, const std::string& name);

// Whether the expression reads index variable `name` anywhere.

bool usesIndex(const syntax::Expression& expression, const std::string& name) {
  if (operandUsesIndex(expression.first, name)) return true;
  for (const syntax::Operation& operation : expression.rest)
    if (operandUsesIndex(operation.operand, name)) return true;
  return false;
}

bool operandUsesIndex(const syntax::Operand& operand, const std::string& name) {
  return boost::apply_visitor(
      [&](const auto& node) -> bool {
        using Node = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<Node, syntax::Number>) {
          return false;
        } else if constexpr (std::is_same_v<Node, syntax::Access>) {
          if (!node.indices) return false;
          for (const syntax::Identifier& index : *node.indices)
            if (index.name == name) return true;
          return false;
        } else if constexpr (std::is_same_v<Node, syntax::Summation>) {
          return usesIndex(node.body.get(), name);
        } else if constexpr (std::is_same_v<Node, syntax::Call>) {
          for (const auto& argument : node.arguments)
            if (usesIndex(argument.get(), name)) return true;
          return false;
        } else if constexpr (std::is_same_v<Node, syntax::x3::forward_ast<syntax::Negation>>) {
          return operandUsesIndex(node.get().operand, name);
        } else {
          return usesIndex(node.get(), name);
        }
      },
      operand.get());
}

class SemanticAnalysis {
 public:
  SemanticAnalysis(const SourceFile& source, const ParsedFile& parsed,
                   std::vector<Diagnostic>& diagnostics, bool hasSyntaxErrors)
      : context_(source, parsed.positions, diagnostics, hasSyntaxErrors), parsed_(parsed) {}

  Program run() {
    for (const syntax::Item& item : parsed_.file.items) {
      // The IR's make functions validate too; what they reject is the
      // user's error, reported at the item.
      try {
        std::visit([&](const auto& node) { analyze(node); }, item);
      } catch (const std::invalid_argument& error) {
        std::visit([&](const auto& node) { reportAt(node, error.what()); }, item);
      }
    }
    program_.tensors = context_.tensorsInOrder;
    return std::move(program_);
  }

 private:
  void analyze(const syntax::TensorDeclaration& declaration) {
    const std::string& name = declaration.name.name;
    checkNewName(declaration.name, "a tensor");
    std::vector<ir::Dimension> shape;
    if (declaration.dimensions) {
      for (const syntax::NameOrInteger& dimension : *declaration.dimensions) {
        if (const auto* symbol = boost::get<syntax::Identifier>(&dimension.get())) {
          shape.emplace_back(symbol->name);
          continue;
        }
        const auto& integer = boost::get<syntax::Integer>(dimension.get());
        std::optional<std::int64_t> size = integerValue(context_, integer);
        if (size && *size < 1) context_.error(integer, "a dimension size must be positive");
        if (!size || *size < 1) {
          shape.emplace_back();  // unknown, so later uses still type-check
          continue;
        }
        shape.emplace_back(*size);
      }
    }
    const int order = static_cast<int>(shape.size());
    if (declaration.format && isWorkspaceFormat(*declaration.format)) {
      declareWorkspace(declaration, shape);
      return;
    }
    ir::Format format = ir::Format::denseOfOrder(order);
    if (declaration.format) {
      std::optional<ir::Format> resolved = resolveFormat(context_, *declaration.format, order, name);
      if (resolved) format = *resolved;
    }
    ir::Datatype type = ir::Datatype::Float64;
    if (declaration.elementType) {
      std::optional<ir::Datatype> parsed = ir::parseDatatype(declaration.elementType->name);
      if (parsed) {
        type = *parsed;
      } else {
        context_.error(*declaration.elementType,
                       "unknown element type '" + declaration.elementType->name +
                           "'; expected float64, float32, float16, int32 or int64");
      }
    }
    if (context_.tensors.count(name)) return;  // reported by checkNewName
    // A tensor with errors is still declared (with defaults for what was
    // wrong), so its uses are checked without follow-on errors.
    ir::TensorVar tensor(name, shape, format, type);
    context_.tensors.emplace(name, DeclaredTensor{tensor, context_.locate(declaration.name)});
    context_.tensorsInOrder.push_back(tensor);
  }

  void declareWorkspace(const syntax::TensorDeclaration& declaration, const std::vector<ir::Dimension>& shape) {
    const std::string& name = declaration.name.name;
    const int order = static_cast<int>(shape.size());
    std::optional<WorkspaceFormat> format = resolveWorkspaceFormat(context_, *declaration.format, order, name);
    ir::Datatype type = ir::Datatype::Float64;
    if (declaration.elementType) {
      std::optional<ir::Datatype> parsed = ir::parseDatatype(declaration.elementType->name);
      if (!parsed || (*parsed != ir::Datatype::Float64 && *parsed != ir::Datatype::Float32))
        context_.error(*declaration.elementType, "a sparse workspace holds float64 or float32 values");
      else
        type = *parsed;
    }
    if (context_.tensors.count(name)) return;  // reported by checkNewName
    std::vector<int> modes = format ? format->modeOrdering : std::vector<int>();
    if (!format)
      for (int mode = 0; mode < order; ++mode) modes.push_back(mode);
    std::vector<ir::LevelFormat> levels(order, ir::LevelFormat::compressed());
    ir::TensorVar tensor(name, shape, ir::Format(levels, modes), type);
    DeclaredTensor declared{tensor, context_.locate(declaration.name)};
    declared.isWorkspace = true;
    context_.tensors.emplace(name, declared);
    if (!format) return;
    WorkspaceDeclaration workspace;
    workspace.tensor = tensor;
    workspace.policy = format->policy;
    workspace.policyLocation = format->policyLocation;
    workspace.capacity = format->capacity;
    workspace.pipelining = format->pipelining;
    workspace.doubleBuffering = format->doubleBuffering;
    workspace.location = declared.location;
    program_.workspaces.push_back(workspace);
  }

  void analyze(const syntax::FormatDeclaration& declaration) {
    if (!checkNewName(declaration.name, "a format")) return;
    bool ok = checkFormatDeclaration(context_, declaration);
    context_.formats.emplace(declaration.name.name,
                             DeclaredFormat{ok ? &declaration.format : nullptr,
                                            context_.locate(declaration.name)});
  }

  void analyze(const syntax::TargetDeclaration& declaration) {
    if (program_.target) {
      context_.error(declaration, "target already given at " +
                                      lineAndColumn(program_.target->location));
      return;
    }
    TargetSpec target;
    target.location = context_.locate(declaration);
    const std::string& kind = declaration.kind.name;
    if (kind == "cpu") {
      target.target = Target::Cpu;
      if (declaration.architecture) {
        context_.error(*declaration.architecture, "target 'cpu' takes no architecture");
        return;
      }
    } else if (kind == "cuda") {
      target.target = Target::Cuda;
      if (declaration.architecture) {
        const std::string& sm = declaration.architecture->name;
        bool valid = sm.size() > 3 && sm.compare(0, 3, "sm_") == 0 &&
                     sm.find_first_not_of("0123456789", 3) == std::string::npos;
        if (!valid) {
          context_.error(*declaration.architecture,
                         "expected a GPU architecture like sm_90, not '" + sm + "'");
          return;
        }
        target.sm = sm;
      }
    } else {
      context_.error(declaration.kind, "unknown target '" + kind + "'; expected cpu or cuda");
      return;
    }
    program_.target = target;
  }

  void analyze(const syntax::FloatingPointDeclaration& declaration) {
    if (program_.floatingPoint) {
      context_.error(declaration, "floating-point mode already given at " +
                                      lineAndColumn(program_.floatingPoint->location));
      return;
    }
    std::optional<FloatingPointMode> mode = parseFloatingPointMode(declaration.mode.name);
    if (!mode) {
      context_.error(declaration.mode,
                     "unknown floating-point mode '" + declaration.mode.name + "'; expected strict or fast");
      return;
    }
    program_.floatingPoint = FloatingPointSpec{*mode, context_.locate(declaration)};
  }

  void analyze(const syntax::Statement& statement) {
    ir::Datatype literalType = ir::Datatype::Float64;
    if (auto declared = context_.tensors.find(statement.output.tensor.name);
        declared != context_.tensors.end() && ir::isFloat(declared->second.tensor.datatype()))
      literalType = declared->second.tensor.datatype();
    ExpressionBuilder builder(context_, ExpressionBuilder::Mode::Statement, literalType);
    // The output's indices bind sizes first, so mismatches point at the right side.
    std::optional<ir::Access> output = builder.buildAccess(statement.output);
    std::optional<ir::IndexExpr> value = builder.build(statement.value);
    if (!output || !value) return;
    if (!checkPermanentPlacement(context_, statement)) return;

    bool ok = true;
    for (const syntax::Identifier& index : statement.output.indices.value_or(
             std::vector<syntax::Identifier>{})) {
      if (auto summed = builder.summedIndexNames().find(index.name);
          summed != builder.summedIndexNames().end()) {
        context_.error(*summed->second, "index variable '" + index.name +
                                            "' indexes the output and cannot be summed");
        ok = false;
      }
    }
    for (const syntax::Identifier& index : statement.output.indices.value_or(
             std::vector<syntax::Identifier>{})) {
      if (!usesIndex(statement.value, index.name)) {
        context_.error(index, "index variable '" + index.name +
                                  "' of the output does not appear on the right-hand side");
        ok = false;
      }
    }
    if (!ok) return;
    program_.statements.push_back(
        ir::AssignmentNode::make(*output, *value, statement.assignment == "+="));
    program_.statementLocations.push_back(context_.locate(statement.output));
  }

  void analyze(const syntax::ScheduleBlock& block) {
    std::vector<ScheduleCommand> commands = checkSchedule(context_, block.commands);
    for (ScheduleCommand& command : commands) program_.schedule.push_back(std::move(command));
  }

  bool checkNewName(const syntax::Identifier& name, const std::string& what) {
    if (isReservedWord(name.name)) {
      context_.error(name, "'" + name.name + "' is reserved and cannot name " + what);
      return false;
    }
    if (context_.indexVars.count(name.name)) {
      context_.error(name, "'" + name.name + "' is already an index variable and cannot name " + what);
      return false;
    }
    if (what == "a format" && isBuiltinFormatName(name.name)) {
      context_.error(name, "'" + name.name + "' is a built-in format and cannot be redefined");
      return false;
    }
    if (auto tensor = context_.tensors.find(name.name); tensor != context_.tensors.end()) {
      context_.error(name, "redeclaration of '" + name.name + "' (a tensor declared at " +
                               lineAndColumn(tensor->second.location) + ")");
      return false;
    }
    if (auto format = context_.formats.find(name.name); format != context_.formats.end()) {
      context_.error(name, "redeclaration of '" + name.name + "' (a format declared at " +
                               lineAndColumn(format->second.location) + ")");
      return false;
    }
    return true;
  }

  template <typename Node>
  void reportAt(const Node& node, const std::string& message) {
    if constexpr (std::is_same_v<Node, syntax::ScheduleBlock>)
      context_.error(node.position, message);
    else
      context_.error(node, message);
  }

  SemanticContext context_;
  const ParsedFile& parsed_;
  Program program_;
};

}  // namespace

Program analyzeProgram(const SourceFile& source, const ParsedFile& parsed,
                       std::vector<Diagnostic>& diagnostics, bool hasSyntaxErrors) {
  return SemanticAnalysis(source, parsed, diagnostics, hasSyntaxErrors).run();
}

}  // namespace tcc::frontend
