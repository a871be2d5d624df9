#include "mlir_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tcc/mlir.h"
#include "tcc/runtime/random.h"
#include "tcc/test/mlir_oracle.h"
#include "tcc/test/reference.h"

namespace tcc::test {

namespace {

// Reports up to five differing positions; true when all agree.
bool expectClose(const std::string& what, const std::vector<double>& actual, const DenseArray& reference,
                 double relativeTolerance) {
  if (actual.size() != reference.values.size()) {
    ADD_FAILURE() << what << ": " << actual.size() << " values, reference has " << reference.values.size();
    return false;
  }
  double scale = 1;
  for (double v : reference.values) scale = std::max(scale, std::abs(v));
  int mismatches = 0;
  for (size_t k = 0; k < actual.size(); ++k) {
    if (std::abs(actual[k] - reference.values[k]) <= relativeTolerance * scale) continue;
    if (++mismatches <= 5)
      ADD_FAILURE() << what << ", dense position " << k << ": got " << actual[k] << ", reference "
                    << reference.values[k];
  }
  return mismatches == 0;
}

}  // namespace

void expectMlirMatches(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                       double relativeTolerance, const MlirRunOptions& options) {
  Program program = Program::fromText(dsl, "test.tc");
  std::map<std::string, Tensor> packed;
  std::map<std::string, DenseArray> dense;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    ASSERT_NE(declared, nullptr) << name;
    Tensor tensor = rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype()));
    DenseArray array;
    array.dims.assign(tensor.dims().begin(), tensor.dims().end());
    array.values = rt::toDense(tensor);
    dense.emplace(name, std::move(array));
    packed.emplace(name, std::move(tensor));
  }
  auto expected = evaluate(program.statements(), dense);
  auto fromMlir = runThroughMlir(program, packed, options);
  ASSERT_TRUE(fromMlir.has_value()) << "MLIR export refused: " << mlirExportErrorOf(dsl);
  const DenseArray& reference = expected.at(fromMlir->output);
  EXPECT_EQ(fromMlir->dims, reference.dims);
  bool mlirAgrees = expectClose("MLIR", fromMlir->toDense().values, reference, relativeTolerance);
  auto fromTcc = compile(program).run(packed).at(fromMlir->output);
  bool tccAgrees = expectClose("tcc", rt::toDense(fromTcc), reference, relativeTolerance);
  if (!mlirAgrees || !tccAgrees) ADD_FAILURE() << "the MLIR kernel:\n" << exportMlir(program, {"kernel", true});
}

std::string mlirExportErrorOf(const std::string& dsl) {
  try {
    exportMlir(Program::fromText(dsl, "test.tc"));
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

rt::Coo randomSparse(std::vector<int32_t> dims, double density, uint64_t seed) {
  return rt::randomUniform(dims, density, seed);
}

rt::Coo randomDense(std::vector<int32_t> dims, uint64_t seed) { return rt::randomUniform(dims, 1.0, seed); }

rt::Coo realMatrix(const std::string& name) {
  rt::Coo coo = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  std::mt19937_64 random(std::hash<std::string>{}(name));
  std::uniform_real_distribution<double> magnitude(0.5, 1.5);
  for (double& value : coo.values) value = (random() & 1 ? 1 : -1) * magnitude(random) * (value == 0 ? 1 : value);
  return coo;
}

}  // namespace tcc::test
