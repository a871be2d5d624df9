// The lowered IR of a cuda statement with its GPU loops run one iteration
// after another on the CPU (printed by the C++ backend), for the tests that
// check what the GPU would compute without a GPU.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "tcc/ir/imperative_visitor.h"
#include "tcc/jit/jit.h"
#include "tcc/lowering/codegen.h"

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

// `function` with its GPU loops serial, as C++ source.
inline std::string serialCppOf(ir::imp::Function function) {
  function.body = SerialGpuLoops().mutate(function.body);
  return lowering::makeCodeGenerator(lowering::TargetKind::Cpu)->emit({function});
}

}  // namespace tcc::test
