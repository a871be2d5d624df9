// The exported generic's body: its operations, and the values expressions
// take where their sparse operands are absent.
#include "mlir_body.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>

#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/mlir_export.h"

namespace tcc::lowering {

using namespace ir;

namespace {

std::pair<IndexExpr, IndexExpr> operandsOf(const IndexExpr& expr) {
  if (const auto* node = expr.as<AddNode>()) return {node->a, node->b};
  if (const auto* node = expr.as<SubNode>()) return {node->a, node->b};
  if (const auto* node = expr.as<MulNode>()) return {node->a, node->b};
  const auto* node = expr.as<DivNode>();
  return {node->a, node->b};
}

}  // namespace

bool isSparse(const TensorVar& tensor) { return !tensor.format().isAllDense(); }

double constantValue(const IndexExpr& expr) {
  switch (expr.kind()) {
    case IndexExprKind::Literal: return expr.as<LiteralNode>()->asDouble();
    case IndexExprKind::Neg: return -constantValue(expr.as<NegNode>()->operand);
    case IndexExprKind::Add:
    case IndexExprKind::Sub:
    case IndexExprKind::Mul:
    case IndexExprKind::Div: {
      auto [a, b] = operandsOf(expr);
      double left = constantValue(a), right = constantValue(b);
      if (expr.kind() == IndexExprKind::Add) return left + right;
      if (expr.kind() == IndexExprKind::Sub) return left - right;
      if (expr.kind() == IndexExprKind::Mul) return left * right;
      return left / right;
    }
    case IndexExprKind::Call: {
      const auto* call = expr.as<CallNode>();
      std::vector<double> args;
      for (const auto& argument : call->args) args.push_back(constantValue(std::get<IndexExpr>(argument)));
      if (call->name == "abs") return std::fabs(args[0]);
      if (call->name == "sqrt") return std::sqrt(args[0]);
      if (call->name == "exp") return std::exp(args[0]);
      if (call->name == "max") return std::max(args[0], args[1]);
      return std::min(args[0], args[1]);
    }
    default: return std::nan("");
  }
}

bool readsNoTensor(const IndexExpr& expr) { return accessesOf(expr).empty(); }

std::optional<IndexExpr> whereSparseAbsent(const IndexExpr& expr, const std::optional<IndexVar>& loop) {
  switch (expr.kind()) {
    case IndexExprKind::Literal: return expr;
    case IndexExprKind::Access: {
      const auto* access = expr.as<AccessNode>();
      if (loop && std::find(access->indices.begin(), access->indices.end(), *loop) == access->indices.end()) return expr;
      if (isSparse(access->tensor)) return IndexExpr(0.0);
      return std::nullopt;
    }
    case IndexExprKind::Neg: {
      auto operand = whereSparseAbsent(expr.as<NegNode>()->operand, loop);
      if (!operand) return std::nullopt;
      return NegNode::make(*operand);
    }
    case IndexExprKind::Add:
    case IndexExprKind::Sub:
    case IndexExprKind::Mul:
    case IndexExprKind::Div: {
      auto [a, b] = operandsOf(expr);
      auto left = whereSparseAbsent(a, loop), right = whereSparseAbsent(b, loop);
      auto zero = [](const std::optional<IndexExpr>& value) {
        return value && readsNoTensor(*value) && constantValue(*value) == 0;
      };
      if (expr.kind() == IndexExprKind::Mul && (zero(left) || zero(right))) return IndexExpr(0.0);
      if (!left || !right) return std::nullopt;
      if (expr.kind() == IndexExprKind::Add) return AddNode::make(*left, *right);
      if (expr.kind() == IndexExprKind::Sub) return SubNode::make(*left, *right);
      if (expr.kind() == IndexExprKind::Mul) return MulNode::make(*left, *right);
      return DivNode::make(*left, *right);
    }
    case IndexExprKind::Reduction: return std::nullopt;
    case IndexExprKind::Call: {
      const auto* call = expr.as<CallNode>();
      std::vector<CallArgument> args;
      for (const auto& argument : call->args) {
        auto value = whereSparseAbsent(std::get<IndexExpr>(argument), loop);
        if (!value) return std::nullopt;
        args.emplace_back(*value);
      }
      return CallNode::make(call->name, args);
    }
  }
  return std::nullopt;
}


namespace {

// An exact MLIR float literal: shortest round-trip decimal with a point, or
// the bit pattern for infinities and NaNs.
std::string floatLiteral(double value, Datatype type) {
  char buffer[64];
  if (!std::isfinite(value)) {
    if (type == Datatype::Float32)
      std::snprintf(buffer, sizeof buffer, "0x%08X", std::bit_cast<uint32_t>(static_cast<float>(value)));
    else
      std::snprintf(buffer, sizeof buffer, "0x%016llX", static_cast<unsigned long long>(std::bit_cast<uint64_t>(value)));
    return buffer;
  }
  auto result = type == Datatype::Float32 ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(value))
                                          : std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  size_t exponent = text.find_first_of("eE");
  std::string mantissa = text.substr(0, exponent);
  if (mantissa.find('.') == std::string::npos) mantissa += ".0";
  return exponent == std::string::npos ? mantissa : mantissa + text.substr(exponent);
}

// Prints the generic's body: one SSA value per node, accesses read from
// the block arguments in the order the accesses were collected.
//
// Builtins: abs and sqrt vanish at zero, as MLIR 16's sparsifier assumes
// of math.absf / math.absi / math.sqrt. exp, max and min need not, and
// the sparsifier does not take them as they are where a tensor is sparse,
// so there they are spelled as sparse_tensor.unary / binary whose regions
// say what they yield where an operand is absent: the builtin of the
// operand's value there (tcc reads an absent entry as zero and evaluates
// builtins everywhere). Values that read no tensor are folded into
// constants before the generic (`outside`), which the sparsifier takes as
// invariants.
class BodyPrinter {
 public:
  BodyPrinter(std::ostream& out, Datatype type, std::vector<AccessArgument> accessArguments, bool sparseKernel,
              std::string prefix = "%t.", std::string indent = "      ", BodyPrinter* outside = nullptr)
      : out_(out),
        type_(type),
        elementType_(mlirElementType(type)),
        accessArguments_(std::move(accessArguments)),
        sparseKernel_(sparseKernel),
        prefix_(std::move(prefix)),
        indent_(std::move(indent)),
        outside_(outside) {}

  std::string print(const IndexExpr& expr) {
    if (outside_ && expr.kind() == IndexExprKind::Call && readsNoTensor(expr)) return outside_->print(expr);
    if (!outside_ && expr.kind() != IndexExprKind::Literal) return constant(expr);
    switch (expr.kind()) {
      case IndexExprKind::Literal: {
        const auto* literal = expr.as<LiteralNode>();
        std::string value = isFloat(type_) ? floatLiteral(literal->asDouble(), type_)
                                           : std::to_string(isFloat(literal->type)
                                                                ? static_cast<int64_t>(literal->asDouble())
                                                                : literal->intValue);
        return emit("arith.constant " + value + " : " + elementType_);
      }
      case IndexExprKind::Access: {
        const AccessArgument& argument = accessArguments_.at(nextAccess_++);
        if (argument.type == type_) return argument.name;
        return emit("arith.extf " + argument.name + " : " + mlirElementType(argument.type) + " to " + elementType_);
      }
      case IndexExprKind::Neg: {
        std::string operand = print(expr.as<NegNode>()->operand);
        if (isFloat(type_)) return emit("arith.negf " + operand + " : " + elementType_);
        // A product, which the sparsifier knows vanishes with its operand
        // (under a sparse sum, MLIR 16 crashed on `arith.subi 0, x`).
        std::string minusOne = emit("arith.constant -1 : " + elementType_);
        return emit("arith.muli " + operand + ", " + minusOne + " : " + elementType_);
      }
      case IndexExprKind::Add: return binary(expr.as<AddNode>()->a, expr.as<AddNode>()->b, "add");
      case IndexExprKind::Sub: return binary(expr.as<SubNode>()->a, expr.as<SubNode>()->b, "sub");
      case IndexExprKind::Mul: return binary(expr.as<MulNode>()->a, expr.as<MulNode>()->b, "mul");
      case IndexExprKind::Div: {
        const auto* node = expr.as<DivNode>();
        std::string a = print(node->a), b = print(node->b);
        return emit((isFloat(type_) ? "arith.divf " : "arith.divsi ") + a + ", " + b + " : " + elementType_);
      }
      case IndexExprKind::Reduction: return print(expr.as<ReductionNode>()->body);
      case IndexExprKind::Call: return call(*expr.as<CallNode>());
    }
    throw MlirExportError("cannot print " + toString(expr) + " in MLIR");
  }

  std::string add(const std::string& a, const std::string& b) {
    return emit((isFloat(type_) ? "arith.addf " : "arith.addi ") + a + ", " + b + " : " + elementType_);
  }

 private:
  std::string binary(const IndexExpr& left, const IndexExpr& right, const std::string& op) {
    std::string a = print(left), b = print(right);
    return emit("arith." + op + (isFloat(type_) ? "f " : "i ") + a + ", " + b + " : " + elementType_);
  }

  // The builtin applied to values already printed.
  std::string apply(const std::string& name, const std::vector<std::string>& args) {
    const bool floating = isFloat(type_);
    std::string op;
    if (name == "abs") op = floating ? "math.absf" : "math.absi";
    if (name == "sqrt") op = "math.sqrt";
    if (name == "exp") op = "math.exp";
    if (name == "max") op = floating ? "arith.maxf" : "arith.maxsi";
    if (name == "min") op = floating ? "arith.minf" : "arith.minsi";
    std::string operands = args[0] + (args.size() > 1 ? ", " + args[1] : "");
    return emit(op + " " + operands + " : " + elementType_);
  }

  std::string call(const CallNode& call) {
    std::vector<IndexExpr> args;
    for (const auto& argument : call.args) args.push_back(std::get<IndexExpr>(argument));
    const bool vanishesAtZero = call.name == "abs" || call.name == "sqrt";
    if (!sparseKernel_ || vanishesAtZero) {
      std::vector<std::string> printed;
      for (const auto& arg : args) printed.push_back(print(arg));
      return apply(call.name, printed);
    }
    if (args.size() == 1) return unary(call.name, args[0], {});
    // max or min with an operand that reads no tensor: a unary of the other.
    if (readsNoTensor(args[1])) return unary(call.name, args[0], args[1]);
    if (readsNoTensor(args[0])) return unary(call.name, args[1], args[0]);
    return binaryBuiltin(call.name, args[0], args[1]);
  }

  // name(operand) or name(operand, other): the present region applies it,
  // the absent region yields its value where the operand's sparse tensors
  // are absent, left out where that is zero (nothing stored) or where the
  // operand reads a dense tensor there (the sparsifier visits every
  // position then).
  std::string unary(const std::string& name, const IndexExpr& operand, const std::optional<IndexExpr>& other) {
    std::string value = print(operand);
    std::optional<std::string> otherValue;
    if (other) otherValue = outside_->print(*other);
    std::optional<std::string> absent;
    if (auto operandAbsent = whereSparseAbsent(operand)) {
      IndexExpr applied = other ? CallNode::make(name, {*operandAbsent, *other}) : CallNode::make(name, {*operandAbsent});
      if (constantValue(applied) != 0) absent = outside_->print(applied);
    }
    std::string result = prefix_ + std::to_string(counter_++);
    std::string present = prefix_ + std::to_string(counter_++);
    out_ << indent_ << result << " = sparse_tensor.unary " << value << " : " << elementType_ << " to " << elementType_
         << "\n"
         << indent_ << "  present={\n"
         << indent_ << "    ^bb0(" << present << ": " << elementType_ << "):\n";
    std::vector<std::string> args{present};
    if (otherValue) args.push_back(*otherValue);
    std::string applied = nested().apply(name, args);
    out_ << indent_ << "      sparse_tensor.yield " << applied << " : " << elementType_ << "\n"
         << indent_ << "  }\n"
         << indent_ << "  absent={";
    if (absent)
      out_ << "\n" << indent_ << "    sparse_tensor.yield " << *absent << " : " << elementType_ << "\n" << indent_ << "  ";
    out_ << "}\n";
    return result;
  }

  // max or min of two operands that read tensors: each one-sided region
  // uses the other operand's value where it is absent; where both are
  // absent a unary around the binary yields the builtin of both those.
  std::string binaryBuiltin(const std::string& name, const IndexExpr& a, const IndexExpr& b) {
    std::string left = print(a), right = print(b);
    std::optional<std::string> aAbsent = outsideValueWhereAbsent(a), bAbsent = outsideValueWhereAbsent(b);
    std::string result = prefix_ + std::to_string(counter_++);
    std::string x = prefix_ + std::to_string(counter_++), y = prefix_ + std::to_string(counter_++);
    out_ << indent_ << result << " = sparse_tensor.binary " << left << ", " << right << " : " << elementType_ << ", "
         << elementType_ << " to " << elementType_ << "\n"
         << indent_ << "  overlap={\n"
         << indent_ << "    ^bb0(" << x << ": " << elementType_ << ", " << y << ": " << elementType_ << "):\n";
    BodyPrinter inner = nested();
    std::string overlap = inner.apply(name, {x, y});
    out_ << indent_ << "      sparse_tensor.yield " << overlap << " : " << elementType_ << "\n" << indent_ << "  }\n";
    auto side = [&](const std::string& region, const std::string& argument, const std::optional<std::string>& other,
                    bool argumentFirst) {
      out_ << indent_ << "  " << region << "={";
      if (other) {
        out_ << "\n" << indent_ << "    ^bb0(" << argument << ": " << elementType_ << "):\n";
        std::string applied = argumentFirst ? inner.apply(name, {argument, *other}) : inner.apply(name, {*other, argument});
        out_ << indent_ << "      sparse_tensor.yield " << applied << " : " << elementType_ << "\n" << indent_ << "  ";
      }
      out_ << "}\n";
    };
    side("left", x, bAbsent, true);
    side("right", y, aAbsent, false);
    if (!aAbsent || !bAbsent) return result;
    auto both = whereSparseAbsent(CallNode::make(name, {*whereSparseAbsent(a), *whereSparseAbsent(b)}));
    if (constantValue(*both) == 0) return result;
    std::string absent = outside_->print(*both);
    std::string wrapped = prefix_ + std::to_string(counter_++), present = prefix_ + std::to_string(counter_++);
    out_ << indent_ << wrapped << " = sparse_tensor.unary " << result << " : " << elementType_ << " to " << elementType_
         << "\n"
         << indent_ << "  present={\n"
         << indent_ << "    ^bb0(" << present << ": " << elementType_ << "):\n"
         << indent_ << "      sparse_tensor.yield " << present << " : " << elementType_ << "\n"
         << indent_ << "  }\n"
         << indent_ << "  absent={\n"
         << indent_ << "    sparse_tensor.yield " << absent << " : " << elementType_ << "\n"
         << indent_ << "  }\n";
    return wrapped;
  }

  // The operand's value where its sparse tensors are absent, printed
  // outside the generic; nullopt where it reads a dense tensor there.
  std::optional<std::string> outsideValueWhereAbsent(const IndexExpr& operand) {
    auto value = whereSparseAbsent(operand);
    if (!value) return std::nullopt;
    return outside_->print(*value);
  }

  BodyPrinter nested() {
    return BodyPrinter(out_, type_, {}, sparseKernel_, prefix_ + std::to_string(counter_++) + ".", indent_ + "      ",
                       outside_);
  }

  std::string emit(const std::string& operation, const std::string& comment = "") {
    if (!outside_) {  // outside the generic every value is a constant: each once
      auto [known, inserted] = constants_.emplace(operation, prefix_ + std::to_string(counter_));
      if (!inserted) return known->second;
    }
    std::string name = prefix_ + std::to_string(counter_++);
    out_ << indent_ << name << " = " << operation << (comment.empty() ? "" : "  // " + comment) << "\n";
    return name;
  }

  // An expression of literals, folded into one constant.
  std::string constant(const IndexExpr& expr) {
    double value = constantValue(expr);
    std::string text = isFloat(type_) ? floatLiteral(value, type_) : std::to_string(static_cast<int64_t>(value));
    return emit("arith.constant " + text + " : " + elementType_, toString(expr));
  }

  std::ostream& out_;
  Datatype type_;
  std::string elementType_;
  std::vector<AccessArgument> accessArguments_;
  bool sparseKernel_;
  std::string prefix_;
  std::string indent_;
  BodyPrinter* outside_;
  std::map<std::string, std::string> constants_;  // (outside) operation -> its value's name
  size_t nextAccess_ = 0;
  int counter_ = 0;
};

}  // namespace

std::string printGenericBody(std::ostream& outside, std::ostream& body, const IndexExpr& expr, Datatype type,
                             const std::vector<AccessArgument>& arguments, bool sparseKernel,
                             const std::optional<std::string>& accumulateInto) {
  BodyPrinter outsidePrinter(outside, type, {}, false, "%invariant.", "  ");
  BodyPrinter printer(body, type, arguments, sparseKernel, "%t.", "      ", &outsidePrinter);
  std::string value = printer.print(expr);
  return accumulateInto ? printer.add(*accumulateInto, value) : value;
}

}  // namespace tcc::lowering
