// Internal to the MLIR export: the body of the exported linalg.generic.
//
// The body computes the statement's right-hand side, one SSA value per
// node, in the output's element type. MLIR 16's sparsifier visits only
// the positions its merge lattices name, so what an expression is where
// its sparse operands are absent (tcc reads them as zero) decides both
// what the body must say there (the absent regions of
// sparse_tensor.unary / binary) and which statements the export refuses.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/tensor_var.h"

namespace tcc::lowering {

bool isSparse(const ir::TensorVar& tensor);
bool readsNoTensor(const ir::IndexExpr& expr);

// The value of an expression of literals and builtins, in double.
double constantValue(const ir::IndexExpr& expr);

// The value of `expr` where every sparse operand is absent (read as zero,
// as tcc reads it), as an expression of literals only; nullopt where it
// still depends on a dense operand there (then MLIR's sparsifier visits
// every position of the expression, absent sparse operands or not).
// With `loop`, only the operands it indexes are absent or visit every
// position (dense ones) in that loop: the others, fixed in it, are kept in
// the expression as values that need not be zero.
std::optional<ir::IndexExpr> whereSparseAbsent(const ir::IndexExpr& expr,
                                               const std::optional<ir::IndexVar>& loop = {});

// One value the body reads per access: the block argument and the type of
// its tensor (float16 arguments are widened to the type computed in).
struct AccessArgument {
  std::string name;
  ir::Datatype type;
};

// Prints the generic's body for `expr` (its top-level sums stripped) into
// `body`, reading the accesses' block arguments in pre-order, and the
// constants it needs into `outside` (before the generic); returns the
// value the body yields, added to `accumulateInto` (the output's block
// argument) where the generic sums.
std::string printGenericBody(std::ostream& outside, std::ostream& body, const ir::IndexExpr& expr, ir::Datatype type,
                             const std::vector<AccessArgument>& arguments, bool sparseKernel,
                             const std::optional<std::string>& accumulateInto);

}  // namespace tcc::lowering
