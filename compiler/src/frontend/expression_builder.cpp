#include "expression_builder.h"

#include <charconv>
#include <stdexcept>

#include "tcc/ir/builder.h"

namespace tcc::frontend {
namespace {

template <typename Node>
const Node* asSingle(const syntax::Expression& expression) {
  const syntax::Expression* current = &expression;
  while (current->rest.empty()) {
    const auto& operand = current->first.get();
    if (const auto* node = boost::get<Node>(&operand)) return node;
    const auto* nested = boost::get<syntax::x3::forward_ast<syntax::Expression>>(&operand);
    if (!nested) return nullptr;
    current = &nested->get();
  }
  return nullptr;
}

// The source position of an operand: its own node, or the expression it wraps.
const syntax::x3::position_tagged& firstTagged(const syntax::Operand& operand) {
  return boost::apply_visitor(
      [](const auto& node) -> const syntax::x3::position_tagged& {
        using Node = std::decay_t<decltype(node)>;
        if constexpr (std::is_base_of_v<syntax::x3::position_tagged, Node>) return node;
        else return node.get();
      },
      operand.get());
}

}  // namespace

const syntax::Access* asAccess(const syntax::Expression& expression) {
  return asSingle<syntax::Access>(expression);
}
const syntax::Number* asNumber(const syntax::Expression& expression) {
  return asSingle<syntax::Number>(expression);
}

ExpressionBuilder::ExpressionBuilder(SemanticContext& context, Mode mode, ir::Datatype literalType)
    : context_(context), mode_(mode), literalType_(literalType) {}

std::optional<ir::IndexExpr> ExpressionBuilder::build(const syntax::Expression& expression) {
  std::optional<ir::IndexExpr> result = buildOperand(expression.first);
  bool ok = result.has_value();
  for (const syntax::Operation& operation : expression.rest) {
    std::optional<ir::IndexExpr> operand = buildOperand(operation.operand);
    ok = ok && operand.has_value();
    if (!ok) continue;  // keep checking the other operands
    switch (operation.op) {
      case '+': result = *result + *operand; break;
      case '-': result = *result - *operand; break;
      case '*': result = *result * *operand; break;
      default: result = *result / *operand; break;
    }
  }
  if (!ok) return std::nullopt;
  return result;
}

std::optional<ir::IndexExpr> ExpressionBuilder::buildOperand(const syntax::Operand& operand) {
  const bool wrapsExpression =
      boost::get<syntax::x3::forward_ast<syntax::Expression>>(&operand.get()) != nullptr;
  if (!wrapsExpression && ++operands_ > kMaxOperands) {
    if (operands_ == kMaxOperands + 1)
      context_.error(context_.positionOf(firstTagged(operand)),
                     "expression has more than " + std::to_string(kMaxOperands) + " operands");
    return std::nullopt;
  }
  return boost::apply_visitor(
      [&](const auto& node) -> std::optional<ir::IndexExpr> {
        using Node = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<Node, syntax::Number>) {
          return buildNumber(node);
        } else if constexpr (std::is_same_v<Node, syntax::Summation>) {
          return buildSummation(node);
        } else if constexpr (std::is_same_v<Node, syntax::Call>) {
          return buildCall(node);
        } else if constexpr (std::is_same_v<Node, syntax::Access>) {
          std::optional<ir::Access> access = buildAccess(node);
          if (!access) return std::nullopt;
          return ir::IndexExpr(*access);
        } else if constexpr (std::is_same_v<Node, syntax::x3::forward_ast<syntax::Negation>>) {
          std::optional<ir::IndexExpr> inner = buildOperand(node.get().operand);
          if (!inner) return std::nullopt;
          return -*inner;
        } else {
          return build(node.get());
        }
      },
      operand.get());
}

std::optional<ir::IndexExpr> ExpressionBuilder::buildNumber(const syntax::Number& number) {
  const std::string& text = number.text;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (text.find_first_of(".eE") == std::string::npos) {
    std::int64_t value = 0;
    auto [end, status] = std::from_chars(first, last, value);
    if (status == std::errc() && end == last) return ir::LiteralNode::makeInteger(value);
  } else {
    double value = 0;
    auto [end, status] = std::from_chars(first, last, value);
    if (status == std::errc() && end == last) return ir::LiteralNode::make(value, literalType_);
  }
  context_.error(number, "number '" + text + "' is out of range");
  return std::nullopt;
}

std::optional<ir::IndexVar> ExpressionBuilder::indexVar(const syntax::Identifier& name) {
  if (auto known = context_.indexVars.find(name.name); known != context_.indexVars.end()) {
    if (mode_ == Mode::Statement && context_.scheduleIndexVars.count(name.name)) {
      context_.error(name, "index variable '" + name.name +
                               "' is introduced by the schedule and cannot be used in a statement");
      return std::nullopt;
    }
    return known->second;
  }
  if (context_.tensors.count(name.name)) {
    context_.error(name, "'" + name.name + "' is a tensor, not an index variable");
    return std::nullopt;
  }
  if (mode_ == Mode::Schedule) {
    context_.undeclaredError(name, "unknown index variable '" + name.name + "'");
    return std::nullopt;
  }
  if (isReservedWord(name.name)) {
    context_.error(name, "'" + name.name + "' is reserved and cannot name an index variable");
    return std::nullopt;
  }
  ir::IndexVar var(name.name);
  context_.indexVars.emplace(name.name, var);
  return var;
}

bool ExpressionBuilder::bindSize(const syntax::Identifier& index, const ir::Dimension& size,
                                 const syntax::Access& access) {
  std::string accessText = context_.textOf(access);
  auto [binding, inserted] = sizes_.emplace(index.name, SizeBinding{size, accessText});
  if (inserted || binding->second.size == size) return true;
  context_.error(index, "index variable '" + index.name + "' ranges over " +
                            binding->second.size.toString() + " in " +
                            binding->second.accessText + " but over " + size.toString() +
                            " in " + accessText);
  return false;
}

std::optional<ir::Access> ExpressionBuilder::buildAccess(const syntax::Access& access) {
  const std::string& name = access.tensor.name;
  auto declared = context_.tensors.find(name);
  if (declared == context_.tensors.end()) {
    context_.undeclaredError(access.tensor, "use of undeclared tensor '" + name + "'");
    return std::nullopt;
  }
  if (declared->second.isWorkspace) {
    context_.error(access.tensor, "workspace '" + name + "' is used before it is produced: only precompute(expr, "
                                  "i_vars, o_vars, " + name + ") in the schedule fills it, and what it holds is "
                                  "read where that precompute puts it");
    return std::nullopt;
  }
  const ir::TensorVar& tensor = declared->second.tensor;
  static const std::vector<syntax::Identifier> kNoIndices;
  const std::vector<syntax::Identifier>& indices = access.indices ? *access.indices : kNoIndices;
  if (static_cast<int>(indices.size()) != tensor.order()) {
    context_.error(access.tensor, "tensor '" + name + "' has order " +
                                      std::to_string(tensor.order()) + " but is accessed with " +
                                      std::to_string(indices.size()) +
                                      (indices.size() == 1 ? " index" : " indices"));
    return std::nullopt;
  }
  bool ok = true;
  std::vector<ir::IndexVar> vars;
  for (size_t mode = 0; mode < indices.size(); ++mode) {
    const syntax::Identifier& index = indices[mode];
    bool repeated = false;
    for (size_t earlier = 0; earlier < mode; ++earlier)
      repeated = repeated || indices[earlier].name == index.name;
    if (repeated) {
      context_.error(index, "index variable '" + index.name + "' appears twice in " +
                                context_.textOf(access) +
                                "; repeated indices within one access are not supported");
      ok = false;
      continue;
    }
    std::optional<ir::IndexVar> var = indexVar(index);
    if (!var) {
      ok = false;
      continue;
    }
    used_.insert(index.name);
    if (mode_ == Mode::Statement && !bindSize(index, tensor.dimension(static_cast<int>(mode)), access))
      ok = false;
    vars.push_back(*var);
  }
  if (!ok) return std::nullopt;
  return tensor(vars);
}

std::optional<ir::IndexExpr> ExpressionBuilder::buildSummation(const syntax::Summation& summation) {
  std::optional<ir::IndexVar> var = indexVar(summation.index);
  std::set<std::string> usedBefore;
  usedBefore.swap(used_);
  std::optional<ir::IndexExpr> body = build(summation.body.get());
  bool bodyUsesVar = used_.count(summation.index.name) > 0;
  used_.insert(usedBefore.begin(), usedBefore.end());
  if (!var || !body) return std::nullopt;
  if (!bodyUsesVar) {
    context_.error(summation.index, "sum over '" + summation.index.name +
                                        "', which its expression does not use");
    return std::nullopt;
  }
  summed_.emplace(summation.index.name, &summation.index);
  return ir::sum(*var, *body);
}

std::optional<ir::IndexExpr> ExpressionBuilder::buildCall(const syntax::Call& call) {
  std::vector<ir::CallArgument> arguments;
  bool ok = true;
  for (const auto& argument : call.arguments) {
    const syntax::Access* access = asAccess(argument.get());
    // A bare name of a tensor that has modes is the whole tensor: perm(A).
    if (access && !access->indices) {
      auto declared = context_.tensors.find(access->tensor.name);
      if (declared != context_.tensors.end() && declared->second.tensor.order() > 0) {
        arguments.emplace_back(declared->second.tensor);
        continue;
      }
    }
    std::optional<ir::IndexExpr> value = build(argument.get());
    if (value) arguments.emplace_back(*value);
    ok = ok && value.has_value();
  }
  if (!ok) return std::nullopt;
  try {
    return ir::CallNode::make(call.function.name, arguments);
  } catch (const std::invalid_argument& error) {
    context_.error(call, error.what());
    return std::nullopt;
  }
}

}  // namespace tcc::frontend
