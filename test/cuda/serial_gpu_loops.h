// The lowered IR of the cuda target with its GPU loops run one iteration
// after another: printed by the C++ backend, it checks the lowering's logic
// on the CPU, without a GPU.
#pragma once

#include <stdexcept>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::test {

class SerialGpuLoops : public ir::imp::IRMutator {
 public:
  // A GPU thread loop whose lanes' parts of a scalar sum are added across
  // the warp or block (its reductions): run serially, the lanes' parts go
  // into the one scalar, onto the total before the loop, as the GPU adds
  // them. Without `serialSums`, such a loop is refused.
  explicit SerialGpuLoops(bool serialSums = false) : serialSums_(serialSums) {}

 protected:
  using ir::imp::IRMutator::visit;
  ir::imp::Stmt visit(const ir::imp::For* op, const ir::imp::Stmt& self) override {
    namespace imp = ir::imp;
    imp::Stmt body = mutate(op->body);
    if (!imp::isGpuLoop(op->loopKind))
      return body.sameAs(op->body) ? self
                                   : imp::For::make(op->var, op->begin, op->end, body, op->loopKind, op->comment,
                                                    op->unrollFactor, op->reductions, op->parallelChunk);
    if (!op->reductions.empty() && !serialSums_)
      throw std::runtime_error("a GPU loop with reductions has no serial form here");
    return imp::For::make(op->var, op->begin, op->end, body, imp::LoopKind::Serial, op->comment);
  }

 private:
  bool serialSums_;
};

}  // namespace tcc::test
