#include "tcc/ir/imperative_printer.h"

#include <sstream>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::ir::imp {

const char* toString(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Void: return "void";
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int32: return "int32";
    case ScalarKind::Int64: return "int64";
    case ScalarKind::Float16: return "float16";
    case ScalarKind::Float32: return "float32";
    case ScalarKind::Float64: return "float64";
  }
  return "?";
}

namespace {

std::string typeName(Type type) { return std::string(toString(type.kind)) + (type.isPointer ? "*" : ""); }

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& out) : out_(out) {}

  void visit(const IntImm* op) override { out_ << op->value; }
  void visit(const FloatImm* op) override {
    std::ostringstream text;
    text.precision(17);
    text << op->value;
    out_ << text.str();
  }
  void visit(const Var* op) override { out_ << op->name; }
  void visit(const Cast* op) override {
    out_ << "(" << typeName(op->type) << ")(";
    op->value.accept(*this);
    out_ << ")";
  }
  void visit(const Binary* op) override {
    if (op->op == BinaryOp::Min || op->op == BinaryOp::Max) {
      out_ << toString(op->op) << "(";
      op->a.accept(*this);
      out_ << ", ";
      op->b.accept(*this);
      out_ << ")";
      return;
    }
    out_ << "(";
    op->a.accept(*this);
    out_ << " " << toString(op->op) << " ";
    op->b.accept(*this);
    out_ << ")";
  }
  void visit(const Unary* op) override {
    out_ << (op->op == UnaryOp::Neg ? "-" : "!");
    op->a.accept(*this);
  }
  void visit(const Select* op) override {
    out_ << "(";
    op->condition.accept(*this);
    out_ << " ? ";
    op->ifTrue.accept(*this);
    out_ << " : ";
    op->ifFalse.accept(*this);
    out_ << ")";
  }
  void visit(const Load* op) override {
    op->buffer.accept(*this);
    out_ << "[";
    op->index.accept(*this);
    out_ << "]";
  }
  void visit(const Call* op) override {
    out_ << op->name << "(";
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (i) out_ << ", ";
      op->args[i].accept(*this);
    }
    out_ << ")";
  }
  void visit(const TensorProperty* op) override {
    out_ << op->tensor << "." << toString(op->field);
    if (op->field == TensorField::Dim || op->field == TensorField::Pos || op->field == TensorField::Crd)
      out_ << "[" << op->index << "]";
  }

  void visit(const Declare* op) override {
    indent();
    out_ << typeName(op->var.type()) << " ";
    op->var.accept(*this);
    if (op->init.defined()) {
      out_ << " = ";
      op->init.accept(*this);
    }
    out_ << "\n";
  }
  void visit(const Assign* op) override {
    indent();
    op->var.accept(*this);
    out_ << " " << (op->hasCompound ? toString(op->compound) : "") << "= ";
    op->value.accept(*this);
    out_ << "\n";
  }
  void visit(const Store* op) override {
    indent();
    op->buffer.accept(*this);
    out_ << "[";
    op->index.accept(*this);
    out_ << "] " << (op->accumulate ? "+=" : "=") << " ";
    op->value.accept(*this);
    out_ << (op->atomic ? "  # atomic" : "") << (op->streaming ? "  # streaming" : "") << "\n";
  }
  void visit(const For* op) override {
    indent();
    out_ << (op->loopKind == LoopKind::Parallel     ? "parallel for "
             : op->loopKind == LoopKind::Vectorized ? "simd for "
             : isGpuLoop(op->loopKind)              ? std::string(toString(op->loopKind)) + " for "
                                                    : std::string("for "));
    op->var.accept(*this);
    out_ << " in [";
    op->begin.accept(*this);
    out_ << ", ";
    op->end.accept(*this);
    out_ << ")";
    for (const auto& reduction : op->reductions) {
      out_ << " reduce(+: ";
      reduction.var.accept(*this);
      if (reduction.size.defined()) {
        out_ << "[0, ";
        reduction.size.accept(*this);
        out_ << ")";
      }
      out_ << ")";
    }
    out_ << (op->unrollFactor ? " unroll " + std::to_string(op->unrollFactor) : "")
         << (op->parallelChunk ? " chunk " + std::to_string(op->parallelChunk) : "")
         << (op->comment.empty() ? "" : "  # " + op->comment) << "\n";
    body(op->body);
  }
  void visit(const While* op) override {
    indent();
    out_ << "while ";
    op->condition.accept(*this);
    out_ << (op->comment.empty() ? "" : "  # " + op->comment) << "\n";
    body(op->body);
  }
  void visit(const If* op) override {
    indent();
    out_ << "if ";
    op->condition.accept(*this);
    out_ << "\n";
    body(op->thenCase);
    if (op->elseCase.defined()) {
      indent();
      out_ << "else\n";
      body(op->elseCase);
    }
  }
  void visit(const Switch* op) override {
    indent();
    out_ << "switch ";
    op->value.accept(*this);
    out_ << "\n";
    for (const auto& each : op->cases) {
      indent();
      out_ << "case";
      for (int64_t value : each.values) out_ << " " << value;
      out_ << "\n";
      body(each.body);
    }
    if (op->otherwise.defined()) {
      indent();
      out_ << "otherwise\n";
      body(op->otherwise);
    }
  }
  void visit(const Block* op) override {
    for (const auto& s : op->stmts) s.accept(*this);
  }
  void visit(const Allocate* op) override {
    indent();
    op->buffer.accept(*this);
    out_ << " = " << (op->reallocate ? "realloc" : op->zeroInitialize ? "calloc" : "malloc") << "(";
    op->count.accept(*this);
    out_ << " x " << toString(op->buffer.type().kind);
    if (op->reallocate) {
      out_ << ", keeping ";
      op->keptCount.accept(*this);
    }
    out_ << ")\n";
  }
  void visit(const Free* op) override {
    indent();
    out_ << "free(";
    op->buffer.accept(*this);
    out_ << ")\n";
  }
  void visit(const SetTensorProperty* op) override {
    indent();
    out_ << op->tensor << "." << toString(op->field);
    if (op->field == TensorField::Pos || op->field == TensorField::Crd) out_ << "[" << op->index << "]";
    out_ << " := ";
    op->value.accept(*this);
    out_ << "\n";
  }
  void visit(const Evaluate* op) override {
    indent();
    op->value.accept(*this);
    out_ << "\n";
  }
  void visit(const Comment* op) override {
    indent();
    out_ << "# " << op->text << "\n";
  }
  void visit(const Break*) override {
    indent();
    out_ << "break\n";
  }
  void visit(const Return* op) override {
    indent();
    out_ << "return";
    if (op->value.defined()) {
      out_ << " ";
      op->value.accept(*this);
    }
    out_ << "\n";
  }
  void visit(const Intrinsic* op) override {
    indent();
    out_ << "intrinsic " << op->name << "(";
    for (size_t i = 0; i < op->tensors.size(); ++i) out_ << (i ? ", " : "") << op->tensors[i];
    for (const auto& arg : op->args) {
      out_ << ", ";
      arg.accept(*this);
    }
    out_ << ")\n";
  }

 private:
  void indent() { out_ << std::string(2 * depth_, ' '); }
  void body(const Stmt& s) {
    ++depth_;
    s.accept(*this);
    --depth_;
  }
  std::ostream& out_;
  int depth_ = 0;
};

}  // namespace

std::string toString(const Expr& expr) {
  std::ostringstream out;
  Printer printer(out);
  expr.accept(printer);
  return out.str();
}

std::string toString(const Stmt& stmt) {
  std::ostringstream out;
  Printer printer(out);
  stmt.accept(printer);
  return out.str();
}

std::string toString(const Function& function) {
  std::ostringstream out;
  out << "function " << function.name << "(";
  for (size_t i = 0; i < function.parameters.size(); ++i) {
    const auto& p = function.parameters[i];
    out << (i ? ", " : "") << (p.isOutput ? "out " : "") << p.name;
  }
  out << ")\n";
  Printer printer(out);
  std::ostringstream body;
  out << toString(function.body);
  return out.str();
}

}  // namespace tcc::ir::imp
