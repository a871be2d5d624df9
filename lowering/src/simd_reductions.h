// Which serial loops may run as `#pragma omp simd reduction(+: ...)` when
// the floating-point mode lets sums be reassociated: innermost loops whose
// body only declares loop-local values and adds to scalars declared outside
// (a row sum, a dot product). Anything else (stores, branches, nested
// loops, calls with effects) keeps the loop as it is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

// The scalars the loop sums into, in first-use order; empty when the loop
// is not such a reduction.
std::vector<std::string> simdSumReductions(const ir::imp::For* loop);

// Whether the loop's body loads through an index it loaded itself, as a
// row sum `x[crd[p]]` does: vectorized, such a sum needs gathers.
bool readsThroughLoadedIndex(const ir::imp::For* loop);

// Whether the loop's body loads at an index whose step with the loop
// variable is neither 0 nor 1, or not a literal (a column of a row-major
// matrix, as SDDMM's D(k,j) under a k loop): vectorized, such a sum gathers
// that operand a lane at a time.
bool readsAtStride(const ir::imp::For* loop);

// Copy `copy` of a reduction loop's body for printing it unrolled with
// partial sums: the loop variable becomes `var + copy`, and every name in
// `renamed` (the body's declarations and the sums) gets the suffix `_u<copy>`.
ir::imp::Stmt unrolledCopy(const ir::imp::For* loop, int copy, const std::vector<std::string>& renamed);

// The buffers the loop's body loads at exactly the loop variable (CSR's crd
// and vals): the streams a software prefetch can run ahead on.
std::vector<ir::imp::Expr> buffersStreamedByLoop(const ir::imp::For* loop);

// A sum `sum += vals[p] * x[crd[p]]` (either factor first, the index of x
// widened or not), p the loop variable, sum, vals and x double, crd int32:
// SpMV's and TTV's row sums over a CSR or CSF level.
struct GatherDot {
  std::string sum;
  ir::imp::Expr vals, crd, x;
};
// The loop's body as such a sum, when it is one and nothing else.
std::optional<GatherDot> gatherDotOf(const ir::imp::For* loop);

// A loop whose body holds one gather sum (a loop as readsThroughLoadedIndex
// and simdSumReductions describe) over one segment of a compressed level
// per iteration: the sum runs from pos[e] to pos[e + 1], e the outer
// loop's variable (up to casts and the body's locals), as CSR SpMV's row
// loop and CSF TTV's fibre loop do. Its iterations visit
// pos[end] - pos[begin] entries in all, `end` and `begin` the loop's bounds
// as int64 positions.
struct SegmentLoop {
  const ir::imp::For* sum;  // the gather sum in the body
  ir::imp::Expr pos;        // the level's position array
  ir::imp::Expr begin, end; // the loop's bounds, cast to int64
};
std::optional<SegmentLoop> segmentLoopOf(const ir::imp::For* loop);

// The names a reduction loop's body declares.
std::vector<std::string> declaredInBody(const ir::imp::For* loop);

// `name` as copy `copy` names it (see unrolledCopy).
std::string copyName(const std::string& name, int copy);

}  // namespace tcc::lowering
