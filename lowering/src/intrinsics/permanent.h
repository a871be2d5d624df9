// The sparse matrix permanent, p = perm(A) (see tcc/lowering/intrinsics.h).
#pragma once

#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

std::optional<ir::imp::Function> recognizePermanent(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                                    const LowerOptions& options);
std::string explainPermanent(const ir::imp::Function& function, const ir::imp::Intrinsic& op);
std::string cppPermanentStatement(const ir::imp::Intrinsic& op);

}  // namespace tcc::lowering
