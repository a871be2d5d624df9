#include "dense_row_tiling.h"

#include <set>
#include <string>

#include "tcc/ir/imperative_ops.h"
#include "tcc/ir/imperative_visitor.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

// Names of the variables an expression or statement reads, and the buffers it loads.
class Reads : public IRVisitor {
 public:
  std::set<std::string> variables, loadedBuffers;
  void visit(const Var* op) override { variables.insert(op->name); }
  void visit(const Load* op) override {
    if (const Var* buffer = op->buffer.as<Var>()) loadedBuffers.insert(buffer->name);
    IRVisitor::visit(op);
  }
};

bool isSerial(const For* loop) { return loop->loopKind == LoopKind::Serial && loop->unrollFactor == 0; }

// `base + k` or `base + (int64_t)(k)`: the base, when the index has that form.
std::optional<Expr> baseOfUnitStride(const Expr& index, const std::string& k) {
  const Binary* sum = index.as<Binary>();
  if (!sum || sum->op != BinaryOp::Add) return std::nullopt;
  Expr offset = sum->b;
  if (const Cast* cast = offset.as<Cast>()) offset = cast->value;
  const Var* var = offset.as<Var>();
  if (!var || var->name != k) return std::nullopt;
  return sum->a;
}

class Substitute : public IRMutator {
 public:
  Substitute(const std::string& name, const Expr& replacement) : name_(name), replacement_(replacement) {}

 protected:
  Expr visit(const Var* op, const Expr& self) override { return op->name == name_ ? replacement_ : self; }

 private:
  const std::string& name_;
  const Expr& replacement_;
};

// Whether `expr`, a part of the tile's value, can be computed a vector at a time.
bool vectorizable(const Expr& expr, const std::string& k, Type element) {
  if (!readsVariable(expr, k)) return expr.type() == element;
  if (const Load* load = expr.as<Load>()) {
    std::optional<Expr> base = baseOfUnitStride(load->index, k);
    return base && !readsVariable(*base, k) && load->type == element;
  }
  if (const Binary* binary = expr.as<Binary>()) {
    bool arithmetic = binary->op == BinaryOp::Add || binary->op == BinaryOp::Sub || binary->op == BinaryOp::Mul ||
                      binary->op == BinaryOp::Div;
    return arithmetic && binary->type == element && vectorizable(binary->a, k, element) &&
           vectorizable(binary->b, k, element);
  }
  if (const Unary* unary = expr.as<Unary>())
    return unary->op == UnaryOp::Neg && unary->type == element && vectorizable(unary->a, k, element);
  return false;
}

}  // namespace

bool readsVariable(const Expr& expr, const std::string& name) {
  Reads reads;
  expr.accept(reads);
  return reads.variables.count(name) > 0;
}

Expr substituted(const Expr& expr, const std::string& name, const Expr& replacement) {
  Substitute substitute(name, replacement);
  return substitute.mutate(expr);
}

std::optional<Expr> valueInVectors(const DenseRowNest& nest) {
  const Type element = nest.store->buffer.type().element();
  bool supported = element == Type::float64() || element == Type::float32() || element == Type::int32() ||
                   element == Type::int64();
  if (!supported) return std::nullopt;
  const std::string k = nest.denseLoop->var.as<Var>()->name;
  Expr value = nest.store->value;
  // Declarations before the store, innermost (last) first, so that each
  // substitution sees the ones after it already in place.
  std::vector<Stmt> body = statementsOf(nest.denseLoop->body);
  for (size_t s = body.size() - 1; s-- > 0;) {
    const Declare* declare = body[s].as<Declare>();
    if (!declare) return std::nullopt;
    value = substituted(value, declare->var.as<Var>()->name, declare->init);
  }
  if (!vectorizable(value, k, element)) return std::nullopt;
  return value;
}

std::vector<Stmt> statementsOf(const Stmt& body) {
  if (const Block* block = body.as<Block>()) return block->stmts;
  return {body};
}

std::optional<DenseRowNest> findDenseRowNest(const For* root) {
  DenseRowNest nest;
  std::set<std::string> declaredInside;  // loop variables and declarations of the nest
  Reads reads;
  const For* loop = root;
  while (true) {
    if (!isSerial(loop)) return std::nullopt;
    nest.sparseLoops.push_back(loop);
    declaredInside.insert(loop->var.as<Var>()->name);
    const For* inner = nullptr;
    for (const Stmt& statement : statementsOf(loop->body)) {
      if (const Declare* declare = statement.as<Declare>()) {
        declaredInside.insert(declare->var.as<Var>()->name);
        statement.accept(reads);
      } else if (statement.as<Comment>()) {
      } else if (const For* next = statement.as<For>(); next && !inner) {
        inner = next;
      } else {
        return std::nullopt;
      }
    }
    if (!inner) return std::nullopt;
    // The dense loop: [0, N), only declarations and the one store inside.
    if (isSerial(inner) && isConstZero(inner->begin)) {
      std::vector<Stmt> body = statementsOf(inner->body);
      const Store* store = body.empty() ? nullptr : body.back().as<Store>();
      bool onlyDeclarations = true;
      for (size_t s = 0; s + 1 < body.size(); ++s) onlyDeclarations &= body[s].as<Declare>() != nullptr;
      if (store && onlyDeclarations) {
        nest.denseLoop = inner;
        nest.store = store;
        inner->body.accept(reads);
        break;
      }
    }
    if (inner->begin.defined()) inner->begin.accept(reads);
    inner->end.accept(reads);
    loop = inner;
  }
  const Store* store = nest.store;
  const Var* buffer = store->buffer.as<Var>();
  const std::string k = nest.denseLoop->var.as<Var>()->name;
  if (!buffer || !store->accumulate || store->atomic || reads.loadedBuffers.count(buffer->name)) return std::nullopt;
  std::optional<Expr> base = baseOfUnitStride(store->index, k);
  if (!base) return std::nullopt;
  // The row and the column count may not change inside the nest.
  Reads invariant;
  base->accept(invariant);
  nest.denseLoop->end.accept(invariant);
  for (const std::string& name : invariant.variables)
    if (declaredInside.count(name) || name == k) return std::nullopt;
  return nest;
}

Stmt withDenseLoopFrom(const For* root, const DenseRowNest& nest, const Expr& begin) {
  const For* dense = nest.denseLoop;
  Stmt denseFrom = For::make(dense->var, begin, dense->end, dense->body, dense->loopKind, dense->comment,
                             dense->unrollFactor, dense->reductions);
  // Rebuild from the innermost sparse loop outwards.
  Stmt replacement = denseFrom;
  const StmtNode* replaced = dense;
  for (auto loop = nest.sparseLoops.rbegin(); loop != nest.sparseLoops.rend(); ++loop) {
    std::vector<Stmt> body;
    for (const Stmt& statement : statementsOf((*loop)->body))
      body.push_back(statement.get() == replaced ? replacement : statement);
    replacement = For::make((*loop)->var, (*loop)->begin, (*loop)->end, Block::make(body), (*loop)->loopKind,
                            (*loop)->comment, (*loop)->unrollFactor, (*loop)->reductions);
    replaced = *loop;
  }
  return replacement;
}

}  // namespace tcc::lowering
