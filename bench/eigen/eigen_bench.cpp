// Single-threaded run time of tcc-generated kernels against Eigen 3 sparse
// products on real matrices, with each tcc result checked against Eigen's.
//
//   tcc_eigen_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,spgemm,add,mttkrp] [--fp strict|fast]
//                   [--backend clang|system] [--before] [MATRIX ...]
//
// --before compiles tcc's kernels in the forms before strict row sums
// through Clang ran long rows four a trip
// (CppLoopForms::strictLongRowsFourATrip = false).
//
// Prints one Markdown table row per kernel and matrix, then the geometric
// mean of Eigen time / tcc time per kernel (> 1: tcc faster), and the load
// average before and after.
//
// Each kernel is timed in R rounds (default 5); a round runs tcc's kernel
// `repeat` times and then Eigen's `repeat` times, so that both sides see
// the same moments of a shared machine. A side's time is the median of its
// round medians. tcc's time is `Kernel::run` (binding and checks, the
// output allocated, zeroed and filled). For kernels with a dense output
// (SpMV, SpMM, MTTKRP) the "call" column also times the compiled entry
// point alone on an output allocated once, zeroed inside the timed region:
// the same work as Eigen's `C.noalias() = A * B` (setZero, then the product).
#include <Eigen/Dense>
#include <Eigen/Sparse>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tcc/lowering/cpp_loop_forms.h"
#include "tcc/tcc.h"
#include "../common/eigen_peers.h"
#include "../common/stats.h"

namespace {

// tcc's floating-point mode for the whole run (--fp); strict by default.
tcc::frontend::FloatingPointMode floatingPoint = tcc::frontend::FloatingPointMode::Strict;

tcc::jit::Backend backend = tcc::CompileOptions{}.backend;
int rounds = 5;
bool before = false;  // --before

tcc::CompileOptions compileOptions() {
  tcc::CompileOptions options;
  options.floatingPoint = floatingPoint;
  options.backend = backend;
  return options;
}

std::string loadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct TccTiming {
  double seconds;      // Kernel::run
  double callSeconds;  // zeroing a dense output and the entry point alone; NAN for sparse outputs
  double eigenSeconds;
  std::map<std::string, tcc::Tensor> outputs;
};

// Compiles `dsl`, checks it once, then times it and `eigen` in interleaved
// rounds (see the top of the file). `eigen` is called once before timing.
TccTiming timeAgainstEigen(const std::string& dsl, const std::map<std::string, tcc::Tensor>& inputs, int repeat,
                           const std::function<void()>& eigen) {
  tcc::Kernel kernel = tcc::compile(tcc::Program::fromText(dsl, "bench.tc"), compileOptions());
  TccTiming timing{NAN, NAN, NAN, kernel.run(inputs)};  // warm-up, and the result checked
  eigen();
  // The entry point on an output allocated once, for a dense output of a
  // one-statement kernel whose parameters are all bound by name.
  const auto& statements = kernel.lowered().statements;
  tcc::Tensor output;
  std::vector<tcc_tensor> views;
  size_t outputView = 0;
  bool direct = statements.size() == 1 && statements[0].convertedInputs.empty();
  if (direct) {
    const tcc::TensorVar& declared = statements[0].output;
    const tcc::Tensor& result = timing.outputs.at(declared.name());
    direct = result.format().isAllDense() && statements[0].computedOutput.name() == declared.name();
    if (direct) output = result;
    for (const auto& parameter : statements[0].parameters) {
      if (!direct) break;
      if (parameter.name() == declared.name()) outputView = views.size(), views.push_back(output.abiView());
      else if (auto input = inputs.find(parameter.name()); input != inputs.end()) views.push_back(input->second.abiView());
      else direct = false;
    }
  }
  std::vector<tcc_tensor*> pointers;
  for (auto& view : views) pointers.push_back(&view);
  auto entry = direct ? kernel.entryPoint(0) : nullptr;
  const size_t outputBytes =
      direct ? static_cast<size_t>(views[outputView].vals_size) * tcc::rt::byteWidth(output.valueType()) : 0;
  auto call = [&] {
    std::memset(views[outputView].vals, 0, outputBytes);
    if (entry(pointers.data()) != 0) throw std::runtime_error("the kernel failed");
  };
  if (direct) call();
  std::vector<double> runMedians, callMedians, eigenMedians;
  for (int round = 0; round < rounds; ++round) {
    runMedians.push_back(median(kernel.run(inputs, tcc::RunOptions{repeat}).seconds));
    if (direct) {
      std::vector<double> samples;
      for (int r = 0; r < repeat; ++r) samples.push_back(seconds(call));
      callMedians.push_back(median(samples));
    }
    std::vector<double> samples;
    for (int r = 0; r < repeat; ++r) samples.push_back(seconds(eigen));
    eigenMedians.push_back(median(samples));
  }
  timing.seconds = median(runMedians);
  if (direct) timing.callSeconds = median(callMedians);
  timing.eigenSeconds = median(eigenMedians);
  return timing;
}

struct Row {
  std::string kernel, matrix;
  double tccSeconds, callSeconds, eigenSeconds, difference;
};

// The case timed against Eigen's peer, each result checked against Eigen's.
Row measure(const KernelCase& kernelCase, int repeat) {
  tcc::Program program = tcc::Program::fromText(kernelCase.dsl, "bench.tc");
  EigenPeer peer = *eigenPeer(kernelCase);
  auto timing = timeAgainstEigen(kernelCase.dsl, packedInputs(program, kernelCase), repeat, peer.run);
  return {kernelCase.kernel, kernelCase.input, timing.seconds, timing.callSeconds, timing.eigenSeconds,
          relativeDifference(entriesOf(timing.outputs.at(kernelCase.output)), peer.result())};
}

// `value` in `format`, or "-" for NaN.
std::string orDash(const char* format, double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10;
  std::vector<std::string> kernels = {"spmv", "spmm", "spgemm", "add", "mttkrp"};
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--backend" && i + 1 < argc && (argv[i + 1] == std::string("clang") || argv[i + 1] == std::string("system")))
      backend = argv[++i] == std::string("system") ? tcc::jit::Backend::SystemCompiler : tcc::jit::Backend::ClangInterpreter;
    else if (arg == "--kernels" && i + 1 < argc) kernels = commaSeparated(argv[++i]);
    else if (arg == "--fp" && i + 1 < argc && tcc::frontend::parseFloatingPointMode(argv[i + 1]))
      floatingPoint = *tcc::frontend::parseFloatingPointMode(argv[++i]);
    else if (arg == "--before") before = true, tcc::lowering::setCppLoopForms({.strictLongRowsFourATrip = false});
    else if (arg.rfind("--", 0) == 0) {
      std::cerr << "usage: tcc_eigen_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,spgemm,add,mttkrp]\n"
                   "                       [--fp strict|fast] [--backend clang|system] [--before] [MATRIX ...]\n";
      return 2;
    } else matrices.push_back(arg);
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "Franz6_id1959_aug", "mbeacxc", "cryg2500",
                "watt_2", "adder_dcop_05", "bcspwr10", "Pd", "G51", "dwt_992", "jagmesh7"};
  Eigen::setNbThreads(1);

  if (!tcc::jit::isAvailable(backend)) {
    std::cerr << tcc::jit::backendName(backend) << " is not built\n";
    return 2;
  }
  std::printf("tcc fp %s%s, %s backend, repeat %d, %d interleaved rounds; load average before: %s\n\n",
              floatingPoint == tcc::frontend::FloatingPointMode::Fast ? "fast" : "strict",
              before ? " (--before: strict row sums through Clang two a trip on every row)" : "", tcc::jit::backendName(backend),
              repeat, rounds, loadAverage().c_str());
  std::vector<Row> rows;
  std::printf("| kernel | matrix | tcc ms | tcc call ms | Eigen ms | Eigen/tcc | Eigen/call | max rel diff |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& name : matrices) {
    try {
      tcc::rt::Coo a = readMatrix(name);
      for (const auto& kernel : kernels) {
        auto kernelCase = kernelCaseOf(kernel, name, a);
        if (!kernelCase || !eigenPeer(*kernelCase)) {
          std::fprintf(stderr, "Eigen has no %s\n", kernel.c_str());
          continue;
        }
        Row row = measure(*kernelCase, repeat);
        // "-": no call column for kernels with sparse outputs.
        std::printf("| %s | %s | %.4f | %s | %.4f | %.2f | %s | %.1e |\n", row.kernel.c_str(), name.c_str(),
                    1e3 * row.tccSeconds, orDash("%.4f", 1e3 * row.callSeconds).c_str(), 1e3 * row.eigenSeconds,
                    row.eigenSeconds / row.tccSeconds, orDash("%.2f", row.eigenSeconds / row.callSeconds).c_str(),
                    row.difference);
        std::fflush(stdout);
        rows.push_back(row);
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), error.what());
    }
  }
  std::printf("\n| kernel | matrices | geomean Eigen/tcc | geomean Eigen/call | worst rel diff |\n"
              "|---|---:|---:|---:|---:|\n");
  int status = 0;
  for (const char* kernel : {"SpMV", "SpMM", "SpGEMM", "Add", "MTTKRP"}) {
    std::vector<double> ratios, callRatios;
    double worst = 0;
    for (const auto& row : rows) {
      if (row.kernel != kernel) continue;
      ratios.push_back(row.eigenSeconds / row.tccSeconds);
      if (!std::isnan(row.callSeconds)) callRatios.push_back(row.eigenSeconds / row.callSeconds);
      worst = std::max(worst, row.difference);
    }
    if (ratios.empty()) continue;
    std::printf("| %s | %zu | %.2f | %s | %.1e |\n", kernel, ratios.size(), geomean(ratios),
                orDash("%.2f", geomean(callRatios)).c_str(), worst);
    if (!(worst <= 1e-9)) status = 1;
  }
  std::printf("\nload average after: %s\n", loadAverage().c_str());
  return status;  // non-zero when some tcc result disagrees with Eigen's
}
