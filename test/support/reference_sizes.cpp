#include "reference_sizes.h"

#include <optional>
#include <stdexcept>

#include "tcc/ir/index_visitor.h"

namespace tcc::test::detail {

namespace {

using ir::IndexVar;
using ir::TensorVar;

struct TensorUse {
  TensorVar tensor;
  std::vector<IndexVar> indices;  // empty for a whole-tensor call argument
};

class UseCollector : public ir::IndexNotationVisitor {
 public:
  std::vector<TensorUse> uses;
  std::vector<TensorVar> tensors;
  std::vector<IndexVar> vars;

 protected:
  void visit(const ir::AccessNode* node) override {
    uses.push_back({node->tensor, node->indices});
    tensors.push_back(node->tensor);
    vars.insert(vars.end(), node->indices.begin(), node->indices.end());
  }
  void visit(const ir::CallNode* node) override {
    for (const auto& arg : node->args)
      if (const auto* tensor = std::get_if<TensorVar>(&arg)) tensors.push_back(*tensor);
    IndexNotationVisitor::visit(node);
  }
  void visit(const ir::ReductionNode* node) override {
    vars.push_back(node->var);
    IndexNotationVisitor::visit(node);
  }
  void visit(const ir::ForallNode* node) override {
    vars.push_back(node->indexVar);
    IndexNotationVisitor::visit(node);
  }
  void visit(const ir::SuchThatNode* node) override {
    if (!node->relations.empty())
      throw std::invalid_argument("reference evaluator: provenance relations are not supported; "
                                  "evaluate the unscheduled statement");
    IndexNotationVisitor::visit(node);
  }
};

class SizeTable {
 public:
  // Records size for a tensor mode; false if it was already known.
  void bindMode(const TensorVar& tensor, int mode, int64_t size, const std::string& why) {
    auto& dims = dims_[tensor.name()];
    auto& known = dims.at(mode);
    if (known && *known != size)
      throw std::invalid_argument("reference evaluator: mode " + std::to_string(mode) + " of " +
                                  tensor.name() + " has size " + std::to_string(*known) + " and " +
                                  std::to_string(size) + " (" + why + ")");
    if (!known) changed = true;
    known = size;
    const auto& dimension = tensor.dimension(mode);
    if (dimension.isSymbolic()) bindSymbol(dimension.symbol(), size);
  }

  void bindSymbol(const std::string& symbol, int64_t size) {
    auto [entry, inserted] = symbols_.emplace(symbol, size);
    if (!inserted && entry->second != size)
      throw std::invalid_argument("reference evaluator: dimension " + symbol + " is bound to sizes " +
                                  std::to_string(entry->second) + " and " + std::to_string(size));
    changed = changed || inserted;
  }

  void bindVar(const IndexVar& var, int64_t size) {
    auto [entry, inserted] = vars_.emplace(var, size);
    if (!inserted && entry->second != size)
      throw std::invalid_argument("reference evaluator: index variable " + var.name() +
                                  " is bound to sizes " + std::to_string(entry->second) + " and " +
                                  std::to_string(size));
    changed = changed || inserted;
  }

  void addTensor(const TensorVar& tensor) {
    auto [entry, inserted] = dims_.emplace(tensor.name(), std::vector<std::optional<int64_t>>(tensor.order()));
    if (!inserted && static_cast<int>(entry->second.size()) != tensor.order())
      throw std::invalid_argument("reference evaluator: two tensors named " + tensor.name() +
                                  " have different orders");
    tensors_.emplace(tensor.name(), tensor);
  }

  std::optional<int64_t> mode(const TensorVar& tensor, int m) const { return dims_.at(tensor.name()).at(m); }
  std::optional<int64_t> symbol(const std::string& s) const {
    auto found = symbols_.find(s);
    return found == symbols_.end() ? std::nullopt : std::optional(found->second);
  }
  std::optional<int64_t> var(const IndexVar& v) const {
    auto found = vars_.find(v);
    return found == vars_.end() ? std::nullopt : std::optional(found->second);
  }

  ResolvedSizes finish(const std::vector<IndexVar>& allVars) const {
    ResolvedSizes result;
    for (const auto& v : allVars) {
      auto size = var(v);
      if (!size)
        throw std::invalid_argument("reference evaluator: nothing determines the range of index variable " +
                                    v.name());
      result.varSizes[v] = *size;
    }
    for (const auto& [name, dims] : dims_) {
      std::vector<int64_t> sizes;
      for (size_t m = 0; m < dims.size(); ++m) {
        if (!dims[m])
          throw std::invalid_argument("reference evaluator: nothing determines the size of mode " +
                                      std::to_string(m) + " of " + name);
        sizes.push_back(*dims[m]);
      }
      result.tensorDims[name] = sizes;
    }
    result.tensors = tensors_;
    return result;
  }

  bool changed = false;

 private:
  std::map<std::string, std::vector<std::optional<int64_t>>> dims_;
  std::map<std::string, TensorVar> tensors_;
  std::map<std::string, int64_t> symbols_;
  std::unordered_map<IndexVar, int64_t> vars_;
};

}  // namespace

ResolvedSizes resolveSizes(const std::vector<ir::IndexStmt>& statements,
                           const std::map<std::string, DenseArray>& inputs) {
  UseCollector collector;
  for (const auto& stmt : statements) {
    if (!stmt.defined()) throw std::invalid_argument("reference evaluator: undefined statement");
    collector.walk(stmt);
  }
  SizeTable table;
  for (const auto& tensor : collector.tensors) table.addTensor(tensor);
  for (const auto& tensor : collector.tensors) {
    for (int mode = 0; mode < tensor.order(); ++mode)
      if (tensor.dimension(mode).isFixed()) table.bindMode(tensor, mode, tensor.dimension(mode).size(), "declared");
    auto input = inputs.find(tensor.name());
    if (input == inputs.end()) continue;
    const DenseArray& array = input->second;
    if (array.order() != tensor.order())
      throw std::invalid_argument("reference evaluator: input " + tensor.name() + " has " +
                                  std::to_string(array.order()) + " dims for a tensor of order " +
                                  std::to_string(tensor.order()));
    if (static_cast<int64_t>(array.values.size()) != array.size())
      throw std::invalid_argument("reference evaluator: input " + tensor.name() + " has " +
                                  std::to_string(array.values.size()) + " values for its dims");
    for (int mode = 0; mode < tensor.order(); ++mode) table.bindMode(tensor, mode, array.dims[mode], "input");
  }
  // Propagate between modes, shared symbols and index variables until stable.
  do {
    table.changed = false;
    for (const auto& tensor : collector.tensors)
      for (int mode = 0; mode < tensor.order(); ++mode) {
        const auto& dimension = tensor.dimension(mode);
        if (dimension.isSymbolic())
          if (auto size = table.symbol(dimension.symbol())) table.bindMode(tensor, mode, *size, "shared dimension");
      }
    for (const auto& use : collector.uses)
      for (int mode = 0; mode < static_cast<int>(use.indices.size()); ++mode) {
        if (auto size = table.mode(use.tensor, mode)) table.bindVar(use.indices[mode], *size);
        if (auto size = table.var(use.indices[mode])) table.bindMode(use.tensor, mode, *size, "index variable " + use.indices[mode].name());
      }
  } while (table.changed);
  return table.finish(collector.vars);
}

}  // namespace tcc::test::detail
