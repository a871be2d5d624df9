// p = perm(A): recognised wherever perm(...) appears, refused unless it is
// a statement's whole right-hand side with a scalar result.
#include "permanent.h"

#include <cstdlib>

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

// On the cuda target the Intrinsic carries one argument, 1, so explain can
// tell (the CPU's IR is unchanged).
std::vector<imp::Expr> onGpuArguments(const LowerOptions& options) {
  if (!options.cudaTarget) return {};
  return {imp::IntImm::make(1)};
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
  if (options.cudaTarget && intrinsicValueKind(result) != imp::ScalarKind::Float64 &&
      intrinsicValueKind(result) != imp::ScalarKind::Float32)
    throw LoweringError("perm(" + matrix.name() + ") into the integer " + result.name() +
                        " is the exact permanent, which runs on the cpu target only: the GPU kernels sum in float64; "
                        "declare " + result.name() + " of float64, or use --target cpu");
  for (const auto& tensor : parameters) {
    if (tensor != result && tensor != matrix)
      throw LoweringError("internal: tensor " + tensor.name() + " is a parameter of a permanent kernel");
    function.parameters.push_back({tensor.name(), tensor.order(), intrinsicValueKind(tensor), tensor == result});
  }
  function.body = imp::Block::make({imp::Comment::make(result.name() + " = perm(" + matrix.name() + ")"),
                                    imp::Intrinsic::make(kPermanentIntrinsic, {result.name(), matrix.name()},
                                                         onGpuArguments(options))});
  return function;
}

namespace {

bool onGpu(const imp::Intrinsic& op) {
  const auto* flag = op.args.empty() ? nullptr : op.args[0].as<imp::IntImm>();
  return flag && flag->value != 0;
}

}  // namespace

std::string explainPermanent(const imp::Function& function, const imp::Intrinsic& op) {
  if (onGpu(op)) {
    const char* chosen = std::getenv("TCC_PERMANENT_GPU_VARIANT");
    const std::string variant = chosen && *chosen ? chosen : "hybrid";
    std::string why;
    if (variant == "hybrid")
      why = "CodeGen-Hybrid, the default: kernels generated for the matrix at run time and compiled with NVRTC; "
            "permanent ordering puts the rows the most frequently flipped columns touch first; a plan per matrix "
            "keeps those row sums in registers and the rest in global memory (coalesced), sums column 0 out in "
            "pairs of steps, and picks the partition, the unrolled block and the register cap (two resident blocks "
            "per SM) that a cycles-per-step model of the kernel's float64 work and occupancy ranks first "
            "(TCC_PERMANENT_GPU_VARIANT=purereg or baseline selects the others)";
    else if (variant == "purereg")
      why = "CodeGen-PureReg, chosen by TCC_PERMANENT_GPU_VARIANT: kernels generated for the matrix at run time, "
            "every row sum in a register, the matrix's values as constants";
    else if (variant == "baseline")
      why = "GPU-SparsePerman, chosen by TCC_PERMANENT_GPU_VARIANT: one generic kernel, the CSC and each thread's "
            "row sums in shared memory";
    else
      why = "TCC_PERMANENT_GPU_VARIANT is '" + variant + "', which the run refuses (expected hybrid, purereg or baseline)";
    return op.tensors[0] + " = perm(" + op.tensors[1] +
           ") is the permanent intrinsic on the GPU: Gray-code Ryser over chunks of 2^(n-1) steps, each thread an "
           "aligned power-of-two slice (no divergence within a warp), partial sums in float64 added compensated; "
           "variant " + why + "; `tcc run --progress` prints the plan it chose for the matrix (partition, pairs, "
           "unrolled block, register cap, the model's operations per step) and the registers and occupancy the "
           "compiler gave it";
  }
  return op.tensors[0] + " = perm(" + op.tensors[1] +
         ") is the permanent intrinsic: a call of the precompiled SparsePerman kernel (Gray-code Ryser over a "
         "degree-sorted CSC, OpenMP chunks), " +
         (exactMode(function) ? "exact (an integer result: 128-bit integer sums, overflow is an error)"
                              : "in floating point (declare the result of int64 for the exact value)");
}

std::string cppPermanentStatement(const imp::Intrinsic& op) {
  return "if (int32_t tcc_status = tcc_permanent(" + op.tensors[0] + ", " + op.tensors[1] + ")) return tcc_status;";
}

std::string cudaPermanentDeclarations(const imp::Intrinsic&, const std::string&) {
  return "extern \"C\" int tcc_permanent_cuda(tcc_tensor* result, const tcc_tensor* matrix);  // libtcc_permanent_gpu\n";
}

std::string cudaPermanentStatement(const imp::Intrinsic& op, const std::string&) {
  // Generates, compiles and runs the kernels for the matrix's pattern and values.
  return "if (int32_t tcc_status = tcc_permanent_cuda(" + op.tensors[0] + ", " + op.tensors[1] + ")) return tcc_status;";
}

}  // namespace tcc::lowering
