// The C++ backend: prints imperative IR as readable, self-contained C++.
#include <sstream>
#include <stdexcept>

#include "tcc/ir/imperative_visitor.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

std::string cppType(Type type) {
  std::string name;
  switch (type.kind) {
    case ScalarKind::Void: name = "void"; break;
    case ScalarKind::Bool: name = "bool"; break;
    case ScalarKind::Int32: name = "int32_t"; break;
    case ScalarKind::Int64: name = "int64_t"; break;
    case ScalarKind::Float16: name = "uint16_t"; break;
    case ScalarKind::Float32: name = "float"; break;
    case ScalarKind::Float64: name = "double"; break;
  }
  return type.isPointer ? name + "*" : name;
}

class CppPrinter : public IRVisitor {
 public:
  explicit CppPrinter(std::ostream& out) : out_(out) {}

  void printFunction(const Function& function) {
    out_ << "extern \"C\" int32_t " << function.name << "(tcc_tensor** tcc_tensors) {\n";
    depth_ = 1;
    for (size_t i = 0; i < function.parameters.size(); ++i) {
      const auto& parameter = function.parameters[i];
      indent();
      out_ << "tcc_tensor* " << parameter.name << " = tcc_tensors[" << i << "];"
           << (parameter.isOutput ? "  // output" : "") << "\n";
    }
    out_ << "\n";
    function.body.accept(*this);
    indent();
    out_ << "return 0;\n}\n";
    depth_ = 0;
  }

  // ---- expressions ----
  void visit(const IntImm* op) override {
    if (op->type.kind == ScalarKind::Bool) {
      out_ << (op->value ? "true" : "false");
    } else if (op->type.kind == ScalarKind::Int64) {
      out_ << op->value << "LL";
    } else {
      out_ << op->value;
    }
  }
  void visit(const FloatImm* op) override {
    std::ostringstream text;
    text.precision(17);
    text << op->value;
    std::string s = text.str();
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    out_ << s << (op->type.kind == ScalarKind::Float32 ? "f" : "");
  }
  void visit(const Var* op) override { out_ << op->name; }
  void visit(const Cast* op) override {
    out_ << "(" << cppType(op->type) << ")(";
    op->value.accept(*this);
    out_ << ")";
  }
  void visit(const Binary* op) override {
    if (op->op == BinaryOp::Min || op->op == BinaryOp::Max) {
      out_ << (op->op == BinaryOp::Min ? "tcc_min<" : "tcc_max<") << cppType(op->type) << ">(";
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
    out_ << (op->op == UnaryOp::Neg ? "-" : "!") << "(";
    op->a.accept(*this);
    out_ << ")";
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
    switch (op->field) {
      case TensorField::Dim: out_ << op->tensor << "->dims[" << op->index << "]"; break;
      case TensorField::Pos: out_ << "(int64_t*)" << op->tensor << "->levels[" << op->index << "].pos"; break;
      case TensorField::Crd: out_ << op->tensor << "->levels[" << op->index << "].crd"; break;
      case TensorField::Vals: out_ << "(" << cppType(op->type) << ")" << op->tensor << "->vals"; break;
      case TensorField::ValsSize: out_ << op->tensor << "->vals_size"; break;
    }
  }

  // ---- statements ----
  void visit(const Declare* op) override {
    indent();
    out_ << cppType(op->var.type()) << " ";
    op->var.accept(*this);
    if (op->init.defined()) {
      out_ << " = ";
      op->init.accept(*this);
    }
    out_ << ";\n";
  }
  void visit(const Assign* op) override {
    indent();
    op->var.accept(*this);
    if (op->hasCompound && (op->compound == BinaryOp::Min || op->compound == BinaryOp::Max)) {
      out_ << " = " << (op->compound == BinaryOp::Min ? "tcc_min(" : "tcc_max(");
      op->var.accept(*this);
      out_ << ", ";
      op->value.accept(*this);
      out_ << ");\n";
      return;
    }
    out_ << " " << (op->hasCompound ? toString(op->compound) : "") << "= ";
    op->value.accept(*this);
    out_ << ";\n";
  }
  void visit(const Store* op) override {
    if (op->atomic) {
      indent();
      out_ << "#pragma omp atomic\n";
    }
    indent();
    op->buffer.accept(*this);
    out_ << "[";
    op->index.accept(*this);
    out_ << "] " << (op->accumulate ? "+=" : "=") << " ";
    op->value.accept(*this);
    out_ << ";\n";
  }
  static std::string text(const Expr& expr) {
    std::ostringstream out;
    CppPrinter printer(out);
    expr.accept(printer);
    return out.str();
  }
  std::string reductionClauses(const For* op) {
    std::string clauses;
    for (const auto& reduction : op->reductions) {
      clauses += " reduction(+: " + reduction.var.as<Var>()->name;
      if (reduction.size.defined()) clauses += "[0:" + text(reduction.size) + "]";
      clauses += ")";
    }
    return clauses;
  }
  void visit(const For* op) override {
    if (!op->comment.empty()) {
      indent();
      out_ << "// " << op->comment << "\n";
    }
    if (op->loopKind == LoopKind::Parallel) {
      indent();
      out_ << "#pragma omp parallel for schedule(dynamic, 16)" << reductionClauses(op) << "\n";
    } else if (op->loopKind == LoopKind::Vectorized) {
      indent();
      out_ << "#pragma omp simd" << reductionClauses(op) << "\n";
    }
    if (op->unrollFactor > 0) {
      indent();
      // An OpenMP loop must follow its pragma directly (g++ rejects another
      // pragma between them), so there the factor is left to the compiler.
      if (op->loopKind == LoopKind::Serial)
        out_ << "#pragma GCC unroll " << op->unrollFactor << "\n";
      else
        out_ << "// unroll(" << op->unrollFactor << ") is not applied to an OpenMP loop\n";
    }
    indent();
    out_ << "for (" << cppType(op->var.type()) << " ";
    op->var.accept(*this);
    out_ << " = ";
    op->begin.accept(*this);
    out_ << "; ";
    op->var.accept(*this);
    out_ << " < ";
    op->end.accept(*this);
    out_ << "; ";
    op->var.accept(*this);
    out_ << "++) {\n";
    body(op->body);
    indent();
    out_ << "}\n";
  }
  void visit(const While* op) override {
    if (!op->comment.empty()) {
      indent();
      out_ << "// " << op->comment << "\n";
    }
    indent();
    out_ << "while (";
    op->condition.accept(*this);
    out_ << ") {\n";
    body(op->body);
    indent();
    out_ << "}\n";
  }
  void visit(const If* op) override {
    indent();
    printIf(op);
  }
  void visit(const Block* op) override {
    for (const auto& s : op->stmts) s.accept(*this);
  }
  void visit(const Allocate* op) override {
    indent();
    std::string type = cppType(op->buffer.type());
    std::string element = cppType(op->buffer.type().element());
    op->buffer.accept(*this);
    out_ << " = (" << type << ")";
    if (op->reallocate) {
      out_ << "realloc(";
      op->buffer.accept(*this);
      out_ << ", sizeof(" << element << ") * (size_t)(";
    } else if (op->zeroInitialize) {
      out_ << "calloc(sizeof(" << element << "), (size_t)(";
    } else {
      out_ << "malloc(sizeof(" << element << ") * (size_t)(";
    }
    op->count.accept(*this);
    out_ << "));\n";
  }
  void visit(const Free* op) override {
    indent();
    out_ << "free(";
    op->buffer.accept(*this);
    out_ << ");\n";
  }
  void visit(const SetTensorProperty* op) override {
    indent();
    out_ << op->tensor;
    switch (op->field) {
      case TensorField::Dim: out_ << "->dims[" << op->index << "]"; break;
      case TensorField::Pos: out_ << "->levels[" << op->index << "].pos"; break;
      case TensorField::Crd: out_ << "->levels[" << op->index << "].crd"; break;
      case TensorField::Vals: out_ << "->vals"; break;
      case TensorField::ValsSize: out_ << "->vals_size"; break;
    }
    out_ << " = ";
    if (op->field == TensorField::Pos) out_ << "(long long*)";
    op->value.accept(*this);
    out_ << ";\n";
  }
  void visit(const Evaluate* op) override {
    indent();
    op->value.accept(*this);
    out_ << ";\n";
  }
  void visit(const Comment* op) override {
    indent();
    out_ << "// " << op->text << "\n";
  }
  void visit(const Break*) override {
    indent();
    out_ << "break;\n";
  }
  void visit(const Return* op) override {
    indent();
    out_ << "return";
    if (op->value.defined()) {
      out_ << " ";
      op->value.accept(*this);
    }
    out_ << ";\n";
  }
  void visit(const Intrinsic* op) override {
    indent();
    out_ << cppIntrinsicStatement(*op) << "\n";
  }

 private:
  void printIf(const If* op) {
    out_ << "if (";
    op->condition.accept(*this);
    out_ << ") {\n";
    body(op->thenCase);
    indent();
    out_ << "}";
    if (!op->elseCase.defined()) {
      out_ << "\n";
      return;
    }
    if (const auto* elseIf = op->elseCase.as<If>()) {
      out_ << " else ";
      printIf(elseIf);
      return;
    }
    out_ << " else {\n";
    body(op->elseCase);
    indent();
    out_ << "}\n";
  }
  void indent() { out_ << std::string(2 * depth_, ' '); }
  void body(const Stmt& s) {
    ++depth_;
    s.accept(*this);
    --depth_;
  }

  std::ostream& out_;
  int depth_ = 0;
};

class CppCodeGenerator : public CodeGenerator {
 public:
  std::string emit(const std::vector<Function>& functions) const override {
    std::ostringstream out;
    bool openmp = false, sparseWorkspaces = false;
    for (const auto& function : functions) {
      openmp = openmp || function.usesOpenMP;
      sparseWorkspaces = sparseWorkspaces || function.usesSparseWorkspaces;
    }
    out << "// Generated by tcc. Self-contained: compile with `c++ -O3 " << (openmp ? "-fopenmp" : "-fopenmp-simd")
        << " -c`";
    if (sparseWorkspaces)
      out << "; link with tcc's ISM runtime, e.g. `c++ -O3 -fPIC -shared kernel.cpp -L<tcc prefix>/lib "
             "-ltcc_ism_runtime -Wl,-rpath,<tcc prefix>/lib`";
    out << ".\n";
    out << cppPrelude() << "\n";
    for (const auto& function : functions) {
      CppPrinter printer(out);
      printer.printFunction(function);
      out << "\n";
    }
    return out.str();
  }
  TargetKind target() const override { return TargetKind::Cpu; }
};

}  // namespace

std::unique_ptr<CodeGenerator> makeCodeGenerator(TargetKind target) {
  if (target == TargetKind::Cpu) return std::make_unique<CppCodeGenerator>();
  throw std::runtime_error("the CUDA backend is not available in this build yet");
}

}  // namespace tcc::lowering
