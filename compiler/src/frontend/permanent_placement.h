// perm(A) is computed by a kernel of its own (the permanent intrinsic), so
// it must be a statement's whole right-hand side with a scalar output:
// `p = perm(A)`. Reports any other use at the call.
#pragma once

#include "semantic_context.h"
#include "syntax_tree.h"

namespace tcc::frontend {

// False (after reporting) if the statement uses perm where it cannot be.
bool checkPermanentPlacement(SemanticContext& context, const syntax::Statement& statement);

}  // namespace tcc::frontend
