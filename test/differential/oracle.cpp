#include "oracle.h"

#include "tcc/ir/index_queries.h"
#include "tcc/runtime/pack.h"

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

}  // namespace tcc::differential
