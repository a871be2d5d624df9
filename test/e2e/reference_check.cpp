#include "reference_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tcc/test/reference.h"

namespace tcc::e2e {

void expectMatchesReference(const Program& program, const std::map<std::string, Tensor>& inputs,
                            double relativeTolerance) {
  Kernel kernel = compile(program);
  std::map<std::string, test::DenseArray> dense;
  for (const auto& [name, tensor] : inputs) {
    test::DenseArray array;
    array.dims.assign(tensor.dims().begin(), tensor.dims().end());
    array.values = rt::toDense(tensor);
    dense.emplace(name, std::move(array));
  }
  auto outputs = kernel.run(inputs);
  auto expected = test::evaluate(program.statements(), dense);

  bool failed = false;
  for (const auto& statement : kernel.lowered().statements) {
    const std::string& name = statement.output.name();
    SCOPED_TRACE("output " + name);
    auto found = outputs.find(name);
    if (found == outputs.end()) {
      ADD_FAILURE() << "the kernel returned no tensor " << name;
      failed = true;
      continue;
    }
    const Tensor& tensor = found->second;
    EXPECT_NO_THROW(tensor.validate()) << tensor.describe();
    const test::DenseArray& reference = expected.at(name);
    std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
    EXPECT_EQ(dims, reference.dims);
    std::vector<double> actual = rt::toDense(tensor);
    if (actual.size() != reference.values.size()) {
      ADD_FAILURE() << tensor.describe() << ": " << actual.size() << " values, reference has "
                    << reference.values.size();
      failed = true;
      continue;
    }
    double scale = 1;
    for (double v : reference.values) scale = std::max(scale, std::abs(v));
    int mismatches = 0;
    for (size_t k = 0; k < actual.size(); ++k) {
      if (std::abs(actual[k] - reference.values[k]) <= relativeTolerance * scale) continue;
      failed = true;
      if (++mismatches <= 5)
        ADD_FAILURE() << "dense position " << k << ": got " << actual[k] << ", reference " << reference.values[k];
    }
    if (mismatches > 5) ADD_FAILURE() << mismatches << " mismatching positions in all";
  }
  if (failed) ADD_FAILURE() << "generated code:\n" << kernel.source();
}

std::map<std::string, Tensor> readInputs(const Program& program,
                                         const std::vector<std::pair<std::string, std::string>>& bindings) {
  auto ordered = bindings;
  auto isTns = [](const std::string& file) { return file.size() >= 4 && file.substr(file.size() - 4) == ".tns"; };
  std::stable_partition(ordered.begin(), ordered.end(), [&](const auto& b) { return !isTns(b.second); });
  std::map<std::string, int32_t> symbolSizes;
  std::map<std::string, Tensor> inputs;
  for (const auto& [name, file] : ordered) {
    const TensorVar* declared = program.syntax().findTensor(name);
    if (!declared) throw Error("no tensor named " + name);
    std::vector<int32_t> knownDims;
    for (const auto& dimension : declared->shape()) {
      int32_t size = dimension.isFixed() ? static_cast<int32_t>(dimension.size()) : 0;
      if (dimension.isSymbolic() && symbolSizes.count(dimension.symbol())) size = symbolSizes.at(dimension.symbol());
      knownDims.push_back(size);
    }
    Tensor tensor = readTensor(file, declared->format(), declared->datatype(), knownDims);
    for (int mode = 0; mode < declared->order(); ++mode)
      if (declared->dimension(mode).isSymbolic())
        symbolSizes.emplace(declared->dimension(mode).symbol(), tensor.dims()[mode]);
    inputs.emplace(name, std::move(tensor));
  }
  return inputs;
}

}  // namespace tcc::e2e
