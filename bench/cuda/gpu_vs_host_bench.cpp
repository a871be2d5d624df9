// SDDMM and MTTKRP (float32) compiled by tcc twice from the same statement:
// once for the GPU (--target cuda, a GPU schedule or the default mapping)
// and once for the host CPU with parallelize(..., CPUThread, ...) over all
// its OpenMP threads; every GPU result checked against the CPU kernel's,
// against a direct double-precision reference over the nonzeros and, where
// small enough, against the dense reference evaluator; then GPU time, CPU
// time, GFLOP/s and the GPU/CPU speed-up.
//
//   tcc_bench_gpu_vs_host MATRIX_DIR [repeats] [--quick] [--budget=SECONDS] [--cpu-only]
//   [--kernels=sddmm,mttkrp]
//   (--cpu-only: no GPU; the CPU kernels and the checks alone, to try the
//   benchmark on a machine without one)
//
// SDDMM  A(i,j) = B(i,j) * C(i,k) * D(k,j)   (TACO's form; B CSR, A dense)
//        and A(i,j) = B(i,j) * C(i,k) * D(j,k) (D stored J x K, its rows contiguous),
//        K = 32, on real matrices from MATRIX_DIR and Kronecker products of
//        two real ones (scale-ups, named kron(A,B)).
// MTTKRP A(i,j) = B(i,k,l) * D(l,j) * C(k,j), B CSF, J = 32, on synthetic
//        random 3-tensors (FROSTT-like: uniform, and power-law slice lengths).
//
// GPU times: tcc's own CUDA-event timing of each run (Kernel::run), the
// output's zeroing outside it; CPU times: the compiled entry point alone,
// the output zeroed before each run outside the time (a CSR output: the
// kernel's time as Kernel::run measures it, assembly included). Medians of
// `repeats` runs after one warm-up. The cuda target writes dense outputs
// only, so SDDMM's GPU A is dense (rows x cols: the inputs are chosen so it
// fits); the CPU runs it dense too and, as a third variant, with the CSR A
// it would rather write. The GPU/CPU speed-up is the best GPU variant's time
// against the best CPU variant's.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tcc/runtime/cuda.h"
#include "tcc/tcc.h"
#include "../common/stats.h"
#ifdef TCC_BENCH_DENSE_REFERENCE
#include "tcc/test/reference.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using Inputs = std::map<std::string, tcc::Tensor>;

// One compiled variant of a statement.
struct Variant {
  std::string label;  // what the table calls it
  std::string schedule;
  tcc::Kernel kernel;
};

Variant variant(const std::string& label, const std::string& declarations, const std::string& schedule,
                tcc::frontend::Target target) {
  std::string text = declarations + (schedule.empty() ? "" : "schedule {\n" + schedule + "\n}\n");
  tcc::CompileOptions options;
  options.target = target;
  // The CPU kernels may use FMA and vectorized sums, as the GPU's do.
  options.floatingPoint = tcc::frontend::FloatingPointMode::Fast;
  std::string oneLine = schedule.empty() ? "(default mapping)" : schedule;
  for (char& c : oneLine)
    if (c == '\n') c = ';';
  return {label, oneLine, tcc::compile(tcc::Program::fromText(text, label), options)};
}

struct Timed {
  double seconds = 0;
  tcc::Tensor output;  // A, float32
  std::span<const float> values() const {
    tcc_tensor view = output.abiView();
    return {static_cast<const float*>(view.vals), static_cast<size_t>(view.vals_size)};
  }
};

// Through Kernel::run: on the GPU, CUDA events around each run; on the CPU
// (an assembled output) the kernel alone.
Timed runKernel(const Variant& variant, const Inputs& inputs, int repeats) {
  tcc::RunResult result = variant.kernel.run(inputs, tcc::RunOptions{repeats + 1});
  result.seconds.erase(result.seconds.begin());
  return {median(result.seconds), std::move(result.tensors.at("A"))};
}

// The CPU kernel's entry point on tensors bound once; A (dense) zeroed
// before each run, outside the time.
Timed runCpu(const Variant& cpu, const Inputs& inputs, const std::vector<int32_t>& outputDims, int repeats) {
  const tcc::CompiledStatement& statement = cpu.kernel.lowered().statements.at(0);
  if (!statement.convertedInputs.empty()) throw tcc::Error(cpu.label + ": an input needs converting");
  tcc::Tensor output(outputDims, tcc::toRuntimeFormat(statement.computedOutput.format()),
                     tcc::toRuntimeType(statement.computedOutput.datatype()));
  std::vector<tcc_tensor> views;
  for (const auto& parameter : statement.parameters)
    views.push_back(parameter.name() == statement.computedOutput.name() ? output.abiView()
                                                                       : inputs.at(parameter.name()).abiView());
  std::vector<tcc_tensor*> pointers;
  for (auto& view : views) pointers.push_back(&view);
  tcc::Kernel::EntryPoint entry = cpu.kernel.entryPoint(0);
  float* values = static_cast<float*>(output.abiView().vals);
  int64_t size = output.abiView().vals_size;
  std::vector<double> times;
  for (int run = 0; run < repeats + 1; ++run) {
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < size; ++k) values[k] = 0;
    auto start = Clock::now();
    if (entry(pointers.data()) != 0) throw tcc::Error(cpu.label + " failed");
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (run > 0) times.push_back(seconds);
  }
  return {median(times), std::move(output)};
}

// max |a - b| / max(1e-30, max |b|) over all entries.
template <typename Reference>
double difference(std::span<const float> a, std::span<const Reference> b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0, scale = 1e-30;
#pragma omp parallel for reduction(max : worst, scale)
  for (size_t k = 0; k < a.size(); ++k) {
    worst = std::max(worst, std::abs(double(a[k]) - double(b[k])));
    scale = std::max(scale, std::abs(double(b[k])));
  }
  return worst / scale;
}

double difference(std::span<const float> a, const std::vector<double>& b) {
  return difference(a, std::span<const double>(b));
}

// SDDMM: max |A - direct| / max |direct| over B's nonzeros (direct[p] at
// B's position p), where A is dense (rows x cols) or CSR; a dense A's
// entries off B's pattern, and a CSR A whose pattern is not B's, count as
// infinitely wrong.
double sddmmDifference(const tcc::Tensor& a, const tcc_tensor& b, const std::vector<double>& direct) {
  tcc_tensor view = a.abiView();
  const long long* pos = b.levels[1].pos;
  const int* crd = b.levels[1].crd;
  const float* values = static_cast<const float*>(view.vals);
  int32_t rows = b.dims[0], cols = b.dims[1];
  bool dense = view.levels[1].kind == TCC_LEVEL_DENSE;
  if (!dense && (view.vals_size != b.vals_size ||
                 !std::equal(pos, pos + rows + 1, view.levels[1].pos) ||
                 !std::equal(crd, crd + b.vals_size, view.levels[1].crd)))
    return INFINITY;
  double worst = 0, scale = 1e-30;
#pragma omp parallel for schedule(dynamic, 64) reduction(max : worst, scale)
  for (int32_t i = 0; i < rows; ++i) {
    long long p = pos[i];
    for (int32_t j = 0; j < (dense ? cols : 0); ++j) {  // off the pattern: zero
      if (p < pos[i + 1] && crd[p] == j) {
        ++p;
        continue;
      }
      if (values[size_t(i) * cols + j] != 0) worst = INFINITY;
    }
    for (p = pos[i]; p < pos[i + 1]; ++p) {
      float value = dense ? values[size_t(i) * cols + crd[p]] : values[p];
      worst = std::max(worst, std::abs(double(value) - direct[p]));
      scale = std::max(scale, std::abs(direct[p]));
    }
  }
  return worst / scale;
}

// A rows x cols dense float32 tensor of values in [-1, 1).
tcc::Tensor denseRandom(int32_t rows, int32_t cols, uint64_t seed) {
  std::vector<double> values(size_t(rows) * cols);
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (double& v : values) v = unit(random);
  return tcc::rt::fromDense(values, {rows, cols}, tcc::rt::TensorFormat::dense(2), tcc::rt::ValueType::Float32);
}

// A's dense reference where every (i, j, k) is few enough to walk.
constexpr double kDenseReferenceLimit = 4e7;

#ifdef TCC_BENCH_DENSE_REFERENCE
std::vector<double> denseReference(const tcc::Program& program, const Inputs& inputs) {
  std::map<std::string, tcc::test::DenseArray> dense;
  for (const auto& [name, tensor] : inputs) {
    tcc::test::DenseArray array;
    for (int32_t d : tensor.dims()) array.dims.push_back(d);
    array.values = tcc::rt::toDense(tensor);
    dense.emplace(name, std::move(array));
  }
  return tcc::test::evaluate(program.statements(), dense).at("A").values;
}
#endif

struct Row {
  std::string name, kind;
  std::vector<double> gpuSeconds, cpuSeconds;
  double flops = 0;
  double gpuVsCpu = 0, gpuVsDirect = 0, gpuVsDense = -1;
};

void printRow(const Row& row, const std::string& shape, long long nnz) {
  double bestGpu = row.gpuSeconds.empty() ? NAN : *std::min_element(row.gpuSeconds.begin(), row.gpuSeconds.end());
  double bestCpu = *std::min_element(row.cpuSeconds.begin(), row.cpuSeconds.end());
  std::printf("%-26s %-9s %-19s %9lld |", row.name.c_str(), row.kind.c_str(), shape.c_str(), nnz);
  for (double s : row.gpuSeconds) std::printf(" %9.1f %6.0f |", s * 1e6, row.flops / s * 1e-9);
  for (double s : row.cpuSeconds) std::printf(" %9.1f %6.0f |", s * 1e6, row.flops / s * 1e-9);
  std::printf(" %6.2fx | %7.1e %7.1e ", bestCpu / bestGpu, row.gpuVsCpu, row.gpuVsDirect);
  if (row.gpuVsDense >= 0) std::printf("%7.1e\n", row.gpuVsDense);
  else std::printf("%7s\n", "-");
  std::fflush(stdout);
}

void printHeader(const std::vector<Variant>& gpus, const std::vector<Variant>& cpus) {
  for (size_t k = 0; k < gpus.size(); ++k)
    std::printf("  GPU [%zu] %s: %s\n", k + 1, gpus[k].label.c_str(), gpus[k].schedule.c_str());
  for (size_t k = 0; k < cpus.size(); ++k)
    std::printf("  CPU [%c] %s: %s\n", char('a' + k), cpus[k].label.c_str(), cpus[k].schedule.c_str());
  std::printf("%-26s %-9s %-19s %9s |", "input", "kind", "shape", "nnz");
  for (size_t k = 0; k < gpus.size(); ++k) std::printf(" GPU[%zu] us  GF/s |", k + 1);
  for (size_t k = 0; k < cpus.size(); ++k) std::printf(" CPU[%c] us  GF/s |", char('a' + k));
  std::printf(" GPU/CPU | vs CPU  vs dir  vs dense\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  bool quick = false, cpuOnly = false;
  std::string kernels = "sddmm,mttkrp";
  double budget = 150;  // seconds; the inputs left when it runs out are skipped (and named)
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    if (arg == "--quick") quick = true;
    else if (arg == "--cpu-only") cpuOnly = true;
    else if (arg.rfind("--kernels=", 0) == 0) kernels = arg.substr(10);
    else if (arg.rfind("--budget=", 0) == 0) budget = std::atof(arg.c_str() + 9);
    else positional.push_back(arg);
  }
  if (positional.empty()) {
    std::fprintf(stderr, "usage: %s MATRIX_DIR [repeats] [--quick] [--budget=SECONDS] [--cpu-only] [--kernels=sddmm,mttkrp]\n", argv[0]);
    return 2;
  }
  auto begun = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - begun).count(); };
  std::string dir = positional[0];
  int repeats = positional.size() > 1 ? std::atoi(positional[1].c_str()) : 10;
  int threads = omp_get_max_threads();
  std::printf("device: %s; host: %d OpenMP threads; repeats %d (median, after a warm-up)\n",
              cpuOnly ? "none (--cpu-only)" : tcc::rt::cuda::device().name.c_str(), threads, repeats);
  using tcc::frontend::Target;
  bool failed = false;
  const double tolerance = 1e-4;  // float32, sums of 32 products
  std::vector<std::pair<std::string, std::vector<double>>> summary;  // kernel -> speed-ups

  // ---------------------------------------------------------------- SDDMM
  const int32_t K = 32;
  std::map<std::string, tcc::Tensor> packed;  // B of each input, for both forms of D
  for (bool transposedD : {false, true}) {
    if (kernels.find("sddmm") == std::string::npos) break;
    std::string dDecl = transposedD ? "tensor D(J, K) : dense of float32\n" : "tensor D(K, J) : dense of float32\n";
    std::string decl = std::string("tensor A(I, J) : dense of float32\ntensor B(I, J) : csr of float32\n") +
                       "tensor C(I, K) : dense of float32\n" + dDecl + "A(i, j) = B(i, j) * C(i, k) * " +
                       (transposedD ? "D(j, k)\n" : "D(k, j)\n");
    // The same statement with a CSR result, as the CPU assembles it (a
    // counting pass, a prefix sum, a filling pass); the cuda target refuses it.
    std::string declCsr = decl;
    declCsr.replace(declCsr.find("A(I, J) : dense"), 15, "A(I, J) : csr");
    std::string title = transposedD ? "SDDMM A = B .* (C D^T), D stored J x K" : "SDDMM A = B .* (C D), D stored K x J";
    std::vector<Variant> gpus, cpus;
    if (!cpuOnly) gpus.push_back(variant("taco-pos-warp", decl,
                           "fuse(i, j, f)\npos(f, fpos, B(i, j))\nsplit(fpos, f0, f1, 8)\n"
                           "parallelize(f0, GPUWarp, NoRaces)\nparallelize(k, GPUThread, ParallelReduction)",
                           Target::Cuda));
    if (!cpuOnly) gpus.push_back(variant("default", decl, "", Target::Cuda));
    cpus.push_back(variant("pos-16", decl,
                           "fuse(i, j, f)\npos(f, fpos, B(i, j))\nsplit(fpos, f0, f1, 16)\n"
                           "parallelize(f0, CPUThread, NoRaces)",
                           Target::Cpu));
    cpus.push_back(variant("rows-32", decl, "split(i, i0, i1, 32)\nparallelize(i0, CPUThread, NoRaces)",
                           Target::Cpu));
    cpus.push_back(variant("rows-32, A csr", declCsr, "split(i, i0, i1, 32)\nparallelize(i0, CPUThread, NoRaces)",
                           Target::Cpu));
    tcc::Program program = tcc::Program::fromText(decl, "sddmm");
    std::printf("\n%s, K = %d, float32; GFLOP/s count 2K+1 flops per nonzero of B\n", title.c_str(), K);
    printHeader(gpus, cpus);
    struct Source {
      std::string name, kind;
      std::string a, b;  // b empty: the real matrix a
    };
    std::vector<Source> sources = {
        {"bcsstk16", "real", "bcsstk16", ""},          {"bayer10", "real", "bayer10", ""},
        {"bcsstk13", "real", "bcsstk13", ""},          {"mbeacxc", "real", "mbeacxc", ""},
        {"Franz6_id1959_aug", "real", "Franz6_id1959_aug", ""}, {"dnn_n1024_l1", "real", "dnn_n1024_l1", ""},
        {"Pd", "real", "Pd", ""},                      {"cryg2500", "real", "cryg2500", ""},
        {"watt_2", "real", "watt_2", ""},              {"adder_dcop_05", "real", "adder_dcop_05", ""},
        {"kron(dnn_n1024_l1,LF10)", "scale-up", "dnn_n1024_l1", "LF10"},
        {"kron(mbeacxc,LF10)", "scale-up", "mbeacxc", "LF10"},
        {"kron(mbeacxc,cage5)", "scale-up", "mbeacxc", "cage5"},
        {"kron(mbeacxc,bcsstk01)", "scale-up", "mbeacxc", "bcsstk01"},
    };
    if (quick) sources = {sources[0], sources[3], sources[6], sources[11], sources[12]};
    std::vector<double> speedups;
    // The first form of SDDMM gets 40 % of the time budget, the second 30 %, MTTKRP the rest.
    double deadline = budget * (transposedD ? 0.7 : 0.4);
    for (const Source& source : sources) {
      if (elapsed() > deadline) {
        std::printf("%-26s skipped: SDDMM's share of the time budget (%.0f s) is spent\n", source.name.c_str(),
                    deadline);
        continue;
      }
      auto real = [&](const std::string& name) { return tcc::rt::readMatrixMarket(dir + "/" + name + ".mtx"); };
      if (!packed.count(source.name)) {
        tcc::rt::Coo coo =
            source.b.empty() ? real(source.a) : tcc::rt::kroneckerProduct(real(source.a), real(source.b));
        packed[source.name] = tcc::rt::pack(coo, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float32);
      }
      Inputs inputs;
      inputs["B"] = packed.at(source.name);
      int32_t rows = inputs["B"].dims()[0], cols = inputs["B"].dims()[1];
      inputs["C"] = denseRandom(rows, K, 13);
      inputs["D"] = transposedD ? denseRandom(cols, K, 14) : denseRandom(K, cols, 14);
      tcc_tensor b = inputs["B"].abiView();
      long long nnz = b.vals_size;
      Row row{source.name, source.kind};
      row.flops = double(2 * K + 1) * nnz;
      std::vector<Timed> gpuRuns, cpuRuns;
      for (const Variant& gpu : gpus) gpuRuns.push_back(runKernel(gpu, inputs, repeats));
      for (const Variant& cpu : cpus)
        cpuRuns.push_back(cpu.kernel.lowered().statements[0].computedOutput.format().isAllDense()
                              ? runCpu(cpu, inputs, {rows, cols}, repeats)
                              : runKernel(cpu, inputs, repeats));
      // Direct reference at B's nonzeros (position p), in double.
      std::vector<double> direct(nnz), cpuValues(nnz);
      {
        const long long* pos = b.levels[1].pos;
        const int* crd = b.levels[1].crd;
        const float* bv = static_cast<const float*>(b.vals);
        const float* cv = static_cast<const float*>(inputs["C"].abiView().vals);
        const float* dv = static_cast<const float*>(inputs["D"].abiView().vals);
        std::span<const float> cpuA = cpuRuns[0].values();  // dense
#pragma omp parallel for schedule(dynamic, 64)
        for (int32_t i = 0; i < rows; ++i)
          for (long long p = pos[i]; p < pos[i + 1]; ++p) {
            int32_t j = crd[p];
            double sum = 0;
            for (int32_t k = 0; k < K; ++k)
              sum += double(cv[size_t(i) * K + k]) * (transposedD ? dv[size_t(j) * K + k] : dv[size_t(k) * cols + j]);
            direct[p] = double(bv[p]) * sum;
            cpuValues[p] = cpuA[size_t(i) * cols + j];
          }
      }
      for (const Timed& run : gpuRuns) {
        row.gpuSeconds.push_back(run.seconds);
        row.gpuVsDirect = std::max(row.gpuVsDirect, sddmmDifference(run.output, b, direct));
        row.gpuVsCpu = std::max(row.gpuVsCpu, sddmmDifference(run.output, b, cpuValues));
      }
      for (size_t c = 0; c < cpuRuns.size(); ++c) {
        row.cpuSeconds.push_back(cpuRuns[c].seconds);
        double error = sddmmDifference(cpuRuns[c].output, b, direct);
        if (error > tolerance) {
          std::printf("  CPU [%c] differs from the direct reference by %.1e\n", char('a' + c), error);
          failed = true;
        }
      }
#ifdef TCC_BENCH_DENSE_REFERENCE
      if (double(rows) * cols * K <= kDenseReferenceLimit) {
        std::vector<double> dense = denseReference(program, inputs);
        row.gpuVsDense = 0;
        for (const Timed& run : gpuRuns) row.gpuVsDense = std::max(row.gpuVsDense, difference(run.values(), dense));
      }
#endif
      if (row.gpuVsCpu > tolerance || row.gpuVsDirect > tolerance || row.gpuVsDense > tolerance) failed = true;
      std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
      printRow(row, shape, nnz);
      if (!cpuOnly)
        speedups.push_back(*std::min_element(row.cpuSeconds.begin(), row.cpuSeconds.end()) /
                           *std::min_element(row.gpuSeconds.begin(), row.gpuSeconds.end()));
    }
    summary.push_back({transposedD ? "SDDMM, D J x K" : "SDDMM, D K x J", speedups});
  }

  // --------------------------------------------------------------- MTTKRP
  if (kernels.find("mttkrp") != std::string::npos) {
    const int32_t J = 32;
    std::string decl =
        "tensor A(I, J) : dense of float32\ntensor B(I, K, L) : csf of float32\n"
        "tensor C(K, J) : dense of float32\ntensor D(L, J) : dense of float32\n"
        "A(i, j) = B(i, k, l) * D(l, j) * C(k, j)\n";
    std::vector<Variant> gpus, cpus;
    if (!cpuOnly) gpus.push_back(variant("fibers-warp", decl,
                           "reorder(i, k, l, j)\nfuse(i, k, f)\npos(f, fpos, B(i, k, l))\nsplit(fpos, fwarp, fnnz, 4)\n"
                           "split(j, jo, jlane, 32)\nreorder(fwarp, jlane, fnnz, l, jo)\n"
                           "parallelize(fwarp, GPUWarp, Atomics)\nparallelize(jlane, GPUThread, NoRaces)",
                           Target::Cuda));
    // The default mapping: a warp per slice i, lanes over j (examples/gpu/mttkrp_slices.tc).
    if (!cpuOnly) gpus.push_back(variant("default", decl, "", Target::Cuda));
    cpus.push_back(variant("taco-precompute", decl,
                           "precompute(B(i, k, l) * D(l, j), j, j)\nparallelize(i, CPUThread, NoRaces)", Target::Cpu));
    cpus.push_back(variant("slices", decl, "parallelize(i, CPUThread, NoRaces)", Target::Cpu));
    tcc::Program program = tcc::Program::fromText(decl, "mttkrp");
    std::printf("\nMTTKRP A = B(i,k,l) D(l,j) C(k,j), B CSF, J = %d, float32; GFLOP/s count 3J flops per nonzero\n",
                J);
    printHeader(gpus, cpus);
    struct Synthetic {
      std::string name;
      std::vector<int32_t> dims;
      int64_t nnz;
      double exponent;  // < 0: uniform
    };
    std::vector<Synthetic> tensors = {
        {"uniform 60x50x40", {60, 50, 40}, 6000, -1},
        {"uniform 200^3", {200, 200, 200}, 400000, -1},
        {"uniform 2000^3", {2000, 2000, 2000}, 4000000, -1},
        {"uniform 500x500x20000", {500, 500, 20000}, 8000000, -1},
        {"power-law 20000x5000x5000", {20000, 5000, 5000}, 8000000, 1.0},
        {"power-law 100000x20000x2000", {100000, 20000, 2000}, 16000000, 0.8},
    };
    if (quick) tensors.resize(4);
    std::vector<double> speedups;
    for (const Synthetic& synthetic : tensors) {
      if (elapsed() > budget) {
        std::printf("%-26s skipped: the time budget (%.0f s) is spent\n", synthetic.name.c_str(), budget);
        continue;
      }
      const auto& dims = synthetic.dims;
      double cells = double(dims[0]) * dims[1] * dims[2];
      tcc::rt::Coo coo = synthetic.exponent < 0
                             ? tcc::rt::randomUniform(dims, synthetic.nnz / cells, 21)
                             : tcc::rt::randomPowerLawTensor(dims, synthetic.nnz, synthetic.exponent, 22);
      Inputs inputs;
      inputs["B"] = tcc::rt::pack(coo, tcc::rt::TensorFormat::csf(3), tcc::rt::ValueType::Float32);
      inputs["C"] = denseRandom(dims[1], J, 23);
      inputs["D"] = denseRandom(dims[2], J, 24);
      // The direct reference, in double, from the stored (float32) values.
      tcc::rt::Coo stored = tcc::rt::unpack(inputs["B"]);
      coo = {};
      long long nnz = stored.nnz();
      std::vector<double> direct(size_t(dims[0]) * J, 0.0);
      {
        const float* cv = static_cast<const float*>(inputs["C"].abiView().vals);
        const float* dv = static_cast<const float*>(inputs["D"].abiView().vals);
#pragma omp parallel for
        for (int32_t j = 0; j < J; ++j)
          for (size_t p = 0; p < stored.nnz(); ++p)
            direct[size_t(stored.coords[0][p]) * J + j] += stored.values[p] * double(cv[size_t(stored.coords[1][p]) * J + j]) *
                                                           double(dv[size_t(stored.coords[2][p]) * J + j]);
      }
      Row row{synthetic.name, "synthetic"};
      row.flops = 3.0 * J * nnz;
      std::vector<Timed> gpuRuns, cpuRuns;
      for (const Variant& gpu : gpus) gpuRuns.push_back(runKernel(gpu, inputs, repeats));
      for (const Variant& cpu : cpus) cpuRuns.push_back(runCpu(cpu, inputs, {dims[0], J}, repeats));
      for (const Timed& run : gpuRuns) {
        row.gpuSeconds.push_back(run.seconds);
        row.gpuVsDirect = std::max(row.gpuVsDirect, difference(run.values(), direct));
        row.gpuVsCpu = std::max(row.gpuVsCpu, difference(run.values(), cpuRuns[0].values()));
      }
      for (const Timed& run : cpuRuns) {
        row.cpuSeconds.push_back(run.seconds);
        if (difference(run.values(), direct) > tolerance) {
          std::printf("  CPU result differs from the direct reference by %.1e\n", difference(run.values(), direct));
          failed = true;
        }
      }
#ifdef TCC_BENCH_DENSE_REFERENCE
      if (cells * J <= kDenseReferenceLimit) {
        std::vector<double> dense = denseReference(program, inputs);
        row.gpuVsDense = 0;
        for (const Timed& run : gpuRuns) row.gpuVsDense = std::max(row.gpuVsDense, difference(run.values(), dense));
      }
#endif
      if (row.gpuVsCpu > tolerance || row.gpuVsDirect > tolerance || row.gpuVsDense > tolerance) failed = true;
      std::string shape = std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
      printRow(row, shape, nnz);
      if (!cpuOnly)
        speedups.push_back(*std::min_element(row.cpuSeconds.begin(), row.cpuSeconds.end()) /
                           *std::min_element(row.gpuSeconds.begin(), row.gpuSeconds.end()));
    }
    summary.push_back({"MTTKRP", speedups});
  }

  std::printf("\nGPU/CPU speed-up (best GPU variant's time against the best CPU variant's, %d threads):\n", threads);
  std::printf("| kernel | inputs | geomean | min | max |\n|---|---:|---:|---:|---:|\n");
  for (const auto& [kernel, speedups] : summary) {
    if (speedups.empty()) continue;
    std::printf("| %s | %zu | %.2fx | %.2fx | %.2fx |\n", kernel.c_str(), speedups.size(), geomean(speedups),
                *std::min_element(speedups.begin(), speedups.end()), *std::max_element(speedups.begin(), speedups.end()));
  }
  std::printf("results %s (tolerance %.0e relative to the largest entry); %.0f s in all\n",
              failed ? "DIFFER" : "agree", tolerance, elapsed());
  return failed ? 1 : 0;
}
