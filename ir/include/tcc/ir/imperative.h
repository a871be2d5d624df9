// The imperative IR: typed expressions and statements that lowering
// produces and the emitters print (C++ now, CUDA next). In the style of
// Halide's IR: small immutable nodes shared by handle, built by static
// make() functions that check their arguments.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcc::ir::imp {

enum class ScalarKind { Void, Bool, Int32, Int64, Float16, Float32, Float64 };

struct Type {
  ScalarKind kind = ScalarKind::Void;
  bool isPointer = false;

  static Type void_() { return {ScalarKind::Void}; }
  static Type bool_() { return {ScalarKind::Bool}; }
  static Type int32() { return {ScalarKind::Int32}; }
  static Type int64() { return {ScalarKind::Int64}; }
  static Type float32() { return {ScalarKind::Float32}; }
  static Type float64() { return {ScalarKind::Float64}; }
  static Type pointerTo(Type element) { return {element.kind, true}; }
  Type element() const { return {kind, false}; }
  bool isFloat() const;
  bool isInteger() const;
  bool operator==(const Type&) const = default;
};

class IRVisitor;
class IRMutator;

enum class ExprKind {
  IntImm, FloatImm, Var, Cast, Binary, Unary, Select, Load, Call, TensorProperty
};
enum class StmtKind {
  Declare, Assign, Store, For, While, If, Switch, Block, Allocate, Free, SetTensorProperty,
  Evaluate, Comment, Break, Return, Intrinsic
};

struct ExprNode {
  ExprNode(ExprKind kind, Type type) : kind(kind), type(type) {}
  virtual ~ExprNode() = default;
  virtual void accept(IRVisitor& visitor) const = 0;
  const ExprKind kind;
  const Type type;
};

struct StmtNode {
  explicit StmtNode(StmtKind kind) : kind(kind) {}
  virtual ~StmtNode() = default;
  virtual void accept(IRVisitor& visitor) const = 0;
  const StmtKind kind;
};

// Handles. A default-constructed handle is "undefined" (e.g. an If without else).
class Expr {
 public:
  Expr() = default;
  Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  Expr(int value);  // an Int32 immediate, for readable lowering code
  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  Type type() const { return node_->type; }
  template <typename T> const T* as() const {
    return node_ && node_->kind == T::staticKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  void accept(IRVisitor& visitor) const { node_->accept(visitor); }
  bool sameAs(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

class Stmt {
 public:
  Stmt() = default;
  Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  template <typename T> const T* as() const {
    return node_ && node_->kind == T::staticKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  void accept(IRVisitor& visitor) const { node_->accept(visitor); }
  bool sameAs(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

// ---- expressions ----------------------------------------------------------

struct IntImm : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::IntImm;
  IntImm(int64_t value, Type type) : ExprNode(staticKind, type), value(value) {}
  static Expr make(int64_t value, Type type = Type::int32());
  void accept(IRVisitor& visitor) const override;
  const int64_t value;
};

struct FloatImm : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::FloatImm;
  FloatImm(double value, Type type) : ExprNode(staticKind, type), value(value) {}
  static Expr make(double value, Type type = Type::float64());
  void accept(IRVisitor& visitor) const override;
  const double value;
};

// A named scalar or pointer variable. Identity is the node, not the name.
struct Var : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Var;
  Var(std::string name, Type type) : ExprNode(staticKind, type), name(std::move(name)) {}
  static Expr make(std::string name, Type type);
  void accept(IRVisitor& visitor) const override;
  const std::string name;
};

struct Cast : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Cast;
  Cast(Type type, Expr value) : ExprNode(staticKind, type), value(std::move(value)) {}
  static Expr make(Type type, Expr value);
  void accept(IRVisitor& visitor) const override;
  const Expr value;
};

enum class BinaryOp { Add, Sub, Mul, Div, Mod, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
const char* toString(BinaryOp op);
bool isComparison(BinaryOp op);

struct Binary : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Binary;
  Binary(BinaryOp op, Expr a, Expr b, Type type)
      : ExprNode(staticKind, type), op(op), a(std::move(a)), b(std::move(b)) {}
  static Expr make(BinaryOp op, Expr a, Expr b);
  void accept(IRVisitor& visitor) const override;
  const BinaryOp op;
  const Expr a, b;
};

enum class UnaryOp { Neg, Not };

struct Unary : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Unary;
  Unary(UnaryOp op, Expr a) : ExprNode(staticKind, op == UnaryOp::Not ? Type::bool_() : a.type()), op(op), a(std::move(a)) {}
  static Expr make(UnaryOp op, Expr a);
  void accept(IRVisitor& visitor) const override;
  const UnaryOp op;
  const Expr a;
};

struct Select : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Select;
  Select(Expr condition, Expr ifTrue, Expr ifFalse)
      : ExprNode(staticKind, ifTrue.type()), condition(std::move(condition)),
        ifTrue(std::move(ifTrue)), ifFalse(std::move(ifFalse)) {}
  static Expr make(Expr condition, Expr ifTrue, Expr ifFalse);
  void accept(IRVisitor& visitor) const override;
  const Expr condition, ifTrue, ifFalse;
};

struct Load : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Load;
  Load(Expr buffer, Expr index) : ExprNode(staticKind, buffer.type().element()),
      buffer(std::move(buffer)), index(std::move(index)) {}
  static Expr make(Expr buffer, Expr index);
  void accept(IRVisitor& visitor) const override;
  const Expr buffer, index;
};

// A call of a function the emitted code can see: a prelude function
// (malloc, ...) or an extern "C" runtime entry point.
struct Call : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::Call;
  Call(std::string name, std::vector<Expr> args, Type type)
      : ExprNode(staticKind, type), name(std::move(name)), args(std::move(args)) {}
  static Expr make(std::string name, std::vector<Expr> args, Type type);
  void accept(IRVisitor& visitor) const override;
  const std::string name;
  const std::vector<Expr> args;
};

// A field of a kernel's tensor parameter (see runtime's abi.h).
enum class TensorField { Dim, Pos, Crd, Vals, ValsSize };
const char* toString(TensorField field);

struct TensorProperty : ExprNode {
  static constexpr ExprKind staticKind = ExprKind::TensorProperty;
  TensorProperty(std::string tensor, TensorField field, int index, Type type)
      : ExprNode(staticKind, type), tensor(std::move(tensor)), field(field), index(index) {}
  // index: the mode for Dim, the level for Pos/Crd, unused otherwise.
  static Expr make(std::string tensor, TensorField field, int index, Type valueType = Type::float64());
  void accept(IRVisitor& visitor) const override;
  const std::string tensor;
  const TensorField field;
  const int index;
};

// ---- statements -----------------------------------------------------------

struct Declare : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Declare;
  Declare(Expr var, Expr init) : StmtNode(staticKind), var(std::move(var)), init(std::move(init)) {}
  static Stmt make(Expr var, Expr init);
  void accept(IRVisitor& visitor) const override;
  const Expr var, init;
};

// var = value, or var op= value when `compound` is set (Add, Sub, Mul, Min, Max).
struct Assign : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Assign;
  Assign(Expr var, Expr value, bool hasCompound, BinaryOp compound)
      : StmtNode(staticKind), var(std::move(var)), value(std::move(value)),
        hasCompound(hasCompound), compound(compound) {}
  static Stmt make(Expr var, Expr value);
  static Stmt makeCompound(BinaryOp op, Expr var, Expr value);
  void accept(IRVisitor& visitor) const override;
  const Expr var, value;
  const bool hasCompound;
  const BinaryOp compound;
};

struct Store : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Store;
  Store(Expr buffer, Expr index, Expr value, bool accumulate, bool atomic, bool streaming)
      : StmtNode(staticKind), buffer(std::move(buffer)), index(std::move(index)),
        value(std::move(value)), accumulate(accumulate), atomic(atomic), streaming(streaming) {}
  static Stmt make(Expr buffer, Expr index, Expr value, bool accumulate = false, bool atomic = false,
                   bool streaming = false);
  void accept(IRVisitor& visitor) const override;
  const Expr buffer, index, value;
  const bool accumulate;  // buffer[index] += value
  const bool atomic;      // the update is one atomic operation (parallel loops that race on it)
  // The function writes each element of the buffer once, in order, and
  // never reads it: a backend may store past the caches (a sparse output's
  // appended coordinates and values). Never with accumulate or atomic.
  const bool streaming;
};

// Parallel and Vectorized loops run on CPU threads and vector lanes; the
// Gpu kinds are spread over a CUDA kernel's blocks, warps or threads (the
// CUDA backend turns the outermost one into a kernel launch).
enum class LoopKind { Serial, Parallel, Vectorized, GpuBlock, GpuWarp, GpuThread };
const char* toString(LoopKind kind);
inline bool isGpuLoop(LoopKind kind) {
  return kind == LoopKind::GpuBlock || kind == LoopKind::GpuWarp || kind == LoopKind::GpuThread;
}

// A sum a parallel or vectorized loop reduces: each thread (or lane) adds
// into a private copy of `var`, or of var[0, size) when `size` is defined,
// and the copies are added together when the loop ends.
struct LoopReduction {
  Expr var, size;
};

struct For : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::For;
  For(Expr var, Expr begin, Expr end, Stmt body, LoopKind loopKind, std::string comment, int unrollFactor,
      std::vector<LoopReduction> reductions, int parallelChunk)
      : StmtNode(staticKind), var(std::move(var)), begin(std::move(begin)), end(std::move(end)),
        body(std::move(body)), loopKind(loopKind), comment(std::move(comment)), unrollFactor(unrollFactor),
        reductions(std::move(reductions)), parallelChunk(parallelChunk) {}
  static Stmt make(Expr var, Expr begin, Expr end, Stmt body, LoopKind kind = LoopKind::Serial,
                   std::string comment = "", int unrollFactor = 0, std::vector<LoopReduction> reductions = {},
                   int parallelChunk = 0);
  void accept(IRVisitor& visitor) const override;
  const Expr var, begin, end;  // var in [begin, end), step 1
  const Stmt body;
  const LoopKind loopKind;
  const std::string comment;   // which index variable the loop iterates
  const int unrollFactor;      // 0: the backend decides
  const std::vector<LoopReduction> reductions;  // Parallel and Vectorized loops only
  // Parallel loops: iterations a thread takes at a time (0: the backend's
  // default); 1 for coarse iterations such as one per thread.
  const int parallelChunk;
};

struct While : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::While;
  While(Expr condition, Stmt body, std::string comment)
      : StmtNode(staticKind), condition(std::move(condition)), body(std::move(body)), comment(std::move(comment)) {}
  static Stmt make(Expr condition, Stmt body, std::string comment = "");
  void accept(IRVisitor& visitor) const override;
  const Expr condition;
  const Stmt body;
  const std::string comment;
};

struct If : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::If;
  If(Expr condition, Stmt thenCase, Stmt elseCase)
      : StmtNode(staticKind), condition(std::move(condition)), thenCase(std::move(thenCase)),
        elseCase(std::move(elseCase)) {}
  static Stmt make(Expr condition, Stmt thenCase, Stmt elseCase = Stmt());
  void accept(IRVisitor& visitor) const override;
  const Expr condition;
  const Stmt thenCase, elseCase;
};

// Runs the first case one of whose values equals `value` (an integer), or
// `otherwise` (when defined) if none does. A case's body may not break out
// of a loop around the switch (C's break would leave the switch instead).
struct Switch : StmtNode {
  struct Case {
    std::vector<int64_t> values;
    Stmt body;
  };
  static constexpr StmtKind staticKind = StmtKind::Switch;
  Switch(Expr value, std::vector<Case> cases, Stmt otherwise)
      : StmtNode(staticKind), value(std::move(value)), cases(std::move(cases)), otherwise(std::move(otherwise)) {}
  static Stmt make(Expr value, std::vector<Case> cases, Stmt otherwise = Stmt());
  void accept(IRVisitor& visitor) const override;
  const Expr value;
  const std::vector<Case> cases;
  const Stmt otherwise;
};

struct Block : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Block;
  explicit Block(std::vector<Stmt> stmts) : StmtNode(staticKind), stmts(std::move(stmts)) {}
  // Flattens nested blocks and drops undefined statements.
  static Stmt make(std::vector<Stmt> stmts);
  void accept(IRVisitor& visitor) const override;
  const std::vector<Stmt> stmts;
};

// buffer = an array of `count` elements (zeroed when `zeroInitialize`), or,
// when `keptCount` is defined, the buffer grown or shrunk to `count`
// elements keeping its first `keptCount` (realloc); the pointer variable
// must already be declared. The C++ printer allocates through the
// runtime's allocator (large arrays in 2 MB pages, tcc/runtime/array_alloc.h).
struct Allocate : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Allocate;
  Allocate(Expr buffer, Expr count, bool zeroInitialize, Expr keptCount)
      : StmtNode(staticKind), buffer(std::move(buffer)), count(std::move(count)), keptCount(std::move(keptCount)),
        zeroInitialize(zeroInitialize), reallocate(this->keptCount.defined()) {}
  static Stmt make(Expr buffer, Expr count, bool zeroInitialize = false, Expr keptCount = Expr());
  void accept(IRVisitor& visitor) const override;
  const Expr buffer, count, keptCount;
  const bool zeroInitialize, reallocate;
};

struct Free : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Free;
  explicit Free(Expr buffer) : StmtNode(staticKind), buffer(std::move(buffer)) {}
  static Stmt make(Expr buffer);
  void accept(IRVisitor& visitor) const override;
  const Expr buffer;
};

// Hands an array or size back to an output tensor parameter.
struct SetTensorProperty : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::SetTensorProperty;
  SetTensorProperty(std::string tensor, TensorField field, int index, Expr value)
      : StmtNode(staticKind), tensor(std::move(tensor)), field(field), index(index), value(std::move(value)) {}
  static Stmt make(std::string tensor, TensorField field, int index, Expr value);
  void accept(IRVisitor& visitor) const override;
  const std::string tensor;
  const TensorField field;
  const int index;
  const Expr value;
};

struct Evaluate : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Evaluate;
  explicit Evaluate(Expr value) : StmtNode(staticKind), value(std::move(value)) {}
  static Stmt make(Expr value);
  void accept(IRVisitor& visitor) const override;
  const Expr value;
};

struct Comment : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Comment;
  explicit Comment(std::string text) : StmtNode(staticKind), text(std::move(text)) {}
  static Stmt make(std::string text);
  void accept(IRVisitor& visitor) const override;
  const std::string text;
};

struct Break : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Break;
  Break() : StmtNode(staticKind) {}
  static Stmt make();
  void accept(IRVisitor& visitor) const override;
};

struct Return : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Return;
  explicit Return(Expr value) : StmtNode(staticKind), value(std::move(value)) {}
  static Stmt make(Expr value);
  void accept(IRVisitor& visitor) const override;
  const Expr value;
};

// A target-specific kernel that no general lowering reaches (N:M SpMM,
// TCA-SpMM, sparse permanents): recognised during lowering and expanded by
// the backend that supports it. Operands are tensor parameter names.
struct Intrinsic : StmtNode {
  static constexpr StmtKind staticKind = StmtKind::Intrinsic;
  Intrinsic(std::string name, std::vector<std::string> tensors, std::vector<Expr> args)
      : StmtNode(staticKind), name(std::move(name)), tensors(std::move(tensors)), args(std::move(args)) {}
  static Stmt make(std::string name, std::vector<std::string> tensors, std::vector<Expr> args = {});
  void accept(IRVisitor& visitor) const override;
  const std::string name;
  const std::vector<std::string> tensors;
  const std::vector<Expr> args;
};

// ---- functions -------------------------------------------------------------

struct TensorParameter {
  std::string name;
  int order = 0;
  ScalarKind valueKind = ScalarKind::Float64;
  bool isOutput = false;
};

// A kernel: `int32_t name(tcc_tensor** tensors)`, parameters in order.
struct Function {
  std::string name;
  std::vector<TensorParameter> parameters;
  Stmt body;
  bool usesOpenMP = false;
  // Calls the ISM's kernel entry points (libtcc_ism_runtime).
  bool usesSparseWorkspaces = false;
  // The cuda target's dense workspaces under GPU loops, one copy per GPU
  // thread: `buffer` (a pointer no statement declares; the kernels that
  // read it take it as a parameter) holds every thread's copy of
  // `entriesPerThread` entries (a scalar the host declares), the thread of
  // global index t at t * entriesPerThread. The host step allocates it for
  // the threads of each launch (tcc/lowering/gpu_kernels.h).
  struct GpuThreadScratch {
    Expr buffer, entriesPerThread;
  };
  std::vector<GpuThreadScratch> gpuThreadScratch;
  // The cuda target's dense workspaces whose where is outside the GPU
  // loops, and a GPU prefix sum's tile totals: the host allocates each in
  // device memory for the call (zeroed where its Allocate says so), the GPU
  // loops that fill and read it share it, and the host frees it (the
  // in-process launcher keeps it for the next call).
  std::vector<Expr> gpuSharedWorkspaces;
};

}  // namespace tcc::ir::imp
