// Statements that no general lowering reaches, lowered to one Intrinsic
// node that each backend expands as a whole (see ir::imp::Intrinsic).
//
//   p = perm(A)   Intrinsic "permanent", tensors {p, A}: the sparse matrix
//                 permanent of square A into the scalar p; exact when p's
//                 element type is an integer. The C++ backend calls the
//                 runtime's precompiled tcc_permanent (tcc/runtime/permanent.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/lowering/lower.h"

namespace tcc::lowering {

inline constexpr const char* kPermanentIntrinsic = "permanent";

// The function for a statement that is an intrinsic, or nullopt for one the
// general lowerer handles. Throws LoweringError for a builtin it recognises
// in a place it cannot go (perm inside a larger expression, say).
std::optional<ir::imp::Function> lowerIntrinsic(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                const LowerOptions& options);

// What `tcc explain` says of a function lowerIntrinsic made (nullopt for
// any other function): which intrinsic, and its mode.
std::optional<std::string> intrinsicDecision(const ir::imp::Function& function);

// The C++ statement an Intrinsic node becomes (C++ backend); throws
// LoweringError for an intrinsic that has no CPU expansion.
std::string cppIntrinsicStatement(const ir::imp::Intrinsic& intrinsic);

}  // namespace tcc::lowering
