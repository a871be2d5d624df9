#include "simd_reductions.h"

#include <algorithm>
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
  void visit(const Allocate*) override { refused = true; }
  void visit(const Free*) override { refused = true; }
  void visit(const SetTensorProperty*) override { refused = true; }
  void visit(const Evaluate*) override { refused = true; }
  void visit(const Break*) override { refused = true; }
  void visit(const Return*) override { refused = true; }
  void visit(const Intrinsic*) override { refused = true; }
};

}  // namespace

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
