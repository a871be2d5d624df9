#include "c_like_printer.h"

#include <sstream>
#include <stdexcept>

namespace tcc::lowering {

using namespace ir::imp;

std::string cTypeName(Type type) {
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

// ---- expressions ----

void CLikePrinter::visit(const IntImm* op) {
  if (op->type.kind == ScalarKind::Bool) {
    out_ << (op->value ? "true" : "false");
  } else if (op->type.kind == ScalarKind::Int64) {
    out_ << op->value << "LL";
  } else {
    out_ << op->value;
  }
}

void CLikePrinter::visit(const FloatImm* op) {
  std::ostringstream text;
  text.precision(17);
  text << op->value;
  std::string s = text.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  out_ << s << (op->type.kind == ScalarKind::Float32 ? "f" : "");
}

void CLikePrinter::visit(const Var* op) { out_ << op->name; }

void CLikePrinter::visit(const Cast* op) {
  out_ << "(" << cTypeName(op->type) << ")(";
  op->value.accept(*this);
  out_ << ")";
}

void CLikePrinter::visit(const Binary* op) {
  if (op->op == BinaryOp::Min || op->op == BinaryOp::Max) {
    out_ << (op->op == BinaryOp::Min ? "tcc_min<" : "tcc_max<") << cTypeName(op->type) << ">(";
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

void CLikePrinter::visit(const Unary* op) {
  out_ << (op->op == UnaryOp::Neg ? "-" : "!") << "(";
  op->a.accept(*this);
  out_ << ")";
}

void CLikePrinter::visit(const Select* op) {
  out_ << "(";
  op->condition.accept(*this);
  out_ << " ? ";
  op->ifTrue.accept(*this);
  out_ << " : ";
  op->ifFalse.accept(*this);
  out_ << ")";
}

// float16 is a storage type: a value is read as its float (exact), so no
// arithmetic, comparison or copy ever sees the bits as an integer.
void CLikePrinter::visit(const Load* op) {
  const bool half = op->type.kind == ScalarKind::Float16 && !op->type.isPointer;
  if (half) out_ << "tcc_half_to_float(";
  // A tensor field prints with a cast, which indexing would bind inside.
  const bool field = op->buffer.as<TensorProperty>() != nullptr;
  if (field) out_ << "(";
  op->buffer.accept(*this);
  if (field) out_ << ")";
  out_ << "[";
  op->index.accept(*this);
  out_ << "]";
  if (half) out_ << ")";
}

void CLikePrinter::visit(const Call* op) {
  out_ << op->name << "(";
  for (size_t i = 0; i < op->args.size(); ++i) {
    if (i) out_ << ", ";
    op->args[i].accept(*this);
  }
  out_ << ")";
}

void CLikePrinter::visit(const TensorProperty* op) {
  switch (op->field) {
    case TensorField::Dim: out_ << op->tensor << "->dims[" << op->index << "]"; break;
    case TensorField::Pos: out_ << "(int64_t*)" << op->tensor << "->levels[" << op->index << "].pos"; break;
    case TensorField::Crd: out_ << op->tensor << "->levels[" << op->index << "].crd"; break;
    case TensorField::Vals: out_ << "(" << cTypeName(op->type) << ")" << op->tensor << "->vals"; break;
    case TensorField::ValsSize: out_ << op->tensor << "->vals_size"; break;
  }
}

// ---- statements ----

void CLikePrinter::visit(const Declare* op) {
  indent();
  out_ << cTypeName(op->var.type()) << " ";
  op->var.accept(*this);
  if (op->init.defined()) {
    out_ << " = ";
    op->init.accept(*this);
  }
  out_ << ";\n";
}

void CLikePrinter::visit(const Assign* op) {
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

void CLikePrinter::printPlainStore(const Store* op) {
  indent();
  op->buffer.accept(*this);
  out_ << "[";
  op->index.accept(*this);
  out_ << "] " << (op->accumulate ? "+=" : "=") << " ";
  op->value.accept(*this);
  out_ << ";\n";
}

void CLikePrinter::printAtomicStore(const Store* op) {
  throw std::runtime_error("this backend has no atomic updates");
}

void CLikePrinter::visit(const Store* op) {
  if (op->atomic) {
    printAtomicStore(op);
    return;
  }
  printPlainStore(op);
}

std::string CLikePrinter::text(const Expr& expr) {
  std::ostringstream out;
  CLikePrinter printer(out);
  expr.accept(printer);
  return out.str();
}

void CLikePrinter::printSerialLoopHeader(const For* op) {
  indent();
  out_ << "for (" << cTypeName(op->var.type()) << " ";
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
}

void CLikePrinter::printLoopHeader(const For* op) { printSerialLoopHeader(op); }

void CLikePrinter::visit(const For* op) {
  if (!op->comment.empty()) {
    indent();
    out_ << "// " << op->comment << "\n";
  }
  printLoopAnnotations(op);
  printLoopHeader(op);
  body(op->body);
  indent();
  out_ << "}\n";
}

void CLikePrinter::visit(const While* op) {
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

void CLikePrinter::visit(const If* op) {
  indent();
  printIf(op);
}

void CLikePrinter::printIf(const If* op) {
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

// Each case in braces (its declarations end there) and left by a break.
void CLikePrinter::visit(const Switch* op) {
  indent();
  out_ << "switch (";
  op->value.accept(*this);
  out_ << ") {\n";
  auto printCase = [&](const Stmt& stmt) {
    indent();
    out_ << "{\n";
    body(stmt);
    indent();
    out_ << "  break;\n";
    indent();
    out_ << "}\n";
  };
  for (const auto& each : op->cases) {
    for (int64_t value : each.values) {
      indent();
      out_ << "case " << value << ":\n";
    }
    printCase(each.body);
  }
  indent();
  out_ << "default:\n";
  if (op->otherwise.defined()) {
    printCase(op->otherwise);
  } else {
    indent();
    out_ << "  break;\n";
  }
  indent();
  out_ << "}\n";
}

void CLikePrinter::visit(const Block* op) {
  for (const auto& s : op->stmts) s.accept(*this);
}

void CLikePrinter::visit(const Allocate* op) {
  indent();
  std::string type = cTypeName(op->buffer.type());
  std::string element = cTypeName(op->buffer.type().element());
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

void CLikePrinter::visit(const Free* op) {
  indent();
  out_ << "free(";
  op->buffer.accept(*this);
  out_ << ");\n";
}

void CLikePrinter::visit(const SetTensorProperty* op) {
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

void CLikePrinter::visit(const Evaluate* op) {
  indent();
  op->value.accept(*this);
  out_ << ";\n";
}

void CLikePrinter::visit(const Comment* op) {
  indent();
  out_ << "// " << op->text << "\n";
}

void CLikePrinter::visit(const Break*) {
  indent();
  out_ << "break;\n";
}

void CLikePrinter::visit(const Return* op) {
  indent();
  out_ << "return";
  if (op->value.defined()) {
    out_ << " ";
    op->value.accept(*this);
  }
  out_ << ";\n";
}

void CLikePrinter::visit(const Intrinsic* op) {
  throw std::runtime_error("this backend has no expansion for intrinsic '" + op->name + "'");
}

}  // namespace tcc::lowering
