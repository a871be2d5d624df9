#include "merge_cases.h"

#include "tcc/ir/imperative_printer.h"
#include "tcc/ir/imperative_visitor.h"

namespace tcc::lowering {

namespace imp = ir::imp;
using imp::Expr;
using imp::Stmt;

namespace {

void flatten(const Stmt& stmt, std::vector<Stmt>& out) {
  if (const auto* block = stmt.as<imp::Block>()) {
    for (const auto& s : block->stmts) flatten(s, out);
    return;
  }
  out.push_back(stmt);
}

// Whether an expression can be computed where its case does not hold:
// no call, no division (an integer one may trap), nothing but loads
// (every operand the loop merges is at a valid position inside it),
// variables and arithmetic.
class Speculatable : public imp::IRVisitor {
 public:
  bool ok = true;

 protected:
  using imp::IRVisitor::visit;
  void visit(const imp::Binary* op) override {
    if (op->op == imp::BinaryOp::Div || op->op == imp::BinaryOp::Mod) ok = false;
    imp::IRVisitor::visit(op);
  }
  void visit(const imp::Call*) override { ok = false; }
};

bool speculatable(const Expr& expr) {
  Speculatable check;
  expr.accept(check);
  return check.ok;
}

}  // namespace

std::optional<Stmt> foldCases(const std::vector<std::pair<Expr, Stmt>>& cases,
                              const std::function<Expr(const std::string&, imp::Type)>& fresh) {
  if (cases.size() < 2) return std::nullopt;
  std::vector<std::vector<Stmt>> bodies(cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    flatten(cases[c].second, bodies[c]);
    if (bodies[c].size() != bodies[0].size()) return std::nullopt;
  }
  std::vector<Stmt> folded;
  for (size_t k = 0; k < bodies[0].size(); ++k) {
    const std::string first = imp::toString(bodies[0][k]);
    bool same = true;
    for (size_t c = 1; c < cases.size() && same; ++c) same = imp::toString(bodies[c][k]) == first;
    if (same) {
      folded.push_back(bodies[0][k]);
      continue;
    }
    // Only a store's value may differ.
    const auto* store = bodies[0][k].as<imp::Store>();
    if (!store) return std::nullopt;
    const std::string buffer = imp::toString(store->buffer), index = imp::toString(store->index);
    std::vector<Expr> values;
    for (size_t c = 0; c < cases.size(); ++c) {
      const auto* other = bodies[c][k].as<imp::Store>();
      if (!other || other->accumulate != store->accumulate || other->atomic != store->atomic ||
          imp::toString(other->buffer) != buffer || imp::toString(other->index) != index ||
          !speculatable(other->value))
        return std::nullopt;
      values.push_back(other->value);
    }
    // Each distinct value once, in a temporary; then the select, last case
    // first (it needs no test).
    std::vector<std::pair<std::string, Expr>> temporaries;
    std::vector<Expr> chosen;
    for (const auto& value : values) {
      const std::string text = imp::toString(value);
      Expr temporary;
      for (const auto& [seen, var] : temporaries)
        if (seen == text) temporary = var;
      if (!temporary.defined()) {
        temporary = fresh("case_value", value.type());
        folded.push_back(imp::Declare::make(temporary, value));
        temporaries.push_back({text, temporary});
      }
      chosen.push_back(temporary);
    }
    Expr value = chosen.back();
    for (size_t c = cases.size() - 1; c-- > 0;)
      if (!chosen[c].sameAs(value)) value = imp::Select::make(cases[c].first, chosen[c], value);
    folded.push_back(imp::Store::make(store->buffer, store->index, value, store->accumulate, store->atomic));
  }
  return imp::Block::make(folded);
}

}  // namespace tcc::lowering
