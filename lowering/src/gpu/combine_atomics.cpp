// Combining a thread's atomic additions in a register: in a serial loop of a
// GPU kernel whose one store to a buffer is an atomic addition, and which
// never loads that buffer, the additions to one entry that follow each
// other are summed in a register, and the sum goes to memory (one atomic
// addition) when the entry changes and when the loop ends. A walk over a
// warp's share of nonzeros (fuse, pos and split, parallelized with Atomics)
// then adds once per row segment instead of once per nonzero. Other
// threads add to the same entries atomically too, so deferring this
// thread's additions to the loop's end changes no value any thread reads;
// only the order of the floating-point additions, which atomics leave open
// anyway.
#include "combine_atomics.h"

#include <map>
#include <set>
#include <string>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

class Accesses : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Store* op) override {
    IRVisitor::visit(op);
    ++stores[op->buffer.get()];
    if (op->atomic && op->accumulate) atomicStore = op;
  }
  void visit(const Load* op) override {
    IRVisitor::visit(op);
    loaded.insert(op->buffer.get());
  }
  void visit(const For* op) override {
    IRVisitor::visit(op);
    if (op->loopKind != LoopKind::Serial) parallelInside = true;
  }
  std::map<const ExprNode*, int> stores;
  std::set<const ExprNode*> loaded;
  const Store* atomicStore = nullptr;
  bool parallelInside = false;
};

// Replaces the one atomic store by its combining update.
class ReplaceStore : public IRMutator {
 public:
  ReplaceStore(const Store* target, Expr sum, Expr at, std::string name)
      : target_(target), sum_(std::move(sum)), at_(std::move(at)), name_(std::move(name)) {}
  using IRMutator::visit;
  Stmt visit(const Store* op, const Stmt& self) override {
    if (op != target_) return self;
    Expr index = Var::make(name_ + "_now", at_.type());
    Stmt flush = If::make(Binary::make(BinaryOp::Ge, at_, IntImm::make(0, at_.type())),
                          Store::make(op->buffer, at_, sum_, true, true));
    Stmt change = If::make(Binary::make(BinaryOp::Ne, index, at_),
                           Block::make({flush, Assign::make(sum_, zero(sum_.type())), Assign::make(at_, index)}));
    return Block::make({Declare::make(index, Cast::make(at_.type(), op->index)), change,
                        Assign::makeCompound(BinaryOp::Add, sum_, op->value)});
  }
  static Expr zero(Type type) { return type.isFloat() ? FloatImm::make(0.0, type) : IntImm::make(0, type); }

 private:
  const Store* target_;
  Expr sum_, at_;
  std::string name_;
};

class CombineAtomics : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const For* op, const Stmt& self) override {
    Stmt visited = IRMutator::visit(op, self);
    const auto* loop = visited.as<For>();
    if (loop->loopKind != LoopKind::Serial) return visited;
    Accesses accesses;
    loop->body.accept(accesses);
    const Store* store = accesses.atomicStore;
    if (!store || accesses.parallelInside) return visited;
    const ExprNode* buffer = store->buffer.get();
    if (accesses.stores[buffer] != 1 || accesses.loaded.count(buffer)) return visited;
    if (!store->value.type().isFloat() && !store->value.type().isInteger()) return visited;
    std::string name = "tcc_combined" + std::to_string(count_++);
    Expr sum = Var::make(name, store->value.type());
    Expr at = Var::make(name + "_at", Type::int64());
    Stmt body = ReplaceStore(store, sum, at, name).mutate(loop->body);
    Stmt combined = For::make(loop->var, loop->begin, loop->end, body, loop->loopKind, loop->comment,
                              loop->unrollFactor, loop->reductions, loop->parallelChunk);
    Stmt flush = If::make(Binary::make(BinaryOp::Ge, at, IntImm::make(0, Type::int64())),
                          Store::make(store->buffer, at, sum, true, true));
    return Block::make({Declare::make(sum, ReplaceStore::zero(sum.type())),
                        Declare::make(at, IntImm::make(-1, Type::int64())), combined, flush});
  }

 private:
  int count_ = 0;
};

}  // namespace

Stmt combineAtomics(const Stmt& stmt) { return CombineAtomics().mutate(stmt); }

}  // namespace tcc::lowering
