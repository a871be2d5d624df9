// Concretization preserves meaning on random einsums: the reference
// evaluator runs the einsum (Einstein summation) and the concrete notation
// (loops, accumulation, where temporaries) and they must agree.
#include <gtest/gtest.h>

#include <random>

#include "tcc/ir/builder.h"
#include "tcc/ir/concretize.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_visitor.h"
#include "tcc/test/reference.h"

namespace tcc::ir {
namespace {

using test::DenseArray;

// Access variables of expr that no sum inside it binds.
std::vector<IndexVar> freeVarsOf(const IndexExpr& expr) {
  class Collector : public IndexNotationVisitor {
   public:
    std::vector<IndexVar> vars, sums;

   protected:
    void visit(const AccessNode* node) override {
      for (const auto& var : node->indices)
        if (std::find(sums.begin(), sums.end(), var) == sums.end() &&
            std::find(vars.begin(), vars.end(), var) == vars.end())
          vars.push_back(var);
    }
    void visit(const ReductionNode* node) override {
      sums.push_back(node->var);
      IndexNotationVisitor::visit(node);
      sums.pop_back();
    }
  } collector;
  collector.walk(expr);
  return collector.vars;
}

class RandomEinsums {
 public:
  explicit RandomEinsums(unsigned seed) : generator_(seed) {}

  IndexVar i{"i"}, j{"j"}, k{"k"}, l{"l"};
  std::vector<IndexVar> vars{i, j, k, l};
  std::map<std::string, int64_t> sizeOf{{"i", 2}, {"j", 3}, {"k", 2}, {"l", 3}};
  std::vector<std::pair<TensorVar, std::vector<IndexVar>>> operands{
      {TensorVar("B", {"I", "K"}, Format::csr()), {i, k}}, {TensorVar("C", {"K", "J"}, Format::csc()), {k, j}},
      {TensorVar("D", {"J"}, Format::sparseVector()), {j}}, {TensorVar("E", {"I", "L"}), {i, l}},
      {TensorVar("F", {"L", "K", "J"}, Format::csf(3)), {l, k, j}}};

  std::map<std::string, DenseArray> inputs() {
    std::map<std::string, DenseArray> arrays;
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (const auto& [tensor, indices] : operands) {
      std::vector<int64_t> dims;
      for (const auto& var : indices) dims.push_back(sizeOf.at(var.name()));
      DenseArray array = DenseArray::zeros(dims);
      for (double& v : array.values) v = value(generator_);
      arrays[tensor.name()] = array;
    }
    return arrays;
  }

  IndexStmt assignment() {
    std::vector<IndexVar> lhsVars;
    for (const auto& var : vars)
      if (coin(0.4)) lhsVars.push_back(var);
    std::shuffle(lhsVars.begin(), lhsVars.end(), generator_);
    std::vector<Dimension> shape;
    for (const auto& var : lhsVars) shape.push_back(Dimension(sizeOf.at(var.name())));
    Format format = lhsVars.size() == 2 && coin(0.5) ? Format::csc() : Format::denseOfOrder(static_cast<int>(lhsVars.size()));
    TensorVar output("A", shape, format);
    std::vector<IndexVar> bound = lhsVars;
    IndexExpr rhs = expression(3, bound);
    return coin(0.2) ? (output(lhsVars) += rhs) : (output(lhsVars) = rhs);
  }

 private:
  bool coin(double p) { return std::bernoulli_distribution(p)(generator_); }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(generator_); }

  // `bound` holds output and enclosing sum variables, which a new sum may
  // not reuse.
  IndexExpr expression(int depth, std::vector<IndexVar>& bound) {
    if (depth == 0 || coin(0.25)) {
      if (coin(0.15)) return IndexExpr(static_cast<double>(pick(5) - 2) / 2);
      const auto& [tensor, indices] = operands[pick(static_cast<int>(operands.size()))];
      return tensor(indices);
    }
    switch (pick(5)) {
      case 0: return expression(depth - 1, bound) + expression(depth - 1, bound);
      case 1: return expression(depth - 1, bound) - expression(depth - 1, bound);
      case 2: return -expression(depth - 1, bound);
      case 3: {
        // Sum over a variable the body uses and no output or enclosing sum
        // binds (the body may still sum over it inside: shadowing).
        IndexExpr body = expression(depth - 1, bound);
        std::vector<IndexVar> candidates;
        for (const auto& var : freeVarsOf(body))
          if (std::find(bound.begin(), bound.end(), var) == bound.end()) candidates.push_back(var);
        if (candidates.empty()) return body;
        return sum(candidates[pick(static_cast<int>(candidates.size()))], body);
      }
      default: break;
    }
    return expression(depth - 1, bound) * expression(depth - 1, bound);
  }

  std::mt19937 generator_;
};

TEST(ConcretizeRandom, ConcreteNotationComputesWhatTheEinsumMeans) {
  int checked = 0;
  for (unsigned seed = 0; seed < 300; ++seed) {
    RandomEinsums random(seed);
    IndexStmt einsum = random.assignment();
    IndexStmt concrete;
    try {
      concrete = concretize(einsum);
    } catch (const std::invalid_argument& error) {
      // Only sums over a variable their body does not use are refused.
      ASSERT_NE(std::string(error.what()).find("which its body does not use"), std::string::npos)
          << toString(einsum) << ": " << error.what();
      continue;
    }
    SCOPED_TRACE(toString(einsum) + "  ->  " + toString(concrete));
    ASSERT_TRUE(isConcrete(concrete));
    auto inputs = random.inputs();
    const TensorVar output = tensorsWritten(einsum).at(0);
    if (einsum.as<AssignmentNode>()->accumulate) {
      DenseArray start = DenseArray::zeros({});
      start.dims.clear();
      for (const auto& dimension : output.shape()) start.dims.push_back(dimension.size());
      start.values.assign(start.size(), 0.5);
      inputs["A"] = start;
    }
    std::vector<double> expected;
    try {
      expected = test::evaluate({einsum}, inputs).at("A").values;
    } catch (const std::invalid_argument&) {
      continue;  // e.g. sum(l, 0.5): nothing gives l a range
    }
    ++checked;
    std::vector<double> actual;
    ASSERT_NO_THROW(actual = test::evaluate({concrete}, inputs).at("A").values);
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t n = 0; n < expected.size(); ++n)
      ASSERT_NEAR(expected[n], actual[n], 1e-9 * (1 + std::abs(expected[n]))) << "at " << n;
  }
  EXPECT_GT(checked, 250);
}

}  // namespace
}  // namespace tcc::ir
