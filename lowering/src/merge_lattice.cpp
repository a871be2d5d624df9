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

Lattice build(const IndexExpr& expr, const std::function<int(const ir::AccessNode*)>& iteratorOf);

IndexExpr zeroOf(ir::Datatype type) {
  return ir::isFloat(type) ? ir::LiteralNode::make(0.0, type) : ir::LiteralNode::makeInteger(0, type);
}

// Whether a builtin is 0 where all its arguments are (abs, sqrt, max, min;
// not exp, which is 1 there).
bool vanishesAtZero(const std::string& builtin) { return builtin != "exp"; }

// A builtin is not a product: it is evaluated wherever any argument is
// present, an absent argument reading as zero (max(A(i), 2) is 2 where A
// has no entry), and everywhere when it is not zero at zero (exp(A(i)) is 1
// where A has no entry). Points combine each argument's points with the
// argument absent, those with more arguments present built first (they win
// where the iterator sets coincide, as for sums).
Lattice callLattice(const ir::CallNode& call, const std::function<int(const ir::AccessNode*)>& iteratorOf) {
  struct Partial {
    std::vector<int> iterators;
    std::vector<ir::CallArgument> args;
    bool anyPresent = false;
  };
  std::vector<Partial> partials{{}};
  for (const auto& arg : call.args) {
    const auto* operand = std::get_if<IndexExpr>(&arg);
    std::vector<Partial> next;
    for (const Partial& partial : partials) {
      if (!operand) {  // a whole tensor (perm's), the same at every point
        next.push_back(partial);
        next.back().args.push_back(arg);
        continue;
      }
      for (const LatticePoint& point : build(*operand, iteratorOf)) {
        Partial present = partial;
        present.iterators = unite(partial.iterators, point.iterators);
        present.args.push_back(point.expr);
        present.anyPresent = true;
        next.push_back(std::move(present));
      }
      Partial absent = partial;
      absent.args.push_back(zeroOf(operand->type()));
      next.push_back(std::move(absent));
    }
    partials = std::move(next);
  }
  Lattice result;
  for (Partial& partial : partials) {
    if (!partial.anyPresent && vanishesAtZero(call.name)) continue;
    result.push_back({partial.iterators, ir::CallNode::make(call.name, std::move(partial.args))});
  }
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
    case IndexExprKind::Call: return callLattice(*expr.as<ir::CallNode>(), iteratorOf);
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
