// Index expressions: the right-hand sides of tensor index notation.
// Nodes are immutable, shared by handle, built through static make(...)
// functions that validate their arguments. Each node caches its structural
// hash, so equality of handles (operator==) is structural and cheap to
// reject.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tcc/ir/format.h"
#include "tcc/ir/index_var.h"
#include "tcc/ir/tensor_var.h"

namespace tcc::ir {

class IndexStmt;

enum class IndexExprKind { Literal, Access, Neg, Add, Sub, Mul, Div, Reduction, Call };

struct IndexExprNode {
  const IndexExprKind kind;
  const Datatype type;  // the element type the expression computes in
  size_t hash = 0;      // structural hash, set by make

  virtual ~IndexExprNode() = default;

 protected:
  IndexExprNode(IndexExprKind kind, Datatype type) : kind(kind), type(type) {}
};

class IndexExpr {
 public:
  IndexExpr() = default;  // undefined
  explicit IndexExpr(std::shared_ptr<const IndexExprNode> node) : node_(std::move(node)) {}
  // Literals, so that `2 * B(i)` and `A(i) = 0` read as they do in the DSL.
  IndexExpr(double value);
  template <std::integral T>
  IndexExpr(T value) : IndexExpr(makeInteger(static_cast<int64_t>(value))) {}

  bool defined() const { return node_ != nullptr; }
  const IndexExprNode* get() const { return node_.get(); }
  const IndexExprNode* operator->() const { return node_.get(); }
  IndexExprKind kind() const { return node_->kind; }
  Datatype type() const { return node_->type; }

  template <typename T>
  bool isa() const { return node_ && node_->kind == T::kKind; }
  template <typename T>
  const T* as() const { return isa<T>() ? static_cast<const T*>(node_.get()) : nullptr; }

  // Structural equality: same tree, same IndexVar and TensorVar identities.
  bool operator==(const IndexExpr& other) const;
  // Identity of the node, for callers that want it.
  bool sameAs(const IndexExpr& other) const { return node_ == other.node_; }
  size_t hash() const { return node_ ? node_->hash : 0; }

 private:
  static IndexExpr makeInteger(int64_t value);
  std::shared_ptr<const IndexExprNode> node_;
};

// An IndexExpr known to be an AccessNode; the left-hand side of an
// assignment. A plain value type: copies and assignment behave normally.
class Access : public IndexExpr {
 public:
  Access() = default;
  explicit Access(const IndexExpr& expr);  // throws unless expr is an access

  const TensorVar& tensor() const;
  const std::vector<IndexVar>& indices() const;
};

// What the builder's A(i,j) returns: an Access on which `=` and `+=` build
// assignments, as in the DSL (`A(i,j) = B(i,k) * C(k,j)`). It is never
// reassigned itself; store it as an Access.
class AssignableAccess : public Access {
 public:
  explicit AssignableAccess(const Access& access) : Access(access) {}
  AssignableAccess(const AssignableAccess&) = default;

  IndexStmt operator=(const IndexExpr& rhs) const;
  IndexStmt operator=(const AssignableAccess& rhs) const;
  IndexStmt operator+=(const IndexExpr& rhs) const;
};

template <typename T, IndexExprKind K>
struct IndexExprNodeOf : IndexExprNode {
  static constexpr IndexExprKind kKind = K;

 protected:
  explicit IndexExprNodeOf(Datatype type) : IndexExprNode(K, type) {}
};

// A typed constant. Integer types keep intValue exact; float types keep
// floatValue.
struct LiteralNode : IndexExprNodeOf<LiteralNode, IndexExprKind::Literal> {
  double floatValue = 0;
  int64_t intValue = 0;

  double asDouble() const { return isFloat(type) ? floatValue : static_cast<double>(intValue); }
  static IndexExpr make(double value, Datatype type = Datatype::Float64);
  static IndexExpr makeInteger(int64_t value, Datatype type = Datatype::Int64);

  explicit LiteralNode(Datatype type) : IndexExprNodeOf(type) {}
};

// A tensor read at index variables, one per mode in declaration order.
struct AccessNode : IndexExprNodeOf<AccessNode, IndexExprKind::Access> {
  TensorVar tensor;
  std::vector<IndexVar> indices;

  static Access make(TensorVar tensor, std::vector<IndexVar> indices);

  explicit AccessNode(Datatype type) : IndexExprNodeOf(type) {}
};

struct NegNode : IndexExprNodeOf<NegNode, IndexExprKind::Neg> {
  IndexExpr operand;

  static IndexExpr make(IndexExpr operand);

  explicit NegNode(Datatype type) : IndexExprNodeOf(type) {}
};

// Add, Sub, Mul and Div share one shape.
template <typename T, IndexExprKind K>
struct BinaryIndexExprNode : IndexExprNodeOf<T, K> {
  IndexExpr a, b;

  static IndexExpr make(IndexExpr a, IndexExpr b);

  explicit BinaryIndexExprNode(Datatype type) : IndexExprNodeOf<T, K>(type) {}
};

struct AddNode : BinaryIndexExprNode<AddNode, IndexExprKind::Add> {
  using BinaryIndexExprNode::BinaryIndexExprNode;
};
struct SubNode : BinaryIndexExprNode<SubNode, IndexExprKind::Sub> {
  using BinaryIndexExprNode::BinaryIndexExprNode;
};
struct MulNode : BinaryIndexExprNode<MulNode, IndexExprKind::Mul> {
  using BinaryIndexExprNode::BinaryIndexExprNode;
};
struct DivNode : BinaryIndexExprNode<DivNode, IndexExprKind::Div> {
  using BinaryIndexExprNode::BinaryIndexExprNode;
};

// sum(var, body): body summed over every value of var.
struct ReductionNode : IndexExprNodeOf<ReductionNode, IndexExprKind::Reduction> {
  IndexVar var;
  IndexExpr body;

  static IndexExpr make(IndexVar var, IndexExpr body);

  explicit ReductionNode(Datatype type) : IndexExprNodeOf(type) {}
};

// A builtin applied to whole tensors or to expressions. Known builtins:
//   perm(A)            permanent of a square matrix; a scalar
//   abs(e) sqrt(e) exp(e)
//   max(a, b) min(a, b)
using CallArgument = std::variant<IndexExpr, TensorVar>;

struct CallNode : IndexExprNodeOf<CallNode, IndexExprKind::Call> {
  std::string name;
  std::vector<CallArgument> args;

  // Throws std::invalid_argument for an unknown builtin or wrong arguments.
  static IndexExpr make(std::string name, std::vector<CallArgument> args);
  static bool isBuiltin(const std::string& name);

  explicit CallNode(Datatype type) : IndexExprNodeOf(type) {}
};

// The wider of two element types: any float beats any integer, then width.
Datatype widerType(Datatype a, Datatype b);

template <std::same_as<IndexVar>... Vars>
AssignableAccess TensorVar::operator()(const Vars&... indices) const {
  return (*this)(std::vector<IndexVar>{indices...});
}

}  // namespace tcc::ir

template <>
struct std::hash<tcc::ir::IndexExpr> {
  size_t operator()(const tcc::ir::IndexExpr& expr) const { return expr.hash(); }
};
template <>
struct std::hash<tcc::ir::Access> {
  size_t operator()(const tcc::ir::Access& access) const { return access.hash(); }
};
