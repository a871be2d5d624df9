// Which serial loops may run as `#pragma omp simd reduction(+: ...)` when
// the floating-point mode lets sums be reassociated: innermost loops whose
// body only declares loop-local values and adds to scalars declared outside
// (a row sum, a dot product). Anything else (stores, branches, nested
// loops, calls with effects) keeps the loop as it is.
#pragma once

#include <string>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

// The scalars the loop sums into, in first-use order; empty when the loop
// is not such a reduction.
std::vector<std::string> simdSumReductions(const ir::imp::For* loop);

}  // namespace tcc::lowering
