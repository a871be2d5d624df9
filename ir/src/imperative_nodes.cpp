#include <cassert>
#include <stdexcept>

#include "tcc/ir/imperative.h"
#include "tcc/ir/imperative_ops.h"
#include "tcc/ir/imperative_visitor.h"

namespace tcc::ir::imp {

namespace {
void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(std::string("imperative IR: ") + what);
}
}  // namespace

bool Type::isFloat() const {
  return !isPointer && (kind == ScalarKind::Float16 || kind == ScalarKind::Float32 || kind == ScalarKind::Float64);
}
bool Type::isInteger() const {
  return !isPointer && (kind == ScalarKind::Int32 || kind == ScalarKind::Int64);
}

Expr::Expr(int value) : node_(std::make_shared<IntImm>(value, Type::int32())) {}

const char* toString(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
  }
  return "?";
}

bool isComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le:
    case BinaryOp::Gt: case BinaryOp::Ge: case BinaryOp::And: case BinaryOp::Or:
      return true;
    default:
      return false;
  }
}

const char* toString(TensorField field) {
  switch (field) {
    case TensorField::Dim: return "dim";
    case TensorField::Pos: return "pos";
    case TensorField::Crd: return "crd";
    case TensorField::Vals: return "vals";
    case TensorField::ValsSize: return "vals_size";
  }
  return "?";
}

const char* toString(LoopKind kind) {
  switch (kind) {
    case LoopKind::Serial: return "serial";
    case LoopKind::Parallel: return "parallel";
    case LoopKind::Vectorized: return "vectorized";
    case LoopKind::GpuBlock: return "GPU block";
    case LoopKind::GpuWarp: return "GPU warp";
    case LoopKind::GpuThread: return "GPU thread";
  }
  return "?";
}

Expr IntImm::make(int64_t value, Type type) {
  require(type.isInteger() || type.kind == ScalarKind::Bool, "IntImm needs an integer type");
  return Expr(std::make_shared<IntImm>(value, type));
}
Expr FloatImm::make(double value, Type type) {
  require(type.isFloat(), "FloatImm needs a float type");
  return Expr(std::make_shared<FloatImm>(value, type));
}
Expr Var::make(std::string name, Type type) {
  require(!name.empty(), "Var needs a name");
  require(type.kind != ScalarKind::Void || type.isPointer, "Var cannot be void");
  return Expr(std::make_shared<Var>(std::move(name), type));
}
Expr Cast::make(Type type, Expr value) {
  require(value.defined(), "Cast of an undefined expression");
  return Expr(std::make_shared<Cast>(type, std::move(value)));
}
Expr Binary::make(BinaryOp op, Expr a, Expr b) {
  require(a.defined() && b.defined(), "Binary operand undefined");
  Type type = isComparison(op) ? Type::bool_() : promote(a.type(), b.type());
  return Expr(std::make_shared<Binary>(op, std::move(a), std::move(b), type));
}
Expr Unary::make(UnaryOp op, Expr a) {
  require(a.defined(), "Unary operand undefined");
  return Expr(std::make_shared<Unary>(op, std::move(a)));
}
Expr Select::make(Expr condition, Expr ifTrue, Expr ifFalse) {
  require(condition.defined() && ifTrue.defined() && ifFalse.defined(), "Select operand undefined");
  return Expr(std::make_shared<Select>(std::move(condition), std::move(ifTrue), std::move(ifFalse)));
}
Expr Load::make(Expr buffer, Expr index) {
  require(buffer.defined() && buffer.type().isPointer, "Load from a non-pointer");
  require(index.defined() && index.type().isInteger(), "Load index must be an integer");
  return Expr(std::make_shared<Load>(std::move(buffer), std::move(index)));
}
Expr Call::make(std::string name, std::vector<Expr> args, Type type) {
  for (const auto& arg : args) require(arg.defined(), "Call argument undefined");
  return Expr(std::make_shared<Call>(std::move(name), std::move(args), type));
}
Expr TensorProperty::make(std::string tensor, TensorField field, int index, Type valueType) {
  Type type;
  switch (field) {
    case TensorField::Dim: type = Type::int32(); break;
    case TensorField::Pos: type = Type::pointerTo(Type::int64()); break;
    case TensorField::Crd: type = Type::pointerTo(Type::int32()); break;
    case TensorField::Vals: type = Type::pointerTo(valueType); break;
    case TensorField::ValsSize: type = Type::int64(); break;
  }
  return Expr(std::make_shared<TensorProperty>(std::move(tensor), field, index, type));
}

Stmt Declare::make(Expr var, Expr init) {
  require(var.as<Var>() != nullptr, "Declare needs a Var");
  return Stmt(std::make_shared<Declare>(std::move(var), std::move(init)));
}
Stmt Assign::make(Expr var, Expr value) {
  require(var.as<Var>() != nullptr && value.defined(), "Assign needs a Var and a value");
  return Stmt(std::make_shared<Assign>(std::move(var), std::move(value), false, BinaryOp::Add));
}
Stmt Assign::makeCompound(BinaryOp op, Expr var, Expr value) {
  require(var.as<Var>() != nullptr && value.defined(), "Assign needs a Var and a value");
  return Stmt(std::make_shared<Assign>(std::move(var), std::move(value), true, op));
}
Stmt Store::make(Expr buffer, Expr index, Expr value, bool accumulate, bool atomic, bool streaming) {
  require(buffer.defined() && buffer.type().isPointer, "Store into a non-pointer");
  require(index.defined() && value.defined(), "Store operand undefined");
  require(!streaming || (!accumulate && !atomic), "a streaming Store neither accumulates nor is atomic");
  return Stmt(std::make_shared<Store>(std::move(buffer), std::move(index), std::move(value), accumulate, atomic,
                                      streaming));
}
Stmt For::make(Expr var, Expr begin, Expr end, Stmt body, LoopKind kind, std::string comment, int unrollFactor,
               std::vector<LoopReduction> reductions, int parallelChunk) {
  require(var.as<Var>() != nullptr, "For needs a Var");
  require(begin.defined() && end.defined() && body.defined(), "For operand undefined");
  require(unrollFactor >= 0, "For unroll factor must not be negative");
  require(parallelChunk >= 0 && (parallelChunk == 0 || kind == LoopKind::Parallel), "only a parallel For has a chunk");
  require(reductions.empty() || kind != LoopKind::Serial, "a serial For has no reductions");
  for (const auto& reduction : reductions)
    require(reduction.var.as<Var>() != nullptr, "a loop reduction needs a Var");
  return Stmt(std::make_shared<For>(std::move(var), std::move(begin), std::move(end), std::move(body), kind,
                                    std::move(comment), unrollFactor, std::move(reductions), parallelChunk));
}
Stmt While::make(Expr condition, Stmt body, std::string comment) {
  require(condition.defined() && body.defined(), "While operand undefined");
  return Stmt(std::make_shared<While>(std::move(condition), std::move(body), std::move(comment)));
}
Stmt If::make(Expr condition, Stmt thenCase, Stmt elseCase) {
  require(condition.defined() && thenCase.defined(), "If needs a condition and a then-case");
  return Stmt(std::make_shared<If>(std::move(condition), std::move(thenCase), std::move(elseCase)));
}
Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& stmt : stmts) {
    if (!stmt.defined()) continue;
    if (const auto* block = stmt.as<Block>()) {
      flat.insert(flat.end(), block->stmts.begin(), block->stmts.end());
    } else {
      flat.push_back(std::move(stmt));
    }
  }
  return Stmt(std::make_shared<Block>(std::move(flat)));
}
Stmt Allocate::make(Expr buffer, Expr count, bool zeroInitialize, Expr keptCount) {
  require(buffer.as<Var>() != nullptr && buffer.type().isPointer, "Allocate needs a pointer Var");
  require(count.defined(), "Allocate needs a count");
  require(!(zeroInitialize && keptCount.defined()), "Allocate zeroes a new array, not a reallocated one");
  return Stmt(std::make_shared<Allocate>(std::move(buffer), std::move(count), zeroInitialize, std::move(keptCount)));
}
Stmt Free::make(Expr buffer) {
  require(buffer.defined() && buffer.type().isPointer, "Free needs a pointer");
  return Stmt(std::make_shared<Free>(std::move(buffer)));
}
Stmt SetTensorProperty::make(std::string tensor, TensorField field, int index, Expr value) {
  require(value.defined(), "SetTensorProperty needs a value");
  return Stmt(std::make_shared<SetTensorProperty>(std::move(tensor), field, index, std::move(value)));
}
Stmt Evaluate::make(Expr value) {
  require(value.defined(), "Evaluate needs a value");
  return Stmt(std::make_shared<Evaluate>(std::move(value)));
}
Stmt Comment::make(std::string text) { return Stmt(std::make_shared<Comment>(std::move(text))); }
Stmt Switch::make(Expr value, std::vector<Case> cases, Stmt otherwise) {
  require(value.defined() && value.type().isInteger(), "Switch needs an integer value");
  for (const auto& each : cases) require(!each.values.empty() && each.body.defined(), "Switch case needs values and a body");
  return Stmt(std::make_shared<Switch>(std::move(value), std::move(cases), std::move(otherwise)));
}
Stmt Break::make() { return Stmt(std::make_shared<Break>()); }
Stmt Return::make(Expr value) { return Stmt(std::make_shared<Return>(std::move(value))); }
Stmt Intrinsic::make(std::string name, std::vector<std::string> tensors, std::vector<Expr> args) {
  require(!name.empty(), "Intrinsic needs a name");
  return Stmt(std::make_shared<Intrinsic>(std::move(name), std::move(tensors), std::move(args)));
}

#define TCC_ACCEPT(Node) \
  void Node::accept(IRVisitor& visitor) const { visitor.visit(this); }
TCC_ACCEPT(IntImm)
TCC_ACCEPT(FloatImm)
TCC_ACCEPT(Var)
TCC_ACCEPT(Cast)
TCC_ACCEPT(Binary)
TCC_ACCEPT(Unary)
TCC_ACCEPT(Select)
TCC_ACCEPT(Load)
TCC_ACCEPT(Call)
TCC_ACCEPT(TensorProperty)
TCC_ACCEPT(Declare)
TCC_ACCEPT(Assign)
TCC_ACCEPT(Store)
TCC_ACCEPT(For)
TCC_ACCEPT(While)
TCC_ACCEPT(If)
TCC_ACCEPT(Switch)
TCC_ACCEPT(Block)
TCC_ACCEPT(Allocate)
TCC_ACCEPT(Free)
TCC_ACCEPT(SetTensorProperty)
TCC_ACCEPT(Evaluate)
TCC_ACCEPT(Comment)
TCC_ACCEPT(Break)
TCC_ACCEPT(Return)
TCC_ACCEPT(Intrinsic)
#undef TCC_ACCEPT

}  // namespace tcc::ir::imp
