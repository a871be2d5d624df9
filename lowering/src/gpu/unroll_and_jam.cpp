// Unroll-and-jam inside GPU kernels: a serial loop with an unroll factor T
// whose body holds an inner loop runs T of its iterations ("copies") at once,
// each copy with its own scalars, inside one pass of the inner loop. For
// SpMM's column loop (unroll(kv, 4) below a row's warp) one walk over the
// row's nonzeros then feeds four independent sums per lane: four loads of
// B in flight per nonzero instead of one, and the nonzeros read once.
//
// Whole groups of T iterations run jammed and the iterations left over run
// as written, so the trip count need not be a multiple of T; copies whose
// `if` conditions fail are predicated off (their statements guarded, their
// loads not issued). The pass applies only where
// reordering the iterations cannot change a result: the body stores to
// one place at most (statically), loads nothing it stores to, updates no
// scalar declared outside it, and its inner loops' bounds do not depend on
// the copy. Otherwise the loop stays as it was (printed with
// `#pragma unroll T`). Each copy's sums keep their order, so results are
// bit for bit those of the loop as written.
//
// A guarded copy's update of its own scalar (a sum) is not put under an
// `if` but runs unconditionally, each of its loads whose index depends
// on the copy taken at its own index where the copy is live and at a live
// copy's otherwise (the jammed body runs only while some copy is live, and
// that copy reads there): a dead copy's scalar is never stored, and the
// device compiler can issue the loads of several nonzeros ahead instead of
// stopping at each copy's branch (the walk's memory-level parallelism).
// Updates with an integer division, a select (or && or ||), or a load
// inside a copy-dependent index stay guarded, as does everything where
// `speculativeLoads` is off.
#include "unroll_and_jam.h"

#include <map>
#include <set>
#include <string>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

struct NotJammable {};

// Facts about a loop body that decide whether it may be jammed.
class BodyFacts : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Declare* op) override {
    IRVisitor::visit(op);
    declared.insert(op->var.get());
  }
  void visit(const Assign* op) override {
    IRVisitor::visit(op);
    assigned.insert(op->var.get());
  }
  void visit(const Store* op) override {
    IRVisitor::visit(op);
    stored.insert(op->buffer.get());
    ++stores;
    if (op->accumulate || op->atomic) unsafe = true;
  }
  void visit(const Load* op) override {
    IRVisitor::visit(op);
    loaded.insert(op->buffer.get());
  }
  void visit(const For* op) override {
    IRVisitor::visit(op);
    declared.insert(op->var.get());
    ++loops;
    if (op->loopKind != LoopKind::Serial) unsafe = true;
  }
  void visit(const If* op) override {
    IRVisitor::visit(op);
    if (op->elseCase.defined()) unsafe = true;
  }
  void visit(const While*) override { unsafe = true; }
  void visit(const Switch*) override { unsafe = true; }
  void visit(const Allocate*) override { unsafe = true; }
  void visit(const Free*) override { unsafe = true; }
  void visit(const SetTensorProperty*) override { unsafe = true; }
  void visit(const Evaluate*) override { unsafe = true; }
  void visit(const Break*) override { unsafe = true; }
  void visit(const Return*) override { unsafe = true; }
  void visit(const Intrinsic*) override { unsafe = true; }
  void visit(const Call* op) override {
    IRVisitor::visit(op);
    unsafe = true;  // device functions are pure today, but say nothing of their arguments' memory
  }

  std::set<const ExprNode*> declared, assigned, stored, loaded;
  int stores = 0, loops = 0;
  bool unsafe = false;
};

// Whether an expression reads any of `vars`.
class Reads : public IRVisitor {
 public:
  explicit Reads(const std::set<const ExprNode*>& vars) : vars_(vars) {}
  using IRVisitor::visit;
  void visit(const Var* op) override {
    if (vars_.count(op)) found = true;
  }
  bool found = false;

 private:
  const std::set<const ExprNode*>& vars_;
};

// Whether an update may not run for a dead copy: an integer division (a
// dead copy's operands are any values), or a choice (a live copy loads on
// one side of a select, or of a && or ||, only).
class NotSpeculative : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Binary* op) override {
    IRVisitor::visit(op);
    if ((op->op == BinaryOp::Div || op->op == BinaryOp::Mod) && !op->type.isFloat()) found = true;
    if (op->op == BinaryOp::And || op->op == BinaryOp::Or) found = true;
  }
  void visit(const Select* op) override {
    IRVisitor::visit(op);
    found = true;
  }
  bool found = false;
};

class HasLoad : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Load*) override { found = true; }
  bool found = false;
};

// Whether a load whose index depends on a copy holds another load in that
// index.
class NestedDependentLoad : public IRVisitor {
 public:
  explicit NestedDependentLoad(const std::set<const ExprNode*>& perCopy) : perCopy_(perCopy) {}
  using IRVisitor::visit;
  void visit(const Load* op) override {
    IRVisitor::visit(op);
    Reads reads(perCopy_);
    op->index.accept(reads);
    HasLoad inner;
    op->index.accept(inner);
    if (reads.found && inner.found) found = true;
  }
  bool found = false;

 private:
  const std::set<const ExprNode*>& perCopy_;
};

// Replaces variables by their copy's.
class Rename : public IRMutator {
 public:
  explicit Rename(const std::map<const ExprNode*, Expr>& names) : names_(names) {}
  using IRMutator::visit;
  Expr visit(const Var* op, const Expr& self) override {
    auto found = names_.find(op);
    return found == names_.end() ? self : found->second;
  }
  // IRMutator keeps an assignment's target; a copy's goes to its own name.
  Stmt visit(const Assign* op, const Stmt& self) override {
    Expr var = mutate(op->var), value = mutate(op->value);
    if (var.sameAs(op->var) && value.sameAs(op->value)) return self;
    return op->hasCompound ? Assign::makeCompound(op->compound, var, value) : Assign::make(var, value);
  }

 private:
  const std::map<const ExprNode*, Expr>& names_;
};

Expr zeroOf(Type type) {
  if (type.isFloat()) return FloatImm::make(0.0, type);
  return IntImm::make(0, type);
}

Expr conjunction(const Expr& a, const Expr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return Binary::make(BinaryOp::And, a, b);
}

struct Copy {
  std::map<const ExprNode*, Expr> names;
  Expr live;  // undefined: always live
};

// Copy `v`'s instance of a statement whose copy-dependent loads read at
// copy v's index where v is live, else at the first live copy's (see the
// comment at the top): in those indices each of the copy's variables is
// v's where v is live, else the first live copy's (one choice for all of
// them, so the index is that copy's; a choice of variables alone, which
// the device compiler can hoist out of the walk).
class SpeculativeCopy : public Rename {
 public:
  SpeculativeCopy(const std::vector<Copy>& copies, size_t v, const std::set<const ExprNode*>& perCopy)
      : Rename(copies[v].names), copies_(copies), v_(v), perCopy_(perCopy) {}
  using Rename::visit;
  Expr visit(const Load* op, const Expr& self) override {
    Reads reads(perCopy_);
    op->index.accept(reads);
    if (!reads.found || !copies_[v_].live.defined()) return Rename::visit(op, self);
    return Load::make(op->buffer, LiveCopyVars(copies_, v_).mutate(op->index));
  }

 private:
  class LiveCopyVars : public IRMutator {
   public:
    LiveCopyVars(const std::vector<Copy>& copies, size_t v) : copies_(copies), v_(v) {}
    using IRMutator::visit;
    Expr visit(const Var* op, const Expr& self) override {
      auto nameIn = [&](size_t c) {
        auto found = copies_[c].names.find(op);
        return found == copies_[c].names.end() ? self : found->second;
      };
      if (!copies_[v_].names.count(op)) return self;
      // The first live copy's, built from the last copy back (a copy with
      // no condition is always live; past every other copy's condition
      // the last copy is the live one).
      Expr fallback = nameIn(copies_.size() - 1);
      for (size_t c = copies_.size() - 1; c-- > 0;)
        fallback = copies_[c].live.defined() ? Select::make(copies_[c].live, nameIn(c), fallback) : nameIn(c);
      return Select::make(copies_[v_].live, nameIn(v_), fallback);
    }

   private:
    const std::vector<Copy>& copies_;
    size_t v_;
  };

  const std::vector<Copy>& copies_;
  size_t v_;
  const std::set<const ExprNode*>& perCopy_;
};

class Jammer {
 public:
  Jammer(std::set<const ExprNode*> perCopy, std::set<const ExprNode*> assigned, bool speculativeLoads)
      : perCopy_(std::move(perCopy)), assigned_(std::move(assigned)), speculativeLoads_(speculativeLoads) {}

  void jam(const Stmt& stmt, std::vector<Copy>& copies, std::vector<Stmt>& out) {
    if (const auto* block = stmt.as<Block>()) {
      for (const auto& inner : block->stmts) jam(inner, copies, out);
      return;
    }
    if (stmt.as<Comment>()) {
      out.push_back(stmt);
      return;
    }
    if (const auto* declare = stmt.as<Declare>()) {
      bool dependent = assigned_.count(declare->var.get()) || (declare->init.defined() && depends(declare->init));
      if (!dependent) {
        out.push_back(stmt);
        return;
      }
      perCopy_.insert(declare->var.get());
      const auto* var = declare->var.as<Var>();
      bool loads = declare->init.defined() && hasLoad(declare->init);
      for (int v = 0; v < static_cast<int>(copies.size()); ++v) {
        Copy& copy = copies[v];
        Expr renamed = Var::make(var->name + "_u" + std::to_string(v), var->type);
        Expr init;
        if (declare->init.defined()) {
          init = rename(declare->init, copy);
          if (loads && copy.live.defined()) init = Select::make(copy.live, init, zeroOf(var->type));
        }
        copy.names[declare->var.get()] = renamed;
        out.push_back(Declare::make(renamed, init));
      }
      return;
    }
    if (const auto* assign = stmt.as<Assign>(); assign && speculative(assign->value)) {
      for (size_t v = 0; v < copies.size(); ++v) out.push_back(SpeculativeCopy(copies, v, perCopy_).mutate(stmt));
      return;
    }
    if (stmt.as<Assign>() || stmt.as<Store>()) {
      for (Copy& copy : copies) {
        Stmt renamed = Rename(copy.names).mutate(stmt);
        out.push_back(copy.live.defined() ? If::make(copy.live, renamed) : renamed);
      }
      return;
    }
    if (const auto* branch = stmt.as<If>()) {
      if (!depends(branch->condition)) {
        std::vector<Stmt> inner;
        jam(branch->thenCase, copies, inner);
        out.push_back(If::make(branch->condition, Block::make(inner)));
        return;
      }
      // Each copy runs on while its own condition holds; the jammed body
      // runs while any copy does.
      std::vector<Copy> narrowed = copies;
      Expr any;
      std::vector<Stmt> inner;
      for (size_t v = 0; v < copies.size(); ++v) {
        Expr condition = rename(branch->condition, copies[v]);
        Expr name = Var::make("tcc_live" + std::to_string(liveCount_++), Type::bool_());
        inner.push_back(Declare::make(name, conjunction(copies[v].live, condition)));
        narrowed[v].live = name;
        any = any.defined() ? Binary::make(BinaryOp::Or, any, name) : name;
      }
      std::vector<Stmt> body;
      jam(branch->thenCase, narrowed, body);
      // Names the copies declared inside stay inside.
      inner.push_back(If::make(any, Block::make(body)));
      for (const auto& s : inner) out.push_back(s);
      return;
    }
    if (const auto* loop = stmt.as<For>()) {
      if (depends(loop->begin) || depends(loop->end)) throw NotJammable();
      std::vector<Stmt> body;
      jam(loop->body, copies, body);
      out.push_back(For::make(loop->var, loop->begin, loop->end, Block::make(body), loop->loopKind, loop->comment,
                              loop->unrollFactor, loop->reductions, loop->parallelChunk));
      return;
    }
    throw NotJammable();
  }

 private:
  // Whether a copy's update of its scalar to `value` may run for a dead
  // copy too: no integer division, no choice (NotSpeculative), and no load
  // inside a copy-dependent load's index.
  bool speculative(const Expr& value) const {
    if (!speculativeLoads_) return false;
    NotSpeculative excluded;
    value.accept(excluded);
    if (excluded.found) return false;
    NestedDependentLoad nested(perCopy_);
    value.accept(nested);
    return !nested.found;
  }
  bool depends(const Expr& expr) const {
    Reads reads(perCopy_);
    expr.accept(reads);
    return reads.found;
  }
  static bool hasLoad(const Expr& expr) {
    HasLoad finder;
    expr.accept(finder);
    return finder.found;
  }
  static Expr rename(const Expr& expr, const Copy& copy) { return Rename(copy.names).mutate(expr); }

  std::set<const ExprNode*> perCopy_, assigned_;
  bool speculativeLoads_;
  int liveCount_ = 0;
};

class UnrollAndJam : public IRMutator {
 public:
  explicit UnrollAndJam(bool speculativeLoads) : speculativeLoads_(speculativeLoads) {}
  using IRMutator::visit;
  Stmt visit(const For* op, const Stmt& self) override {
    Stmt visited = IRMutator::visit(op, self);
    const auto* loop = visited.as<For>();
    if (loop->loopKind != LoopKind::Serial || loop->unrollFactor < 2) return visited;
    BodyFacts facts;
    loop->body.accept(facts);
    if (facts.loops == 0 || facts.unsafe || facts.stores > 1) return visited;
    for (const auto* buffer : facts.stored)
      if (facts.loaded.count(buffer)) return visited;
    for (const auto* var : facts.assigned)
      if (!facts.declared.count(var)) return visited;
    try {
      return jammed(loop);
    } catch (const NotJammable&) {
      return visited;
    }
  }

 private:
  bool speculativeLoads_;
  Stmt jammed(const For* loop) {
    int factor = loop->unrollFactor;
    Type type = loop->var.type();
    const auto* var = loop->var.as<Var>();
    // Whole groups of `factor` iterations run jammed: copy v of group q
    // runs iteration begin + q * factor + v. The iterations left over run
    // as the loop was written.
    Expr group = Var::make(var->name + "_group", type);
    Expr trips = Binary::make(BinaryOp::Max, Binary::make(BinaryOp::Sub, loop->end, loop->begin), IntImm::make(0, type));
    Expr groups = Binary::make(BinaryOp::Div, trips, IntImm::make(factor, type));
    std::vector<Stmt> body;
    std::vector<Copy> copies(factor);
    for (int v = 0; v < factor; ++v) {
      Expr copyVar = Var::make(var->name + "_u" + std::to_string(v), type);
      body.push_back(Declare::make(
          copyVar, Binary::make(BinaryOp::Add, loop->begin,
                                Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, group, IntImm::make(factor, type)),
                                             IntImm::make(v, type)))));
      copies[v].names[loop->var.get()] = copyVar;
    }
    BodyFacts facts;
    loop->body.accept(facts);
    Jammer jammer({loop->var.get()}, facts.assigned, speculativeLoads_);
    jammer.jam(loop->body, copies, body);
    Stmt whole = For::make(group, IntImm::make(0, type), groups, Block::make(body), LoopKind::Serial,
                           loop->comment + ", " + std::to_string(factor) + " iterations at once (unroll and jam)");
    Expr rest = Binary::make(BinaryOp::Add, loop->begin, Binary::make(BinaryOp::Mul, groups, IntImm::make(factor, type)));
    Stmt remainder = For::make(loop->var, rest, loop->end, loop->body, LoopKind::Serial,
                               loop->comment + ", the iterations left over");
    return Block::make({whole, remainder});
  }
};

}  // namespace

Stmt unrollAndJam(const Stmt& stmt, bool speculativeLoads) { return UnrollAndJam(speculativeLoads).mutate(stmt); }

}  // namespace tcc::lowering
