#include "tcc/test/reference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "reference_sizes.h"
#include "tcc/ir/index_printer.h"
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

class Evaluator {
 public:
  Evaluator(detail::ResolvedSizes sizes, std::map<std::string, DenseArray> arrays)
      : sizes_(std::move(sizes)), arrays_(std::move(arrays)) {}

  std::map<std::string, DenseArray> take() { return std::move(arrays_); }

  void run(const IndexStmt& stmt) {
    switch (stmt.kind()) {
      case IndexStmtKind::Assignment: return assign(stmt.as<AssignmentNode>());
      case IndexStmtKind::Forall: {
        const auto* node = stmt.as<ForallNode>();
        forEachValue(node->indexVar, [&] { run(node->body); });
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

  DenseArray& array(const std::string& name) {
    auto found = arrays_.find(name);
    if (found == arrays_.end()) arrays_[name] = DenseArray::zeros(sizes_.tensorDims.at(name));
    return arrays_[name];
  }

 private:
  // Binds var to 0..size-1 in turn around body, restoring any outer binding.
  void forEachValue(const IndexVar& var, const std::function<void()>& body) {
    auto outer = env_.find(var);
    std::optional<int64_t> saved = outer == env_.end() ? std::nullopt : std::optional(outer->second);
    int64_t size = sizes_.varSizes.at(var);
    for (int64_t value = 0; value < size; ++value) {
      env_[var] = value;
      body();
    }
    if (saved) env_[var] = *saved; else env_.erase(var);
  }

  // Loops over every var in vars (in order), calling body innermost.
  void forEachCombination(const std::vector<IndexVar>& vars, size_t first, const std::function<void()>& body) {
    if (first == vars.size()) return body();
    forEachValue(vars[first], [&] { forEachCombination(vars, first + 1, body); });
  }

  bool bound(const IndexVar& var) const { return env_.count(var) > 0; }

  // Access variables of expr that neither the environment nor a sum
  // inside expr binds.
  std::vector<IndexVar> unboundVars(const IndexExpr& expr) const {
    class Collector : public IndexNotationVisitor {
     public:
      explicit Collector(const Evaluator& evaluator) : evaluator_(evaluator) {}
      std::vector<IndexVar> vars;

     protected:
      void visit(const AccessNode* node) override {
        for (const auto& var : node->indices)
          if (!evaluator_.bound(var) && std::find(sums_.begin(), sums_.end(), var) == sums_.end() &&
              std::find(vars.begin(), vars.end(), var) == vars.end())
            vars.push_back(var);
      }
      void visit(const ReductionNode* node) override {
        sums_.push_back(node->var);
        IndexNotationVisitor::visit(node);
        sums_.pop_back();
      }

     private:
      const Evaluator& evaluator_;
      std::vector<IndexVar> sums_;
    } collector(*this);
    collector.walk(expr);
    return collector.vars;
  }

  void assign(const AssignmentNode* node) {
    std::vector<IndexVar> outputVars;
    for (const auto& var : node->lhs.indices())
      if (!bound(var) && std::find(outputVars.begin(), outputVars.end(), var) == outputVars.end())
        outputVars.push_back(var);
    DenseArray& output = array(node->lhs.tensor().name());
    forEachCombination(outputVars, 0, [&] {
      double value = evaluateEinsum(node->rhs);
      double& target = output.at(coordinates(node->lhs.indices()));
      target = node->accumulate ? target + value : value;
    });
  }

  // Einstein summation: each term of a top-level sum or difference is
  // summed over its own unbound variables.
  double evaluateEinsum(const IndexExpr& expr) {
    if (const auto* add = expr.as<AddNode>()) return evaluateEinsum(add->a) + evaluateEinsum(add->b);
    if (const auto* sub = expr.as<SubNode>()) return evaluateEinsum(sub->a) - evaluateEinsum(sub->b);
    double total = 0.0;
    forEachCombination(unboundVars(expr), 0, [&] { total += evaluate(expr); });
    return total;
  }

  std::vector<int64_t> coordinates(const std::vector<IndexVar>& indices) const {
    std::vector<int64_t> result;
    for (const auto& var : indices) {
      auto found = env_.find(var);
      if (found == env_.end())
        throw std::invalid_argument("reference evaluator: index variable " + var.name() + " is not bound here");
      result.push_back(found->second);
    }
    return result;
  }

  double evaluate(const IndexExpr& expr) {
    switch (expr.kind()) {
      case IndexExprKind::Literal: return expr.as<LiteralNode>()->asDouble();
      case IndexExprKind::Access: {
        const auto* node = expr.as<AccessNode>();
        return array(node->tensor.name()).at(coordinates(node->indices));
      }
      case IndexExprKind::Neg: return -evaluate(expr.as<NegNode>()->operand);
      case IndexExprKind::Add: return evaluate(expr.as<AddNode>()->a) + evaluate(expr.as<AddNode>()->b);
      case IndexExprKind::Sub: return evaluate(expr.as<SubNode>()->a) - evaluate(expr.as<SubNode>()->b);
      case IndexExprKind::Mul: return evaluate(expr.as<MulNode>()->a) * evaluate(expr.as<MulNode>()->b);
      case IndexExprKind::Div: return evaluate(expr.as<DivNode>()->a) / evaluate(expr.as<DivNode>()->b);
      case IndexExprKind::Reduction: {
        const auto* node = expr.as<ReductionNode>();
        double total = 0.0;
        forEachValue(node->var, [&] { total += evaluate(node->body); });
        return total;
      }
      case IndexExprKind::Call: return call(expr.as<CallNode>());
    }
    return 0.0;
  }

  double call(const CallNode* node) {
    if (node->name == "perm") return permanent(array(std::get<TensorVar>(node->args[0]).name()));
    std::vector<double> args;
    for (const auto& arg : node->args) args.push_back(evaluate(std::get<IndexExpr>(arg)));
    if (node->name == "abs") return std::fabs(args[0]);
    if (node->name == "sqrt") return std::sqrt(args[0]);
    if (node->name == "exp") return std::exp(args[0]);
    if (node->name == "max") return std::max(args[0], args[1]);
    if (node->name == "min") return std::min(args[0], args[1]);
    throw std::invalid_argument("reference evaluator: unsupported builtin " + node->name);
  }

  void resetWrittenTensors(const IndexStmt& producer) {
    class Writes : public IndexNotationVisitor {
     public:
      std::vector<std::string> names;

     protected:
      void visit(const AssignmentNode* node) override { names.push_back(node->lhs.tensor().name()); }
    } writes;
    writes.walk(producer);
    for (const auto& name : writes.names) arrays_[name] = DenseArray::zeros(sizes_.tensorDims.at(name));
  }

  detail::ResolvedSizes sizes_;
  std::map<std::string, DenseArray> arrays_;
  std::unordered_map<IndexVar, int64_t> env_;
};

}  // namespace

std::map<std::string, DenseArray> evaluate(const std::vector<IndexStmt>& statements,
                                           std::map<std::string, DenseArray> inputs) {
  detail::ResolvedSizes sizes = detail::resolveSizes(statements, inputs);
  Evaluator evaluator(sizes, std::move(inputs));
  for (const auto& [name, dims] : sizes.tensorDims) evaluator.array(name);  // outputs start at zero
  for (const auto& stmt : statements) evaluator.run(stmt);
  return evaluator.take();
}

}  // namespace tcc::test
