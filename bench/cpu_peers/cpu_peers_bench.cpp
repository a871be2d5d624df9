// One command for the CPU kernels against their peers: tcc in strict and in
// fast floating-point mode, Eigen 3 and MLIR 16's sparsifier (through its
// runtime library and as generated code), on the same inputs, interleaved,
// every result checked against the others; the table and a plot.
//
//   tcc_cpu_peers_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,sddmm,ttm,mttkrp,spgemm,add]
//                       [--backend clang|system] [--no-warm-up] [--before] [--split] [--markdown FILE] [--svg FILE]
//                       [MATRIX ...]
//
// Inputs: the kernel cases of bench/common/cpu_kernel_cases.h on each real
// matrix (the inputs tcc_eigen_bench and tcc_mlir_bench time). For each
// kernel and matrix, tcc's program is compiled in both modes and Eigen's
// peer built where Eigen has the kernel (SpMV, SpMM, MTTKRP, SpGEMM, Add);
// then R rounds (default 3), each: one MLIR process per pipeline (N + 1
// samples timed inside it by rtclock(), the first dropped), N calls of tcc
// strict, N of tcc fast, N of Eigen, each side's N after as many untimed
// calls as one MLIR sample holds (MLIR drops its first sample; without
// them, --no-warm-up, tcc's first calls after the MLIR processes ran cold:
// RESULTS.md, "Strict SpMV: two entries a trip"). A side's time is the
// median of all its samples; tcc's is `Kernel::run` (binding, the output
// allocated and filled). MLIR batches calls so that a sample spans about a
// millisecond.
//
// --split adds a table for SpMV: tcc strict's compiled entry point alone
// (on an output allocated once; the kernel stores every y(i)) and
// Kernel::run, both timed as MLIR's samples are (batches of calls, a
// sample's mean), beside MLIR's time, whose calls allocate and zero y.
//
// Checks: tcc fast, Eigen and both MLIR pipelines (first round) against
// tcc strict, as max |x - strict| / max |strict| over both results' entries;
// a difference over 1e-9 marks the row and makes the exit status 1.
//
// Prints one Markdown row per kernel and input, then the geometric means of
// peer time / tcc time per kernel (> 1: tcc faster); --markdown writes the
// same tables to FILE, --svg a bar plot of the geometric means. Without the
// MLIR 16 tools (found when the build was configured) the MLIR columns are
// left empty; for a machine without them, tcc_mlir_bench --aot-build/--aot.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tcc/lowering/cpp_loop_forms.h"
#include "tcc/tcc.h"
#include "tcc/test/mlir_oracle.h"
#include "../common/cpu_kernel_cases.h"
#include "../common/eigen_peers.h"
#include "../common/entry_point_calls.h"
#include "../common/machine.h"
#include "../common/mlir_entries.h"
#include "../common/stats.h"

namespace {

using tcc::frontend::FloatingPointMode;

constexpr double kTolerance = 1e-9;

struct Settings {
  int repeat = 10, rounds = 3;
  tcc::jit::Backend backend = tcc::CompileOptions{}.backend;
  bool mlir = true;
  bool warmUp = true;  // --no-warm-up: tcc's and Eigen's rounds start timing at once
  // --before: tcc's kernels in the forms before strict row sums through
  // Clang ran long rows four a trip (CppLoopForms::strictLongRowsFourATrip
  // = false; main 89d2fad's forms).
  bool before = false;
  // --split: SpMV's tcc strict time split (entry point alone, batched).
  bool split = false;
};

struct Row {
  std::string kernel, input;
  double strict = NAN, fast = NAN, eigen = NAN, mlir = NAN, mlirCodegen = NAN;  // seconds
  double difference = 0;  // the worst of the peers' against tcc strict
  // --split, SpMV: tcc strict's entry point alone on an output allocated
  // once, and Kernel::run's timed calls, each timed as MLIR times its calls
  // (batches of callsPerSample calls, a sample's mean per call).
  double strictEntryBatched = NAN, strictRunBatched = NAN;
};

const char* const kCodegenPipeline = "enable-runtime-library=false";


std::vector<double> timedRuns(const tcc::Kernel& kernel, const std::map<std::string, tcc::Tensor>& inputs, int repeat) {
  return kernel.run(inputs, tcc::RunOptions{repeat}).seconds;
}

Row measure(const KernelCase& kernelCase, const Settings& settings) {
  tcc::Program program = tcc::Program::fromText(kernelCase.dsl, kernelCase.kernel + ".tc");
  const auto inputs = packedInputs(program, kernelCase);
  auto compileIn = [&](FloatingPointMode mode) {
    tcc::CompileOptions options;
    options.floatingPoint = mode;
    options.backend = settings.backend;
    return tcc::compile(program, options);
  };
  tcc::Kernel strict = compileIn(FloatingPointMode::Strict), fast = compileIn(FloatingPointMode::Fast);
  const Entries expected = entriesOf(strict.run(inputs).at(kernelCase.output));
  Row row{kernelCase.kernel, kernelCase.input};
  auto check = [&](const Entries& actual) { row.difference = std::max(row.difference, relativeDifference(actual, expected)); };
  check(entriesOf(fast.run(inputs).at(kernelCase.output)));
  std::optional<EigenPeer> eigen = eigenPeer(kernelCase);
  if (eigen) {
    eigen->run();
    check(eigen->result());
  }
  const double estimate = median(timedRuns(fast, inputs, 3));
  const int callsPerSample = static_cast<int>(std::clamp(std::ceil(1e-3 / std::max(estimate, 1e-9)), 1.0, 1000.0));
  // One MLIR process; false when MLIR fails on the program (reported).
  auto runMlir = [&](const std::string& pipeline, bool checked, std::vector<double>& samples) {
    tcc::test::MlirRunOptions options;
    options.repeats = settings.repeat + 1;
    options.callsPerSample = callsPerSample;
    options.printResult = checked;
    options.sparseCompilerOptions = pipeline;
    try {
      auto result = tcc::test::runThroughMlir(program, inputs, options);
      if (!result) throw std::runtime_error("MLIR 16 cannot express it");
      samples.insert(samples.end(), result->kernelSeconds.begin() + 1, result->kernelSeconds.end());
      if (checked) check(entriesOf(*result));
      return true;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s on %s, MLIR%s%s: %.300s\n", kernelCase.kernel.c_str(), kernelCase.input.c_str(),
                   pipeline.empty() ? "" : " ", pipeline.c_str(), error.what());
      return false;
    }
  };
  std::vector<double> strictSamples, fastSamples, eigenSamples, mlirSamples, codegenSamples;
  std::vector<double> entrySamples, runBatchedSamples;
  std::optional<EntryPointCalls> entry;
  if (settings.split && kernelCase.kernel == "SpMV") entry.emplace(strict, inputs, kernelCase.output);
  const bool split = entry && *entry;
  bool mlirWorks = settings.mlir, codegenWorks = settings.mlir;
  for (int round = 0; round < settings.rounds; ++round) {
    if (mlirWorks) mlirWorks = runMlir("", round == 0, mlirSamples);
    if (codegenWorks) codegenWorks = runMlir(kCodegenPipeline, round == 0, codegenSamples);
    // Each side's first batch of a round is dropped, as each MLIR process
    // drops its first sample (the same calls).
    const int warmUpCalls = settings.warmUp ? callsPerSample : 0;
    if (warmUpCalls) timedRuns(strict, inputs, warmUpCalls);
    for (double s : timedRuns(strict, inputs, settings.repeat)) strictSamples.push_back(s);
    for (int r = 0; split && r < settings.repeat; ++r) {
      runBatchedSamples.push_back(runBatchMean(strict, inputs, callsPerSample));
      entrySamples.push_back(entry->batchMean(callsPerSample));
    }
    if (warmUpCalls) timedRuns(fast, inputs, warmUpCalls);
    for (double s : timedRuns(fast, inputs, settings.repeat)) fastSamples.push_back(s);
    if (eigen) {
      for (int r = 0; r < warmUpCalls; ++r) eigen->run();
      for (int r = 0; r < settings.repeat; ++r) eigenSamples.push_back(seconds(eigen->run));
    }
  }
  row.strict = median(strictSamples);
  row.fast = median(fastSamples);
  if (eigen) row.eigen = median(eigenSamples);
  if (mlirWorks) row.mlir = median(mlirSamples);
  if (codegenWorks) row.mlirCodegen = median(codegenSamples);
  if (split) row.strictEntryBatched = median(entrySamples), row.strictRunBatched = median(runBatchedSamples);
  return row;
}

// `value` in `format`, or "-" for NaN.
std::string orDash(const char* format, double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string rowLine(const Row& row) {
  std::ostringstream line;
  line << "| " << row.kernel << " | " << row.input << " | " << orDash("%.4f", 1e3 * row.strict) << " | "
       << orDash("%.4f", 1e3 * row.fast) << " | " << orDash("%.4f", 1e3 * row.eigen) << " | "
       << orDash("%.4f", 1e3 * row.mlir) << " | " << orDash("%.4f", 1e3 * row.mlirCodegen) << " | "
       << orDash("%.2f", row.eigen / row.strict) << " | " << orDash("%.2f", row.eigen / row.fast) << " | "
       << orDash("%.2f", row.mlir / row.strict) << " | " << orDash("%.2f", row.mlir / row.fast) << " | "
       << orDash("%.1e", row.difference) << (row.difference > kTolerance ? " **MISMATCH**" : "") << " |";
  return line.str();
}

const char* const kRowHeader =
    "| kernel | input | tcc strict ms | tcc fast ms | Eigen ms | MLIR ms | MLIR codegen ms | Eigen / strict | "
    "Eigen / fast | MLIR / strict | MLIR / fast | worst rel diff |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

// --split: where tcc strict's SpMV time goes, beside MLIR's (per call).
std::string splitTable(const std::vector<Row>& rows) {
  std::ostringstream out;
  out << "| input | tcc strict run us (median call) | run us (batched) | entry alone us (batched) | MLIR us (batched) | "
         "MLIR / run | MLIR / entry alone |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& row : rows) {
    if (std::isnan(row.strictEntryBatched)) continue;
    out << "| " << row.input << " | " << orDash("%.2f", 1e6 * row.strict) << " | " << orDash("%.2f", 1e6 * row.strictRunBatched)
        << " | " << orDash("%.2f", 1e6 * row.strictEntryBatched) << " | " << orDash("%.2f", 1e6 * row.mlir) << " | "
        << orDash("%.2f", row.mlir / row.strict) << " | " << orDash("%.2f", row.mlir / row.strictEntryBatched) << " |\n";
  }
  return out.str();
}

// Geometric means of peer time / tcc time over a kernel's rows.
struct Summary {
  std::string kernel;
  size_t inputs = 0;
  double eigenStrict = NAN, eigenFast = NAN, mlirStrict = NAN, mlirFast = NAN, codegenFast = NAN, worst = 0;
};

std::vector<Summary> summaries(const std::vector<Row>& rows) {
  std::vector<Summary> result;
  for (const char* kernel : {"SpMV", "SpMM", "SDDMM", "TTM", "MTTKRP", "SpGEMM", "Add"}) {
    Summary s{kernel};
    std::vector<double> es, ef, ms, mf, cf;
    for (const Row& row : rows) {
      if (row.kernel != kernel) continue;
      ++s.inputs;
      s.worst = std::max(s.worst, row.difference);
      auto add = [](std::vector<double>& into, double ratio) { if (std::isfinite(ratio)) into.push_back(ratio); };
      add(es, row.eigen / row.strict), add(ef, row.eigen / row.fast);
      add(ms, row.mlir / row.strict), add(mf, row.mlir / row.fast), add(cf, row.mlirCodegen / row.fast);
    }
    if (s.inputs == 0) continue;
    s.eigenStrict = geomean(es), s.eigenFast = geomean(ef), s.mlirStrict = geomean(ms), s.mlirFast = geomean(mf);
    s.codegenFast = geomean(cf);
    result.push_back(s);
  }
  return result;
}

std::string summaryTable(const std::vector<Summary>& list) {
  std::ostringstream out;
  out << "| kernel | inputs | Eigen / tcc strict | Eigen / tcc fast | MLIR / tcc strict | MLIR / tcc fast | "
         "MLIR codegen / tcc fast | worst rel diff |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Summary& s : list)
    out << "| " << s.kernel << " | " << s.inputs << " | " << orDash("%.2f", s.eigenStrict) << " | "
        << orDash("%.2f", s.eigenFast) << " | " << orDash("%.2f", s.mlirStrict) << " | " << orDash("%.2f", s.mlirFast)
        << " | " << orDash("%.2f", s.codegenFast) << " | " << orDash("%.1e", s.worst) << " |\n";
  return out.str();
}

// Grouped bars, one group a kernel: Eigen and MLIR over tcc strict and
// tcc fast, on a log axis with 1 (level) marked.
void writeSvg(const std::string& path, const std::vector<Summary>& list, const std::string& title) {
  struct Series {
    const char* name;
    const char* colour;
    double Summary::*value;
  };
  const Series series[] = {{"Eigen / tcc strict", "#9ecae1", &Summary::eigenStrict},
                           {"Eigen / tcc fast", "#3182bd", &Summary::eigenFast},
                           {"MLIR / tcc strict", "#fdae6b", &Summary::mlirStrict},
                           {"MLIR / tcc fast", "#e6550d", &Summary::mlirFast}};
  double low = 0.5, high = 2.0;
  for (const Summary& s : list)
    for (const Series& x : series)
      if (std::isfinite(s.*x.value)) low = std::min(low, s.*x.value), high = std::max(high, s.*x.value);
  const double bottom = std::floor(std::log2(low)), top = std::ceil(std::log2(high));
  const int left = 60, plotTop = 40, height = 300, group = 130, bar = 24, width = left + group * int(list.size()) + 20;
  auto y = [&](double ratio) { return plotTop + height * (top - std::log2(ratio)) / (top - bottom); };
  std::ofstream out(path);
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << plotTop + height + 90
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << left << "' y='20' font-size='14'>" << title << "</text>\n";
  for (double e = bottom; e <= top; ++e) {
    const double ratio = std::exp2(e);
    out << "<line x1='" << left << "' x2='" << width - 20 << "' y1='" << y(ratio) << "' y2='" << y(ratio)
        << "' stroke='" << (e == 0 ? "black" : "#ddd") << "'/>\n<text x='" << left - 8 << "' y='" << y(ratio) + 4
        << "' text-anchor='end'>" << orDash(ratio < 1 ? "%.2g" : "%.0f", ratio) << "x</text>\n";
  }
  for (size_t g = 0; g < list.size(); ++g) {
    const double x0 = left + group * double(g) + 12;
    for (size_t k = 0; k < 4; ++k) {
      const double value = list[g].*series[k].value;
      if (!std::isfinite(value)) continue;
      const double yValue = y(value), yOne = y(1.0);
      out << "<rect x='" << x0 + bar * k << "' y='" << std::min(yValue, yOne) << "' width='" << bar - 2
          << "' height='" << std::abs(yOne - yValue) << "' fill='" << series[k].colour << "'><title>"
          << series[k].name << ": " << orDash("%.2f", value) << "</title></rect>\n";
    }
    out << "<text x='" << x0 + 2 * bar << "' y='" << plotTop + height + 18 << "' text-anchor='middle'>"
        << list[g].kernel << " (" << list[g].inputs << ")</text>\n";
  }
  for (size_t k = 0; k < 4; ++k)
    out << "<rect x='" << left + 150 * k << "' y='" << plotTop + height + 40 << "' width='12' height='12' fill='"
        << series[k].colour << "'/><text x='" << left + 150 * k + 16 << "' y='" << plotTop + height + 50 << "'>"
        << series[k].name << "</text>\n";
  out << "<text x='" << left << "' y='" << plotTop + height + 80
      << "'>geometric mean of peer time / tcc time over the inputs (above 1: tcc faster)</text>\n</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  std::vector<std::string> kernels = {"spmv", "spmm", "sddmm", "ttm", "mttkrp", "spgemm", "add"}, matrices;
  std::string markdownPath, svgPath;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool hasValue = i + 1 < argc;
    if (arg == "--repeat" && hasValue) settings.repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && hasValue) settings.rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--kernels" && hasValue) kernels = commaSeparated(argv[++i]);
    else if (arg == "--markdown" && hasValue) markdownPath = argv[++i];
    else if (arg == "--svg" && hasValue) svgPath = argv[++i];
    else if (arg == "--no-warm-up") settings.warmUp = false;
    else if (arg == "--split") settings.split = true;
    else if (arg == "--before") settings.before = true, tcc::lowering::setCppLoopForms({.strictLongRowsFourATrip = false});
    else if (arg == "--backend" && hasValue && (argv[i + 1] == std::string("clang") || argv[i + 1] == std::string("system")))
      settings.backend = argv[++i] == std::string("system") ? tcc::jit::Backend::SystemCompiler
                                                            : tcc::jit::Backend::ClangInterpreter;
    else if (arg.rfind("--", 0) == 0) {
      std::cerr << "usage: tcc_cpu_peers_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,sddmm,ttm,mttkrp,spgemm,add]\n"
                   "                           [--backend clang|system] [--no-warm-up] [--before] [--split] [--markdown FILE] [--svg FILE]\n"
                   "                           [MATRIX ...]\n";
      return 2;
    } else matrices.push_back(arg);
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "cryg2500", "watt_2", "bcspwr10", "Pd", "G51", "dwt_992"};
  if (!tcc::jit::isAvailable(settings.backend)) {
    std::cerr << tcc::jit::backendName(settings.backend) << " is not built\n";
    return 2;
  }
  std::string whyNoMlir;
  settings.mlir = tcc::test::mlirTools(&whyNoMlir).has_value();
  Eigen::setNbThreads(1);
  const Machine machine = thisMachine();
  std::ostringstream head;
  head << "machine: " << machine.cpu << ", " << machine.cpus << " CPUs; one thread; tcc " << tcc::jit::backendName(settings.backend)
       << " backend; repeat " << settings.repeat << ", " << settings.rounds << " interleaved rounds"
       << (settings.warmUp ? ", each side warmed up" : ", no warm-up")
       << (settings.before ? "; --before: strict row sums through Clang two a trip on every row (main 89d2fad's forms)" : "") << "; load average at the start: "
       << loadAverageNow() << (settings.mlir ? "" : "\nno MLIR columns: " + whyNoMlir) << "\n";
  std::printf("%s\n%s\n", head.str().c_str(), kRowHeader);
  std::fflush(stdout);
  std::vector<Row> rows;
  for (const auto& name : matrices) {
    tcc::rt::Coo a;
    try {
      a = readMatrix(name);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), error.what());
      continue;
    }
    for (const auto& kernel : kernels) {
      auto kernelCase = kernelCaseOf(kernel, name, a);
      if (!kernelCase) {
        std::fprintf(stderr, "no kernel %s\n", kernel.c_str());
        return 2;
      }
      try {
        rows.push_back(measure(*kernelCase, settings));
        std::printf("%s\n", rowLine(rows.back()).c_str());
        std::fflush(stdout);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "%s on %s: %s\n", kernelCase->kernel.c_str(), name.c_str(), error.what());
      }
    }
  }
  if (settings.split) std::printf("\n%s", splitTable(rows).c_str());
  const auto list = summaries(rows);
  const std::string summary = summaryTable(list);
  std::printf("\n%s\nload average at the end: %s\n", summary.c_str(), loadAverageNow().c_str());
  if (!markdownPath.empty()) {
    std::ofstream out(markdownPath);
    out << head.str() << "\n" << kRowHeader << "\n";
    for (const Row& row : rows) out << rowLine(row) << "\n";
    out << "\n" << summary << "\nload average at the end: " << loadAverageNow() << "\n";
  }
  if (!svgPath.empty())
    writeSvg(svgPath, list, "tcc against Eigen 3 and MLIR 16, one thread, " + machine.cpu);
  const bool mismatch = std::any_of(rows.begin(), rows.end(), [](const Row& row) { return row.difference > kTolerance; });
  return mismatch ? 1 : 0;
}
