#include "simd_reductions.h"
#include "dense_row_tiling.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

// Walks a loop body, refusing at the first statement a simd reduction
// cannot hold, and collecting the sums and the names read.
class ReductionBodyCheck : public IRVisitor {
 public:
  bool refused = false;
  std::vector<std::string> sums;
  std::set<std::string> declared, readInValues;

  void visit(const Declare* op) override {
    declared.insert(op->var.as<Var>()->name);
    if (op->init.defined()) op->init.accept(*this);
  }
  void visit(const Assign* op) override {
    const Var* target = op->var.as<Var>();
    bool isSum = op->hasCompound && (op->compound == BinaryOp::Add || op->compound == BinaryOp::Sub);
    if (!target || !isSum || declared.count(target->name)) {
      refused = true;
      return;
    }
    if (std::find(sums.begin(), sums.end(), target->name) == sums.end()) sums.push_back(target->name);
    op->value.accept(*this);
  }
  void visit(const Var* op) override { readInValues.insert(op->name); }
  void visit(const Call*) override { refused = true; }  // may have effects
  void visit(const Store*) override { refused = true; }
  void visit(const For*) override { refused = true; }
  void visit(const While*) override { refused = true; }
  void visit(const If*) override { refused = true; }
  void visit(const Switch*) override { refused = true; }
  void visit(const Allocate*) override { refused = true; }
  void visit(const Free*) override { refused = true; }
  void visit(const SetTensorProperty*) override { refused = true; }
  void visit(const Evaluate*) override { refused = true; }
  void visit(const Break*) override { refused = true; }
  void visit(const Return*) override { refused = true; }
  void visit(const Intrinsic*) override { refused = true; }
};

// Finds loads whose index uses a value the body loaded (directly or through
// declared locals).
class LoadedIndexCheck : public IRVisitor {
 public:
  bool found = false;

  void visit(const Declare* op) override {
    if (!op->init.defined()) return;
    op->init.accept(*this);
    if (mentionsLoaded(op->init)) loaded_.insert(op->var.as<Var>()->name);
  }
  void visit(const Load* op) override {
    op->index.accept(*this);
    if (mentionsLoaded(op->index)) found = true;
  }

 private:
  // Whether `expr` holds a load or a name bound to a loaded value.
  bool mentionsLoaded(const Expr& expr) {
    struct Scan : IRVisitor {
      const std::set<std::string>& loaded;
      bool hit = false;
      explicit Scan(const std::set<std::string>& loaded) : loaded(loaded) {}
      void visit(const Load*) override { hit = true; }
      void visit(const Var* op) override { hit = hit || loaded.count(op->name) > 0; }
    } scan(loaded_);
    expr.accept(scan);
    return scan.hit;
  }
  std::set<std::string> loaded_;
};

// The step of an index with the loop variable: 0 where it does not depend
// on it, a literal where it is affine in it with a literal coefficient,
// nullopt otherwise (a symbolic stride, a loaded value that varies).
class IndexStep {
 public:
  explicit IndexStep(const For* loop) : var_(loop->var.as<Var>()->name) {
    for (const Stmt& stmt : statementsOf(loop->body))
      if (const Declare* declare = stmt.as<Declare>(); declare && declare->init.defined())
        locals_[declare->var.as<Var>()->name] = declare->init;
  }

  std::optional<int64_t> of(const Expr& expr, int depth = 0) const {
    if (depth > 16) return std::nullopt;
    if (expr.as<IntImm>() || expr.as<FloatImm>()) return 0;
    if (const Var* name = expr.as<Var>()) {
      if (name->name == var_) return 1;
      auto local = locals_.find(name->name);
      return local == locals_.end() ? 0 : of(local->second, depth + 1);
    }
    if (const Cast* cast = expr.as<Cast>()) return of(cast->value, depth + 1);
    if (const Load* load = expr.as<Load>()) {
      auto index = of(load->index, depth + 1);
      return index && *index == 0 ? std::optional<int64_t>(0) : std::nullopt;
    }
    if (const Binary* binary = expr.as<Binary>()) {
      auto a = of(binary->a, depth + 1), b = of(binary->b, depth + 1);
      if (!a || !b) return std::nullopt;
      switch (binary->op) {
        case BinaryOp::Add: return *a + *b;
        case BinaryOp::Sub: return *a - *b;
        case BinaryOp::Mul: {
          if (*a == 0 && *b == 0) return 0;
          const IntImm* factor = (*a == 0 ? binary->a : binary->b).as<IntImm>();
          if ((*a != 0 && *b != 0) || !factor) return std::nullopt;
          return (*a == 0 ? *b : *a) * factor->value;
        }
        default: return *a == 0 && *b == 0 ? std::optional<int64_t>(0) : std::nullopt;
      }
    }
    return std::nullopt;
  }

 private:
  std::string var_;
  std::map<std::string, Expr> locals_;
};

class CopyRenamer : public IRMutator {
 public:
  CopyRenamer(const For* loop, int copy, const std::vector<std::string>& renamed)
      : loopVar_(loop->var.as<Var>()->name), copy_(copy), renamed_(renamed.begin(), renamed.end()) {
    const Expr& var = loop->var;
    shiftedLoopVar_ = copy == 0 ? var : Binary::make(BinaryOp::Add, var, IntImm::make(copy, var.type()));
  }

 protected:
  Expr visit(const Var* op, const Expr& self) override {
    if (op->name == loopVar_) return shiftedLoopVar_;
    if (renamed_.count(op->name)) return Var::make(copyName(op->name, copy_), op->type);
    return self;
  }
  Stmt visit(const Declare* op, const Stmt& self) override {
    return Declare::make(mutate(op->var), op->init.defined() ? mutate(op->init) : op->init);
  }
  Stmt visit(const Assign* op, const Stmt& self) override {
    Expr var = mutate(op->var), value = mutate(op->value);
    return op->hasCompound ? Assign::makeCompound(op->compound, var, value) : Assign::make(var, value);
  }

 private:
  std::string loopVar_;
  int copy_;
  std::set<std::string> renamed_;
  Expr shiftedLoopVar_;
};

}  // namespace

bool readsThroughLoadedIndex(const For* loop) {
  LoadedIndexCheck check;
  loop->body.accept(check);
  return check.found;
}

bool readsAtStride(const For* loop) {
  struct Scan : IRVisitor {
    const IndexStep& step;
    bool found = false;
    explicit Scan(const IndexStep& step) : step(step) {}
    void visit(const Load* op) override {
      auto stride = step.of(op->index);
      if (!stride || (*stride != 0 && *stride != 1)) found = true;
      op->index.accept(*this);
    }
  };
  IndexStep step(loop);
  Scan scan(step);
  loop->body.accept(scan);
  return scan.found;
}

std::vector<Expr> buffersStreamedByLoop(const For* loop) {
  struct Collect : IRVisitor {
    std::string var;
    std::vector<Expr> buffers;
    std::set<std::string> seen;
    void visit(const Load* op) override {
      const Var* index = op->index.as<Var>();
      const Var* buffer = op->buffer.as<Var>();
      if (index && buffer && index->name == var && seen.insert(buffer->name).second) buffers.push_back(op->buffer);
      op->index.accept(*this);
    }
  } collect;
  collect.var = loop->var.as<Var>()->name;
  loop->body.accept(collect);
  return collect.buffers;
}

std::optional<GatherDot> gatherDotOf(const For* loop) {
  const Var* var = loop->var.as<Var>();
  if (!var || simdSumReductions(loop).size() != 1) return std::nullopt;
  const std::vector<Stmt> stmts = statementsOf(loop->body);
  // Locals the body declares (each used only as an index below), then one sum.
  std::map<std::string, Expr> locals;
  const Assign* sum = nullptr;
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (const Declare* declare = stmts[k].as<Declare>(); declare && declare->init.defined() && !sum)
      locals[declare->var.as<Var>()->name] = declare->init;
    else if (const Assign* assign = stmts[k].as<Assign>(); assign && k + 1 == stmts.size())
      sum = assign;
    else
      return std::nullopt;
  }
  if (!sum || !sum->hasCompound || sum->compound != BinaryOp::Add || sum->var.type() != Type::float64())
    return std::nullopt;
  const Binary* product = sum->value.as<Binary>();
  if (!product || product->op != BinaryOp::Mul) return std::nullopt;
  // An index: a local's value, a widening cast to int64 stripped.
  auto resolve = [&](Expr index) {
    for (int step = 0; step < 4; ++step) {
      if (const Var* name = index.as<Var>(); name && locals.count(name->name)) index = locals.at(name->name);
      else if (const Cast* cast = index.as<Cast>(); cast && cast->type == Type::int64() &&
                                                    cast->value.type() == Type::int32())
        index = cast->value;
      else break;
    }
    return index;
  };
  auto loadAtLoopVar = [&](const Expr& expr, Type element) -> const Load* {
    const Load* load = expr.as<Load>();
    const Var* index = load ? load->index.as<Var>() : nullptr;
    return index && index->name == var->name && load->type == element && load->buffer.as<Var>() ? load : nullptr;
  };
  for (const auto& [first, second] : {std::pair{product->a, product->b}, std::pair{product->b, product->a}}) {
    const Load* vals = loadAtLoopVar(first, Type::float64());
    const Load* x = second.as<Load>();
    if (!vals || !x || x->type != Type::float64() || !x->buffer.as<Var>()) continue;
    const Load* crd = loadAtLoopVar(resolve(x->index), Type::int32());
    if (!crd) continue;
    return GatherDot{sum->var.as<Var>()->name, vals->buffer, crd->buffer, x->buffer};
  }
  return std::nullopt;
}

std::optional<SegmentLoop> segmentLoopOf(const For* loop) {
  const Var* var = loop->var.as<Var>();
  if (!var || loop->loopKind != LoopKind::Serial) return std::nullopt;
  const std::vector<Stmt> stmts = statementsOf(loop->body);
  std::map<std::string, Expr> locals;
  const For* sum = nullptr;
  for (const Stmt& stmt : stmts) {
    if (const Declare* declare = stmt.as<Declare>(); declare && declare->init.defined()) {
      locals[declare->var.as<Var>()->name] = declare->init;
    } else if (const For* inner = stmt.as<For>();
               inner && !simdSumReductions(inner).empty() && readsThroughLoadedIndex(inner)) {
      if (sum) return std::nullopt;  // one gather sum only: the test below speaks for its segments
      sum = inner;
    }
  }
  if (!sum) return std::nullopt;
  // An expression with the body's locals replaced by their values.
  auto resolve = [&](Expr expr) {
    for (int step = 0; step < 4; ++step) {
      const Var* name = expr.as<Var>();
      if (!name || !locals.count(name->name)) break;
      expr = locals.at(name->name);
    }
    return expr;
  };
  // Whether `index` is the loop's variable, up to widening casts and locals.
  auto isLoopVar = [&](Expr index) {
    for (int step = 0; step < 8; ++step) {
      index = resolve(index);
      if (const Cast* cast = index.as<Cast>(); cast && (cast->type == Type::int64() || cast->type == Type::int32()))
        index = cast->value;
      else break;
    }
    const Var* name = index.as<Var>();
    return name && name->name == var->name;
  };
  const Load* first = resolve(sum->begin).as<Load>();
  const Load* last = resolve(sum->end).as<Load>();
  if (!first || !last || !first->buffer.as<Var>() || !last->buffer.as<Var>() ||
      first->buffer.as<Var>()->name != last->buffer.as<Var>()->name || !isLoopVar(first->index))
    return std::nullopt;
  const Binary* next = resolve(last->index).as<Binary>();
  if (!next || next->op != BinaryOp::Add) return std::nullopt;
  const IntImm* one = next->b.as<IntImm>();
  Expr rest = next->a;
  if (!one) one = next->a.as<IntImm>(), rest = next->b;
  if (!one || one->value != 1 || !isLoopVar(rest)) return std::nullopt;
  return SegmentLoop{sum, first->buffer, Cast::make(Type::int64(), loop->begin), Cast::make(Type::int64(), loop->end)};
}

std::vector<std::string> declaredInBody(const For* loop) {
  ReductionBodyCheck check;
  loop->body.accept(check);
  return {check.declared.begin(), check.declared.end()};
}

std::string copyName(const std::string& name, int copy) {
  return copy == 0 ? name : name + "_u" + std::to_string(copy);
}

Stmt unrolledCopy(const For* loop, int copy, const std::vector<std::string>& renamed) {
  CopyRenamer renamer(loop, copy, renamed);
  return renamer.mutate(loop->body);
}

std::vector<std::string> simdSumReductions(const For* loop) {
  if (loop->loopKind != LoopKind::Serial || loop->unrollFactor > 0) return {};
  ReductionBodyCheck check;
  loop->body.accept(check);
  if (check.refused) return {};
  // A sum read elsewhere in the body (acc += acc * x) is no reduction.
  for (const std::string& sum : check.sums)
    if (check.readInValues.count(sum)) return {};
  return check.sums;
}

}  // namespace tcc::lowering
