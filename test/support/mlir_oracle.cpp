#include "tcc/test/mlir_oracle.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mlir_driver.h"
#include "tcc/ir/index_queries.h"
#include "tcc/mlir.h"

namespace tcc::test {

namespace {

namespace fs = std::filesystem;

// A private directory for one run's files, removed afterwards.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (fs::temp_directory_path() / "tcc-mlir-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw MlirToolError("cannot create a scratch directory");
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::string shellQuoted(const std::string& text) {
  std::string result = "'";
  for (char c : text) result += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return result + "'";
}

std::string readFile(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// MLIR's extended FROSTT format: "order nnz", the dimensions, then one
// 1-based entry per line; values in full precision.
void writeExtendedFrostt(const fs::path& path, const Tensor& tensor) {
  rt::Coo coo = rt::unpack(tensor);
  bool dense = tensor.format().isAllDense();
  std::vector<size_t> kept;
  for (size_t k = 0; k < coo.nnz(); ++k)
    if (!dense || coo.values[k] != 0) kept.push_back(k);
  std::ofstream file(path);
  file << coo.order() << " " << kept.size() << "\n";
  for (int mode = 0; mode < coo.order(); ++mode) file << (mode > 0 ? " " : "") << coo.dims[mode];
  file << "\n";
  char value[40];
  for (size_t k : kept) {
    for (int mode = 0; mode < coo.order(); ++mode) file << coo.coords[mode][k] + 1 << " ";
    std::snprintf(value, sizeof value, "%.17g", coo.values[k]);
    file << value << "\n";
  }
  if (!file.good()) throw MlirToolError("cannot write " + path.string());
}

int64_t outputSize(const ir::IndexStmt& statement, const std::map<std::string, Tensor>& inputs, int mode) {
  const auto* assignment = statement.as<ir::AssignmentNode>();
  const ir::IndexVar& var = assignment->lhs.indices().at(mode);
  auto updated = inputs.find(assignment->lhs.tensor().name());  // an update in place
  if (updated != inputs.end()) return updated->second.dims().at(mode);
  for (const auto& access : ir::accessesOf(assignment->rhs)) {
    const auto& indices = access.indices();
    for (size_t m = 0; m < indices.size(); ++m)
      if (indices[m] == var) return inputs.at(access.tensor().name()).dims().at(m);
  }
  const ir::Dimension& declared = assignment->lhs.tensor().dimension(mode);
  if (declared.isFixed()) return declared.size();
  throw std::invalid_argument("no input gives the size of " + assignment->lhs.tensor().name() + "'s mode " +
                              std::to_string(mode));
}

double valueFromPrinted(int64_t printed, ir::Datatype type) {
  if (type == ir::Datatype::Float64) return std::bit_cast<double>(printed);
  if (type == ir::Datatype::Float32) return std::bit_cast<float>(static_cast<int32_t>(printed));
  return static_cast<double>(printed);
}

// Runs `command` under a time limit, after the shell statements in `setup`.
void runTool(const std::string& setup, const std::string& command, const fs::path& errors, const std::string& what,
             const std::string& module, int timeoutSeconds) {
  std::string limited = setup + "timeout --kill-after=5 " + std::to_string(timeoutSeconds) + " " + command;
  int status = std::system(limited.c_str());
  if (status == 0) return;
  std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 124
                        ? " did not finish in " + std::to_string(timeoutSeconds) + " s"
                        : " failed";
  throw MlirToolError(what + why + ":\n" + readFile(errors) + "\nthe module:\n" + module);
}

// The lowered module as an executable, what `mlir-cpu-runner --O3 -e main`
// would run: mlir-translate-16 to LLVM IR, then clang-16 -O3. The module's
// @main returns nothing, so it is renamed and called from a C main that
// returns 0.
void compileAheadOfTime(const MlirTools& tools, const fs::path& lowered, const ScratchDirectory& scratch,
                        const MlirRunOptions& options, const std::string& module) {
  if (tools.translator.empty() || tools.clang.empty())
    throw MlirToolError("mlir-translate-16 or clang-16 was not found when the build was configured");
  fs::path llvmIr = scratch / "lowered.ll", renamed = scratch / "renamed.ll", entry = scratch / "entry.c",
           errors = scratch / "errors.txt";
  runTool("",
          shellQuoted(tools.translator) + " --mlir-to-llvmir " + shellQuoted(lowered.string()) + " -o " +
              shellQuoted(llvmIr.string()) + " 2> " + shellQuoted(errors.string()),
          errors, "mlir-translate --mlir-to-llvmir", module, options.timeoutSeconds);
  std::string ir = readFile(llvmIr);
  std::ofstream renamedFile(renamed);
  const std::string from = "@main(";
  size_t done = 0;
  for (size_t at = ir.find(from); at != std::string::npos; done = at + from.size(), at = ir.find(from, done))
    renamedFile << std::string_view(ir).substr(done, at - done) << "@tcc_mlir_main(";
  renamedFile << std::string_view(ir).substr(done);
  renamedFile.close();
  std::ofstream(entry) << "void tcc_mlir_main(void);\nint main(void) {\n  tcc_mlir_main();\n  return 0;\n}\n";
  std::string flags;
  for (const std::string& flag : options.compileFlags) {
    flags += ' ';
    flags += shellQuoted(flag);
  }
  fs::path libraries = fs::path(tools.cRunnerUtils).parent_path();
  runTool("",
          shellQuoted(tools.clang) + " -O3" + flags + " -Wno-override-module " + shellQuoted(renamed.string()) + " " +
              shellQuoted(entry.string()) + " -o " + shellQuoted(options.compileTo) + " " +
              shellQuoted(tools.cRunnerUtils) + " " + shellQuoted(tools.runnerUtils) + " -Wl,-rpath," +
              shellQuoted(libraries.string()) + " 2> " + shellQuoted(errors.string()),
          errors, "clang-16 -O3", module, options.timeoutSeconds);
}

}  // namespace

std::optional<MlirTools> mlirTools(std::string* whyNot) {
#ifdef TCC_MLIR_OPT
  return MlirTools{TCC_MLIR_OPT, TCC_MLIR_CPU_RUNNER, TCC_MLIR_C_RUNNER_UTILS, TCC_MLIR_RUNNER_UTILS,
                   TCC_MLIR_TRANSLATE, TCC_MLIR_CLANG};
#else
  if (whyNot) *whyNot = TCC_MLIR_MISSING;
  return std::nullopt;
#endif
}

DenseArray MlirResult::toDense() const {
  DenseArray array = DenseArray::zeros(dims);
  for (size_t k = 0; k < values.size(); ++k) array.at(coordinates[k]) += values[k];
  return array;
}

std::optional<MlirResult> runThroughMlir(const Program& program, const std::map<std::string, Tensor>& inputs,
                                         const MlirRunOptions& options) {
  std::string whyNot;
  auto tools = mlirTools(&whyNot);
  if (!tools && options.runCompiled.empty()) throw MlirToolError(whyNot);
  lowering::MlirKernel kernel;
  try {
    MlirExportOptions exportOptions;
    exportOptions.ignoreSchedule = true;
    kernel = exportMlirKernel(program, exportOptions);
  } catch (const lowering::MlirExportError&) {
    return std::nullopt;  // a program from the C++ builder
  } catch (const MlirExportDiagnosticError&) {
    return std::nullopt;  // from the DSL: located at the statement
  }

  ScratchDirectory scratch;
  MlirDriverRequest request;
  request.repeats = options.repeats;
  request.callsPerSample = std::max(1, options.callsPerSample);
  request.printResult = options.printResult;
  std::string environment;
  int fileIndex = 0;
  for (const auto& tensor : kernel.inputs) {
    // y_before (`+=`, or a statement reading its output) holds y's values.
    const bool prior = tensor.provenance().kind == ir::TensorProvenance::Kind::PriorValues;
    auto found = inputs.find(prior ? tensor.provenance().source.name() : tensor.name());
    if (found == inputs.end()) throw std::invalid_argument("no input named " + tensor.name());
    if (tensor.order() == 0) {
      request.scalarInputs[tensor.name()] = found->second.valueAtPosition(0);
      continue;
    }
    std::string file = (scratch / (tensor.name() + ".tns")).string();
    writeExtendedFrostt(file, found->second);
    environment += "TENSOR" + std::to_string(fileIndex++) + "=" + shellQuoted(file) + " ";
  }
  MlirResult result;
  result.output = kernel.output.name();
  for (int mode = 0; mode < kernel.output.order(); ++mode)
    result.dims.push_back(outputSize(program.statements().front(), inputs, mode));
  request.outputDims = result.dims;

  std::string module = mlirDriverModule(kernel, request);
  fs::path source = scratch / "program.mlir", lowered = scratch / "lowered.mlir", printed = scratch / "printed.txt",
           errors = scratch / "errors.txt";
  std::ofstream(source) << module;
  // Large sparse outputs assembled through MLIR 16's runtime library crash
  // the runner with the default 8 MiB stack (sparse add on bcsstk16, say);
  // the same holds for a compiled program.
  auto runExecutable = [&](const std::string& executable, const std::string& runtimeLibraryDir) {
    runTool("ulimit -s unlimited; ",
            "env " + environment + "LD_LIBRARY_PATH=" + shellQuoted(runtimeLibraryDir) + " " + shellQuoted(executable) +
                " > " + shellQuoted(printed.string()) + " 2> " + shellQuoted(errors.string()),
            errors, "the compiled MLIR program " + executable, module, options.timeoutSeconds);
  };
  if (!options.runCompiled.empty()) {
    runExecutable(options.runCompiled, options.runtimeLibraryDir);
  } else {
    std::string pipeline = options.sparseCompilerOptions.empty()
                               ? "--sparse-compiler"
                               : "--sparse-compiler=" + shellQuoted(options.sparseCompilerOptions);
    runTool("",
            shellQuoted(tools->optimizer) + " " + pipeline + " " + shellQuoted(source.string()) + " -o " +
                shellQuoted(lowered.string()) + " 2> " + shellQuoted(errors.string()),
            errors, "mlir-opt --sparse-compiler", module, options.timeoutSeconds);
    if (!options.compileTo.empty()) {
      compileAheadOfTime(*tools, lowered, scratch, options, module);
      runExecutable(options.compileTo, fs::path(tools->cRunnerUtils).parent_path().string());
    } else {
      std::string runtimeLibraries = shellQuoted(tools->cRunnerUtils + "," + tools->runnerUtils);
      runTool("ulimit -s unlimited; ",
              "env " + environment + shellQuoted(tools->runner) + " --O3 -e main -entry-point-result=void -shared-libs=" +
                  runtimeLibraries + " " + shellQuoted(lowered.string()) + " > " + shellQuoted(printed.string()) +
                  " 2> " + shellQuoted(errors.string()),
              errors, "mlir-cpu-runner --O3", module, options.timeoutSeconds);
    }
  }

  std::ifstream numbers(printed);
  int64_t number = 0;
  for (int r = 0; r < options.repeats; ++r) {
    if (!(numbers >> number)) throw MlirToolError("the MLIR program printed fewer times than repeats");
    result.kernelSeconds.push_back(number * 1e-9);
  }
  if (!options.printResult) return result;
  ir::Datatype type = kernel.output.datatype();
  std::vector<int64_t> coordinate(kernel.output.order());
  while (true) {
    for (auto& c : coordinate)
      if (!(numbers >> c)) return result;
    if (!(numbers >> number)) throw MlirToolError("the MLIR program's output ends inside an entry");
    result.coordinates.push_back(coordinate);
    result.values.push_back(valueFromPrinted(number, type));
    if (coordinate.empty()) return result;
  }
}

}  // namespace tcc::test
