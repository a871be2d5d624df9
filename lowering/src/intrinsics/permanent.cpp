// p = perm(A): recognised wherever perm(...) appears, refused unless it is
// a statement's whole right-hand side with a scalar result.
#include "permanent.h"

#include "tcc/ir/index_queries.h"

namespace tcc::lowering {
namespace {

namespace imp = ir::imp;

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

bool exactMode(const imp::Function& function) {
  for (const auto& parameter : function.parameters)
    if (parameter.isOutput)
      return parameter.valueKind == imp::ScalarKind::Int32 || parameter.valueKind == imp::ScalarKind::Int64;
  return false;
}

}  // namespace

std::optional<imp::Function> recognizePermanent(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
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
    function.parameters.push_back({tensor.name(), tensor.order(), intrinsicValueKind(tensor), tensor == result});
  }
  function.body = imp::Block::make({imp::Comment::make(result.name() + " = perm(" + matrix.name() + ")"),
                                    imp::Intrinsic::make(kPermanentIntrinsic, {result.name(), matrix.name()})});
  return function;
}

std::string explainPermanent(const imp::Function& function, const imp::Intrinsic& op) {
  return op.tensors[0] + " = perm(" + op.tensors[1] +
         ") is the permanent intrinsic: a call of the precompiled SparsePerman kernel (Gray-code Ryser over a "
         "degree-sorted CSC, OpenMP chunks), " +
         (exactMode(function) ? "exact (an integer result: 128-bit integer sums, overflow is an error)"
                              : "in floating point (declare the result of int64 for the exact value)");
}

std::string cppPermanentStatement(const imp::Intrinsic& op) {
  return "if (int32_t tcc_status = tcc_permanent(" + op.tensors[0] + ", " + op.tensors[1] + ")) return tcc_status;";
}

}  // namespace tcc::lowering
