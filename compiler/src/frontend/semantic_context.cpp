#include "semantic_context.h"

#include <array>
#include <string_view>

#include "tcc/ir/index_expr.h"

namespace tcc::frontend {

const char* SemanticContext::positionOf(const syntax::x3::position_tagged& node) const {
  if (node.id_first < 0 || static_cast<size_t>(node.id_first) >= positions.get_positions().size())
    return source.begin();
  return positions.get_positions()[node.id_first];
}

SourceLocation SemanticContext::locate(const syntax::x3::position_tagged& node) const {
  return source.locate(positionOf(node));
}

std::string SemanticContext::textOf(const syntax::x3::position_tagged& node) const {
  const auto& all = positions.get_positions();
  if (node.id_first < 0 || node.id_last < 0 || static_cast<size_t>(node.id_last) >= all.size())
    return "";
  return std::string(all[node.id_first], all[node.id_last]);
}

void SemanticContext::error(const syntax::x3::position_tagged& node, std::string message) {
  error(positionOf(node), std::move(message));
}

void SemanticContext::error(const char* where, std::string message) {
  diagnostics.push_back(source.diagnose(where, std::move(message)));
}

void SemanticContext::undeclaredError(const syntax::x3::position_tagged& node,
                                      std::string message) {
  if (!hasSyntaxErrors) error(node, std::move(message));
}

bool isReservedWord(const std::string& name) {
  static constexpr std::array<std::string_view, 7> kKeywords = {
      "tensor", "format", "schedule", "target", "sum", "of", "order"};
  for (std::string_view keyword : kKeywords)
    if (name == keyword) return true;
  return ir::CallNode::isBuiltin(name);
}

std::string lineAndColumn(const SourceLocation& location) {
  return std::to_string(location.line) + ":" + std::to_string(location.column);
}

}  // namespace tcc::frontend
