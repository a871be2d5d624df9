#include "tcc/ir/provenance.h"

#include <algorithm>

#include "index_hash.h"
#include "tcc/ir/index_printer.h"

namespace tcc::ir {

using detail::hashCombine;

std::string toString(BoundKind kind) {
  switch (kind) {
    case BoundKind::MinExact: return "MinExact";
    case BoundKind::MinConstraint: return "MinConstraint";
    case BoundKind::MaxExact: return "MaxExact";
    case BoundKind::MaxConstraint: return "MaxConstraint";
  }
  return "?";
}

namespace {

struct RelationPrinter {
  std::string operator()(const SplitRelation& r) const {
    return "split(" + r.parent.name() + ", " + r.outer.name() + ", " + r.inner.name() + ", " +
           std::to_string(r.factor) + ")";
  }
  std::string operator()(const DivideRelation& r) const {
    return "divide(" + r.parent.name() + ", " + r.outer.name() + ", " + r.inner.name() + ", " +
           std::to_string(r.factor) + ")";
  }
  std::string operator()(const FuseRelation& r) const {
    return "fuse(" + r.outer.name() + ", " + r.inner.name() + ", " + r.fused.name() + ")";
  }
  std::string operator()(const PosRelation& r) const {
    return "pos(" + r.indexVar.name() + ", " + r.posVar.name() + ", " + toString(r.access) + ")";
  }
  std::string operator()(const BoundRelation& r) const {
    return "bound(" + r.var.name() + ", " + r.boundVar.name() + ", " + std::to_string(r.value) + ", " +
           toString(r.kind) + ")";
  }
};

size_t hashVars(size_t seed, std::initializer_list<IndexVar> vars) {
  for (const auto& var : vars) seed = hashCombine(seed, std::hash<IndexVar>()(var));
  return seed;
}

}  // namespace

std::string toString(const ProvenanceRelation& relation) { return std::visit(RelationPrinter{}, relation); }

std::ostream& operator<<(std::ostream& os, const ProvenanceRelation& relation) {
  return os << toString(relation);
}

size_t hashOf(const ProvenanceRelation& relation) {
  size_t seed = relation.index() * 977 + 3;
  if (const auto* r = std::get_if<SplitRelation>(&relation))
    return hashCombine(hashVars(seed, {r->parent, r->outer, r->inner}), r->factor);
  if (const auto* r = std::get_if<DivideRelation>(&relation))
    return hashCombine(hashVars(seed, {r->parent, r->outer, r->inner}), r->factor);
  if (const auto* r = std::get_if<FuseRelation>(&relation)) return hashVars(seed, {r->outer, r->inner, r->fused});
  if (const auto* r = std::get_if<PosRelation>(&relation))
    return hashCombine(hashVars(seed, {r->indexVar, r->posVar}), r->access.hash());
  const auto& r = std::get<BoundRelation>(relation);
  return hashCombine(hashCombine(hashVars(seed, {r.var, r.boundVar}), r.value), static_cast<size_t>(r.kind));
}

std::vector<IndexVar> derivedVars(const ProvenanceRelation& relation) {
  if (const auto* r = std::get_if<SplitRelation>(&relation)) return {r->outer, r->inner};
  if (const auto* r = std::get_if<DivideRelation>(&relation)) return {r->outer, r->inner};
  if (const auto* r = std::get_if<FuseRelation>(&relation)) return {r->fused};
  if (const auto* r = std::get_if<PosRelation>(&relation)) return {r->posVar};
  return {std::get<BoundRelation>(relation).boundVar};
}

std::vector<IndexVar> parentVars(const ProvenanceRelation& relation) {
  if (const auto* r = std::get_if<SplitRelation>(&relation)) return {r->parent};
  if (const auto* r = std::get_if<DivideRelation>(&relation)) return {r->parent};
  if (const auto* r = std::get_if<FuseRelation>(&relation)) return {r->outer, r->inner};
  if (const auto* r = std::get_if<PosRelation>(&relation)) return {r->indexVar};
  return {std::get<BoundRelation>(relation).var};
}

std::set<IndexVar> originVars(const IndexVar& var, const std::vector<ProvenanceRelation>& relations) {
  for (const auto& relation : relations) {
    auto derived = derivedVars(relation);
    if (std::find(derived.begin(), derived.end(), var) == derived.end()) continue;
    std::set<IndexVar> origins;
    for (const auto& parent : parentVars(relation)) {
      auto up = originVars(parent, relations);
      origins.insert(up.begin(), up.end());
    }
    return origins;
  }
  return {var};
}

}  // namespace tcc::ir
