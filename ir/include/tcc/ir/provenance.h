// Provenance relations: how index variables introduced by scheduling derive
// from the ones they replace (TACO's provenance graph). They are plain data
// held by a SuchThat statement; the scheduler creates them and the lowerer
// recovers original coordinates from them.
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_var.h"

namespace tcc::ir {

// parent = outer * factor + inner, inner in [0, factor).
struct SplitRelation {
  IndexVar parent, outer, inner;
  int64_t factor = 1;
  bool operator==(const SplitRelation&) const = default;
};

// parent split into `factor` equal chunks: outer in [0, factor) picks the chunk.
struct DivideRelation {
  IndexVar parent, outer, inner;
  int64_t factor = 1;
  bool operator==(const DivideRelation&) const = default;
};

// fused = outer * |inner| + inner.
struct FuseRelation {
  IndexVar outer, inner, fused;
  bool operator==(const FuseRelation&) const = default;
};

// posVar iterates the positions of `access`'s level that stores indexVar.
struct PosRelation {
  IndexVar indexVar, posVar;
  Access access;
  bool operator==(const PosRelation& other) const {
    return indexVar == other.indexVar && posVar == other.posVar && access == other.access;
  }
};

enum class BoundKind { MinExact, MinConstraint, MaxExact, MaxConstraint };
std::string toString(BoundKind kind);

// boundVar iterates var with a compile-time bound on its range.
struct BoundRelation {
  IndexVar var, boundVar;
  int64_t value = 0;
  BoundKind kind = BoundKind::MaxExact;
  bool operator==(const BoundRelation&) const = default;
};

using ProvenanceRelation =
    std::variant<SplitRelation, DivideRelation, FuseRelation, PosRelation, BoundRelation>;

// TACO's spelling: "split(i, i0, i1, 32)", "pos(i, ipos, B(i,j))",
// "bound(i, ib, 100, MaxExact)".
std::string toString(const ProvenanceRelation& relation);
std::ostream& operator<<(std::ostream& os, const ProvenanceRelation& relation);
size_t hashOf(const ProvenanceRelation& relation);
// The variables a relation introduces (outer/inner, fused, posVar, boundVar).
std::vector<IndexVar> derivedVars(const ProvenanceRelation& relation);
// The variables a relation derives from.
std::vector<IndexVar> parentVars(const ProvenanceRelation& relation);
// The variables of the statement `var` derives from through `relations`
// (itself when no relation introduced it): i0 -> {i}, fuse(i, j, f) -> {i, j}.
std::set<IndexVar> originVars(const IndexVar& var, const std::vector<ProvenanceRelation>& relations);

}  // namespace tcc::ir
