// Register tiles for rows of a dense output (the C++ backend).
//
// SpMM, MTTKRP and TTM lower to nests like
//   for pA2 in row i of A:            (sparse loops, the "root" and below)
//     for k in [0, N):                (dense, innermost)
//       C_vals[base + k] += A_vals[pA2] * B_vals[jA * N + k]
// where `base` does not change inside the nest, so the output row
// C_vals[base .. base + N) is read and written once per stored entry. The
// C++ backend prints such a nest with the row held in a register tile
// across all the sparse loops, tile by tile along k: a few variables of a
// vector type where the update allows (valueInVectors), a small array
// otherwise; each output entry still receives its terms in the same order,
// so results are bit-identical to the untiled nest.
#pragma once

#include <optional>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

struct DenseRowNest {
  std::vector<const ir::imp::For*> sparseLoops;  // the root first, each inside the one before
  const ir::imp::For* denseLoop = nullptr;       // k in [0, N): innermost
  const ir::imp::Store* store = nullptr;          // buffer[base + k] += value, in denseLoop's body
};

// The nest rooted at `root` if it has that shape: serial loops, nothing but
// declarations (and comments) besides the next loop at each level, one
// accumulating store at unit stride in k whose row is invariant in the nest
// and whose buffer the nest does not read.
std::optional<DenseRowNest> findDenseRowNest(const ir::imp::For* root);

// The same nest with the dense loop starting at `begin` (the columns the
// tiles left over).
ir::imp::Stmt withDenseLoopFrom(const ir::imp::For* root, const DenseRowNest& nest, const ir::imp::Expr& begin);

// The statements of a loop body, a block's or a single one.
std::vector<ir::imp::Stmt> statementsOf(const ir::imp::Stmt& body);

// The value the nest's store adds, with the dense loop's declarations
// substituted into it, when the tile can run in whole vectors: every part of
// it that depends on k is a load at unit stride in k (`base[... + k]`, base
// invariant in the nest's dense loop) or a +, -, *, / or negation of such
// parts and of values invariant in k, all of the tile's element type (a
// float or integer type). Each vector lane then computes, in the same order,
// what one lane of the scalar tile computes.
std::optional<ir::imp::Expr> valueInVectors(const DenseRowNest& nest);

// Whether `expr` reads the variable `name`.
bool readsVariable(const ir::imp::Expr& expr, const std::string& name);

// `expr` with the variable `name` replaced by `replacement`.
ir::imp::Expr substituted(const ir::imp::Expr& expr, const std::string& name, const ir::imp::Expr& replacement);

}  // namespace tcc::lowering
