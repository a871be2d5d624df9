#include "gpu_host_part.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "tcc/ir/imperative_printer.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/lowering/gpu_kernels.h"

namespace tcc::detail {

namespace imp = ir::imp;

namespace {

// Type::isFloat, inline: the interpreter asks it of every value it reads.
inline bool isReal(imp::Type type) {
  return !type.isPointer && (type.kind == imp::ScalarKind::Float16 || type.kind == imp::ScalarKind::Float32 ||
                             type.kind == imp::ScalarKind::Float64);
}

// A scalar or pointer value of the host part.
struct Value {
  imp::Type type;
  int64_t integer = 0;
  double real = 0;
  void* pointer = nullptr;
  // A pointer that is a tensor's pos array: its tensor and level (the host
  // reads it from a copy, see HostPositions).
  const tcc_tensor* posTensor = nullptr;
  int posLevel = -1;
  double asReal() const { return isReal(type) ? real : static_cast<double>(integer); }
  int64_t asInteger() const { return isReal(type) ? static_cast<int64_t>(real) : integer; }
};

Value integerValue(int64_t v, imp::Type type) { return Value{type, v, 0, nullptr}; }
Value realValue(double v, imp::Type type) { return Value{type, 0, v, nullptr}; }

Value convert(const Value& value, imp::Type type) {
  if (type.isPointer) return Value{type, 0, 0, value.pointer, value.posTensor, value.posLevel};
  if (isReal(type)) return realValue(type.kind == imp::ScalarKind::Float32 ? static_cast<float>(value.asReal()) : value.asReal(), type);
  int64_t v = value.asInteger();
  if (type.kind == imp::ScalarKind::Int32) v = static_cast<int32_t>(v);
  if (type.kind == imp::ScalarKind::Bool) v = v != 0;
  return integerValue(v, type);
}

// A host part's variables, a slot each name, resolved once per host part
// and kept for its next runs: a run reads and writes a variable through its
// Var node's slot, comparing and copying no names (the default SpMM's rule
// alone reads some fifty variables a run, and a launch costs a few
// microseconds more per map of names).
struct VariableSlots {
  static constexpr size_t kNone = ~size_t(0);
  std::unordered_map<const imp::Var*, size_t> byNode;
  std::unordered_map<std::string, size_t> byName;
  // What was resolved, held so that no node keyed above is freed (and its
  // address reused) while the slots are kept.
  imp::Stmt body;
  std::vector<imp::Expr> kernelExprs;

  size_t slotOf(const imp::Var* var) const {
    if (auto found = byNode.find(var); found != byNode.end()) return found->second;
    // (A node not resolved, of another function that shares this body.)
    auto named = byName.find(var->name);
    return named == byName.end() ? kNone : named->second;
  }
};

class SlotResolver : public imp::IRVisitor {
 public:
  explicit SlotResolver(VariableSlots& slots) : slots_(slots) {}
  using imp::IRVisitor::visit;
  void visit(const imp::Var* op) override {
    slots_.byNode.emplace(op, slots_.byName.try_emplace(op->name, slots_.byName.size()).first->second);
  }

 private:
  VariableSlots& slots_;
};

// The slots of `function`'s host part and of what its launches evaluate
// (each kernel's loop bounds, parameters and scratch sizes), by its body.
std::shared_ptr<const VariableSlots> variableSlotsOf(const lowering::GpuFunction& function) {
  static std::mutex mutex;
  static std::unordered_map<const imp::StmtNode*, std::shared_ptr<const VariableSlots>> kept;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = kept.find(function.host.body.get()); found != kept.end()) return found->second;
  auto slots = std::make_shared<VariableSlots>();
  SlotResolver resolver(*slots);
  slots->body = function.host.body;
  if (slots->body.defined()) slots->body.accept(resolver);
  for (const auto& kernel : function.kernels) {
    if (const auto* loop = kernel.loop.as<imp::For>())
      slots->kernelExprs.insert(slots->kernelExprs.end(), {loop->begin, loop->end});
    slots->kernelExprs.insert(slots->kernelExprs.end(), kernel.parameters.begin(), kernel.parameters.end());
    for (const auto& scratch : kernel.scratch) slots->kernelExprs.push_back(scratch.entriesPerThread);
  }
  for (const auto& expr : slots->kernelExprs)
    if (expr.defined()) expr.accept(resolver);
  if (kept.size() >= 256) kept.clear();  // (the programs of a long-running process come and go)
  kept.emplace(function.host.body.get(), slots);
  return slots;
}

class HostInterpreter {
 public:
  HostInterpreter(const lowering::GpuFunction& function, const std::vector<tcc_tensor*>& tensors,
                  const HostPartDevice& device)
      : function_(function), device_(device), slots_(variableSlotsOf(function)),
        values_(slots_->byName.size()), assigned_(slots_->byName.size(), false) {
    for (size_t k = 0; k < tensors.size(); ++k) tensors_.push_back({&function.host.parameters[k].name, tensors[k]});
  }

  // Runs a statement; returns true when it returned (status in status_).
  bool run(const imp::Stmt& stmt) {
    if (const auto* block = stmt.as<imp::Block>()) {
      for (const auto& s : block->stmts)
        if (run(s)) return true;
      return false;
    }
    if (const auto* declare = stmt.as<imp::Declare>()) {
      setVariable(declare->var.as<imp::Var>(), declare->init.defined() ? convert(eval(declare->init), declare->var.type())
                                                                       : Value{declare->var.type()});
      return false;
    }
    if (const auto* assign = stmt.as<imp::Assign>()) {
      Value value = eval(assign->value);
      if (assign->hasCompound) value = binary(assign->compound, eval(assign->var), value, assign->var.type());
      setVariable(assign->var.as<imp::Var>(), convert(value, assign->var.type()));
      return false;
    }
    if (const auto* branch = stmt.as<imp::If>()) {
      if (eval(branch->condition).asInteger()) return run(branch->thenCase);
      return branch->elseCase.defined() && run(branch->elseCase);
    }
    if (const auto* result = stmt.as<imp::Return>()) {
      status = result->value.defined() ? static_cast<int32_t>(eval(result->value).asInteger()) : 0;
      return true;
    }
    if (stmt.as<imp::Comment>()) return false;
    if (const auto* allocate = stmt.as<imp::Allocate>()) {
      const auto* buffer = allocate->buffer.as<imp::Var>();
      const bool outputArray = function_.outputArrays.count(buffer->name) > 0;
      if (outputArray ? !device_.allocateOutput : !device_.allocateZeroed)
        throw Error(std::string("the GPU launcher cannot allocate device memory for ") +
                    (outputArray ? "a sparse output" : "a workspace"));
      int64_t entries = std::max<int64_t>(eval(allocate->count).asInteger(), 0);
      size_t bytes = static_cast<size_t>(entries * bytesOf(allocate->buffer.type().element()));
      Value value{allocate->buffer.type()};
      value.pointer = outputArray                                     ? device_.allocateOutput(bytes)
                      : allocate->zeroInitialize || !device_.allocate ? device_.allocateZeroed(bytes)
                                                                      : device_.allocate(bytes);
      setVariable(buffer, value);
      return false;
    }
    if (const auto* property = stmt.as<imp::SetTensorProperty>()) {
      tcc_tensor* tensor = tensorNamed(property->tensor);
      Value value = eval(property->value);
      switch (property->field) {
        case imp::TensorField::Pos: tensor->levels[property->index].pos = static_cast<long long*>(value.pointer); break;
        case imp::TensorField::Crd: tensor->levels[property->index].crd = static_cast<int*>(value.pointer); break;
        case imp::TensorField::Vals: tensor->vals = value.pointer; break;
        case imp::TensorField::ValsSize: tensor->vals_size = value.asInteger(); break;
        default: throw Error("the GPU launcher cannot set " + imp::toString(stmt));
      }
      return false;
    }
    if (const auto* free = stmt.as<imp::Free>()) {
      if (device_.release) device_.release(eval(free->buffer).pointer);
      return false;
    }
    if (const auto* intrinsic = stmt.as<imp::Intrinsic>()) {
      const lowering::GpuIntrinsicCall* call = function_.intrinsicCall(intrinsic);
      if (!call) throw Error("internal: intrinsic '" + intrinsic->name + "' is not listed in its GPU function");
      std::map<std::string, tcc_tensor*> operands;
      for (const auto& name : intrinsic->tensors) operands[name] = tensorNamed(name);
      if (int32_t result = device_.intrinsic(*call, operands)) {
        status = result;
        return true;
      }
      return false;
    }
    if (const auto* evaluate = stmt.as<imp::Evaluate>()) {
      const auto* call = evaluate->value.as<imp::Call>();
      const lowering::GpuKernel* kernel = call ? function_.kernelNamed(call->name) : nullptr;
      if (kernel) {
        launch(*kernel);
        return false;
      }
    }
    throw Error("the host part of " + function_.host.name + " holds a statement the GPU launcher cannot run: " +
                imp::toString(stmt));
  }

  int32_t status = 0;

 private:
  void launch(const lowering::GpuKernel& kernel) {
    const auto* loop = kernel.loop.as<imp::For>();
    int64_t extent = eval(loop->end).asInteger() - eval(loop->begin).asInteger();
    KernelLaunch request;
    request.kernel = &kernel;
    request.blocks = lowering::blocksFor(kernel, extent);
    if (request.blocks == 0) return;
    if (!kernel.scratch.empty()) planScratch(kernel, request);
    // Each argument in storage of its parameter's own type.
    std::vector<std::array<unsigned char, 8>>& storage = request.arguments;
    storage.resize(kernel.parameters.size());
    for (size_t k = 0; k < kernel.parameters.size(); ++k) {
      const imp::Expr& parameter = kernel.parameters[k];
      if (isScratch(kernel, k)) continue;  // the device's to fill
      Value value = convert(variable(parameter.as<imp::Var>()), parameter.type());
      void* slot = storage[k].data();
      imp::Type type = parameter.type();
      if (type.isPointer) {
        std::memcpy(slot, &value.pointer, sizeof(void*));
      } else if (type.kind == imp::ScalarKind::Float64) {
        std::memcpy(slot, &value.real, sizeof(double));
      } else if (type.kind == imp::ScalarKind::Float32) {
        float v = static_cast<float>(value.real);
        std::memcpy(slot, &v, sizeof v);
      } else if (type.kind == imp::ScalarKind::Int64) {
        std::memcpy(slot, &value.integer, sizeof(int64_t));
      } else if (type.kind == imp::ScalarKind::Bool) {
        bool v = value.integer != 0;
        std::memcpy(slot, &v, sizeof v);
      } else {
        int32_t v = static_cast<int32_t>(value.integer);
        std::memcpy(slot, &v, sizeof v);
      }
    }
    device_.launch(request);
  }

  static bool isScratch(const lowering::GpuKernel& kernel, size_t parameter) {
    return std::any_of(kernel.scratch.begin(), kernel.scratch.end(),
                       [&](const lowering::GpuScratchParameter& scratch) { return scratch.parameter == parameter; });
  }

  // The GPU threads' copies of workspaces: a buffer of each for the
  // launch's threads, on fewer blocks where they would pass the limit.
  void planScratch(const lowering::GpuKernel& kernel, KernelLaunch& request) {
    std::vector<int64_t> bytesPerThread;
    int64_t total = 0;
    for (const auto& scratch : kernel.scratch) {
      int64_t entries = std::max<int64_t>(eval(scratch.entriesPerThread).asInteger(), 0);
      bytesPerThread.push_back(entries * scratch.bytesPerEntry());
      total += bytesPerThread.back();
    }
    request.blocks = lowering::blocksWithinScratchLimit(kernel, request.blocks, total);
    if (request.blocks < 1)
      throw Error("kernel " + kernel.name + " keeps a copy of its workspaces in each GPU thread, " +
                  std::to_string(total) + " bytes a thread, and one block of " +
                  std::to_string(kernel.threadsPerBlock) + " threads would need more than the " +
                  std::to_string(lowering::kGpuScratchBytesLimit) + " bytes they may take; run this statement "
                  "on the cpu target, or schedule it without the workspace");
    const int64_t threads = request.blocks * kernel.threadsPerBlock;
    for (size_t k = 0; k < kernel.scratch.size(); ++k)
      request.scratch.push_back({kernel.scratch[k].parameter, threads * bytesPerThread[k]});
  }

  static size_t bytesOf(imp::Type type) {
    return type.kind == imp::ScalarKind::Float64 || type.kind == imp::ScalarKind::Int64 ? 8
           : type.kind == imp::ScalarKind::Bool                                          ? 1
           : type.kind == imp::ScalarKind::Float16                                       ? 2
                                                                                         : 4;
  }

  const Value& variable(const imp::Var* var) const {
    if (size_t slot = slots_->slotOf(var); slot != VariableSlots::kNone) {
      if (!assigned_[slot]) throw Error("the GPU launcher has no value for " + var->name);
      return values_[slot];
    }
    auto found = others_.find(var->name);
    if (found == others_.end()) throw Error("the GPU launcher has no value for " + var->name);
    return found->second;
  }

  void setVariable(const imp::Var* var, Value value) {
    if (size_t slot = slots_->slotOf(var); slot != VariableSlots::kNone) {
      values_[slot] = std::move(value);
      assigned_[slot] = true;
      return;
    }
    others_[var->name] = std::move(value);
  }

  tcc_tensor* tensorNamed(const std::string& name) const {
    for (const auto& [parameter, tensor] : tensors_)
      if (*parameter == name) return tensor;
    throw std::out_of_range("the GPU launcher has no tensor " + name);
  }

  Value eval(const imp::Expr& expr) {
    if (const auto* imm = expr.as<imp::IntImm>()) return integerValue(imm->value, imm->type);
    if (const auto* imm = expr.as<imp::FloatImm>()) return realValue(imm->value, imm->type);
    if (const auto* var = expr.as<imp::Var>()) return variable(var);
    if (const auto* cast = expr.as<imp::Cast>()) return convert(eval(cast->value), cast->type);
    if (const auto* op = expr.as<imp::Binary>()) return binary(op->op, eval(op->a), eval(op->b), op->type);
    if (const auto* op = expr.as<imp::Unary>()) {
      Value a = eval(op->a);
      if (op->op == imp::UnaryOp::Not) return integerValue(!a.asInteger(), imp::Type::bool_());
      return isReal(a.type) ? realValue(-a.real, a.type) : integerValue(-a.integer, a.type);
    }
    if (const auto* op = expr.as<imp::Select>()) return eval(op->condition).asInteger() ? eval(op->ifTrue) : eval(op->ifFalse);
    if (const auto* field = expr.as<imp::TensorProperty>()) return tensorField(*field);
    if (const auto* load = expr.as<imp::Load>()) return readEntry(*load);
    if (const auto* call = expr.as<imp::Call>(); call && call->name == lowering::kLongestSegmentCall &&
                                                 call->args.size() == 2) {
      Value pos = eval(call->args[0]);
      int64_t segments = eval(call->args[1]).asInteger();
      if (segments <= 0) return integerValue(0, call->type);
      if (pos.posTensor) return integerValue(positionsOf(pos).longest, call->type);
      // Any other device array: copied, not kept.
      return integerValue(hostPositionsOf(readArray(pos.pointer, segments + 1))->longest, call->type);
    }
    if (const auto* call = expr.as<imp::Call>(); call && call->name == lowering::kSaturatingMulCall &&
                                                 call->args.size() == 2)
      return integerValue(lowering::saturatingMul(eval(call->args[0]).asInteger(), eval(call->args[1]).asInteger()),
                          call->type);
    throw Error("the GPU launcher cannot evaluate " + imp::toString(expr));
  }

  std::vector<int64_t> readArray(const void* device, int64_t entries) {
    std::vector<int64_t> host(static_cast<size_t>(std::max<int64_t>(entries, 0)));
    if (!host.empty()) device_.read(host.data(), device, host.size() * sizeof(int64_t));
    return host;
  }

  // The host copy of a tensor's pos array (its entries: the positions of
  // the level above, plus one).
  const HostPositions& positionsOf(const Value& pos) {
    const tcc_tensor* tensor = pos.posTensor;
    auto key = std::make_pair(tensor, pos.posLevel);
    auto found = positions_.find(key);
    if (found != positions_.end()) return *found->second;
    int64_t parents = 1;
    for (int level = 0; level < pos.posLevel; ++level) {
      const tcc_level& above = tensor->levels[level];
      if (above.kind == TCC_LEVEL_DENSE) {
        parents *= above.size;
      } else if (above.kind == TCC_LEVEL_COMPRESSED) {
        Value abovePos{imp::Type::pointerTo(imp::Type::int64()), 0, 0, above.pos, tensor, level};
        parents = positionsOf(abovePos).pos.at(static_cast<size_t>(parents));
      } else if (above.kind != TCC_LEVEL_SINGLETON) {
        throw Error("the GPU launcher cannot count the positions above level " + std::to_string(pos.posLevel + 1));
      }
    }
    std::shared_ptr<const HostPositions> copy;
    if (device_.positions) {
      copy = device_.positions(tensor->levels[pos.posLevel].pos, parents + 1);
    } else {
      // No host copies kept: the array read whole, for this run only.
      copy = hostPositionsOf(readArray(tensor->levels[pos.posLevel].pos, parents + 1));
    }
    return *positions_.emplace(key, std::move(copy)).first->second;
  }

  // One entry of a device array, copied to the host (a pos array's from its
  // host copy).
  Value readEntry(const imp::Load& load) {
    Value array = eval(load.buffer);
    int64_t index = eval(load.index).asInteger();
    imp::Type type = load.type;
    if (array.posTensor && type.kind == imp::ScalarKind::Int64) {
      const HostPositions& copy = positionsOf(array);
      if (index < 0 || index >= static_cast<int64_t>(copy.pos.size()))
        throw Error("the GPU launcher reads entry " + std::to_string(index) + " of a pos array of " +
                    std::to_string(copy.pos.size()));
      return integerValue(copy.pos[static_cast<size_t>(index)], type);
    }
    size_t bytes = bytesOf(type);
    std::array<unsigned char, 8> raw{};
    device_.read(raw.data(), static_cast<const unsigned char*>(array.pointer) + index * static_cast<int64_t>(bytes),
                 bytes);
    switch (type.kind) {
      case imp::ScalarKind::Float64: { double v; std::memcpy(&v, raw.data(), 8); return realValue(v, type); }
      case imp::ScalarKind::Float32: { float v; std::memcpy(&v, raw.data(), 4); return realValue(v, type); }
      case imp::ScalarKind::Int64: { int64_t v; std::memcpy(&v, raw.data(), 8); return integerValue(v, type); }
      case imp::ScalarKind::Int32: { int32_t v; std::memcpy(&v, raw.data(), 4); return integerValue(v, type); }
      case imp::ScalarKind::Bool: return integerValue(raw[0] != 0, type);
      default: throw Error("the GPU launcher cannot read an entry of " + imp::toString(load.buffer));
    }
  }

  Value tensorField(const imp::TensorProperty& field) {
    const tcc_tensor* tensor = tensorNamed(field.tensor);
    switch (field.field) {
      case imp::TensorField::Dim: return integerValue(tensor->dims[field.index], field.type);
      case imp::TensorField::Pos: return Value{field.type, 0, 0, tensor->levels[field.index].pos, tensor, field.index};
      case imp::TensorField::Crd: return Value{field.type, 0, 0, tensor->levels[field.index].crd};
      case imp::TensorField::Vals: return Value{field.type, 0, 0, tensor->vals};
      case imp::TensorField::ValsSize: return integerValue(tensor->vals_size, field.type);
    }
    throw Error("unknown tensor field");
  }

  static Value binary(imp::BinaryOp op, const Value& a, const Value& b, imp::Type type) {
    using imp::BinaryOp;
    bool real = isReal(a.type) || isReal(b.type);
    if (imp::isComparison(op) || op == BinaryOp::And || op == BinaryOp::Or) {
      bool result = false;
      double x = a.asReal(), y = b.asReal();
      int64_t i = a.asInteger(), j = b.asInteger();
      switch (op) {
        case BinaryOp::Eq: result = real ? x == y : i == j; break;
        case BinaryOp::Ne: result = real ? x != y : i != j; break;
        case BinaryOp::Lt: result = real ? x < y : i < j; break;
        case BinaryOp::Le: result = real ? x <= y : i <= j; break;
        case BinaryOp::Gt: result = real ? x > y : i > j; break;
        case BinaryOp::Ge: result = real ? x >= y : i >= j; break;
        case BinaryOp::And: result = i && j; break;
        default: result = i || j; break;
      }
      return integerValue(result, imp::Type::bool_());
    }
    if (real) {
      double x = a.asReal(), y = b.asReal(), r = 0;
      switch (op) {
        case BinaryOp::Add: r = x + y; break;
        case BinaryOp::Sub: r = x - y; break;
        case BinaryOp::Mul: r = x * y; break;
        case BinaryOp::Div: r = x / y; break;
        case BinaryOp::Min: r = x < y ? x : y; break;
        case BinaryOp::Max: r = x < y ? y : x; break;
        default: throw Error(std::string("the GPU launcher cannot apply ") + imp::toString(op) + " to reals");
      }
      return convert(realValue(r, imp::Type::float64()), type);
    }
    int64_t x = a.integer, y = b.integer, r = 0;
    switch (op) {
      case BinaryOp::Add: r = x + y; break;
      case BinaryOp::Sub: r = x - y; break;
      case BinaryOp::Mul: r = x * y; break;
      case BinaryOp::Div: if (y == 0) throw Error("division by zero in a kernel's launch"); r = x / y; break;
      case BinaryOp::Mod: if (y == 0) throw Error("division by zero in a kernel's launch"); r = x % y; break;
      case BinaryOp::Min: r = x < y ? x : y; break;
      case BinaryOp::Max: r = x < y ? y : x; break;
      default: break;
    }
    return convert(integerValue(r, imp::Type::int64()), type);
  }

  const lowering::GpuFunction& function_;
  const HostPartDevice& device_;
  std::vector<std::pair<const std::string*, tcc_tensor*>> tensors_;  // by the host part's parameter names
  std::shared_ptr<const VariableSlots> slots_;
  std::vector<Value> values_;
  std::vector<bool> assigned_;
  std::map<std::string, Value> others_;  // variables of no slot
  std::map<std::pair<const tcc_tensor*, int>, std::shared_ptr<const HostPositions>> positions_;
};

}  // namespace

std::shared_ptr<const HostPositions> hostPositionsOf(std::vector<int64_t> pos) {
  auto result = std::make_shared<HostPositions>();
  result->pos = std::move(pos);
  for (size_t s = 1; s < result->pos.size(); ++s)
    result->longest = std::max(result->longest, result->pos[s] - result->pos[s - 1]);
  return result;
}

int32_t runHostPart(const lowering::GpuFunction& function, const std::vector<tcc_tensor*>& tensors,
                    const HostPartDevice& device) {
  HostInterpreter interpreter(function, tensors, device);
  interpreter.run(function.host.body);
  return interpreter.status;
}

}  // namespace tcc::detail
