#include "oracle.h"

#include <iostream>

#include "tcc/ir/index_queries.h"
#include "tcc/runtime/pack.h"
#include "tcc/test/mlir_oracle.h"

namespace tcc::differential {

std::optional<Outputs> ReferenceOracle::evaluate(const Program& program,
                                                 const std::map<std::string, rt::Coo>& inputs) const {
  std::map<std::string, test::DenseArray> dense;
  for (const auto& [name, coo] : inputs) {
    test::DenseArray array;
    array.dims.assign(coo.dims.begin(), coo.dims.end());
    array.values = rt::toDense(coo);
    dense.emplace(name, std::move(array));
  }
  auto all = test::evaluate(program.statements(), std::move(dense));
  Outputs written;
  for (const auto& statement : program.statements())
    for (const auto& tensor : ir::tensorsWritten(statement)) written[tensor.name()] = all.at(tensor.name());
  return written;
}

bool MlirOracle::available() { return test::mlirTools().has_value(); }

std::optional<Outputs> MlirOracle::evaluate(const Program& program, const std::map<std::string, rt::Coo>& inputs) const {
  if (!available()) return std::nullopt;
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    if (!declared) return std::nullopt;
    tensors.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
  }
  try {
    auto result = test::runThroughMlir(program, tensors);
    if (!result) return std::nullopt;
    return Outputs{{result->output, result->toDense()}};
  } catch (const test::MlirToolError& error) {
    std::cerr << "MLIR oracle: a tool failed, case left to the other oracles:\n" << error.what() << "\n";
    return std::nullopt;
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // an output size the inputs do not give
  }
}

}  // namespace tcc::differential
