// Times the tcc-generated kernels of bench/openmp/programs, compiled ahead
// of time: each serial program once, each parallel one at every requested
// OpenMP thread count. Every parallel result is checked against the serial
// one; a mismatch ends the run with an error. Prints a Markdown table.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "generated_kernels.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/runtime/tensor.h"

namespace {

using tcc::rt::Tensor;
using tcc::rt::TensorFormat;
using Clock = std::chrono::steady_clock;
using KernelEntry = int32_t (*)(tcc_tensor**);

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "tcc_openmp_host_bench: " << message << "\n";
  std::exit(1);
}

struct Options {
  std::vector<int> threads;
  int repeat = 11;
};

std::vector<int> parseThreadList(const std::string& list) {
  std::vector<int> threads;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    long count = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || count < 1) fail("bad thread count '" + item + "' in --threads");
    threads.push_back(static_cast<int>(count));
  }
  return threads;
}

// 1, 2, 4, ... up to the hardware threads, and the hardware threads themselves.
std::vector<int> defaultThreadList() {
  int hardware = std::max(1u, std::thread::hardware_concurrency());
  std::vector<int> threads;
  for (int count = 1; count < hardware; count *= 2) threads.push_back(count);
  threads.push_back(hardware);
  return threads;
}

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int k = 1; k < argc; ++k) {
    std::string argument = argv[k];
    if (argument == "--help" || argument == "-h") {
      std::cout << "usage: " << argv[0] << " [--threads 1,2,4,8,16] [--repeat 11]\n"
                << "  --threads  OpenMP thread counts for the parallel kernels (default: powers of two\n"
                << "             up to the hardware threads)\n"
                << "  --repeat   timed runs per measurement, after one untimed run; the median is shown\n";
      std::exit(0);
    }
    if (k + 1 == argc) fail("missing value after " + argument);
    std::string value = argv[++k];
    if (argument == "--threads") {
      options.threads = parseThreadList(value);
    } else if (argument == "--repeat") {
      options.repeat = std::atoi(value.c_str());
      if (options.repeat < 1) fail("--repeat must be at least 1");
    } else {
      fail("unknown option " + argument + " (see --help)");
    }
  }
  if (options.threads.empty()) options.threads = defaultThreadList();
  return options;
}

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

// Inputs, the same kind as run.sh's: seeded, values never zero.
constexpr uint64_t kSeed = 2026;
constexpr int32_t kLargeRows = 400000, kLargePerRow = 12;  // spmv, spmm, sddmm
constexpr int32_t kSmallRows = 100000, kSmallPerRow = 8;   // spgemm, add
constexpr int32_t kDenseColumns = 16;

Tensor randomCsr(int32_t rows, int32_t perRow, uint64_t seed) {
  return tcc::rt::pack(tcc::rt::randomPerRow(rows, rows, perRow, seed), TensorFormat::csr());
}

// Magnitudes in [0.5, 1.5), random signs; taken from the generator's raw
// bits because std's distributions differ between standard libraries.
Tensor randomDense(const std::vector<int32_t>& dims, uint64_t seed) {
  Tensor tensor(dims, TensorFormat::dense(static_cast<int>(dims.size())));
  std::mt19937_64 bits(seed);
  for (double& value : tensor.values<double>()) {
    uint64_t draw = bits();
    double magnitude = 0.5 + static_cast<double>(draw >> 11) * 0x1.0p-53;
    value = (draw & 1) ? magnitude : -magnitude;
  }
  return tensor;
}

struct Inputs {
  Tensor large = randomCsr(kLargeRows, kLargePerRow, kSeed);
  Tensor vector = randomDense({kLargeRows}, kSeed + 1);
  Tensor tall = randomDense({kLargeRows, kDenseColumns}, kSeed + 2);  // rows x 16
  Tensor wide = randomDense({kDenseColumns, kLargeRows}, kSeed + 3);  // 16 x rows
  Tensor small = randomCsr(kSmallRows, kSmallPerRow, kSeed + 4);
  Tensor otherSmall = randomCsr(kSmallRows, kSmallPerRow, kSeed + 5);
};

// A kernel's parameters: the output (declared first in every program), then
// the inputs in declaration order.
struct Binding {
  std::vector<int32_t> outputDims;
  bool csrOutput;  // assembled by the kernel; otherwise dense and zero-filled
  std::vector<const Tensor*> inputs;
};

Binding bindingFor(const std::string& kernel, const Inputs& in) {
  if (kernel == "spmv") return {{kLargeRows}, false, {&in.large, &in.vector}};
  if (kernel == "spmm" || kernel == "spmm_rows")
    return {{kLargeRows, kDenseColumns}, false, {&in.large, &in.tall}};
  if (kernel == "sddmm") return {{kLargeRows, kLargeRows}, true, {&in.large, &in.tall, &in.wide}};
  if (kernel == "spgemm" || kernel == "add") return {{kSmallRows, kSmallRows}, true, {&in.small, &in.otherSmall}};
  fail("no inputs are defined for kernel " + kernel);
}

struct Run {
  Tensor output;
  double seconds;  // the kernel call alone
};

Run runOnce(KernelEntry entry, const Binding& binding) {
  Tensor denseOutput;
  std::vector<tcc_tensor> views;
  if (binding.csrOutput) {
    views.push_back(Tensor::emptyAssembledOutput(binding.outputDims, TensorFormat::csr(), tcc::rt::ValueType::Float64));
  } else {
    denseOutput = Tensor(binding.outputDims, TensorFormat::dense(static_cast<int>(binding.outputDims.size())));
    views.push_back(denseOutput.abiView());
  }
  for (const Tensor* input : binding.inputs) views.push_back(input->abiView());
  std::vector<tcc_tensor*> pointers;
  for (tcc_tensor& view : views) pointers.push_back(&view);

  auto start = Clock::now();
  int32_t status = entry(pointers.data());
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (status != 0) fail("kernel returned status " + std::to_string(status));
  if (binding.csrOutput) return {Tensor::adopt(std::move(views[0])), seconds};
  return {std::move(denseOutput), seconds};
}

struct Measurement {
  Tensor output;  // of the untimed first run
  double medianMs;
};

Measurement measure(KernelEntry entry, const Binding& binding, int repeat) {
  Measurement measurement{runOnce(entry, binding).output, 0.0};
  std::vector<double> ms;
  for (int run = 0; run < repeat; ++run) ms.push_back(runOnce(entry, binding).seconds * 1e3);
  std::sort(ms.begin(), ms.end());
  size_t middle = ms.size() / 2;
  measurement.medianMs = ms.size() % 2 ? ms[middle] : (ms[middle - 1] + ms[middle]) / 2;
  return measurement;
}

// Empty when the tensors match: same shape, format and pos/crd arrays, and
// values within 1e-9 relative (to at least 1, as run.sh compares).
std::string difference(const Tensor& expected, const Tensor& actual) {
  if (expected.dims() != actual.dims() || !(expected.format() == actual.format()))
    return "expected " + expected.describe() + ", got " + actual.describe();
  for (int level = 0; level < expected.order(); ++level) {
    if (!std::ranges::equal(expected.pos(level), actual.pos(level)))
      return "pos of level " + std::to_string(level) + " differs";
    if (!std::ranges::equal(expected.crd(level), actual.crd(level)))
      return "crd of level " + std::to_string(level) + " differs";
  }
  auto want = expected.values<double>(), got = actual.values<double>();
  if (want.size() != got.size()) return "value counts differ";
  for (size_t k = 0; k < want.size(); ++k)
    if (std::abs(want[k] - got[k]) > 1e-9 * std::max(1.0, std::abs(want[k]))) {
      std::ostringstream message;
      message << std::setprecision(17) << "value at position " << k << ": expected " << want[k] << ", got "
              << got[k];
      return message.str();
    }
  return {};
}

std::string milliseconds(double ms) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(ms < 10 ? 3 : ms < 100 ? 2 : 1) << ms;
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parseOptions(argc, argv);
  std::cout << "CPU: " << cpuModel() << "; hardware threads: " << std::thread::hardware_concurrency()
            << "; OpenMP default threads: " << omp_get_max_threads() << "\n";

  auto start = Clock::now();
  Inputs inputs;
  std::cout << "Inputs (seed " << kSeed << "): " << kLargeRows << " x " << kLargeRows << " CSR with " << kLargePerRow
            << " nonzeros per row (spmv, spmm, sddmm), " << kSmallRows << " x " << kSmallRows << " CSR with "
            << kSmallPerRow << " per row (spgemm, add), dense operands with " << kDenseColumns
            << " columns; generated in " << milliseconds(std::chrono::duration<double>(Clock::now() - start).count() * 1e3)
            << " ms.\n";
  std::cout << "Median of " << options.repeat << " timed runs after one untimed run; parallel results checked "
            << "against serial.\n\n";

  std::cout << "| kernel | schedule | serial ms |";
  for (int threads : options.threads) std::cout << " " << threads << (threads == 1 ? " thread" : " threads") << " ms |";
  std::cout << " best speedup vs serial |\n|---|---|---:|";
  for (size_t k = 0; k < options.threads.size(); ++k) std::cout << "---:|";
  std::cout << "---:|\n" << std::flush;

  for (const GeneratedKernel& kernel : generatedKernels) {
    Binding binding = bindingFor(kernel.name, inputs);
    Measurement serial = measure(kernel.serial, binding, options.repeat);
    auto values = serial.output.values<double>();
    if (std::ranges::none_of(values, [](double value) { return value != 0.0; }))
      fail(std::string(kernel.name) + ": the serial result is all zeros");

    std::string row = std::string("| ") + kernel.name + " | `" + kernel.schedule + "` | " + milliseconds(serial.medianMs) + " |";
    double bestMs = 0;
    int bestThreads = 0;
    for (int threads : options.threads) {
      omp_set_num_threads(threads);
      Measurement parallel = measure(kernel.parallel, binding, options.repeat);
      std::string mismatch = difference(serial.output, parallel.output);
      if (!mismatch.empty())
        fail(std::string(kernel.name) + " at " + std::to_string(threads) + " threads differs from serial: " + mismatch);
      row += " " + milliseconds(parallel.medianMs) + " |";
      if (bestThreads == 0 || parallel.medianMs < bestMs) {
        bestMs = parallel.medianMs;
        bestThreads = threads;
      }
    }
    std::ostringstream speedup;
    speedup << std::fixed << std::setprecision(2) << serial.medianMs / bestMs << " (" << bestThreads
            << (bestThreads == 1 ? " thread)" : " threads)");
    std::cout << row << " " << speedup.str() << " |\n" << std::flush;
  }
}
