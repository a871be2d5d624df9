// The sparse matrix permanent, p = perm(A) (see tcc/lowering/intrinsics.h).
#pragma once

#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

std::optional<ir::imp::Function> recognizePermanent(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                    const LowerOptions& options);
std::string explainPermanent(const ir::imp::Function& function, const ir::imp::Intrinsic& op);
std::string cppPermanentStatement(const ir::imp::Intrinsic& op);
// The cuda target: the entry point's declaration, and its call, which
// generates, compiles and runs the kernels for the matrix at run time
// (tcc/runtime/permanent_gpu.h).
std::string cudaPermanentDeclarations(const ir::imp::Intrinsic& op, const std::string& prefix);
std::string cudaPermanentStatement(const ir::imp::Intrinsic& op, const std::string& prefix);

}  // namespace tcc::lowering
