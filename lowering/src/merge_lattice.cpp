#include "merge_lattice.h"

#include <algorithm>
#include <stdexcept>

#include "tcc/ir/builder.h"

namespace tcc::lowering {

namespace {

using ir::IndexExpr;

std::vector<int> unite(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> result;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(result));
  return result;
}

using Lattice = std::vector<LatticePoint>;

Lattice intersect(const Lattice& a, const Lattice& b, const std::function<IndexExpr(IndexExpr, IndexExpr)>& op) {
  Lattice result;
  for (const auto& pa : a)
    for (const auto& pb : b) result.push_back({unite(pa.iterators, pb.iterators), op(pa.expr, pb.expr)});
  return result;
}

// A lattice point per distinct iterator set; the first one built wins, and
// the product points are built first, so they carry the full expression.
Lattice deduplicate(Lattice points) {
  Lattice result;
  for (auto& point : points) {
    bool seen = std::any_of(result.begin(), result.end(),
                            [&](const LatticePoint& p) { return p.iterators == point.iterators; });
    if (!seen) result.push_back(std::move(point));
  }
  std::stable_sort(result.begin(), result.end(), [](const LatticePoint& x, const LatticePoint& y) {
    return x.iterators.size() > y.iterators.size();
  });
  return result;
}

Lattice unionOf(const Lattice& a, const Lattice& b, const std::function<IndexExpr(IndexExpr, IndexExpr)>& both,
                const std::function<IndexExpr(IndexExpr)>& onlyB) {
  Lattice result = intersect(a, b, both);
  result.insert(result.end(), a.begin(), a.end());
  for (const auto& pb : b) result.push_back({pb.iterators, onlyB(pb.expr)});
  return deduplicate(std::move(result));
}

Lattice build(const IndexExpr& expr, const std::function<int(const ir::AccessNode*)>& iteratorOf) {
  using ir::IndexExprKind;
  switch (expr.kind()) {
    case IndexExprKind::Literal:
      return {{{}, expr}};
    case IndexExprKind::Access: {
      int id = iteratorOf(expr.as<ir::AccessNode>());
      return {{id < 0 ? std::vector<int>{} : std::vector<int>{id}, expr}};
    }
    case IndexExprKind::Neg: {
      Lattice inner = build(expr.as<ir::NegNode>()->operand, iteratorOf);
      for (auto& point : inner) point.expr = -point.expr;
      return inner;
    }
    case IndexExprKind::Mul: {
      const auto* node = expr.as<ir::MulNode>();
      return deduplicate(intersect(build(node->a, iteratorOf), build(node->b, iteratorOf),
                                   [](IndexExpr x, IndexExpr y) { return x * y; }));
    }
    case IndexExprKind::Div: {
      const auto* node = expr.as<ir::DivNode>();
      return deduplicate(intersect(build(node->a, iteratorOf), build(node->b, iteratorOf),
                                   [](IndexExpr x, IndexExpr y) { return x / y; }));
    }
    case IndexExprKind::Add: {
      const auto* node = expr.as<ir::AddNode>();
      return unionOf(build(node->a, iteratorOf), build(node->b, iteratorOf),
                     [](IndexExpr x, IndexExpr y) { return x + y; }, [](IndexExpr y) { return y; });
    }
    case IndexExprKind::Sub: {
      const auto* node = expr.as<ir::SubNode>();
      return unionOf(build(node->a, iteratorOf), build(node->b, iteratorOf),
                     [](IndexExpr x, IndexExpr y) { return x - y; }, [](IndexExpr y) { return -y; });
    }
    case IndexExprKind::Call: {
      // Builtins of expressions are treated as dense in their arguments'
      // iterators: evaluated wherever any argument is present.
      std::vector<int> all;
      for (const auto& arg : expr.as<ir::CallNode>()->args) {
        if (const auto* e = std::get_if<IndexExpr>(&arg))
          for (const auto& point : build(*e, iteratorOf)) all = unite(all, point.iterators);
      }
      return {{all, expr}};
    }
    case IndexExprKind::Reduction:
      throw std::invalid_argument("merge lattice: a nested sum must be concretized first");
  }
  return {};
}

}  // namespace

bool isSubset(const std::vector<int>& a, const std::vector<int>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

std::vector<LatticePoint> buildMergeLattice(const IndexExpr& expr,
                                            const std::function<int(const ir::AccessNode*)>& iteratorOf) {
  return build(expr, iteratorOf);
}

}  // namespace tcc::lowering
