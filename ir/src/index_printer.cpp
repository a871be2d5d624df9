#include "tcc/ir/index_printer.h"

#include <charconv>
#include <sstream>

namespace tcc::ir {

namespace {

// Binding strength: higher binds tighter.
enum Precedence { kSum = 1, kProduct = 2, kUnary = 3, kPrimary = 4 };

std::string formatDouble(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // keep it a float literal
  return text;
}

int precedenceOf(const IndexExpr& expr) {
  switch (expr.kind()) {
    case IndexExprKind::Add: case IndexExprKind::Sub: return kSum;
    case IndexExprKind::Mul: case IndexExprKind::Div: return kProduct;
    case IndexExprKind::Neg: return kUnary;
    case IndexExprKind::Literal: return expr.as<LiteralNode>()->asDouble() < 0 ? kUnary : kPrimary;
    default: return kPrimary;
  }
}

void print(std::ostream& os, const IndexExpr& expr);

// Prints expr, in parentheses when it binds looser than `needed`.
void printOperand(std::ostream& os, const IndexExpr& expr, int needed) {
  bool parenthesize = precedenceOf(expr) < needed;
  if (parenthesize) os << "(";
  print(os, expr);
  if (parenthesize) os << ")";
}

template <typename Node>
void printBinary(std::ostream& os, const Node* node, const char* op, int precedence) {
  // Left-associative: the right operand must bind strictly tighter.
  printOperand(os, node->a, precedence);
  os << " " << op << " ";
  printOperand(os, node->b, precedence + 1);
}

void print(std::ostream& os, const IndexExpr& expr) {
  if (!expr.defined()) {
    os << "<undefined>";
    return;
  }
  switch (expr.kind()) {
    case IndexExprKind::Literal: {
      const auto* node = expr.as<LiteralNode>();
      if (isFloat(node->type))
        os << formatDouble(node->floatValue);
      else
        os << node->intValue;
      return;
    }
    case IndexExprKind::Access: {
      const auto* node = expr.as<AccessNode>();
      os << node->tensor.name();
      if (node->tensor.isScalar()) return;
      os << "(";
      for (size_t n = 0; n < node->indices.size(); ++n) os << (n ? "," : "") << node->indices[n].name();
      os << ")";
      return;
    }
    case IndexExprKind::Neg:
      os << "-";
      printOperand(os, expr.as<NegNode>()->operand, kPrimary);
      return;
    case IndexExprKind::Add: return printBinary(os, expr.as<AddNode>(), "+", kSum);
    case IndexExprKind::Sub: return printBinary(os, expr.as<SubNode>(), "-", kSum);
    case IndexExprKind::Mul: return printBinary(os, expr.as<MulNode>(), "*", kProduct);
    case IndexExprKind::Div: return printBinary(os, expr.as<DivNode>(), "/", kProduct);
    case IndexExprKind::Reduction: {
      const auto* node = expr.as<ReductionNode>();
      os << "sum(" << node->var.name() << ", ";
      print(os, node->body);
      os << ")";
      return;
    }
    case IndexExprKind::Call: {
      const auto* node = expr.as<CallNode>();
      os << node->name << "(";
      for (size_t n = 0; n < node->args.size(); ++n) {
        if (n) os << ", ";
        if (const auto* arg = std::get_if<IndexExpr>(&node->args[n]))
          print(os, *arg);
        else
          os << std::get<TensorVar>(node->args[n]).name();
      }
      os << ")";
      return;
    }
  }
}

void print(std::ostream& os, const IndexStmt& stmt) {
  if (!stmt.defined()) {
    os << "<undefined>";
    return;
  }
  switch (stmt.kind()) {
    case IndexStmtKind::Assignment: {
      const auto* node = stmt.as<AssignmentNode>();
      print(os, node->lhs);
      os << (node->accumulate ? " += " : " = ");
      print(os, node->rhs);
      return;
    }
    case IndexStmtKind::Forall: {
      const auto* node = stmt.as<ForallNode>();
      os << "forall(" << node->indexVar.name() << ", ";
      print(os, node->body);
      const auto& attributes = node->attributes;
      if (attributes.parallelUnit != ParallelUnit::NotParallel ||
          attributes.outputRaceStrategy != OutputRaceStrategy::IgnoreRaces)
        os << ", " << toString(attributes.parallelUnit) << ", " << toString(attributes.outputRaceStrategy);
      if (attributes.unrollFactor > 0) os << ", unroll " << attributes.unrollFactor;
      os << ")";
      return;
    }
    case IndexStmtKind::Where: {
      const auto* node = stmt.as<WhereNode>();
      os << "where(";
      print(os, node->consumer);
      os << ", ";
      print(os, node->producer);
      os << ")";
      return;
    }
    case IndexStmtKind::Sequence: {
      const auto* node = stmt.as<SequenceNode>();
      os << "sequence(";
      print(os, node->definition);
      os << ", ";
      print(os, node->mutation);
      os << ")";
      return;
    }
    case IndexStmtKind::Multi: {
      const auto* node = stmt.as<MultiNode>();
      os << "multi(";
      print(os, node->first);
      os << ", ";
      print(os, node->second);
      os << ")";
      return;
    }
    case IndexStmtKind::SuchThat: {
      const auto* node = stmt.as<SuchThatNode>();
      os << "suchthat(";
      print(os, node->stmt);
      for (const auto& relation : node->relations) os << ", " << toString(relation);
      os << ")";
      return;
    }
  }
}

}  // namespace

std::string toString(const IndexExpr& expr) {
  std::ostringstream os;
  print(os, expr);
  return os.str();
}

std::string toString(const IndexStmt& stmt) {
  std::ostringstream os;
  print(os, stmt);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const IndexExpr& expr) {
  print(os, expr);
  return os;
}

std::ostream& operator<<(std::ostream& os, const IndexStmt& stmt) {
  print(os, stmt);
  return os;
}

}  // namespace tcc::ir
