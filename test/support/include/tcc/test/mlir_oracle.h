// MLIR 16 as a second oracle: a program exported with --emit mlir, driven
// by a generated @main (inputs read with sparse_tensor.new from files this
// writes, the kernel called, every stored result entry printed exactly),
// compiled by `mlir-opt-16 --sparse-compiler` and run by
// `mlir-cpu-runner-16 --O3` as subprocesses.
//
//   auto result = tcc::test::runThroughMlir(program, inputs);
//   if (!result) ...;  // MLIR 16 cannot express the program: not a failure
//   DenseArray fromMlir = result->toDense();
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {

// The tools and runtime libraries found when the build was configured.
struct MlirTools {
  std::string optimizer;     // mlir-opt-16
  std::string runner;        // mlir-cpu-runner-16
  std::string cRunnerUtils;  // libmlir_c_runner_utils.so
  std::string runnerUtils;   // libmlir_runner_utils.so
  // For compiling ahead of time (MlirRunOptions::compileTo); empty when the
  // build found none.
  std::string translator;  // mlir-translate-16
  std::string clang;       // clang-16
};
// nullopt (with the reason in `whyNot`) when the build found no MLIR 16 tools.
std::optional<MlirTools> mlirTools(std::string* whyNot = nullptr);

// A tool failed (mlir-opt refused the module, the program crashed): a bug
// in the export or in MLIR, never an expected refusal. what() holds the
// tool's messages and the module.
class MlirToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MlirRunOptions {
  // Timed samples of the kernel, taken with rtclock() inside the program
  // (file reading and compilation excluded); the printed result comes from
  // one more call after them.
  int repeats = 1;
  // Each of the `repeats` samples times this many back-to-back calls
  // (rtclock() counts microseconds) and reports their mean.
  int callsPerSample = 1;
  bool printResult = true;  // false: times only (the result stays empty)
  // Options of the sparse-compiler pipeline, as in
  // `--sparse-compiler="enable-runtime-library=false"`; empty: its defaults.
  std::string sparseCompilerOptions;
  // Each tool is stopped after this long (MlirToolError): a crashing
  // runner can hang in its crash handler.
  int timeoutSeconds = 300;
  // Ahead of time, for a machine without MLIR: when set, the lowered module
  // is translated to LLVM IR (mlir-translate-16 --mlir-to-llvmir) and
  // compiled by `clang-16 -O3 compileFlags` into this executable, linked
  // against the runner libraries, which then runs in place of
  // mlir-cpu-runner. The executable holds `repeats`, `callsPerSample`,
  // `printResult` and the output's size; its inputs are read from files at
  // run time.
  std::string compileTo;
  std::vector<std::string> compileFlags = {"-march=native"};
  // When set: no MLIR tool runs; this executable (made by `compileTo`, here
  // or elsewhere, from the same program with the same options) reads the
  // inputs and prints, with `runtimeLibraryDir` as LD_LIBRARY_PATH (the folder
  // holding the runner libraries it was linked against).
  std::string runCompiled;
  std::string runtimeLibraryDir;
};

struct MlirResult {
  std::string output;                            // the output tensor's name
  std::vector<int64_t> dims;                     // the output's dimensions
  std::vector<std::vector<int64_t>> coordinates; // one per entry, in mode order
  std::vector<double> values;                    // exact (printed as bits)
  std::vector<double> kernelSeconds;             // per call, one per sample

  DenseArray toDense() const;  // repeated coordinates add up
};

// Runs `program` (one statement; its schedule is ignored, as it does not
// change the result) on `inputs` through MLIR 16. Returns nullopt when the
// program cannot be exported (MlirExportDiagnosticError, or
// lowering::MlirExportError for a program from the C++ builder); throws
// MlirToolError when a tool fails and std::invalid_argument when an input
// is missing or an output size cannot be found from the inputs.
std::optional<MlirResult> runThroughMlir(const Program& program, const std::map<std::string, Tensor>& inputs,
                                         const MlirRunOptions& options = {});

}  // namespace tcc::test
