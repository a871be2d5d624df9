// TCA-SpMM: recognition and what `tcc explain` says (see tca_spmm.h).
#include "tca_spmm.h"

#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {
namespace {

namespace imp = ir::imp;

bool isRowMajorDense(const ir::Format& format) { return format.isAllDense() && format.hasIdentityOrdering(); }

bool isCsr(const ir::Format& format) {
  return format.order() == 2 && format.hasIdentityOrdering() && format.level(0).isDense() &&
         format.level(1).kind == ir::LevelKind::Compressed;
}

// O(a,b) = S(a,c) * D(c,b) in either factor order: the three accesses, else
// nullopt.
struct SpmmShape {
  ir::Access out, sparse, dense;
};

std::optional<SpmmShape> spmmShape(const ir::IndexStmt& cin) {
  auto assignments = ir::assignmentsOf(cin);
  if (assignments.size() != 1) return std::nullopt;
  const ir::AssignmentNode* assignment = assignments[0];
  ir::IndexExpr rhs = assignment->rhs;
  while (const auto* sum = rhs.as<ir::ReductionNode>()) rhs = sum->body;
  const auto* product = rhs.as<ir::MulNode>();
  if (!product || !product->a.as<ir::AccessNode>() || !product->b.as<ir::AccessNode>()) return std::nullopt;
  ir::Access out = assignment->lhs, left(product->a), right(product->b);
  if (out.indices().size() != 2 || left.indices().size() != 2 || right.indices().size() != 2) return std::nullopt;
  const ir::IndexVar &row = out.indices()[0], &column = out.indices()[1];
  if (row == column) return std::nullopt;
  // S is the factor indexed (row, k); D the one indexed (k, column).
  auto fits = [&](const ir::Access& s, const ir::Access& d) {
    const ir::IndexVar& k = s.indices()[1];
    return s.indices()[0] == row && d.indices()[1] == column && d.indices()[0] == k && k != row && k != column;
  };
  if (fits(left, right)) return SpmmShape{out, left, right};
  if (fits(right, left)) return SpmmShape{out, right, left};
  return std::nullopt;
}

// Why TCA-SpMM cannot compute this SpMM right, or "" when it can.
std::string unsupportedBecause(const SpmmShape& shape, const LowerOptions& options) {
  const ir::TensorVar &out = shape.out.tensor(), &sparse = shape.sparse.tensor(), &dense = shape.dense.tensor();
  if (!options.cudaTarget) return "tensor cores need the cuda target (a `target cuda` line or --target cuda)";
  if (!isCsr(sparse.format()))
    return sparse.name() + " is stored " + sparse.format().toString() + "; TCA-SpMM reads its sparse operand in CSR";
  if (!isRowMajorDense(dense.format()))
    return dense.name() + " is stored " + dense.format().toString() + "; TCA-SpMM reads a row-major dense operand";
  if (!isRowMajorDense(out.format()))
    return out.name() + " is stored " + out.format().toString() + "; TCA-SpMM writes a row-major dense result";
  if (sparse.datatype() != ir::Datatype::Float16 || dense.datatype() != ir::Datatype::Float16)
    return "the MMA multiplies float16; declare " + sparse.name() + " and " + dense.name() + " `of float16` (they are " +
           ir::toString(sparse.datatype()) + " and " + ir::toString(dense.datatype()) + ")";
  if (out.datatype() != ir::Datatype::Float32)
    return "the MMA accumulates in float32; declare " + out.name() + " `of float32` (it is " +
           ir::toString(out.datatype()) + ")";
  return "";
}

}  // namespace

std::optional<imp::Function> recognizeTcaSpmm(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                              const LowerOptions& options) {
  auto shape = spmmShape(cin);
  if (!shape) {
    if (!options.tensorCore) return std::nullopt;
    throw LoweringError::ofTensorCore("tensorcore(): tensor cores compute a CSR SpMM, O(i,j) = S(i,k) * D(k,j), and "
                                      "nothing else; this statement is not one");
  }
  std::string reason = unsupportedBecause(*shape, options);
  if (!reason.empty()) {
    if (!options.tensorCore) return std::nullopt;
    throw LoweringError::ofTensorCore("tensorcore(): " + reason);
  }
  const ir::TensorVar &out = shape->out.tensor(), &sparse = shape->sparse.tensor(), &dense = shape->dense.tensor();
  imp::Function function;
  function.name = options.functionName;
  for (const auto& tensor : parameters) {
    if (tensor != out && tensor != sparse && tensor != dense)
      throw LoweringError("internal: tensor " + tensor.name() + " is a parameter of a TCA-SpMM kernel");
    function.parameters.push_back({tensor.name(), tensor.order(), intrinsicValueKind(tensor, true), tensor == out});
  }
  std::string text = out.name() + "(" + shape->out.indices()[0].name() + "," + shape->out.indices()[1].name() + ") = " +
                     ir::toString(ir::IndexExpr(shape->sparse)) + " * " + ir::toString(ir::IndexExpr(shape->dense));
  function.body = imp::Block::make(
      {imp::Comment::make(text + " on tensor cores (TCA-SpMM)"),
       imp::Intrinsic::make(kTcaSpmmIntrinsic, {out.name(), sparse.name(), dense.name()})});
  return function;
}

std::string explainTcaSpmm(const imp::Function&, const imp::Intrinsic& op) {
  return op.tensors[0] + " = " + op.tensors[1] + " * " + op.tensors[2] +
         " is the TCA-SpMM intrinsic (Tensor-Core CSR SpMM): each warp matricizes its share of a sparse row into "
         "the right operand of mma.sync m16n8k8 (float16 in, float32 accumulate) and the matching dense rows, "
         "gathered with 128-bit loads, into the left one, loops over the dense columns keeping the row in "
         "registers, and sums the diagonal blocks of the product with warp shuffles; rows get 1, 2, 4 or 8 warps "
         "by their nonzeros, long rows several blocks, and a matrix too small to fill the device at least one warp "
         "per 64-column tile (row_id_for_each_warp, num_warps_per_row, warpid_within_row, computed once per matrix)";
}

}  // namespace tcc::lowering
