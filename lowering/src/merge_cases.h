// A co-iteration's cases folded into one branch-free body. The loop that
// merges sparse operands tests, at each coordinate, which of them are
// present and runs that case; when every case appends the same coordinate
// and differs only in the value it stores (a sparse add), the tests are
// branches a merge of unrelated coordinate lists mispredicts about half the
// time. Folded, each case's value is computed, the store takes the value of
// the case that holds (a select), and the C++ compiler is left no branch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tcc/ir/imperative.h"

namespace tcc::lowering {

// `cases` are (condition, body) in the order they are tested, and one of
// them always holds (they cover every combination of operands present).
// When the bodies are the same statements but for the values some stores
// write, and every such value is safe to compute in every case (loads,
// arithmetic without division, no calls), returns one body: each case's
// value in a temporary named by `fresh`, then the store of the first case
// whose condition holds. Otherwise nothing. Each case computes its value
// as before, so the result holds the same bits.
std::optional<ir::imp::Stmt> foldCases(
    const std::vector<std::pair<ir::imp::Expr, ir::imp::Stmt>>& cases,
    const std::function<ir::imp::Expr(const std::string&, ir::imp::Type)>& fresh);

}  // namespace tcc::lowering
