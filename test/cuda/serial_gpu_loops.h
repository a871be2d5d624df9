// The lowered IR of a cuda statement with its GPU loops run one iteration
// after another on the CPU (printed by the C++ backend), for the tests that
// check what the GPU would compute without a GPU: its source, compiled and
// run on bound inputs.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dense_of.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/jit/jit.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {

// The order the serial run takes a GPU loop's iterations in: the loop's
// own, or the last first (a GPU runs its warps in no fixed order: a result
// that must not depend on it is the same either way).
enum class GpuLoopOrder { Forward, Reversed };

class SerialGpuLoops : public ir::imp::IRMutator {
 public:
  // A GPU thread loop whose lanes' parts of a scalar sum are added across
  // the warp or block (its reductions): run serially, the lanes' parts go
  // into the one scalar, onto the total before the loop, as the GPU adds
  // them. Without `serialSums`, such a loop is refused.
  explicit SerialGpuLoops(bool serialSums = false, GpuLoopOrder order = GpuLoopOrder::Forward)
      : serialSums_(serialSums), order_(order) {}

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
    if (order_ == GpuLoopOrder::Forward)
      return imp::For::make(op->var, op->begin, op->end, body, imp::LoopKind::Serial, op->comment);
    // var = begin + end - 1 - (the serial loop's own counter)
    const auto* var = op->var.as<imp::Var>();
    imp::Expr counter = imp::Var::make(var->name + "_from_last", var->type);
    imp::Expr last = imp::Binary::make(imp::BinaryOp::Sub, imp::Binary::make(imp::BinaryOp::Add, op->begin, op->end),
                                       imp::IntImm::make(1, var->type));
    return imp::For::make(counter, op->begin, op->end,
                          imp::Block::make({imp::Declare::make(op->var, imp::Binary::make(imp::BinaryOp::Sub, last,
                                                                                          imp::Binary::make(imp::BinaryOp::Sub, counter, op->begin))),
                                            body}),
                          imp::LoopKind::Serial, op->comment);
  }

 private:
  bool serialSums_;
  GpuLoopOrder order_;
};

// `function` with its GPU loops serial, as C++ source.
inline std::string serialCppOf(ir::imp::Function function, bool serialSums = false,
                               GpuLoopOrder order = GpuLoopOrder::Forward) {
  function.body = SerialGpuLoops(serialSums, order).mutate(function.body);
  return lowering::makeCodeGenerator(lowering::TargetKind::Cpu)->emit({function});
}

// The host part of `function` with each kernel launch replaced by that
// kernel's loop as the CUDA backend prints it (after its rewrites of the
// loop: unroll and jam, combined atomics), its GPU loops serial, as C++
// source.
inline std::string serialCppOfKernels(const lowering::GpuFunction& function) {
  class Inline : public ir::imp::IRMutator {
   public:
    explicit Inline(const lowering::GpuFunction& function) : function_(function) {}
    using ir::imp::IRMutator::visit;
    ir::imp::Stmt visit(const ir::imp::Evaluate* op, const ir::imp::Stmt& self) override {
      const auto* call = op->value.as<ir::imp::Call>();
      const lowering::GpuKernel* kernel = call ? function_.kernelNamed(call->name) : nullptr;
      return kernel ? SerialGpuLoops().mutate(kernel->loop) : self;
    }

   private:
    const lowering::GpuFunction& function_;
  };
  ir::imp::Function host = function.host;
  host.body = Inline(function).mutate(host.body);
  return lowering::makeCodeGenerator(lowering::TargetKind::Cpu)->emit({host});
}

// The lowered IR of `statement`, its GPU loops serial, compiled for the
// CPU; run() binds each input's tensor and returns the output.
class SerialGpuIr {
 public:
  explicit SerialGpuIr(const CompiledStatement& statement, bool serialSums = false)
      : SerialGpuIr(statement, serialCppOf(statement.function, serialSums), 0) {}
  // The GPU loops' iterations taken in `order`.
  SerialGpuIr(const CompiledStatement& statement, GpuLoopOrder order)
      : SerialGpuIr(statement, serialCppOf(statement.function, false, order), 0) {}
  // The same for the kernels as the CUDA backend prints them
  // (serialCppOfKernels), from the statement's GPU function.
  SerialGpuIr(const CompiledStatement& statement, const lowering::GpuFunction& kernels)
      : SerialGpuIr(statement, serialCppOfKernels(kernels), 0) {}

 private:
  SerialGpuIr(const CompiledStatement& statement, std::string source, int)
      : statement_(statement), source_(std::move(source)) {
    jit::CompileOptions options;
    if (!jit::isAvailable(options.backend)) options.backend = jit::Backend::SystemCompiler;
    if (!jit::isAvailable(options.backend)) return;
    module_ = jit::compile(source_, options);
    entry_ = module_->function<int32_t (*)(tcc_tensor**)>(statement.function.name);
  }

 public:
  // False where there is no C++ JIT.
  bool available() const { return entry_ != nullptr; }
  const std::string& source() const { return source_; }
  // `inputs` by name, packed in the formats the statement declares; the
  // output of `outputDims` is given zeroed where all dense (or, with
  // `filled`, every float entry that value: a kernel that must write every
  // entry), else empty for the IR to assemble. Throws when the IR returns
  // a failure.
  Tensor run(const std::map<std::string, Tensor>& inputs, const std::vector<int32_t>& outputDims,
             std::optional<double> filled = std::nullopt) const {
    const TensorVar& output = statement_.computedOutput;
    std::vector<tcc_tensor> views;
    size_t slot = 0;
    for (size_t k = 0; k < statement_.parameters.size(); ++k) {
      const TensorVar& parameter = statement_.parameters[k];
      if (!(parameter == output)) {
        views.push_back(inputs.at(parameter.name()).abiView());
        continue;
      }
      slot = k;
      const rt::TensorFormat format = toRuntimeFormat(output.format());
      const rt::ValueType type = toRuntimeType(output.datatype());
      views.push_back(output.format().isAllDense() ? Tensor(outputDims, format, type).release()
                                                   : Tensor::emptyAssembledOutput(outputDims, format, type));
      if (filled && output.format().isAllDense()) {
        size_t entries = 1;
        for (int32_t dim : outputDims) entries *= static_cast<size_t>(dim);
        for (size_t k = 0; k < entries; ++k) {
          if (type == rt::ValueType::Float32) static_cast<float*>(views.back().vals)[k] = static_cast<float>(*filled);
          if (type == rt::ValueType::Float64) static_cast<double*>(views.back().vals)[k] = *filled;
        }
      }
    }
    std::vector<tcc_tensor*> pointers;
    for (auto& view : views) pointers.push_back(&view);
    if (int32_t status = entry_(pointers.data()); status != 0)
      throw Error("the serial IR returned " + std::to_string(status));
    return Tensor::adopt(std::move(views[slot]));
  }
  // Runs as run() and expects the output within its element type's
  // tolerance of `expected` (the dense reference's), showing the source
  // where not.
  void expectMatches(const std::map<std::string, Tensor>& inputs, const std::vector<int32_t>& outputDims,
                     const std::vector<double>& expected) const {
    Tensor output = run(inputs, outputDims);
    EXPECT_EQ(expectClose(rt::toDense(output), expected, toleranceOf(statement_.computedOutput),
                          "serial GPU IR vs reference"),
              0)
        << source_;
  }

 private:
  const CompiledStatement& statement_;
  std::string source_;
  std::shared_ptr<const jit::Module> module_;
  int32_t (*entry_)(tcc_tensor**) = nullptr;
};

// Inputs of a serial run: the sizes of the index symbols, the density of
// random sparse operands, and a real matrix of the shared data as A (its
// dimensions set from the file) where `realMatrix` names one.
struct SerialInputs {
  std::string name;
  std::map<std::string, int32_t> sizes;
  double density;
  std::string realMatrix;
};

// Each of `tensors` but `output` drawn as `drawn` says: the real matrix as
// A (its dimensions set in `sizes`), random values from `seed` on.
inline BoundInputs drawnInputs(const std::vector<TensorVar>& tensors, const TensorVar& output,
                               const SerialInputs& drawn, std::map<std::string, int32_t>& sizes, uint64_t& seed) {
  std::optional<rt::Coo> matrix;
  if (!drawn.realMatrix.empty()) matrix = realMatrix(drawn.realMatrix, sizes);
  BoundInputs inputs;
  for (const TensorVar& tensor : tensors) {
    if (tensor == output) continue;
    inputs.bind(tensor, matrix && tensor.name() == "A"
                            ? *matrix
                            : rt::randomUniform(dimsOf(tensor, sizes),
                                                tensor.format().isAllDense() ? 1.0 : drawn.density, ++seed));
  }
  return inputs;
}

// Runs `serial` on each of `all` (the real matrices only where
// `realInputs`) against the dense reference of `program`, on random values
// drawn from `seed` on; returns how many ran.
inline int expectSerialRunsMatch(const Program& program, const CompiledStatement& statement,
                                 const SerialGpuIr& serial, const std::vector<SerialInputs>& all, bool realInputs,
                                 uint64_t seed) {
  const TensorVar& output = statement.computedOutput;
  int checked = 0;
  for (const SerialInputs& drawn : all) {
    if (!drawn.realMatrix.empty() && !realInputs) continue;
    SCOPED_TRACE(drawn.name);
    std::map<std::string, int32_t> sizes = drawn.sizes;
    BoundInputs inputs = drawnInputs(statement.parameters, output, drawn, sizes, seed);
    std::vector<double> expected = referenceOf(program, inputs, output);
    EXPECT_TRUE(anyNonZero(expected));
    if (!anyNonZero(expected)) continue;
    serial.expectMatches(inputs.tensors, dimsOf(output, sizes), expected);
    ++checked;
  }
  return checked;
}

}  // namespace tcc::test
