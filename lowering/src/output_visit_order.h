// The order in which the loops around an assignment visit the coordinates
// of its output's levels, where scheduling derived those loops.
//
// An assembled (sparse) output appends its coordinates in order, one
// position each, so the loops must visit every prefix of its levels'
// coordinates in order. Without derived variables the concretizer ensures
// that (a workspace takes any other order). Through split, divide, fuse,
// pos and bound, each statement variable is an order-preserving function of
// the loops it derives from, read as digits of one number, the outer loops'
// more significant: split(i, i0, i1) makes i the pair (i0, i1); fuse(i, j,
// f) makes f the pair (i, j), so i is f's high digit and j its low one
// (fused again, a digit splits again); pos makes a coordinate that of a
// position (repeated where the level repeats coordinates). A level's prefix
// of coordinates is then visited
//   - once each, when it reads the outermost loops' digits in order, whole;
//   - in order with each coordinate on consecutive iterations, when it reads
//     them in order but stops within a loop (only its high digits, or a
//     repeating coordinate): fuse(i, j, f) visits i once per j. The append
//     merges those visits into one position (lower_storage.cpp);
//   - otherwise out of order (split(i, i0, i1) with i1 outside i0), or
//     returning to a coordinate after others: refused, naming the command.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"

namespace tcc::lowering {

struct OutputVisitOrder {
  // (output, level) visited on consecutive iterations of the loops from the
  // one named: levels whose coordinate the loops revisit, by the outermost
  // loop whose iterations revisit them (their append state lives just
  // outside it).
  std::map<std::pair<ir::TensorVar, int>, ir::IndexVar> repeatedLevels;
  // (output, level) visited out of order: why it cannot be appended, named
  // after the command that made the order. Raised when the level is
  // lowered, so that a refusal of an enclosing loop (a parallelize, say)
  // comes first.
  struct Refusal {
    // The relation whose command made the order; none where plain loops did.
    std::optional<ir::ProvenanceRelation> command;
    std::string reason;
  };
  std::map<std::pair<ir::TensorVar, int>, Refusal> outOfOrderLevels;
};

// `assembled`: whether a tensor is an output assembled by appending.
OutputVisitOrder outputVisitOrder(const ir::IndexStmt& cin, const std::vector<ir::ProvenanceRelation>& relations,
                                  const std::function<bool(const ir::TensorVar&)>& assembled);

}  // namespace tcc::lowering
