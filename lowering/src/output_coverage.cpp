// Whether a kernel stores every value of its dense vector output, so that
// the caller may hand it an output whose values are not zeroed first.
#include <string>
#include <vector>

#include "dense_row_tiling.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/lowering/lower.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

bool isPropertyOf(const Expr& expr, const std::string& tensor, TensorField field, int index) {
  const auto* property = expr.as<TensorProperty>();
  return property && property->tensor == tensor && property->field == field &&
         (field != TensorField::Dim || property->index == index);
}

bool isVarNamed(const Expr& expr, const std::string& name) {
  const auto* var = expr.as<Var>();
  return var && var->name == name;
}

// What the whole function does with the output: how often its values
// array is named (as a variable or as the parameter's field), which stores
// write it, and whether anything else could write it unseen.
struct OutputUses : IRVisitor {
  const std::string& tensor;
  const std::string& valsVar;
  const std::string& dimVar;
  int namedVals = 0;
  bool dimChanged = false;  // the dimension's variable assigned after its declaration
  std::vector<const Store*> stores;
  bool opaque = false;  // an intrinsic, or a field of the output set
  OutputUses(const std::string& tensor, const std::string& valsVar, const std::string& dimVar)
      : tensor(tensor), valsVar(valsVar), dimVar(dimVar) {}
  void visit(const Var* op) override { namedVals += op->name == valsVar; }
  void visit(const TensorProperty* op) override {
    namedVals += op->tensor == tensor && op->field == TensorField::Vals;
  }
  void visit(const Store* op) override {
    if (isVarNamed(op->buffer, valsVar) || isPropertyOf(op->buffer, tensor, TensorField::Vals, 0)) stores.push_back(op);
    IRVisitor::visit(op);
  }
  void visit(const Assign* op) override {
    dimChanged |= !dimVar.empty() && isVarNamed(op->var, dimVar);
    IRVisitor::visit(op);
  }
  void visit(const SetTensorProperty* op) override {
    opaque |= op->tensor == tensor;
    IRVisitor::visit(op);
  }
  void visit(const Intrinsic* op) override {
    opaque = true;
    IRVisitor::visit(op);
  }
};

// Whether a loop's body may leave the loop (a break outside a nested loop)
// or the function (a return) before finishing an iteration, or changes the
// loop's variable.
struct LeavesEarly : IRVisitor {
  const std::string& loopVar;
  bool leaves = false;
  int nestedLoops = 0;
  explicit LeavesEarly(const std::string& loopVar) : loopVar(loopVar) {}
  void visit(const Break*) override { leaves |= nestedLoops == 0; }
  void visit(const Assign* op) override {
    leaves |= isVarNamed(op->var, loopVar);
    IRVisitor::visit(op);
  }
  void visit(const Return*) override { leaves = true; }
  void visit(const For* op) override {
    ++nestedLoops;
    IRVisitor::visit(op);
    --nestedLoops;
  }
  void visit(const While* op) override {
    ++nestedLoops;
    IRVisitor::visit(op);
    --nestedLoops;
  }
};

}  // namespace

bool storesEveryValueOfVectorOutput(const Function& function) {
  const TensorParameter* output = nullptr;
  for (const auto& parameter : function.parameters) {
    if (!parameter.isOutput) continue;
    if (output) return false;
    output = &parameter;
  }
  if (!output || output->order != 1 || !function.body.defined()) return false;
  const std::string& tensor = output->name;

  // The function's own statements: the declarations of the output's values
  // array and of its dimension, then the loop that stores.
  const std::vector<Stmt> top = statementsOf(function.body);
  std::string valsVar, dimVar;
  for (const Stmt& stmt : top) {
    const auto* declare = stmt.as<Declare>();
    if (!declare || !declare->init.defined()) continue;
    const auto* var = declare->var.as<Var>();
    if (!var) continue;
    if (isPropertyOf(declare->init, tensor, TensorField::Vals, 0)) {
      if (!valsVar.empty()) return false;
      valsVar = var->name;
    } else if (isPropertyOf(declare->init, tensor, TensorField::Dim, 0)) {
      dimVar = var->name;
    }
  }
  if (valsVar.empty()) return false;

  // One store writes the output, and nothing else names its values: no
  // load, no call that is handed them, no second store.
  OutputUses uses(tensor, valsVar, dimVar);
  function.body.accept(uses);
  if (uses.opaque || uses.dimChanged || uses.stores.size() != 1 || uses.namedVals != 3)
    return false;  // namedVals: the declaration, its init, the store
  const Store* store = uses.stores.front();
  if (store->accumulate) return false;

  // That store sits in the body of a loop of the function's own over the
  // whole dimension, as one of the body's statements (run in every
  // iteration: no condition around it, no break or return in the body),
  // at the loop's variable.
  for (const Stmt& stmt : top) {
    const auto* loop = stmt.as<For>();
    if (!loop) continue;
    const auto* begin = loop->begin.as<IntImm>();
    const bool wholeDimension = begin && begin->value == 0 &&
                                ((!dimVar.empty() && isVarNamed(loop->end, dimVar)) ||
                                 isPropertyOf(loop->end, tensor, TensorField::Dim, 0));
    const auto* var = loop->var.as<Var>();
    if (!wholeDimension || !var) continue;
    bool stored = false;
    for (const Stmt& inner : statementsOf(loop->body)) stored |= inner.as<Store>() == store;
    if (!stored) continue;
    const Expr& index = store->index;
    const auto* cast = index.as<Cast>();
    if (!isVarNamed(index, var->name) && !(cast && isVarNamed(cast->value, var->name))) return false;
    LeavesEarly leaves(var->name);
    loop->body.accept(leaves);
    return !leaves.leaves;
  }
  return false;
}

}  // namespace tcc::lowering
