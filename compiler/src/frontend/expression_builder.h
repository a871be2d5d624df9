// Builds index expressions from syntax: resolves tensor names and index
// variables, checks ranks, repeated indices and that each index variable
// ranges over one size within a statement.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "semantic_context.h"
#include "syntax_tree.h"
#include "tcc/ir/index_expr.h"

namespace tcc::frontend {

class ExpressionBuilder {
 public:
  enum class Mode {
    Statement,  // new index variable names are declared by use
    Schedule,   // every index variable must exist already
  };

  // Float literals take `literalType` (the output's type when it is a float).
  ExpressionBuilder(SemanticContext& context, Mode mode, ir::Datatype literalType);

  // nullopt after reporting.
  std::optional<ir::IndexExpr> build(const syntax::Expression& expression);
  std::optional<ir::Access> buildAccess(const syntax::Access& access);

  // Names of the index variables read so far, and those summed by sum(...).
  const std::set<std::string>& usedIndexNames() const { return used_; }
  const std::map<std::string, const syntax::Identifier*>& summedIndexNames() const {
    return summed_;
  }

 private:
  std::optional<ir::IndexExpr> buildOperand(const syntax::Operand& operand);
  std::optional<ir::IndexExpr> buildNumber(const syntax::Number& number);
  std::optional<ir::IndexExpr> buildSummation(const syntax::Summation& summation);
  std::optional<ir::IndexExpr> buildCall(const syntax::Call& call);
  std::optional<ir::IndexVar> indexVar(const syntax::Identifier& name);
  bool bindSize(const syntax::Identifier& index, const ir::Dimension& size,
                const syntax::Access& access);

  struct SizeBinding {
    ir::Dimension size;
    std::string accessText;
  };

  // IR passes recurse over expression trees; a bound on their size keeps
  // absurd inputs from exhausting the stack later.
  static constexpr int kMaxOperands = 10000;
  int operands_ = 0;

  SemanticContext& context_;
  Mode mode_;
  ir::Datatype literalType_;
  std::set<std::string> used_;
  std::map<std::string, const syntax::Identifier*> summed_;
  std::map<std::string, SizeBinding> sizes_;
};

// The tensor access an expression is, looking through parentheses and
// one-operand chains; null for anything else.
const syntax::Access* asAccess(const syntax::Expression& expression);
// The number an expression is, likewise.
const syntax::Number* asNumber(const syntax::Expression& expression);

}  // namespace tcc::frontend
