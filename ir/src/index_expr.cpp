#include "tcc/ir/index_expr.h"

#include <bit>
#include <stdexcept>

#include "index_hash.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::ir {

using detail::hashCombine;

namespace {

int typeRank(Datatype type) {
  switch (type) {
    case Datatype::Int32: return 0;
    case Datatype::Int64: return 1;
    case Datatype::Float16: return 2;
    case Datatype::Float32: return 3;
    case Datatype::Float64: return 4;
  }
  return 0;
}

size_t startHash(const IndexExprNode& node) {
  return hashCombine(static_cast<size_t>(node.kind) * 31 + 7, static_cast<size_t>(node.type));
}

void requireDefined(const IndexExpr& expr, const char* what) {
  if (!expr.defined()) throw std::invalid_argument(std::string(what) + ": undefined operand");
}

bool sameArgument(const CallArgument& a, const CallArgument& b) {
  if (a.index() != b.index()) return false;
  if (const auto* expr = std::get_if<IndexExpr>(&a)) return *expr == std::get<IndexExpr>(b);
  return std::get<TensorVar>(a) == std::get<TensorVar>(b);
}

template <typename Node>
bool equalOperands(const IndexExprNode* a, const IndexExprNode* b) {
  auto* x = static_cast<const Node*>(a);
  auto* y = static_cast<const Node*>(b);
  return x->a == y->a && x->b == y->b;
}

bool equalNodes(const IndexExprNode* a, const IndexExprNode* b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type || a->hash != b->hash) return false;
  switch (a->kind) {
    case IndexExprKind::Literal: {
      auto* x = static_cast<const LiteralNode*>(a);
      auto* y = static_cast<const LiteralNode*>(b);
      return isFloat(x->type) ? std::bit_cast<uint64_t>(x->floatValue) == std::bit_cast<uint64_t>(y->floatValue)
                              : x->intValue == y->intValue;
    }
    case IndexExprKind::Access: {
      auto* x = static_cast<const AccessNode*>(a);
      auto* y = static_cast<const AccessNode*>(b);
      return x->tensor == y->tensor && x->indices == y->indices;
    }
    case IndexExprKind::Neg:
      return static_cast<const NegNode*>(a)->operand == static_cast<const NegNode*>(b)->operand;
    case IndexExprKind::Add: return equalOperands<AddNode>(a, b);
    case IndexExprKind::Sub: return equalOperands<SubNode>(a, b);
    case IndexExprKind::Mul: return equalOperands<MulNode>(a, b);
    case IndexExprKind::Div: return equalOperands<DivNode>(a, b);
    case IndexExprKind::Reduction: {
      auto* x = static_cast<const ReductionNode*>(a);
      auto* y = static_cast<const ReductionNode*>(b);
      return x->var == y->var && x->body == y->body;
    }
    case IndexExprKind::Call: {
      auto* x = static_cast<const CallNode*>(a);
      auto* y = static_cast<const CallNode*>(b);
      if (x->name != y->name || x->args.size() != y->args.size()) return false;
      for (size_t n = 0; n < x->args.size(); ++n)
        if (!sameArgument(x->args[n], y->args[n])) return false;
      return true;
    }
  }
  return false;
}

}  // namespace

Datatype widerType(Datatype a, Datatype b) { return typeRank(a) >= typeRank(b) ? a : b; }

IndexExpr::IndexExpr(double value) : IndexExpr(LiteralNode::make(value)) {}

IndexExpr IndexExpr::makeInteger(int64_t value) { return LiteralNode::makeInteger(value); }

bool IndexExpr::operator==(const IndexExpr& other) const {
  return equalNodes(node_.get(), other.node_.get());
}

Access::Access(const IndexExpr& expr) : IndexExpr(expr) {
  if (!expr.isa<AccessNode>()) throw std::invalid_argument("expected a tensor access");
}

const TensorVar& Access::tensor() const { return as<AccessNode>()->tensor; }
const std::vector<IndexVar>& Access::indices() const { return as<AccessNode>()->indices; }

IndexStmt AssignableAccess::operator=(const IndexExpr& rhs) const { return AssignmentNode::make(*this, rhs); }
IndexStmt AssignableAccess::operator=(const AssignableAccess& rhs) const {
  return AssignmentNode::make(*this, rhs);
}
IndexStmt AssignableAccess::operator+=(const IndexExpr& rhs) const {
  return AssignmentNode::make(*this, rhs, /*accumulate=*/true);
}

IndexExpr LiteralNode::make(double value, Datatype type) {
  if (!isFloat(type)) return makeInteger(static_cast<int64_t>(value), type);
  auto node = std::make_shared<LiteralNode>(type);
  node->floatValue = value;
  // +0.0 and -0.0 differ in bits, and equality compares bits, so hash bits.
  node->hash = hashCombine(startHash(*node), std::bit_cast<uint64_t>(value));
  return IndexExpr(node);
}

IndexExpr LiteralNode::makeInteger(int64_t value, Datatype type) {
  if (isFloat(type)) return make(static_cast<double>(value), type);
  auto node = std::make_shared<LiteralNode>(type);
  node->intValue = value;
  node->hash = hashCombine(startHash(*node), static_cast<size_t>(value));
  return IndexExpr(node);
}

Access AccessNode::make(TensorVar tensor, std::vector<IndexVar> indices) {
  if (!tensor.defined()) throw std::invalid_argument("access: undefined tensor");
  if (static_cast<int>(indices.size()) != tensor.order())
    throw std::invalid_argument("access " + tensor.name() + ": " + std::to_string(indices.size()) +
                                " index variables for a tensor of order " +
                                std::to_string(tensor.order()));
  auto node = std::make_shared<AccessNode>(tensor.datatype());
  size_t hash = hashCombine(startHash(*node), std::hash<TensorVar>()(tensor));
  for (const auto& var : indices) hash = hashCombine(hash, std::hash<IndexVar>()(var));
  node->tensor = std::move(tensor);
  node->indices = std::move(indices);
  node->hash = hash;
  return Access(IndexExpr(node));
}

IndexExpr NegNode::make(IndexExpr operand) {
  requireDefined(operand, "negation");
  auto node = std::make_shared<NegNode>(operand.type());
  node->hash = hashCombine(startHash(*node), operand.hash());
  node->operand = std::move(operand);
  return IndexExpr(node);
}

template <typename T, IndexExprKind K>
IndexExpr BinaryIndexExprNode<T, K>::make(IndexExpr a, IndexExpr b) {
  requireDefined(a, "binary operation");
  requireDefined(b, "binary operation");
  auto node = std::make_shared<T>(widerType(a.type(), b.type()));
  node->hash = hashCombine(hashCombine(startHash(*node), a.hash()), b.hash());
  node->a = std::move(a);
  node->b = std::move(b);
  return IndexExpr(node);
}

template struct BinaryIndexExprNode<AddNode, IndexExprKind::Add>;
template struct BinaryIndexExprNode<SubNode, IndexExprKind::Sub>;
template struct BinaryIndexExprNode<MulNode, IndexExprKind::Mul>;
template struct BinaryIndexExprNode<DivNode, IndexExprKind::Div>;

IndexExpr ReductionNode::make(IndexVar var, IndexExpr body) {
  requireDefined(body, "sum");
  auto node = std::make_shared<ReductionNode>(body.type());
  node->hash = hashCombine(hashCombine(startHash(*node), std::hash<IndexVar>()(var)), body.hash());
  node->var = std::move(var);
  node->body = std::move(body);
  return IndexExpr(node);
}

bool CallNode::isBuiltin(const std::string& name) {
  return name == "perm" || name == "abs" || name == "sqrt" || name == "exp" || name == "max" ||
         name == "min";
}

IndexExpr CallNode::make(std::string name, std::vector<CallArgument> args) {
  if (!isBuiltin(name)) throw std::invalid_argument("unknown builtin '" + name + "'");
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("builtin " + name + ": " + what);
  };
  Datatype type = Datatype::Int32;
  if (name == "perm") {
    if (args.size() != 1 || !std::holds_alternative<TensorVar>(args[0]))
      fail("expects one matrix, e.g. perm(A)");
    const auto& matrix = std::get<TensorVar>(args[0]);
    if (!matrix.defined() || matrix.order() != 2) fail("expects a matrix (a tensor of order 2)");
    const auto& rows = matrix.dimension(0);
    const auto& columns = matrix.dimension(1);
    if (rows.isFixed() && columns.isFixed() && rows.size() != columns.size())
      fail("expects a square matrix, " + matrix.name() + " is " + rows.toString() + " x " +
           columns.toString());
    type = matrix.datatype();
  } else {
    size_t arity = (name == "max" || name == "min") ? 2 : 1;
    if (args.size() != arity) fail("expects " + std::to_string(arity) + " argument(s)");
    for (const auto& arg : args) {
      const auto* expr = std::get_if<IndexExpr>(&arg);
      if (!expr || !expr->defined()) fail("expects expression arguments");
      type = widerType(type, expr->type());
    }
    if ((name == "sqrt" || name == "exp") && !isFloat(type)) type = Datatype::Float64;
  }
  auto node = std::make_shared<CallNode>(type);
  size_t hash = hashCombine(startHash(*node), std::hash<std::string>()(name));
  for (const auto& arg : args) {
    if (const auto* expr = std::get_if<IndexExpr>(&arg))
      hash = hashCombine(hash, expr->hash());
    else
      hash = hashCombine(hash, std::hash<TensorVar>()(std::get<TensorVar>(arg)) * 3 + 1);
  }
  node->name = std::move(name);
  node->args = std::move(args);
  node->hash = hash;
  return IndexExpr(node);
}

}  // namespace tcc::ir
