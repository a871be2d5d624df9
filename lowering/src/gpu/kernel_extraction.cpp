// splitIntoKernels: each outermost Gpu loop becomes a kernel whose
// parameters are the variables it reads from outside (passed by value); the
// host keeps the rest, which may read single device entries but neither
// loops over nor writes device memory.
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "tcc/ir/imperative_printer.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/lowering/intrinsics.h"
#include "tcc/lowering/lower.h"
#include "combine_atomics.h"
#include "unroll_and_jam.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kWarpSize = 32;

// Variables a statement reads but does not declare, in order of first use,
// and the pointers it stores through.
class FreeVariables : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Var* op) override {
    if (declared_.count(op)) return;
    if (seen_.insert(op).second) used.push_back(op);
  }
  void visit(const Declare* op) override {
    if (op->init.defined()) op->init.accept(*this);
    declared_.insert(op->var.get());
  }
  void visit(const For* op) override {
    op->begin.accept(*this);
    op->end.accept(*this);
    declared_.insert(op->var.get());
    op->body.accept(*this);
  }
  void visit(const Store* op) override {
    IRVisitor::visit(op);
    stored.insert(op->buffer.get());
  }
  // A kernel's parameters are copies: an update of one would be lost.
  void visit(const Assign* op) override {
    IRVisitor::visit(op);
    if (!declared_.count(op->var.get()))
      throw LoweringError("the GPU kernel updates " + toString(op->var) + ", which is declared outside the GPU loops; "
                          "a sum over GPU iterations needs Atomics or a warp reduction (ParallelReduction)");
  }
  // (The GPU threads' workspaces are in scratch buffers the host step
  // allocates: imp::Function::gpuThreadScratch.)
  void visit(const Allocate* op) override {
    throw LoweringError("the GPU kernel allocates memory (" + toString(op->buffer) +
                        "), which GPU threads cannot; only dense workspaces whose where is inside a GPU loop run "
                        "there, in copies the host step allocates");
  }
  void visit(const Call* op) override {
    // The CUDA prelude's device functions (see codegen_cuda.cpp), and the
    // math of the builtins abs, sqrt and exp, lowered to double-precision
    // calls as on the CPU, which CUDA's device math library has.
    if (op->name != "tcc_segment_of" && op->name != "tcc_lower_bound" && op->name != kGpuThreadIndexCall &&
        op->name != kGpuThreadCountCall && op->name != kGpuSparseWorkspaceMergeCall && op->name != "fabs" &&
        op->name != "sqrt" && op->name != "exp")
      throw LoweringError("the GPU kernel calls " + op->name + ", which device code does not have");
    IRVisitor::visit(op);
  }
  void visit(const Intrinsic* op) override {
    throw LoweringError("intrinsic '" + op->name + "' has no GPU expansion yet");
  }

  std::vector<const ExprNode*> used;
  std::set<const ExprNode*> stored;

 private:
  std::set<const ExprNode*> declared_, seen_;
};

// Host code may compute scalars from tensor fields and from single array
// entries (a pos range's ends, read with an explicit copy) and launch
// kernels; loops and writes must run inside a kernel.
class HostCodeCheck : public IRVisitor {
 public:
  HostCodeCheck(const std::set<std::string>& kernels, const std::vector<Expr>& sharedWorkspaces,
                const std::set<std::string>& outputArrays)
      : kernels_(kernels), outputArrays_(outputArrays) {
    for (const auto& buffer : sharedWorkspaces) sharedWorkspaces_.insert(buffer.as<Var>()->name);
  }
  using IRVisitor::visit;
  void visit(const Store* op) override { refuse("writes " + toString(op->buffer)); }
  void visit(const For* op) override { refuse("has a loop " + describe(op->comment) + "that no parallelize maps to the GPU"); }
  void visit(const While* op) override { refuse("has a loop " + describe(op->comment) + "that cannot run on the GPU"); }
  // The dense workspaces that GPU loops share are allocated in device
  // memory and freed by the host (zeroed where the Allocate says so: a
  // scan's tile totals are written before they are read).
  // So are a sparse output's arrays, sized by the kernels before (the
  // entry point hands them to the output: never grown, never freed).
  void visit(const Allocate* op) override {
    const auto* var = op->buffer.as<Var>();
    const bool outputArray = var && outputArrays_.count(var->name);
    if (op->reallocate || (!outputArray && !isSharedWorkspace(op->buffer)))
      refuse("allocates " + toString(op->buffer));
    IRVisitor::visit(op);
  }
  void visit(const Free* op) override {
    if (!isSharedWorkspace(op->buffer)) refuse("frees " + toString(op->buffer));
  }
  void visit(const SetTensorProperty* op) override {
    const auto* var = op->value.as<Var>();
    if (op->field != TensorField::ValsSize && !(var && outputArrays_.count(var->name)))
      refuse("assembles output " + op->tensor);
    IRVisitor::visit(op);
  }
  void visit(const Intrinsic* op) override {
    const IntrinsicLowering* entry = intrinsicLowering(op->name);
    if (!entry || !entry->cuda.hostStatement)
      throw LoweringError("intrinsic '" + op->name + "' has no CUDA expansion; it runs on the cpu target only");
  }
  void visit(const Call* op) override {
    if (op->name == kLongestSegmentCall || op->name == kSaturatingMulCall) return IRVisitor::visit(op);
    if (!kernels_.count(op->name)) refuse("calls " + op->name);
  }

 private:
  bool isSharedWorkspace(const Expr& buffer) const {
    const auto* var = buffer.as<Var>();
    return var && sharedWorkspaces_.count(var->name);
  }
  static std::string describe(const std::string& comment) { return comment.empty() ? "" : "(" + comment + ") "; }
  [[noreturn]] static void refuse(const std::string& what) {
    throw LoweringError("on the cuda target every loop must run inside a GPU loop, but this kernel's host part " + what +
                        "; parallelize its outermost loop over GPUBlock, GPUWarp or GPUThread");
  }
  const std::set<std::string>& kernels_;
  const std::set<std::string>& outputArrays_;
  std::set<std::string> sharedWorkspaces_;
};

// The arrays the host hands to sparse outputs (pos, crd, vals): each is
// allocated once, by the host, and filled by the kernels.
std::set<std::string> outputArraysOf(const Stmt& host) {
  struct Handed : IRVisitor {
    using IRVisitor::visit;
    std::set<std::string> arrays;
    void visit(const SetTensorProperty* op) override {
      if (const auto* var = op->value.as<Var>(); var && op->field != TensorField::ValsSize) arrays.insert(var->name);
    }
  } handed;
  host.accept(handed);
  return handed.arrays;
}

// Tensor fields a kernel reads become host scalars passed as parameters.
class HoistTensorFields : public IRMutator {
 public:
  std::vector<Stmt> declarations;

 protected:
  using IRMutator::visit;
  Expr visit(const TensorProperty* op, const Expr& self) override {
    std::string key = op->tensor + "_" + toString(op->field) + std::to_string(op->index);
    auto found = hoisted_.find(key);
    if (found != hoisted_.end()) return found->second;
    Expr var = Var::make("tcc_" + key, op->type);
    declarations.push_back(Declare::make(var, self));
    hoisted_.emplace(key, var);
    return var;
  }

 private:
  std::map<std::string, Expr> hoisted_;
};

// A block's threads: the trip count of the block's thread loop when it is
// a known constant (split's inner loop), rounded up to whole warps.
class BlockThreadCount : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const For* op) override {
    if (op->loopKind == LoopKind::GpuThread && threads == 0) {
      threads = constantBound(op->end);
      if (threads > 0) threads = std::min(1024, (threads + kWarpSize - 1) / kWarpSize * kWarpSize);
      return;
    }
    IRVisitor::visit(op);
  }
  int threads = 0;

 private:
  static int constantBound(const Expr& end) {
    if (const auto* imm = end.as<IntImm>()) return static_cast<int>(std::min<int64_t>(imm->value, 1 << 20));
    if (const auto* min = end.as<Binary>(); min && min->op == BinaryOp::Min) {
      int a = constantBound(min->a), b = constantBound(min->b);
      return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b);
    }
    return 0;
  }
};

class KernelExtractor : public IRMutator {
 public:
  KernelExtractor(std::string functionName, std::vector<Function::GpuThreadScratch> scratch, bool speculativeJamLoads)
      : functionName_(std::move(functionName)), scratch_(std::move(scratch)),
        speculativeJamLoads_(speculativeJamLoads) {}
  std::vector<GpuKernel> kernels;

 protected:
  using IRMutator::visit;
  Stmt visit(const For* op, const Stmt& self) override {
    if (!isGpuLoop(op->loopKind)) return IRMutator::visit(op, self);
    HoistTensorFields hoist;
    Stmt loop = combineAtomics(unrollAndJam(hoist.mutate(self), speculativeJamLoads_));
    GpuKernel kernel;
    kernel.name = functionName_ + "_gpu" + std::to_string(kernels.size());
    kernel.loop = loop;
    kernel.threadsPerBlock = kThreadsPerBlock;
    if (op->loopKind == LoopKind::GpuBlock) {
      BlockThreadCount count;
      op->body.accept(count);
      if (count.threads > 0) kernel.threadsPerBlock = count.threads;
    }
    // Parameters are copies of the host's variables: the printers and the
    // launcher match them by name, which the lowerer keeps unique.
    FreeVariables free;
    loop.accept(free);
    for (const auto* var : free.used) {
      const auto* node = static_cast<const Var*>(var);
      const Function::GpuThreadScratch* scratch = scratchNamed(node->name);
      if (scratch)
        kernel.scratch.push_back({kernel.parameters.size(), scratch->entriesPerThread, node->type.element()});
      kernel.parameters.push_back(Var::make(node->name, node->type));
      // (A thread stores through its copy, a pointer into the scratch buffer.)
      kernel.readOnly.push_back(node->type.isPointer && !free.stored.count(var) && !scratch);
    }
    std::vector<Stmt> host = hoist.declarations;
    host.push_back(Evaluate::make(Call::make(kernel.name, kernel.parameters, Type::void_())));
    kernels.push_back(kernel);
    return Block::make(host);
  }

 private:
  const Function::GpuThreadScratch* scratchNamed(const std::string& name) const {
    for (const auto& scratch : scratch_)
      if (scratch.buffer.as<Var>()->name == name) return &scratch;
    return nullptr;
  }
  std::string functionName_;
  std::vector<Function::GpuThreadScratch> scratch_;
  bool speculativeJamLoads_;
};

// The host code's Intrinsic statements, each with its prefix.
class IntrinsicCalls : public IRVisitor {
 public:
  explicit IntrinsicCalls(std::string functionName) : functionName_(std::move(functionName)) {}
  using IRVisitor::visit;
  void visit(const Intrinsic* op) override {
    calls.push_back({op, functionName_ + "_" + op->name + std::to_string(calls.size())});
  }
  std::vector<GpuIntrinsicCall> calls;

 private:
  std::string functionName_;
};

}  // namespace

LoopKind GpuKernel::unit() const { return loop.as<For>()->loopKind; }

int GpuKernel::iterationsPerBlock() const {
  switch (unit()) {
    case LoopKind::GpuBlock: return 1;
    case LoopKind::GpuWarp: return threadsPerBlock / kWarpSize;
    default: return threadsPerBlock;
  }
}

int64_t GpuScratchParameter::bytesPerEntry() const {
  switch (element.kind) {
    case ScalarKind::Float64: case ScalarKind::Int64: return 8;
    case ScalarKind::Float16: return 2;
    case ScalarKind::Bool: return 1;
    default: return 4;
  }
}

int64_t blocksWithinScratchLimit(const GpuKernel& kernel, int64_t blocks, int64_t bytesPerThread) {
  if (bytesPerThread <= 0) return blocks;
  int64_t threads = kGpuScratchBytesLimit / bytesPerThread;
  return std::min(blocks, threads / kernel.threadsPerBlock);
}

int64_t blocksFor(const GpuKernel& kernel, int64_t extent) {
  if (extent <= 0) return 0;
  int64_t perBlock = kernel.iterationsPerBlock();
  int64_t blocks = (extent + perBlock - 1) / perBlock;
  return std::min<int64_t>(blocks, 2147483647);  // the kernel's loops stride over the rest
}

const GpuIntrinsicCall* GpuFunction::intrinsicCall(const Intrinsic* op) const {
  for (const auto& call : intrinsics)
    if (call.op == op) return &call;
  return nullptr;
}

const GpuKernel* GpuFunction::kernelNamed(const std::string& name) const {
  for (const auto& kernel : kernels)
    if (kernel.name == name) return &kernel;
  return nullptr;
}

GpuFunction splitIntoKernels(const Function& function, bool speculativeJamLoads) {
  KernelExtractor extractor(function.name, function.gpuThreadScratch, speculativeJamLoads);
  GpuFunction result;
  result.host = function;
  result.host.body = extractor.mutate(function.body);
  result.kernels = std::move(extractor.kernels);
  IntrinsicCalls intrinsics(function.name);
  result.host.body.accept(intrinsics);
  result.intrinsics = std::move(intrinsics.calls);
  if (result.kernels.empty() && result.intrinsics.empty())
    throw LoweringError("on the cuda target a statement needs a loop mapped to the GPU; parallelize its outermost "
                        "loop over GPUBlock, GPUWarp or GPUThread");
  std::set<std::string> names;
  for (const auto& kernel : result.kernels) names.insert(kernel.name);
  result.outputArrays = outputArraysOf(result.host.body);
  HostCodeCheck check(names, function.gpuSharedWorkspaces, result.outputArrays);
  result.host.body.accept(check);
  return result;
}

}  // namespace tcc::lowering
