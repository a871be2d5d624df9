// Runs a DSL program through tcc and through MLIR 16 and compares both with
// the dense reference evaluator.
#pragma once

#include <map>
#include <string>

#include "tcc/runtime/coo.h"
#include "tcc/tcc.h"
#include "tcc/test/mlir_oracle.h"

namespace tcc::test {

// Skips the current test (with the reason) when the MLIR tools are missing.
#define TCC_SKIP_WITHOUT_MLIR()                                   \
  do {                                                            \
    std::string whyNot;                                           \
    if (!::tcc::test::mlirTools(&whyNot)) GTEST_SKIP() << whyNot; \
  } while (0)

// Inputs are packed into their declared formats. Fails the current test
// when MLIR refuses the program or any of the three results differ by more
// than relativeTolerance times the largest reference magnitude (at least 1).
void expectMlirMatches(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                       double relativeTolerance = 1e-10, const MlirRunOptions& options = {});

// What exporting the DSL text throws ("" when it exports).
std::string mlirExportErrorOf(const std::string& dsl);

rt::Coo randomSparse(std::vector<int32_t> dims, double density, uint64_t seed);
rt::Coo randomDense(std::vector<int32_t> dims, uint64_t seed);
// A real matrix from the shared data folder with seeded values.
rt::Coo realMatrix(const std::string& name);

}  // namespace tcc::test
