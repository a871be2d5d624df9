// The printing base both backends share: imperative IR as C-like source
// (expressions, declarations, loops, branches, tensor fields). A target
// derives from it and overrides only what differs: how loops of its
// parallel kinds are printed, atomic updates, and its function signatures
// (in the manner of Halide's CodeGen_C and its GPU printers).
#pragma once

#include <ostream>
#include <string>

#include "tcc/ir/imperative_visitor.h"

namespace tcc::lowering {

// The C spelling of an IR type: int32_t, double*, ...
std::string cTypeName(ir::imp::Type type);

class CLikePrinter : public ir::imp::IRVisitor {
 public:
  explicit CLikePrinter(std::ostream& out) : out_(out) {}

  // ---- expressions ----
  void visit(const ir::imp::IntImm* op) override;
  void visit(const ir::imp::FloatImm* op) override;
  void visit(const ir::imp::Var* op) override;
  void visit(const ir::imp::Cast* op) override;
  void visit(const ir::imp::Binary* op) override;
  void visit(const ir::imp::Unary* op) override;
  void visit(const ir::imp::Select* op) override;
  void visit(const ir::imp::Load* op) override;
  void visit(const ir::imp::Call* op) override;
  void visit(const ir::imp::TensorProperty* op) override;

  // ---- statements ----
  void visit(const ir::imp::Declare* op) override;
  void visit(const ir::imp::Assign* op) override;
  void visit(const ir::imp::Store* op) override;
  void visit(const ir::imp::For* op) override;
  void visit(const ir::imp::While* op) override;
  void visit(const ir::imp::If* op) override;
  void visit(const ir::imp::Switch* op) override;
  void visit(const ir::imp::Block* op) override;
  void visit(const ir::imp::Allocate* op) override;
  void visit(const ir::imp::Free* op) override;
  void visit(const ir::imp::SetTensorProperty* op) override;
  void visit(const ir::imp::Evaluate* op) override;
  void visit(const ir::imp::Comment* op) override;
  void visit(const ir::imp::Break* op) override;
  void visit(const ir::imp::Return* op) override;
  void visit(const ir::imp::Intrinsic* op) override;

 protected:
  // The lines a target puts before a loop header (pragmas), each indented.
  virtual void printLoopAnnotations(const ir::imp::For* op) {}
  // An atomic `buffer[index] += value` (or `=`); the base has none.
  virtual void printAtomicStore(const ir::imp::Store* op);
  // The `for (...) {` header; targets print their parallel kinds here.
  virtual void printLoopHeader(const ir::imp::For* op);
  void printSerialLoopHeader(const ir::imp::For* op);
  // `buffer[index] = value` (or `+=`); a target may print a streaming store its own way.
  virtual void printPlainStore(const ir::imp::Store* op);

  // Prints `expr` with a fresh printer of the same settings.
  std::string text(const ir::imp::Expr& expr);
  void indent() { out_ << std::string(2 * depth_, ' '); }
  void body(const ir::imp::Stmt& s) {
    ++depth_;
    s.accept(*this);
    --depth_;
  }
  void printIf(const ir::imp::If* op);

  std::ostream& out_;
  int depth_ = 0;
};

}  // namespace tcc::lowering
