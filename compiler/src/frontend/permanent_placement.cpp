#include "permanent_placement.h"

#include <vector>

namespace tcc::frontend {
namespace {

void collectExpression(const syntax::Expression& expression, std::vector<const syntax::Call*>& calls);

void collectOperand(const syntax::Operand& operand, std::vector<const syntax::Call*>& calls) {
  boost::apply_visitor(
      [&](const auto& node) {
        using Node = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<Node, syntax::Call>) {
          if (node.function.name == "perm") calls.push_back(&node);
          for (const auto& argument : node.arguments) collectExpression(argument.get(), calls);
        } else if constexpr (std::is_same_v<Node, syntax::Summation>) {
          collectExpression(node.body.get(), calls);
        } else if constexpr (std::is_same_v<Node, syntax::x3::forward_ast<syntax::Negation>>) {
          collectOperand(node.get().operand, calls);
        } else if constexpr (std::is_same_v<Node, syntax::x3::forward_ast<syntax::Expression>>) {
          collectExpression(node.get(), calls);
        }
      },
      operand.get());
}

void collectExpression(const syntax::Expression& expression, std::vector<const syntax::Call*>& calls) {
  collectOperand(expression.first, calls);
  for (const syntax::Operation& operation : expression.rest) collectOperand(operation.operand, calls);
}

// The call that is the whole expression, parentheses aside; null otherwise.
const syntax::Call* wholeCall(const syntax::Expression& expression) {
  if (!expression.rest.empty()) return nullptr;
  const auto& operand = expression.first.get();
  if (const auto* call = boost::get<syntax::Call>(&operand)) return call;
  if (const auto* nested = boost::get<syntax::x3::forward_ast<syntax::Expression>>(&operand))
    return wholeCall(nested->get());
  return nullptr;
}

}  // namespace

bool checkPermanentPlacement(SemanticContext& context, const syntax::Statement& statement) {
  std::vector<const syntax::Call*> calls;
  collectExpression(statement.value, calls);
  if (calls.empty()) return true;
  const syntax::Call* whole = wholeCall(statement.value);
  bool scalarOutput = !statement.output.indices || statement.output.indices->empty();
  bool ok = true;
  for (const syntax::Call* call : calls) {
    if (call != whole) {
      context.error(*call, "perm(A) must be the whole right-hand side of a statement of its own, as in p = perm(A)");
      ok = false;
    } else if (!scalarOutput) {
      context.error(*call, "perm(A) is a scalar; assign it to a tensor with no indices, as in p = perm(A)");
      ok = false;
    }
  }
  return ok;
}

}  // namespace tcc::frontend
