#include "case_model.h"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

namespace tcc::differential {

std::string toString(ElementType type) {
  switch (type) {
    case ElementType::Float64: return "float64";
    case ElementType::Float32: return "float32";
    case ElementType::Int32: return "int32";
    case ElementType::Int64: return "int64";
  }
  return "float64";
}

bool isFloat(ElementType type) { return type == ElementType::Float64 || type == ElementType::Float32; }

double representable(double value, ElementType type) {
  switch (type) {
    case ElementType::Float64: return value;
    case ElementType::Float32: return static_cast<double>(static_cast<float>(value));
    case ElementType::Int32:
    case ElementType::Int64: return std::trunc(value);
  }
  return value;
}

bool TensorDecl::allDense() const {
  if (namedFormat) return *namedFormat == "dense";
  for (LevelKind level : levels)
    if (level != LevelKind::Dense) return false;
  return true;
}

std::string TensorDecl::formatText() const {
  if (namedFormat) return *namedFormat;
  if (levels.empty()) return "dense";
  std::string text = "{";
  for (size_t l = 0; l < levels.size(); ++l) {
    if (l) text += ", ";
    switch (levels[l]) {
      case LevelKind::Dense: text += "dense"; break;
      case LevelKind::Compressed: text += "compressed"; break;
      case LevelKind::CompressedNonunique: text += "compressed(nonunique)"; break;
      case LevelKind::Singleton: text += "singleton"; break;
      case LevelKind::SingletonNonunique: text += "singleton(nonunique)"; break;
    }
  }
  text += "}";
  std::vector<int> identity(levels.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (!modeOrder.empty() && modeOrder != identity) {
    text += " order (";
    for (size_t l = 0; l < modeOrder.size(); ++l) text.append(l ? "," : "").append(std::to_string(modeOrder[l]));
    text += ")";
  }
  return text;
}

Expr Expr::access(std::string tensor, std::vector<std::string> vars) {
  Expr e;
  e.kind = Kind::Access;
  e.tensor = std::move(tensor);
  e.vars = std::move(vars);
  return e;
}

Expr Expr::number(double value) {
  Expr e;
  e.kind = Kind::Literal;
  e.literal = value;
  return e;
}

Expr Expr::binary(Kind kind, Expr a, Expr b) {
  Expr e;
  e.kind = kind;
  e.operands = {std::move(a), std::move(b)};
  return e;
}

Expr Expr::unary(Kind kind, Expr a, std::vector<std::string> vars) {
  Expr e;
  e.kind = kind;
  e.vars = std::move(vars);
  e.operands = {std::move(a)};
  return e;
}

Expr Expr::call(std::string function, std::vector<Expr> args) {
  Expr e;
  e.kind = Kind::Call;
  e.function = std::move(function);
  e.operands = std::move(args);
  return e;
}

namespace {

int precedence(Expr::Kind kind) {
  switch (kind) {
    case Expr::Kind::Add:
    case Expr::Kind::Sub: return 1;
    case Expr::Kind::Mul:
    case Expr::Kind::Div: return 2;
    case Expr::Kind::Neg: return 3;
    default: return 4;
  }
}

std::string literalText(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

// Parenthesizes a child whose operator binds less tightly than its parent,
// and a right operand of - or / of equal precedence.
std::string render(const Expr& e) {
  auto child = [&](const Expr& operand, bool right) {
    int own = precedence(e.kind), theirs = precedence(operand.kind);
    bool needs = theirs < own || (right && theirs == own && (e.kind == Expr::Kind::Sub || e.kind == Expr::Kind::Div));
    if (operand.kind == Expr::Kind::Literal && operand.literal < 0) needs = true;
    std::string text = render(operand);
    return needs ? "(" + text + ")" : text;
  };
  switch (e.kind) {
    case Expr::Kind::Access: {
      if (e.vars.empty()) return e.tensor;
      std::string text = e.tensor + "(";
      for (size_t v = 0; v < e.vars.size(); ++v) text.append(v ? "," : "").append(e.vars[v]);
      return text + ")";
    }
    case Expr::Kind::Literal: return literalText(e.literal);
    case Expr::Kind::Add: return child(e.operands[0], false) + " + " + child(e.operands[1], true);
    case Expr::Kind::Sub: return child(e.operands[0], false) + " - " + child(e.operands[1], true);
    case Expr::Kind::Mul: return child(e.operands[0], false) + " * " + child(e.operands[1], true);
    case Expr::Kind::Div: return child(e.operands[0], false) + " / " + child(e.operands[1], true);
    case Expr::Kind::Neg: return std::string("-").append(child(e.operands[0], true));
    case Expr::Kind::Sum: return "sum(" + e.vars[0] + ", " + render(e.operands[0]) + ")";
    case Expr::Kind::Call: {
      std::string text = e.function + "(";
      for (size_t a = 0; a < e.operands.size(); ++a) text.append(a ? ", " : "").append(render(e.operands[a]));
      return text + ")";
    }
  }
  return "";
}

std::string dimensionOf(const Case& c, const std::string& var) {
  if (!c.symbolicSizes) return std::to_string(c.sizes.at(var));
  std::string name = var;
  for (auto shared = c.sharedDimensions.find(name); shared != c.sharedDimensions.end();
       shared = c.sharedDimensions.find(name))
    name = shared->second;
  for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return name;
}

std::string declaration(const Case& c, const TensorDecl& tensor) {
  std::string text = "tensor " + tensor.name;
  if (!tensor.vars.empty()) {
    text += "(";
    for (size_t v = 0; v < tensor.vars.size(); ++v) text.append(v ? ", " : "").append(dimensionOf(c, tensor.vars[v]));
    text += ")";
  }
  text += " : " + tensor.formatText();
  if (tensor.float16) text += " of float16";
  else if (c.type != ElementType::Float64) text += " of " + toString(c.type);
  return text + "\n";
}

}  // namespace

std::string toString(const Expr& expr) { return render(expr); }

const TensorDecl* Case::findInput(const std::string& name) const {
  for (const auto& tensor : inputs)
    if (tensor.name == name) return &tensor;
  return nullptr;
}

const TensorDecl* Case::findOperand(const std::string& name) const {
  if (const TensorDecl* input = findInput(name)) return input;
  for (const auto& stage : earlier)
    if (stage.output.name == name) return &stage.output;
  return nullptr;
}

std::string Case::statementText() const {
  return toString(Expr::access(output.name, output.vars)) + (accumulate ? " += " : " = ") + toString(rhs);
}

std::string Case::programText() const {
  std::string text = declaration(*this, output);
  for (const auto& stage : earlier) text += declaration(*this, stage.output);
  for (const auto& tensor : inputs) text += declaration(*this, tensor);
  for (const auto& stage : earlier)
    text += toString(Expr::access(stage.output.name, stage.output.vars)) + " = " + toString(stage.rhs) + "\n";
  text += statementText() + "\n";
  if (cudaTarget) text += "target cuda\n";
  if (fastFp) text += "fp fast\n";
  std::vector<std::string> commands;
  for (const auto& stage : earlier) commands.insert(commands.end(), stage.schedule.begin(), stage.schedule.end());
  commands.insert(commands.end(), schedule.begin(), schedule.end());
  if (!commands.empty()) {
    text += "schedule {\n";
    for (const auto& command : commands) text += "  " + command + "\n";
    text += "}\n";
  }
  return text;
}

void collectAccesses(const Expr& expr, std::vector<const Expr*>& accesses) {
  if (expr.kind == Expr::Kind::Access) accesses.push_back(&expr);
  for (const auto& operand : expr.operands) collectAccesses(operand, accesses);
}

void dropUnusedInputs(Case& c) {
  std::vector<const Expr*> accesses;
  collectAccesses(c.rhs, accesses);
  for (const auto& stage : c.earlier) collectAccesses(stage.rhs, accesses);
  std::set<std::string> used;
  for (const Expr* access : accesses) used.insert(access->tensor);
  std::vector<TensorDecl> kept;
  for (auto& tensor : c.inputs) {
    if (used.count(tensor.name)) {
      kept.push_back(std::move(tensor));
    } else {
      c.data.erase(tensor.name);
    }
  }
  c.inputs = std::move(kept);
}

}  // namespace tcc::differential
