// Export to MLIR 16: one statement of tensor index notation as a
// `linalg.generic` over tensors with `#sparse_tensor.encoding`s, in a
// `func.func` that MLIR's sparsifier (`mlir-opt-16 --sparse-compiler`)
// compiles on its own terms. The export reads the statement, never the
// loops tcc would build: MLIR chooses its own loop order and co-iteration.
//
// The kernel's signature is fixed so that a caller can build a driver:
//   func.func @NAME(<one argument per input tensor, in `inputs` order>,
//                   <one index per output mode: its size>) -> <output type>
// The output starts at zero (dense) or empty (sparse) inside the kernel,
// except where a sum adds to a dense tensor read at the output's indices
// (`y(i) = y_before(i) + A(i,j) * x(j)`, the form `+=` takes once the
// caller reads the prior values from a tensor of their own): that tensor
// is the generic's outs.
//
// Builtins: abs and sqrt vanish at zero and are math ops; exp, max and min
// over sparse operands are sparse_tensor.unary / binary whose regions say
// what they give where an operand is absent (read as zero). float16 inputs
// are widened (arith.extf) to the float type the output is computed in.
//
// What MLIR 16 cannot express, or its sparsifier would compute differently
// from tcc, is refused with an MlirExportError naming the part: N:M
// storage, a float16 output, other mixed element types, `+=` and a
// statement that reads its output (the caller rewrites those), a sum
// nested inside an expression, a term that does not use every summed
// variable (but the one above), a repeated index in one access, perm,
// sqrt and exp of integers, and division by anything but a nonzero literal
// where a tensor is sparse.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ir/index_stmt.h"

namespace tcc::lowering {

class MlirExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MlirKernel {
  std::string functionName;
  std::vector<ir::TensorVar> inputs;  // the kernel's tensor arguments, in order
  ir::TensorVar output;
  // Encoding aliases (`#name = #sparse_tensor.encoding<...>`) and the
  // generic's trait, which must open the module.
  std::string declarations;
  std::string function;  // the func.func
  std::string module() const { return declarations + "\n" + function; }
};

// Throws MlirExportError for a statement MLIR 16 cannot express.
MlirKernel exportToMlir(const ir::IndexStmt& assignment, const std::string& functionName = "kernel");

// MLIR spellings shared with drivers that call the kernel.
std::string mlirElementType(ir::Datatype type);  // "f64", "i32", ...
// "tensor<?x?xf64, #dense_compressed>", "tensor<?xf64>", "tensor<f64>";
// sparse (or reordered) formats name the alias that mlirEncodingAlias declares.
std::string mlirTensorType(const ir::TensorVar& tensor);
// `#NAME = #sparse_tensor.encoding<{ dimLevelType = [...], dimOrdering = ... }>`
// for a format that needs one (empty for a dense format in mode order).
std::string mlirEncodingAlias(const ir::Format& format);
std::string mlirEncodingName(const ir::Format& format);  // "#dense_compressed"

}  // namespace tcc::lowering
