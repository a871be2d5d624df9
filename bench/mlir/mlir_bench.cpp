// Single-threaded run time of tcc-generated kernels against the same
// computation compiled by MLIR 16's sparsifier (`mlir-opt-16
// --sparse-compiler`, run by `mlir-cpu-runner-16 --O3`), on real matrices
// and synthetic power-law 3-tensors, with each MLIR result checked against
// tcc's.
//
//   tcc_mlir_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,sddmm,ttm,spgemm,add,mttkrp]
//                  [--fp strict|fast] [--no-warm-up] [--before] [--split] [--aot-build DIR [--aot-flags "FLAGS"] | --aot DIR]
//                  [MATRIX ...]
//
// --split adds a table for SpMV: tcc's compiled entry point alone (on an
// output allocated once; the kernel stores every y(i)) and Kernel::run's
// timed calls, both timed as MLIR's samples are (batches of calls, a
// sample's mean), beside MLIR's time, whose calls allocate and zero y.
//
// --before compiles tcc's kernels in the forms before strict row sums
// through Clang ran long rows four a trip
// (CppLoopForms::strictLongRowsFourATrip = false), for comparisons in one
// build.
//
// On each matrix M: SpMV, SpMM (64 columns), SDDMM in TACO's form
// A(i,j) = B(i,j) * C(i,k) * D(k,j) (B = M, K = 32), TTM A(i,j,k) =
// B(i,j,l) * C(k,l) (B CSF, M's rows folded into its first two modes,
// B(r / 8, r % 8, c) = M(r, c); K = 16), SpGEMM M * M and M - M^T / 2;
// MTTKRP on two synthetic power-law 3-tensors.
//
// MLIR runs in both of its pipeline's storage modes: through its runtime
// library (`--sparse-compiler`, the default) and as generated code
// (`--sparse-compiler="enable-runtime-library=false"`). Rounds interleave
// them with tcc: one MLIR process per mode (N + 1 timed samples inside the
// program, the first dropped as warm-up), then N tcc runs after as many
// untimed ones as one MLIR sample holds (--no-warm-up: none), R times.
// Times are medians over all samples. Prints one Markdown row per kernel
// and input, then the geometric mean of MLIR time / tcc time per kernel
// (> 1: tcc faster).
//
// Ahead of time, for a machine without MLIR (the GPU machine's host):
// `--aot-build DIR` compiles every MLIR program here, as mlir-cpu-runner
// --O3 would (mlir-opt-16 --sparse-compiler, mlir-translate-16, then
// clang-16 -O3 with --aot-flags, by default "-march=x86-64-v4
// -mtune=sapphirerapids"), into DIR with the runner libraries in DIR/lib,
// and runs them here as the bench; `--aot DIR` on the other machine runs
// those executables in place of the MLIR tools. The executables read the
// inputs from files at run time but hold the repeat count and the calls per
// sample (DIR/manifest.txt), so --repeat is taken from there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tcc/runtime/random.h"
#include "tcc/lowering/cpp_loop_forms.h"
#include "tcc/tcc.h"
#include "tcc/test/mlir_oracle.h"
#include "../common/cpu_kernel_cases.h"
#include "../common/entry_point_calls.h"
#include "../common/result_entries.h"
#include "../common/mlir_entries.h"
#include "../common/machine.h"
#include "../common/stats.h"

namespace {

// tcc's floating-point mode for the whole run (--fp); strict by default.
tcc::frontend::FloatingPointMode floatingPoint = tcc::frontend::FloatingPointMode::Strict;

// --no-warm-up: tcc's runs of a round are timed from the first call.
bool warmUp = true;

// --before: tcc's kernels in the form before (see the top of the file).
bool before = false;

// --split: SpMV's tcc time split (see the top of the file).
bool split = false;

// Ahead-of-time mode (--aot-build, --aot); see the top of the file.
struct AheadOfTime {
  std::string directory;               // empty: the MLIR tools run here
  bool build = false;                  // --aot-build: compile, then run
  std::vector<std::string> flags = {"-march=x86-64-v4", "-mtune=sapphirerapids"};
  std::map<std::string, std::pair<int, int>> manifest;  // executable -> repeats, calls per sample
};
AheadOfTime aot;

std::string slug(const std::string& text) {
  std::string result;
  for (char c : text) result += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return result;
}

tcc::CompileOptions compileOptions() {
  tcc::CompileOptions options;
  options.floatingPoint = floatingPoint;
  return options;
}


// The two ways MLIR 16's sparse-compiler pipeline can build sparse storage:
// through its runtime library (the default) or as generated code.
const char* const kCodegenOptions = "enable-runtime-library=false";

struct Row {
  std::string kernel, input;
  double tccSeconds = 0, mlirSeconds = 0, mlirCodegenSeconds = NAN, difference = 0;
  double entryBatchedSeconds = NAN, runBatchedSeconds = NAN;  // --split
};

Row measure(const KernelCase& kernelCase, int repeat, int rounds) {
  const std::string& kernelName = kernelCase.kernel;
  const std::string& input = kernelCase.input;
  tcc::Program program = tcc::Program::fromText(kernelCase.dsl, kernelName + ".tc");
  std::map<std::string, tcc::Tensor> inputs = packedInputs(program, kernelCase);
  tcc::Kernel kernel = tcc::compile(program, compileOptions());
  tcc::Tensor tccResult = kernel.run(inputs).at(kernelCase.output);  // warm-up
  // Batch MLIR's calls so that a sample spans about a millisecond.
  double estimate = median(kernel.run(inputs, tcc::RunOptions{3}).seconds);
  int callsPerSample = static_cast<int>(std::clamp(std::ceil(1e-3 / std::max(estimate, 1e-9)), 1.0, 1000.0));

  Row row{kernelName, input};
  Entries expected = entriesOf(tccResult);
  // One MLIR process per pipeline variant; false when it fails.
  auto runMlir = [&](const std::string& pipelineOptions, bool check, std::vector<double>& seconds) {
    tcc::test::MlirRunOptions options;
    options.repeats = repeat + 1;
    options.callsPerSample = callsPerSample;
    options.printResult = check;
    options.sparseCompilerOptions = pipelineOptions;
    if (!aot.directory.empty()) {
      // The executable prints its result every time: every run is checked.
      std::string name = slug(kernelName + "-" + input + (pipelineOptions.empty() ? "-runtime" : "-codegen"));
      std::string path = aot.directory + "/" + name;
      options.printResult = check = true;
      if (aot.build && !aot.manifest.count(name)) {
        options.compileTo = path;
        options.compileFlags = aot.flags;
        aot.manifest[name] = {options.repeats, options.callsPerSample};
        std::ofstream(aot.directory + "/manifest.txt", std::ios::app)
            << name << " " << options.repeats << " " << options.callsPerSample << "\n";
      } else {
        auto found = aot.manifest.find(name);
        if (found == aot.manifest.end()) throw tcc::test::MlirToolError(name + " is not in " + aot.directory);
        std::tie(options.repeats, options.callsPerSample) = found->second;
        options.runCompiled = path;
        options.runtimeLibraryDir = (std::filesystem::path(aot.directory) / "lib").string();
      }
    }
    auto fromMlir = tcc::test::runThroughMlir(program, inputs, options);
    if (!fromMlir) throw std::runtime_error("MLIR 16 cannot express " + kernelName);
    seconds.insert(seconds.end(), fromMlir->kernelSeconds.begin() + 1, fromMlir->kernelSeconds.end());
    if (check) row.difference = std::max(row.difference, relativeDifference(entriesOf(*fromMlir), expected));
  };
  std::vector<double> tccSeconds, mlirSeconds, codegenSeconds, entrySamples, runBatchedSamples;
  std::optional<EntryPointCalls> entry;
  if (split && kernelName == "SpMV") entry.emplace(kernel, inputs, kernelCase.output);
  bool codegenWorks = true;
  for (int round = 0; round < rounds; ++round) {
    runMlir("", round == 0, mlirSeconds);
    if (codegenWorks) try {
        runMlir(kCodegenOptions, round == 0, codegenSeconds);
      } catch (const tcc::test::MlirToolError& error) {
        std::fprintf(stderr, "%s on %s with %s: %.300s\n", kernelName.c_str(), input.c_str(), kCodegenOptions,
                     error.what());
        codegenWorks = false;
      }
    // tcc's first batch of a round is dropped, as each MLIR process drops
    // its first sample (the same calls).
    if (warmUp) kernel.run(inputs, tcc::RunOptions{callsPerSample});
    auto timed = kernel.run(inputs, tcc::RunOptions{repeat});
    tccSeconds.insert(tccSeconds.end(), timed.seconds.begin(), timed.seconds.end());
    for (int r = 0; entry && *entry && r < repeat; ++r) {
      runBatchedSamples.push_back(runBatchMean(kernel, inputs, callsPerSample));
      entrySamples.push_back(entry->batchMean(callsPerSample));
    }
  }
  row.tccSeconds = median(tccSeconds);
  row.mlirSeconds = median(mlirSeconds);
  if (codegenWorks) row.mlirCodegenSeconds = median(codegenSeconds);
  if (!entrySamples.empty()) row.entryBatchedSeconds = median(entrySamples), row.runBatchedSeconds = median(runBatchedSamples);
  return row;
}

std::vector<Row> matrixRows(const std::string& name, const std::vector<std::string>& kernels, int repeat, int rounds) {
  tcc::rt::Coo a = readMatrix(name);
  std::vector<Row> rows;
  for (const auto& kernel : kernels) try {
    if (kernel == "mttkrp") continue;  // on the power-law tensors instead (mttkrpRow)
    if (auto kernelCase = kernelCaseOf(kernel, name, a)) rows.push_back(measure(*kernelCase, repeat, rounds));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s on %s: %s\n", kernel.c_str(), name.c_str(), error.what());
  }
  return rows;
}

struct PowerLawTensor {
  std::string name;
  std::vector<int32_t> dims;
  int64_t nnz;
  double exponent;
};

Row mttkrpRow(const PowerLawTensor& spec, int repeat, int rounds) {
  tcc::rt::Coo b = tcc::rt::randomPowerLawTensor(spec.dims, spec.nnz, spec.exponent, 11);
  b.sort();
  return measure(mttkrpCase(spec.name, std::move(b)), repeat, rounds);
}

// --aot-build: an empty DIR with the runner libraries the executables load,
// under their sonames, in DIR/lib. Debian links them against libLLVM-16
// (118 MB), though they use none of its symbols (their undefined symbols
// are libc's, libstdc++'s and libmlir_float16_utils's): an empty library of
// that soname stands in for it there.
bool stageRunnerLibraries(const std::string& directory) {
  namespace fs = std::filesystem;
  std::string whyNot;
  auto tools = tcc::test::mlirTools(&whyNot);
  if (!tools) {
    std::cerr << "tcc_mlir_bench: " << whyNot << "\n";
    return false;
  }
  if (tools->clang.empty()) {
    std::cerr << "tcc_mlir_bench: --aot-build needs clang-16 and mlir-translate-16\n";
    return false;
  }
  fs::path lib = fs::path(directory) / "lib";
  fs::remove_all(directory);
  fs::create_directories(lib);
  fs::path libraries = fs::path(tools->cRunnerUtils).parent_path();
  for (const char* name : {"libmlir_c_runner_utils.so.16", "libmlir_runner_utils.so.16", "libmlir_float16_utils.so.16"})
    fs::copy_file(libraries / name, lib / name);
  std::string stub = "'" + tools->clang + "' -shared -x c /dev/null -Wl,-soname,libLLVM-16.so.1 -o '" +
                     (lib / "libLLVM-16.so.1").string() + "'";
  if (std::system(stub.c_str()) != 0) {
    std::cerr << "tcc_mlir_bench: " << stub << " failed\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10, rounds = 3;
  std::vector<std::string> kernels = {"spmv", "spmm", "sddmm", "ttm", "spgemm", "add", "mttkrp"};
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--kernels" && i + 1 < argc) kernels = commaSeparated(argv[++i]);
    else if (arg == "--fp" && i + 1 < argc && tcc::frontend::parseFloatingPointMode(argv[i + 1]))
      floatingPoint = *tcc::frontend::parseFloatingPointMode(argv[++i]);
    else if ((arg == "--aot-build" || arg == "--aot") && i + 1 < argc)
      aot.directory = std::filesystem::absolute(argv[++i]).string(), aot.build = arg == "--aot-build";
    else if (arg == "--no-warm-up") warmUp = false;
    else if (arg == "--split") split = true;
    else if (arg == "--before") before = true, tcc::lowering::setCppLoopForms({.strictLongRowsFourATrip = false});
    else if (arg == "--aot-flags" && i + 1 < argc) {
      aot.flags.clear();
      std::stringstream flags(argv[++i]);
      for (std::string flag; flags >> flag;) aot.flags.push_back(flag);
    } else if (arg.rfind("--", 0) == 0) {
      std::cerr << "usage: tcc_mlir_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,sddmm,ttm,spgemm,add,mttkrp] "
                   "[--fp strict|fast] [--no-warm-up] [--before] [--split] [--aot-build DIR [--aot-flags \"FLAGS\"] | --aot DIR] [MATRIX ...]\n";
      return 2;
    } else matrices.push_back(arg);
  }
  std::string whyNot;
  if (aot.build) {
    if (!stageRunnerLibraries(aot.directory)) return 2;
  } else if (!aot.directory.empty()) {
    std::ifstream manifest(aot.directory + "/manifest.txt");
    if (!manifest) {
      std::cerr << "tcc_mlir_bench: no " << aot.directory << "/manifest.txt (made by --aot-build)\n";
      return 2;
    }
    std::string name;
    for (int repeats, calls; manifest >> name >> repeats >> calls;) aot.manifest[name] = {repeats, calls};
  } else if (!tcc::test::mlirTools(&whyNot)) {
    std::cerr << "tcc_mlir_bench: " << whyNot << "\n";
    return 2;
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "cryg2500", "watt_2", "bcspwr10", "Pd", "G51", "dwt_992"};
  // Synthetic: mode-0 slices with power-law fiber lengths (tcc::rt::randomPowerLawTensor, seed 11).
  const std::vector<PowerLawTensor> tensors = {{"powerlaw 4000x4000x4000, 300k nnz, exponent 1.0", {4000, 4000, 4000}, 300000, 1.0},
                                               {"powerlaw 20000x2000x200, 500k nnz, exponent 1.5", {20000, 2000, 200}, 500000, 1.5}};

  std::vector<Row> rows;
  auto print = [&](const Row& row) {
    std::printf("| %s | %s | %.4f | %.4f | %.2f | ", row.kernel.c_str(), row.input.c_str(), 1e3 * row.tccSeconds,
                1e3 * row.mlirSeconds, row.mlirSeconds / row.tccSeconds);
    if (std::isnan(row.mlirCodegenSeconds)) std::printf("fails | – | ");
    else std::printf("%.4f | %.2f | ", 1e3 * row.mlirCodegenSeconds, row.mlirCodegenSeconds / row.tccSeconds);
    std::printf("%.1e |\n", row.difference);
    std::fflush(stdout);
    rows.push_back(row);
  };
  std::printf("machine: %s; fp %s%s; %s; load average at the start: %s\n\n", describe(thisMachine()).c_str(),
              floatingPoint == tcc::frontend::FloatingPointMode::Fast ? "fast" : "strict",
              before ? " (--before: strict row sums through Clang two a trip on every row)" : "",
              warmUp ? "tcc warmed up each round" : "no warm-up", loadAverageNow().c_str());
  std::printf("| kernel | input | tcc ms | MLIR ms | MLIR/tcc | MLIR codegen ms | codegen/tcc | max rel diff |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& name : matrices) {
    try {
      for (const Row& row : matrixRows(name, kernels, repeat, rounds)) print(row);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), error.what());
    }
  }
  if (std::find(kernels.begin(), kernels.end(), "mttkrp") != kernels.end())
    for (const auto& spec : tensors) {
      try {
        print(mttkrpRow(spec, repeat, rounds));
      } catch (const std::exception& error) {
        std::fprintf(stderr, "%s: %s\n", spec.name.c_str(), error.what());
      }
    }
  if (split) {
    std::printf("\n| input | tcc run us (median call) | run us (batched) | entry alone us (batched) | MLIR us (batched) | "
                "MLIR / run | MLIR / entry alone |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& row : rows)
      if (!std::isnan(row.entryBatchedSeconds))
        std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", row.input.c_str(), 1e6 * row.tccSeconds,
                    1e6 * row.runBatchedSeconds, 1e6 * row.entryBatchedSeconds, 1e6 * row.mlirSeconds,
                    row.mlirSeconds / row.tccSeconds, row.mlirSeconds / row.entryBatchedSeconds);
  }
  std::printf("\n| kernel | inputs | geomean MLIR/tcc | geomean codegen/tcc (inputs) | worst rel diff |\n"
              "|---|---:|---:|---:|---:|\n");
  int status = 0;
  for (const char* kernel : {"SpMV", "SpMM", "SDDMM", "TTM", "SpGEMM", "Add", "MTTKRP"}) {
    double logSum = 0, codegenLogSum = 0, worst = 0;
    int count = 0, codegenCount = 0;
    for (const auto& row : rows) {
      if (row.kernel != kernel) continue;
      logSum += std::log(row.mlirSeconds / row.tccSeconds), worst = std::max(worst, row.difference), ++count;
      if (!std::isnan(row.mlirCodegenSeconds))
        codegenLogSum += std::log(row.mlirCodegenSeconds / row.tccSeconds), ++codegenCount;
    }
    if (count == 0) continue;
    std::printf("| %s | %d | %.2f | %.2f (%d) | %.1e |\n", kernel, count, std::exp(logSum / count),
                codegenCount ? std::exp(codegenLogSum / codegenCount) : NAN, codegenCount, worst);
    if (!(worst <= 1e-9)) status = 1;
  }
  std::printf("\nload average at the end: %s\n", loadAverageNow().c_str());
  return status;  // non-zero when some MLIR result disagrees with tcc's
}
