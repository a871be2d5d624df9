#include "tcc/test/reference.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <stdexcept>

#include "reference_sizes.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/ir/index_visitor.h"

namespace tcc::test {

using namespace tcc::ir;

DenseArray DenseArray::zeros(std::vector<int64_t> dims) {
  DenseArray array{std::move(dims), {}};
  array.values.assign(array.size(), 0.0);
  return array;
}

int64_t DenseArray::size() const {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  return count;
}

namespace {
size_t offsetOf(const std::vector<int64_t>& dims, std::span<const int64_t> coordinates) {
  if (coordinates.size() != dims.size())
    throw std::out_of_range("DenseArray::at: " + std::to_string(coordinates.size()) + " coordinates for " +
                            std::to_string(dims.size()) + " dims");
  int64_t offset = 0;
  for (size_t mode = 0; mode < dims.size(); ++mode) {
    if (coordinates[mode] < 0 || coordinates[mode] >= dims[mode])
      throw std::out_of_range("DenseArray::at: coordinate " + std::to_string(coordinates[mode]) +
                              " out of range for mode " + std::to_string(mode) + " of size " +
                              std::to_string(dims[mode]));
    offset = offset * dims[mode] + coordinates[mode];
  }
  return static_cast<size_t>(offset);
}
}  // namespace

double& DenseArray::at(std::span<const int64_t> coordinates) { return values.at(offsetOf(dims, coordinates)); }

double DenseArray::at(std::span<const int64_t> coordinates) const {
  return values.at(offsetOf(dims, coordinates));
}

namespace {

// An expression with index variables resolved to environment slots and
// tensors to their arrays, so the innermost loops neither hash nor allocate.
struct CompiledExpr {
  IndexExprKind kind = IndexExprKind::Literal;
  double literal = 0;
  const DenseArray* array = nullptr;
  std::vector<int> slots;        // access: one slot per mode
  int sumSlot = -1;              // reduction
  std::string callName;
  std::vector<CompiledExpr> children;
};

// One term of Einstein summation: summed over its own unbound variables.
struct CompiledTerm {
  double sign;
  std::vector<int> summedSlots;
  CompiledExpr expr;
};

struct CompiledAssignment {
  DenseArray* output;
  std::vector<int> lhsSlots;
  std::vector<int> outputSlots;  // lhs variables no enclosing loop binds
  std::vector<CompiledTerm> terms;
  bool accumulate;
};

class Evaluator {
 public:
  Evaluator(detail::ResolvedSizes sizes, std::map<std::string, DenseArray> arrays)
      : sizes_(std::move(sizes)), arrays_(std::move(arrays)) {
    for (const auto& [var, size] : sizes_.varSizes) {
      slotOf_[var] = static_cast<int>(slotSizes_.size());
      slotSizes_.push_back(size);
    }
    values_.assign(slotSizes_.size(), 0);
    bound_.assign(slotSizes_.size(), 0);
  }

  std::map<std::string, DenseArray> take() { return std::move(arrays_); }

  // A statement of the program. One that reads the tensor it writes
  // (`y(i) = A(i,j) * y(j)`) reads every entry as it was before the
  // statement: from a copy taken first.
  void runStatement(const IndexStmt& stmt) {
    const auto* assignment = stmt.as<AssignmentNode>();
    if (!assignment) return run(stmt);
    const TensorVar& output = assignment->lhs.tensor();
    const auto read = tensorsRead(assignment->rhs);
    if (std::find(read.begin(), read.end(), output) == read.end()) return run(stmt);
    const std::string copyName = output.name() + " before the statement";
    arrays_[copyName] = array(output.name());
    const TensorVar copy(copyName, output.shape(), output.format(), output.datatype());
    const IndexStmt reading = AssignmentNode::make(
        assignment->lhs, replace(assignment->rhs, std::unordered_map<TensorVar, TensorVar>{{output, copy}}),
        assignment->accumulate);
    run(reading);
    assignments_.erase(reading.as<AssignmentNode>());  // it points into the copy
    arrays_.erase(copyName);
  }

  void run(const IndexStmt& stmt) {
    switch (stmt.kind()) {
      case IndexStmtKind::Assignment: return assign(stmt.as<AssignmentNode>());
      case IndexStmtKind::Forall: {
        const auto* node = stmt.as<ForallNode>();
        forEachValue(slot(node->indexVar), [&] { run(node->body); });
        return;
      }
      case IndexStmtKind::Where: {
        const auto* node = stmt.as<WhereNode>();
        resetWrittenTensors(node->producer);
        run(node->producer);
        run(node->consumer);
        return;
      }
      case IndexStmtKind::Sequence:
        run(stmt.as<SequenceNode>()->definition);
        run(stmt.as<SequenceNode>()->mutation);
        return;
      case IndexStmtKind::Multi:
        run(stmt.as<MultiNode>()->first);
        run(stmt.as<MultiNode>()->second);
        return;
      case IndexStmtKind::SuchThat: return run(stmt.as<SuchThatNode>()->stmt);
    }
  }

  // The array of a tensor, created at zero the first time. std::map keeps
  // its address stable, so compiled expressions may hold it.
  DenseArray& array(const std::string& name) {
    auto found = arrays_.find(name);
    if (found != arrays_.end()) return found->second;
    return arrays_[name] = DenseArray::zeros(sizes_.tensorDims.at(name));
  }

 private:
  int slot(const IndexVar& var) const { return slotOf_.at(var); }

  // Binds the slot to 0..size-1 in turn around body, restoring any outer
  // binding (a sum may shadow a loop variable).
  template <typename Body>
  void forEachValue(int slot, const Body& body) {
    int64_t savedValue = values_[slot];
    char savedBound = bound_[slot];
    bound_[slot] = 1;
    for (int64_t value = 0; value < slotSizes_[slot]; ++value) {
      values_[slot] = value;
      body();
    }
    values_[slot] = savedValue;
    bound_[slot] = savedBound;
  }

  // Runs body for every combination of values of distinct slots (last slot
  // fastest), restoring outer bindings afterwards.
  template <typename Body>
  void forEachCombination(const std::vector<int>& slots, const Body& body) {
    for (int s : slots)
      if (slotSizes_[s] == 0) return;
    std::vector<std::pair<int64_t, char>> saved;
    for (int s : slots) {
      saved.emplace_back(values_[s], bound_[s]);
      values_[s] = 0;
      bound_[s] = 1;
    }
    for (bool done = false; !done;) {
      body();
      done = true;
      for (size_t d = slots.size(); d-- > 0;) {
        if (++values_[slots[d]] < slotSizes_[slots[d]]) {
          done = false;
          break;
        }
        values_[slots[d]] = 0;
      }
    }
    for (size_t d = 0; d < slots.size(); ++d) std::tie(values_[slots[d]], bound_[slots[d]]) = saved[d];
  }

  // Access variables of expr that neither a loop nor a sum inside expr binds.
  std::vector<int> unboundSlots(const IndexExpr& expr) const {
    class Collector : public IndexNotationVisitor {
     public:
      explicit Collector(const Evaluator& evaluator) : evaluator_(evaluator) {}
      std::vector<int> slots;

     protected:
      void visit(const AccessNode* node) override {
        for (const auto& var : node->indices) {
          int slot = evaluator_.slot(var);
          if (!evaluator_.bound_[slot] && std::find(sums_.begin(), sums_.end(), slot) == sums_.end() &&
              std::find(slots.begin(), slots.end(), slot) == slots.end())
            slots.push_back(slot);
        }
      }
      void visit(const ReductionNode* node) override {
        sums_.push_back(evaluator_.slot(node->var));
        IndexNotationVisitor::visit(node);
        sums_.pop_back();
      }

     private:
      const Evaluator& evaluator_;
      std::vector<int> sums_;
    } collector(*this);
    collector.walk(expr);
    return collector.slots;
  }

  CompiledExpr compile(const IndexExpr& expr) {
    CompiledExpr compiled;
    compiled.kind = expr.kind();
    switch (expr.kind()) {
      case IndexExprKind::Literal: compiled.literal = expr.as<LiteralNode>()->asDouble(); break;
      case IndexExprKind::Access: {
        const auto* node = expr.as<AccessNode>();
        compiled.array = &array(node->tensor.name());
        for (const auto& var : node->indices) compiled.slots.push_back(slot(var));
        break;
      }
      case IndexExprKind::Neg: compiled.children.push_back(compile(expr.as<NegNode>()->operand)); break;
      case IndexExprKind::Add: case IndexExprKind::Sub: case IndexExprKind::Mul: case IndexExprKind::Div: {
        auto [a, b] = operands(expr);
        compiled.children.push_back(compile(a));
        compiled.children.push_back(compile(b));
        break;
      }
      case IndexExprKind::Reduction: {
        const auto* node = expr.as<ReductionNode>();
        compiled.sumSlot = slot(node->var);
        compiled.children.push_back(compile(node->body));
        break;
      }
      case IndexExprKind::Call: {
        const auto* node = expr.as<CallNode>();
        compiled.callName = node->name;
        if (node->name == "perm") {
          compiled.array = &array(std::get<TensorVar>(node->args[0]).name());
        } else {
          for (const auto& arg : node->args) compiled.children.push_back(compile(std::get<IndexExpr>(arg)));
        }
        break;
      }
    }
    return compiled;
  }

  static std::pair<IndexExpr, IndexExpr> operands(const IndexExpr& expr) {
    if (const auto* node = expr.as<AddNode>()) return {node->a, node->b};
    if (const auto* node = expr.as<SubNode>()) return {node->a, node->b};
    if (const auto* node = expr.as<MulNode>()) return {node->a, node->b};
    const auto* node = expr.as<DivNode>();
    return {node->a, node->b};
  }

  // Einstein summation: each term of a top-level sum or difference is
  // summed over its own unbound variables.
  void compileTerms(const IndexExpr& expr, double sign, std::vector<CompiledTerm>& terms) {
    if (const auto* add = expr.as<AddNode>()) {
      compileTerms(add->a, sign, terms);
      compileTerms(add->b, sign, terms);
      return;
    }
    if (const auto* sub = expr.as<SubNode>()) {
      compileTerms(sub->a, sign, terms);
      compileTerms(sub->b, -sign, terms);
      return;
    }
    terms.push_back({sign, unboundSlots(expr), compile(expr)});
  }

  // Compiled once per assignment node: the same node always runs under the
  // same enclosing loops.
  const CompiledAssignment& compiled(const AssignmentNode* node) {
    auto found = assignments_.find(node);
    if (found != assignments_.end()) return found->second;
    CompiledAssignment result{&array(node->lhs.tensor().name()), {}, {}, {}, node->accumulate};
    for (const auto& var : node->lhs.indices()) {
      int s = slot(var);
      result.lhsSlots.push_back(s);
      if (!bound_[s] && std::find(result.outputSlots.begin(), result.outputSlots.end(), s) == result.outputSlots.end())
        result.outputSlots.push_back(s);
    }
    // Output variables are bound while the terms run.
    for (int s : result.outputSlots) bound_[s] = 1;
    compileTerms(node->rhs, 1.0, result.terms);
    for (int s : result.outputSlots) bound_[s] = 0;
    return assignments_.emplace(node, std::move(result)).first->second;
  }

  void assign(const AssignmentNode* node) {
    const CompiledAssignment& assignment = compiled(node);
    forEachCombination(assignment.outputSlots, [&] {
      double value = 0.0;
      for (const auto& term : assignment.terms) {
        double total = 0.0;
        forEachCombination(term.summedSlots, [&] { total += evaluate(term.expr); });
        value += term.sign * total;
      }
      double& target = assignment.output->values[offset(*assignment.output, assignment.lhsSlots)];
      target = assignment.accumulate ? target + value : value;
    });
  }

  size_t offset(const DenseArray& array, const std::vector<int>& slots) const {
    int64_t offset = 0;
    for (size_t mode = 0; mode < slots.size(); ++mode) {
      if (!bound_[slots[mode]])
        throw std::invalid_argument("reference evaluator: an index variable is used where nothing binds it");
      offset = offset * array.dims[mode] + values_[slots[mode]];
    }
    return static_cast<size_t>(offset);
  }

  double evaluate(const CompiledExpr& expr) {
    switch (expr.kind) {
      case IndexExprKind::Literal: return expr.literal;
      case IndexExprKind::Access: return expr.array->values[offset(*expr.array, expr.slots)];
      case IndexExprKind::Neg: return -evaluate(expr.children[0]);
      case IndexExprKind::Add: return evaluate(expr.children[0]) + evaluate(expr.children[1]);
      case IndexExprKind::Sub: return evaluate(expr.children[0]) - evaluate(expr.children[1]);
      case IndexExprKind::Mul: return evaluate(expr.children[0]) * evaluate(expr.children[1]);
      case IndexExprKind::Div: return evaluate(expr.children[0]) / evaluate(expr.children[1]);
      case IndexExprKind::Reduction: {
        double total = 0.0;
        forEachValue(expr.sumSlot, [&] { total += evaluate(expr.children[0]); });
        return total;
      }
      case IndexExprKind::Call: return call(expr);
    }
    return 0.0;
  }

  double call(const CompiledExpr& expr) {
    if (expr.callName == "perm") return permanent(*expr.array);
    std::vector<double> args;
    for (const auto& child : expr.children) args.push_back(evaluate(child));
    if (expr.callName == "abs") return std::fabs(args[0]);
    if (expr.callName == "sqrt") return std::sqrt(args[0]);
    if (expr.callName == "exp") return std::exp(args[0]);
    if (expr.callName == "max") return std::max(args[0], args[1]);
    if (expr.callName == "min") return std::min(args[0], args[1]);
    throw std::invalid_argument("reference evaluator: unsupported builtin " + expr.callName);
  }

  void resetWrittenTensors(const IndexStmt& producer) {
    class Writes : public IndexNotationVisitor {
     public:
      std::vector<std::string> names;

     protected:
      void visit(const AssignmentNode* node) override { names.push_back(node->lhs.tensor().name()); }
    } writes;
    writes.walk(producer);
    for (const auto& name : writes.names) {
      DenseArray& temporary = array(name);
      std::fill(temporary.values.begin(), temporary.values.end(), 0.0);
    }
  }

  detail::ResolvedSizes sizes_;
  std::map<std::string, DenseArray> arrays_;
  std::unordered_map<IndexVar, int> slotOf_;
  std::vector<int64_t> slotSizes_;
  std::vector<int64_t> values_;
  std::vector<char> bound_;
  std::unordered_map<const AssignmentNode*, CompiledAssignment> assignments_;
};

}  // namespace

std::map<std::string, DenseArray> evaluate(const std::vector<IndexStmt>& statements,
                                           std::map<std::string, DenseArray> inputs) {
  detail::ResolvedSizes sizes = detail::resolveSizes(statements, inputs);
  Evaluator evaluator(sizes, std::move(inputs));
  for (const auto& [name, dims] : sizes.tensorDims) evaluator.array(name);  // outputs start at zero
  for (const auto& stmt : statements) evaluator.runStatement(stmt);
  return evaluator.take();
}

}  // namespace tcc::test
