// Recognising intrinsic statements (today: p = perm(A)) before the loop
// lowering, and the C++ backend's expansion of the resulting node.
#include <algorithm>

#include "tcc/ir/index_queries.h"
#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {
namespace {

namespace imp = ir::imp;

imp::ScalarKind scalarKind(const ir::TensorVar& tensor) {
  switch (tensor.datatype()) {
    case ir::Datatype::Float64: return imp::ScalarKind::Float64;
    case ir::Datatype::Float32: return imp::ScalarKind::Float32;
    case ir::Datatype::Int32: return imp::ScalarKind::Int32;
    case ir::Datatype::Int64: return imp::ScalarKind::Int64;
    case ir::Datatype::Float16: break;
  }
  throw LoweringError("tensor " + tensor.name() + " is float16, which is a storage-only type on the CPU");
}

// Every perm(...) call in an expression.
void collectPermanentCalls(const ir::IndexExpr& expr, std::vector<const ir::CallNode*>& calls) {
  using Kind = ir::IndexExprKind;
  switch (expr.kind()) {
    case Kind::Call: {
      const auto* call = expr.as<ir::CallNode>();
      if (call->name == "perm") calls.push_back(call);
      for (const auto& argument : call->args)
        if (const auto* operand = std::get_if<ir::IndexExpr>(&argument)) collectPermanentCalls(*operand, calls);
      return;
    }
    case Kind::Neg: return collectPermanentCalls(expr.as<ir::NegNode>()->operand, calls);
    case Kind::Add: collectPermanentCalls(expr.as<ir::AddNode>()->a, calls); return collectPermanentCalls(expr.as<ir::AddNode>()->b, calls);
    case Kind::Sub: collectPermanentCalls(expr.as<ir::SubNode>()->a, calls); return collectPermanentCalls(expr.as<ir::SubNode>()->b, calls);
    case Kind::Mul: collectPermanentCalls(expr.as<ir::MulNode>()->a, calls); return collectPermanentCalls(expr.as<ir::MulNode>()->b, calls);
    case Kind::Div: collectPermanentCalls(expr.as<ir::DivNode>()->a, calls); return collectPermanentCalls(expr.as<ir::DivNode>()->b, calls);
    case Kind::Reduction: return collectPermanentCalls(expr.as<ir::ReductionNode>()->body, calls);
    default: return;
  }
}

}  // namespace

std::optional<imp::Function> lowerIntrinsic(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                            const LowerOptions& options) {
  std::vector<const ir::CallNode*> calls;
  for (const auto* assignment : ir::assignmentsOf(cin)) collectPermanentCalls(assignment->rhs, calls);
  if (calls.empty()) return std::nullopt;
  const auto* assignment = cin.as<ir::AssignmentNode>();
  if (!assignment || calls.size() != 1 || calls[0] != assignment->rhs.as<ir::CallNode>())
    throw LoweringError("perm(A) must be the whole right-hand side of a statement of its own, as in p = perm(A)");
  const ir::TensorVar& result = assignment->lhs.tensor();
  if (result.order() != 0)
    throw LoweringError("perm(A) is a scalar; assign it to a tensor with no indices, as in p = perm(A)");
  const ir::TensorVar& matrix = std::get<ir::TensorVar>(calls[0]->args.at(0));

  imp::Function function;
  function.name = options.functionName;
  for (const auto& tensor : parameters) {
    if (tensor != result && tensor != matrix)
      throw LoweringError("internal: tensor " + tensor.name() + " is a parameter of a permanent kernel");
    function.parameters.push_back({tensor.name(), tensor.order(), scalarKind(tensor), tensor == result});
  }
  function.body = imp::Block::make({imp::Comment::make(result.name() + " = perm(" + matrix.name() + ")"),
                                    imp::Intrinsic::make(kPermanentIntrinsic, {result.name(), matrix.name()})});
  return function;
}

std::optional<std::string> intrinsicDecision(const imp::Function& function) {
  const auto* block = function.body.as<imp::Block>();
  if (!block) return std::nullopt;
  for (const auto& stmt : block->stmts) {
    const auto* intrinsic = stmt.as<imp::Intrinsic>();
    if (!intrinsic || intrinsic->name != kPermanentIntrinsic) continue;
    bool exact = false;
    for (const auto& parameter : function.parameters)
      if (parameter.isOutput)
        exact = parameter.valueKind == imp::ScalarKind::Int32 || parameter.valueKind == imp::ScalarKind::Int64;
    return intrinsic->tensors[0] + " = perm(" + intrinsic->tensors[1] +
           ") is the permanent intrinsic: a call of the precompiled SparsePerman kernel (Gray-code Ryser over a "
           "degree-sorted CSC, OpenMP chunks), " +
           (exact ? "exact (an integer result: 128-bit integer sums, overflow is an error)"
                  : "in floating point (declare the result of int64 for the exact value)");
  }
  return std::nullopt;
}

std::string cppIntrinsicStatement(const imp::Intrinsic& intrinsic) {
  if (intrinsic.name == kPermanentIntrinsic && intrinsic.tensors.size() == 2)
    return "if (int32_t tcc_status = tcc_permanent(" + intrinsic.tensors[0] + ", " + intrinsic.tensors[1] +
           ")) return tcc_status;";
  throw LoweringError("the C++ backend has no expansion for intrinsic '" + intrinsic.name + "'");
}

}  // namespace tcc::lowering
