// The sparse permanent's four kernels in one run, as in Elbek and Kaya's
// tables: CPU SparsePerman (the kernel p = perm(A) calls on the cpu target,
// OpenMP on all host cores), GPU-SparsePerman (the baseline), CodeGen-PureReg
// and CodeGen-Hybrid, on Erdos-Renyi matrices (n 32, 36, 40; densities
// 0.1-0.5) and the real 48- and 49-row SuiteSparse matrices.
//
// Each kernel runs the chunks of the Gray-code range from the first on
// (after one warm-up batch) until a time budget is spent; when the whole
// range would take longer than --full-limit it stops there and the total is
// extrapolated from the measured prefix (every chunk does the same steps,
// so the rate holds; marked "~" with the fraction measured), else it runs
// to the end and the permanent is checked against the others. GPU times
// include nothing of the set-up (generation and NVRTC compilation are
// reported apart); the full-run time of Hybrid on the first matrix adds
// them ("end to end").
//
// Also reports, per GPU kernel, what the compiler made of it (registers
// and local memory per thread, from cuFuncGetAttribute) and the resident
// threads; writes a CSV and an SVG plot to --out.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "chunk_plan.h"
#include "gpu/gpu_engine.h"
#include "gpu/kernel_source.h"
#include "gpu/launch_plan.h"
#include "gray_code_ryser.h"
#include "permanent_matrix.h"
#include "range_engine.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/permanent_gpu.h"
#include "tcc/runtime/tensor_format.h"

namespace {

namespace perm = tcc::rt::permanent;
namespace gpu = tcc::rt::permanent::gpu;
using Clock = std::chrono::steady_clock;
using tcc::rt::GpuPermanentVariant;

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Input {
  std::string name;
  std::string group;  // "ER n=40", "real"
  double density = 0;
  perm::SortedColumnMatrix matrix;  // equilibrated
  int exponent = 0;
};

perm::SortedColumnMatrix sortedOf(const tcc::rt::Coo& coo) {
  tcc::rt::Tensor tensor = tcc::rt::pack(coo, tcc::rt::TensorFormat::csc());
  return perm::readSortedColumnMatrix(tensor.abiView());
}

// Each entry nonzero with probability p, uniform in (0, 1]; drawn again
// until it has a perfect matching (as Elbek and Kaya do).
Input erdosRenyi(int n, double p, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Input input;
  char name[64];
  std::snprintf(name, sizeof name, "ER n=%d p=%.1f", n, p);
  input.name = name;
  input.group = "ER n=" + std::to_string(n);
  input.density = p;
  for (;;) {
    tcc::rt::Coo coo = tcc::rt::Coo::ofShape({n, n});
    for (int32_t row = 0; row < n; ++row)
      for (int32_t column = 0; column < n; ++column)
        if (unit(random) < p) {
          const int32_t coordinate[2] = {row, column};
          coo.push(coordinate, 1.0 - unit(random));
        }
    input.matrix = sortedOf(coo);
    if (perm::hasPerfectMatching(input.matrix)) break;
  }
  input.exponent = perm::equilibrateByPowersOfTwo(input.matrix);
  return input;
}

Input fromFile(const std::string& path) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(path);
  Input input;
  input.name = std::filesystem::path(path).stem().string();
  input.group = "real";
  input.matrix = sortedOf(coo);
  input.density = double(input.matrix.nonzeros) / (double(input.matrix.n) * input.matrix.n);
  if (!perm::hasPerfectMatching(input.matrix)) {
    std::fprintf(stderr, "%s: structurally singular (permanent 0); skipped\n", path.c_str());
    input.matrix.n = 0;
    return input;
  }
  input.exponent = perm::equilibrateByPowersOfTwo(input.matrix);
  return input;
}

struct Measurement {
  std::string kernel;
  double seconds = 0;        // the whole range: measured, or extrapolated
  double fraction = 0;       // of the range measured
  double setupSeconds = 0;   // generation + compilation (GPU), tables (CPU)
  double prefixSum = 0;      // sum of the partials of the chunks run, in chunk order
  std::vector<double> partials;  // of the chunks run
  int64_t chunksRun = 0;
  uint64_t chunkSize = 1;
  bool full = false;
  double permanent = 0;      // when full
  gpu::GpuEngineReport report;
  bool isGpu = false;
};

// Runs chunks 0, 1, ... on `engine`: one warm-up batch, then batches until
// `budget` seconds pass, or all of them when the estimate is under `fullLimit`.
Measurement measure(perm::RangeEngine<double>& engine, const Input& input, double budget, double fullLimit,
                    perm::ChunkPlan plan) {
  std::vector<double> partials(plan.chunks, 0.0);
  std::vector<int64_t> ids(plan.chunks);
  for (int64_t k = 0; k < plan.chunks; ++k) ids[k] = k;
  std::atomic<bool> never{false};
  perm::StopFlags stop{&never, &never};
  auto done = [&](int64_t chunk, const perm::ChunkOutcome<double>& outcome) { partials[chunk] = outcome.sum; };
  const int64_t batch = std::max<int64_t>(1, engine.parallelism());
  Measurement m;
  int64_t next = 0;
  auto run = [&](int64_t count) {
    count = std::min(count, plan.chunks - next);
    engine.sumChunks(std::span<const int64_t>(ids.data() + next, count), plan.chunkSize, stop, done);
    next += count;
  };
  auto start = Clock::now();
  run(batch);  // warm-up
  const double warmup = secondsSince(start);
  const int64_t warmupChunks = next;
  auto steady = Clock::now();
  bool full = false;
  while (next < plan.chunks) {
    const double elapsed = secondsSince(steady);
    const double rate = (next - warmupChunks) > 0 ? elapsed / double(next - warmupChunks) : warmup / double(warmupChunks);
    const double estimate = warmup + rate * double(plan.chunks - warmupChunks);
    if (estimate <= fullLimit) {
      full = true;
    } else if (elapsed >= budget) {
      break;
    }
    run(full ? plan.chunks : batch);
  }
  const double steadySeconds = secondsSince(steady);
  const double total = secondsSince(start);
  m.chunksRun = next;
  m.chunkSize = plan.chunkSize;
  m.fraction = double(next) / double(plan.chunks);
  m.full = next == plan.chunks;
  if (m.full) {
    m.seconds = total;
  } else {
    const int64_t steadyChunks = next - warmupChunks;
    const double rate = steadyChunks > 0 ? steadySeconds / double(steadyChunks) : warmup / double(warmupChunks);
    m.seconds = rate * double(plan.chunks);
  }
  m.partials.assign(partials.begin(), partials.begin() + next);
  m.prefixSum = perm::addInChunkOrder(m.partials, input.matrix.n);
  if (m.full) m.permanent = std::ldexp((input.matrix.n % 2 == 1 ? 2.0 : -2.0) * m.prefixSum, input.exponent);
  return m;
}

const char* kKernels[] = {"CPU SparsePerman", "GPU-SparsePerman", "CodeGen-PureReg", "CodeGen-Hybrid"};
const GpuPermanentVariant kVariants[] = {GpuPermanentVariant::Baseline, GpuPermanentVariant::PureReg,
                                         GpuPermanentVariant::Hybrid};

std::string timeText(const Measurement& m) {
  char text[64];
  if (m.full)
    std::snprintf(text, sizeof text, "%.3f", m.seconds);
  else
    std::snprintf(text, sizeof text, "~%.4g (%.2g%%)", m.seconds, 100 * m.fraction);
  return text;
}

double geometricMean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / values.size());
}

void writeSvg(const std::string& path, const std::vector<Input>& inputs,
              const std::vector<std::vector<Measurement>>& results) {
  const int width = std::max(660, 60 + 52 * static_cast<int>(inputs.size())), height = 470, top = 40, bottom = 330;
  double lo = 1e300, hi = 0;
  for (const auto& row : results)
    for (const auto& m : row) lo = std::min(lo, m.seconds), hi = std::max(hi, m.seconds);
  const double logLo = std::floor(std::log10(lo)), logHi = std::ceil(std::log10(hi));
  auto y = [&](double seconds) {
    return bottom - (std::log10(seconds) - logLo) / (logHi - logLo) * (bottom - top);
  };
  const char* colors[] = {"#888888", "#d62728", "#1f77b4", "#2ca02c"};
  std::ofstream out(path);
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif' font-size='10'>\n<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='10' y='20' font-size='13'>Permanent time, whole Gray-code range (s, log scale; hatched = "
         "extrapolated from a prefix)</text>\n";
  for (double e = logLo; e <= logHi; ++e) {
    out << "<line x1='50' x2='" << width - 10 << "' y1='" << y(std::pow(10, e)) << "' y2='" << y(std::pow(10, e))
        << "' stroke='#ddd'/><text x='5' y='" << y(std::pow(10, e)) + 3 << "'>1e" << e << "</text>\n";
  }
  out << "<defs><pattern id='h' width='4' height='4' patternUnits='userSpaceOnUse'><path d='M0,4 l4,-4' "
         "stroke='white' stroke-width='1'/></pattern></defs>\n";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double x0 = 55 + 52.0 * i;
    for (size_t k = 0; k < results[i].size(); ++k) {
      const Measurement& m = results[i][k];
      const double x = x0 + 11 * k, yTop = y(m.seconds);
      out << "<rect x='" << x << "' y='" << yTop << "' width='10' height='" << bottom - yTop << "' fill='"
          << colors[k] << "'/>\n";
      if (!m.full)
        out << "<rect x='" << x << "' y='" << yTop << "' width='10' height='" << bottom - yTop
            << "' fill='url(#h)'/>\n";
    }
    out << "<text transform='translate(" << x0 + 20 << "," << bottom + 8 << ") rotate(60)'>" << inputs[i].name
        << "</text>\n";
  }
  for (int k = 0; k < 4; ++k)
    out << "<rect x='" << 60 + 150 * k << "' y='" << height - 18 << "' width='10' height='10' fill='" << colors[k]
        << "'/><text x='" << 74 + 150 * k << "' y='" << height - 9 << "'>" << kKernels[k] << "</text>\n";
  out << "</svg>\n";
}

// Each --try on every input: time [registers, blocks per SM, k / r], then
// the geometric mean of each try's time over the first try's, per group.
void runTries(const std::vector<Input>& inputs, const std::vector<std::string>& tries, double budget, double fullLimit) {
  struct Try {
    std::string label;
    GpuPermanentVariant variant = GpuPermanentVariant::Hybrid;
    std::vector<std::pair<std::string, std::string>> knobs;
  };
  std::vector<Try> parsed;
  for (const std::string& text : tries) {
    Try t;
    const size_t equals = text.find('=');
    if (equals == std::string::npos) {
      std::fprintf(stderr, "--try %s: expected LABEL=VARIANT[:VAR=VALUE,...]\n", text.c_str());
      std::exit(2);
    }
    t.label = text.substr(0, equals);
    std::string rest = text.substr(equals + 1);
    const size_t colon = rest.find(':');
    const auto variant = tcc::rt::parseGpuPermanentVariant(rest.substr(0, colon));
    if (!variant) {
      std::fprintf(stderr, "--try %s: unknown variant\n", text.c_str());
      std::exit(2);
    }
    t.variant = *variant;
    if (colon != std::string::npos)
      for (const std::string& knob : splitList(rest.substr(colon + 1))) {
        const size_t at = knob.find('=');
        if (at == std::string::npos) {
          std::fprintf(stderr, "--try %s: expected VAR=VALUE in %s\n", text.c_str(), knob.c_str());
          std::exit(2);
        }
        t.knobs.emplace_back(knob.substr(0, at), knob.substr(at + 1));
      }
    parsed.push_back(std::move(t));
  }
  std::printf("## Tries (whole-range seconds; [registers, local B, blocks/SM, k/r, Hybrid's adds+multiplications+global "
              "accesses per step by the model])\n\n| matrix |");
  for (const auto& t : parsed) std::printf(" %s |", t.label.c_str());
  std::printf("\n|---|");
  for (size_t k = 0; k < parsed.size(); ++k) std::printf("---|");
  std::printf("\n");
  std::vector<std::vector<double>> seconds(inputs.size());
  double worstAgreement = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::printf("| %s |", inputs[i].name.c_str());
    // Tries of one variant share the column order: their sums over the
    // chunks all of them ran agree (checked against the variant's first try).
    std::vector<std::vector<double>> partials;
    for (const auto& t : parsed) {
      for (const auto& [name, value] : t.knobs) ::setenv(name.c_str(), value.c_str(), 1);
      try {
        gpu::GpuRangeEngine engine(inputs[i].matrix, t.variant, perm::planChunks(inputs[i].matrix.n).chunkSize);
        Measurement m = measure(engine, inputs[i], budget, fullLimit, perm::planChunks(inputs[i].matrix.n));
        const gpu::GpuEngineReport& r = engine.report();
        // The model's operations per step, where the plan names them.
        std::string operations;
        if (const size_t at = r.plan.find("model: "); at != std::string::npos) {
          double adds = 0, multiplications = 0, global = 0;
          if (std::sscanf(r.plan.c_str() + at, "model: %lf adds + %lf multiplications + %lf global", &adds,
                          &multiplications, &global) == 3) {
            char text[48];
            std::snprintf(text, sizeof text, ", %.1f+%.1f+%.3fg", adds, multiplications, global);
            operations = text;
          }
        }
        std::printf(" %s [%d, %d, %d, %d/%d%s] |", timeText(m).c_str(), r.registers, r.localBytes,
                    r.blocksPerMultiprocessor, r.registerColumns, r.registerRows, operations.c_str());
        seconds[i].push_back(m.seconds);
        partials.push_back(m.partials);
      } catch (const std::exception& error) {
        std::printf(" failed: %s |", error.what());
        seconds[i].push_back(std::nan(""));
        partials.push_back({});
      }
      for (const auto& knob : t.knobs) ::unsetenv(knob.first.c_str());
      std::fflush(stdout);
    }
    std::printf("\n");
    for (size_t k = 0; k < parsed.size(); ++k) {
      size_t first = 0;
      while (parsed[first].variant != parsed[k].variant) ++first;
      if (first == k || partials[first].empty() || partials[k].empty()) continue;
      const size_t common = std::min(partials[first].size(), partials[k].size());
      const double reference = perm::addInChunkOrder(
          std::vector<double>(partials[first].begin(), partials[first].begin() + common), inputs[i].matrix.n);
      const double other = perm::addInChunkOrder(
          std::vector<double>(partials[k].begin(), partials[k].begin() + common), inputs[i].matrix.n);
      worstAgreement = std::max(worstAgreement, std::abs(other - reference) / std::abs(reference));
    }
  }
  std::printf("\nTries of one variant agree on their common prefix within %.1e relative.\n", worstAgreement);
  std::printf("\n| set | ");
  for (const auto& t : parsed) std::printf(" %s |", t.label.c_str());
  std::printf("\n|---|");
  for (size_t k = 0; k < parsed.size(); ++k) std::printf("---|");
  std::printf("\n");
  std::vector<std::string> groups;
  for (const auto& input : inputs)
    if (std::find(groups.begin(), groups.end(), input.group) == groups.end()) groups.push_back(input.group);
  for (const auto& group : groups) {
    std::printf("| %s: %s over each |", group.c_str(), parsed[0].label.c_str());
    for (size_t k = 0; k < parsed.size(); ++k) {
      std::vector<double> ratios;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].group == group && std::isfinite(seconds[i][k])) ratios.push_back(seconds[i][0] / seconds[i][k]);
      std::printf(" %.2fx |", geometricMean(ratios));
    }
    std::printf("\n");
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string matrices, outDirectory = ".", sourcesDirectory;
  bool quick = false, sourcesOnly = false, ablation = false, cpuOnly = false;
  // --try LABEL=VARIANT[:VAR=VALUE,...]: a GPU kernel with the tuning knobs
  // (gpu_engine.cpp) set, timed on every input; with --tries-only nothing else runs.
  std::vector<std::string> tries;
  bool triesOnly = false, costs = false;
  double budget = 0.3, fullLimit = 1.5;
  std::vector<int> sizes = {32, 36, 40};
  std::vector<double> densities = {0.1, 0.2, 0.3, 0.4, 0.5};
  std::vector<std::string> realNames = {"bcsstk01", "mesh1e1", "bcspwr02"};
  for (int k = 1; k < argc; ++k) {
    std::string flag = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", flag.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (flag == "--quick") quick = true;
    else if (flag == "--budget") budget = std::atof(value().c_str());
    else if (flag == "--full-limit") fullLimit = std::atof(value().c_str());
    else if (flag == "--out") outDirectory = value();
    else if (flag == "--sources") sourcesDirectory = value();
    else if (flag == "--sources-only") sourcesOnly = true;
    else if (flag == "--costs") sourcesOnly = costs = true;
    else if (flag == "--ablation") ablation = true;
    else if (flag == "--cpu-only") cpuOnly = true;
    else if (flag == "--try") tries.push_back(value());
    else if (flag == "--tries-only") triesOnly = true;
    else if (flag == "--sizes") {
      sizes.clear();
      for (const auto& item : splitList(value())) sizes.push_back(std::atoi(item.c_str()));
    } else if (flag == "--densities") {
      densities.clear();
      for (const auto& item : splitList(value())) densities.push_back(std::atof(item.c_str()));
    } else if (flag == "--real") {
      realNames = splitList(value());
    }
    else if (!flag.empty() && flag[0] != '-' && matrices.empty()) matrices = flag;
    else {
      std::fprintf(stderr,
                   "usage: %s MATRICES_DIR [--quick] [--budget S] [--full-limit S] [--out DIR] [--sources DIR] "
                   "[--sources-only] [--ablation] [--cpu-only] [--sizes 32,36,40] [--densities 0.1,...] [--real bcsstk01,...] "
                   "[--try LABEL=VARIANT[:VAR=VALUE,...]]... [--tries-only]\n",
                   argv[0]);
      return 2;
    }
  }
  if (quick) budget = std::min(budget, 0.2);

  std::vector<Input> inputs;
  if (quick) {
    sizes = {40};
    densities = {0.1, 0.3, 0.5};
    realNames = {"bcsstk01"};
  }
  for (int n : sizes)
    for (double p : densities) inputs.push_back(erdosRenyi(n, p, 2026 + 1000 * n + static_cast<int>(p * 10)));
  if (!matrices.empty()) {
    for (const auto& name : realNames) {
      Input input = fromFile(matrices + "/" + name + ".mtx");
      if (input.matrix.n > 0) inputs.push_back(std::move(input));
    }
  }

  if (!sourcesDirectory.empty() || sourcesOnly) {
    // The generated kernels and the partition chosen, without a GPU.
    for (const auto& input : inputs) {
      gpu::GeneratedPermanentKernel hybrid = gpu::generatePermanentKernel(input.matrix, GpuPermanentVariant::Hybrid);
      std::printf("%-18s n=%d nnz=%lld  hybrid: k=%d register columns, r=%d register rows, est. %d registers\n",
                  input.name.c_str(), input.matrix.n, static_cast<long long>(input.matrix.nonzeros),
                  hybrid.partition.registerColumns, hybrid.partition.registerRows, hybrid.partition.estimatedRegisters);
      if (!hybrid.plan.empty()) std::printf("  plan: %s\n", hybrid.plan.c_str());
      if (costs) {
        // What a step costs for each partition and kernel shape (the model's inputs).
        const int sliceBits = std::countr_zero(gpu::planLaunch(perm::planChunks(input.matrix.n).chunkSize, 1).iterationsPerThread);
        std::printf("  k  r  | adds+mults/step, live doubles: no pairs u8 | pairs u8 | forming u8 | no pairs u16 | pairs u16 | forming u16\n");
        for (int k = 1; k < input.matrix.n && k <= 16; ++k) {
          const gpu::Partition partition = gpu::evaluatePartition(hybrid.problem, k, gpu::CostModel{});
          std::printf("  %2d %2d |", k, partition.registerRows);
          for (int unroll : {8, 16})
            for (int pairs : {gpu::kNoPairs, gpu::kPairsKeepingSums, gpu::kPairsFormingSums}) {
              const gpu::KernelCost cost = gpu::hybridKernelCost(hybrid.problem, partition, unroll, sliceBits, pairs, 8);
              std::printf(" %5.1f+%5.1f g%.3f %2d |", cost.additions, cost.multiplications, cost.globalAccesses,
                          cost.liveDoubles);
            }
          std::printf("\n");
        }
      }
      if (sourcesDirectory.empty()) continue;
      std::filesystem::create_directories(sourcesDirectory);
      std::string stem = input.name;
      std::replace(stem.begin(), stem.end(), ' ', '_');
      std::replace(stem.begin(), stem.end(), '=', '-');
      for (auto variant : kVariants)
        std::ofstream(sourcesDirectory + "/" + stem + "_" + tcc::rt::gpuPermanentVariantName(variant) + ".cu")
            << gpu::generatePermanentKernel(input.matrix, variant).source;
    }
    if (sourcesOnly) return 0;
  }

  const auto benchStart = Clock::now();
  if (!tries.empty()) {
    runTries(inputs, tries, budget, fullLimit);
    if (triesOnly) {
      std::printf("\nbench wall time %.0f s\n", secondsSince(benchStart));
      return 0;
    }
  }
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  // --cpu-only: a smoke test of the bench where there is no GPU; every
  // column runs the CPU kernel.
  std::printf("# Sparse permanents: CPU SparsePerman (%d threads) vs GPU kernels on %s\n\n", cores,
              cpuOnly ? "(none: --cpu-only, every column is the CPU kernel)" : tcc::rt::cuda::device().name.c_str());
  std::printf("Times are for the whole 2^(n-1)-step range in seconds; \"~T (x%%)\" is extrapolated from the first x%% "
              "of the range (budget %.1f s per kernel; full runs when the estimate is under %.1f s).\n\n",
              budget, fullLimit);
  std::printf("| matrix | n | nnz | CPU | GPU-SparsePerman | CodeGen-PureReg | CodeGen-Hybrid | Hybrid/baseline | "
              "Hybrid/PureReg | Hybrid/CPU | CPU vs baseline, PureReg on a common prefix (rel.) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  std::vector<std::vector<Measurement>> results;
  for (const auto& input : inputs) {
    std::vector<Measurement> row;
    {
      auto setup = Clock::now();
      auto tables = std::make_shared<perm::RyserTables<double>>(perm::floatTables(input.matrix));
      auto engine = perm::makeCpuEngine<double>(
          [tables](uint64_t begin, uint64_t end, perm::StopFlags stop) { return perm::floatChunk(*tables, begin, end, stop); },
          cores);
      const double setupSeconds = secondsSince(setup);
      // Chunks of at most 2^22 steps, so one batch (a chunk per core) stays
      // short at n = 48 (the plan's chunks are 2^31 steps there).
      perm::ChunkPlan fine = perm::planChunks(input.matrix.n);
      while (fine.chunkSize > (uint64_t{1} << 22)) fine.chunkSize /= 2, fine.chunks *= 2;
      Measurement m = measure(*engine, input, budget, fullLimit, fine);
      m.kernel = kKernels[0];
      m.setupSeconds = setupSeconds;
      row.push_back(m);
    }
    for (int k = 0; k < 3 && cpuOnly; ++k) {
      auto tables = std::make_shared<perm::RyserTables<double>>(perm::floatTables(input.matrix));
      auto engine = perm::makeCpuEngine<double>(
          [tables](uint64_t begin, uint64_t end, perm::StopFlags stop) { return perm::floatChunk(*tables, begin, end, stop); },
          cores);
      row.push_back(measure(*engine, input, budget, fullLimit, perm::planChunks(input.matrix.n)));
    }
    for (int k = 0; k < 3 && !cpuOnly; ++k) {
      auto setup = Clock::now();
      gpu::GpuRangeEngine engine(input.matrix, kVariants[k], perm::planChunks(input.matrix.n).chunkSize);
      const double setupSeconds = secondsSince(setup);
      Measurement m = measure(engine, input, budget, fullLimit, perm::planChunks(input.matrix.n));
      m.kernel = kKernels[k + 1];
      m.setupSeconds = setupSeconds;
      m.report = engine.report();
      m.isGpu = true;
      row.push_back(m);
    }
    // CPU, baseline and PureReg share the degree-sorted order, so their
    // partials over the same prefix agree; Hybrid's order differs (its
    // full-run permanent is compared instead, when there is one).
    // The same prefix of steps: a whole number of the plan's chunks.
    const uint64_t coarse = row[1].chunkSize;
    uint64_t common = row[0].chunksRun * row[0].chunkSize;
    for (int k = 1; k <= 2; ++k) common = std::min<uint64_t>(common, row[k].chunksRun * row[k].chunkSize);
    common = common / coarse * coarse;
    auto prefix = [&](const Measurement& m) {
      const auto chunks = static_cast<std::ptrdiff_t>(common / m.chunkSize);
      return perm::addInChunkOrder(std::vector<double>(m.partials.begin(), m.partials.begin() + chunks), input.matrix.n);
    };
    double agreement = -1;
    if (common > 0) {
      const double reference = prefix(row[0]);
      agreement = 0;
      for (int k = 1; k <= 2; ++k) agreement = std::max(agreement, std::abs(prefix(row[k]) - reference) / std::abs(reference));
    }
    char agreementText[32] = "-";
    if (agreement >= 0) std::snprintf(agreementText, sizeof agreementText, "%.1e", agreement);
    std::printf("| %s | %d | %lld | %s | %s | %s | %s | %.2fx | %.2fx | %.1fx | %s |\n", input.name.c_str(),
                input.matrix.n, static_cast<long long>(input.matrix.nonzeros), timeText(row[0]).c_str(),
                timeText(row[1]).c_str(), timeText(row[2]).c_str(), timeText(row[3]).c_str(),
                row[1].seconds / row[3].seconds, row[2].seconds / row[3].seconds, row[0].seconds / row[3].seconds,
                agreementText);
    std::fflush(stdout);
    results.push_back(std::move(row));
  }

  std::printf("\n## What the compiler made of each GPU kernel\n\n| matrix | kernel | registers | local B | threads/block "
              "| blocks/SM | resident threads | k / r | generate + compile s |\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < inputs.size(); ++i)
    for (const auto& m : results[i]) {
      if (!m.isGpu) continue;
      std::printf("| %s | %s | %d | %d | %d | %d | %lld | %d / %d | %.2f |\n", inputs[i].name.c_str(), m.kernel.c_str(),
                  m.report.registers, m.report.localBytes, m.report.threadsPerBlock, m.report.blocksPerMultiprocessor,
                  static_cast<long long>(m.report.residentThreads), m.report.registerColumns, m.report.registerRows,
                  m.setupSeconds);
    }

  if (ablation) {
    // What Hybrid's plan and products are worth, on the n = 40 set and the
    // real matrices: Algorithm 4's partition with blocks of 8 steps, with and
    // without pairs; multiplying every register row at every step (the
    // paper's product) instead of keeping the block product; keeping the
    // block product without the levels.
    struct Setting {
      const char* label;
      GpuPermanentVariant variant;
      const char* unroll;
      const char* blockProduct;
      const char* levels;
      const char* pairs;
    };
    // Each setting replaces the plan by Algorithm 4's partition and blocks of 8 steps.
    const Setting settings[] = {{"Hybrid, Algorithm 4, no pairs", GpuPermanentVariant::Hybrid, "8", "1", "1", "0"},
                                {"Hybrid, Algorithm 4, pairs", GpuPermanentVariant::Hybrid, "8", "1", "1", "1"},
                                {"Hybrid, paper product", GpuPermanentVariant::Hybrid, "8", "0", "1", "0"},
                                {"Hybrid, no product levels", GpuPermanentVariant::Hybrid, "8", "1", "0", "0"}};
    std::printf("\n## Ablation (whole-range seconds, same budget; registers per thread in brackets)\n\n| matrix | PureReg "
                "| Hybrid |");
    for (const auto& setting : settings) std::printf(" %s |", setting.label);
    std::printf("\n|---|---|---|");
    for (size_t k = 0; k < std::size(settings); ++k) std::printf("---|");
    std::printf("\n");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].matrix.n < 40) continue;
      std::printf("| %s | %s [%d] | %s [%d] |", inputs[i].name.c_str(), timeText(results[i][2]).c_str(),
                  results[i][2].report.registers, timeText(results[i][3]).c_str(), results[i][3].report.registers);
      for (const auto& setting : settings) {
        ::setenv("TCC_PERMANENT_GPU_UNROLL", setting.unroll, 1);
        ::setenv("TCC_PERMANENT_GPU_BLOCK_PRODUCT", setting.blockProduct, 1);
        ::setenv("TCC_PERMANENT_GPU_LEVELS", setting.levels, 1);
        ::setenv("TCC_PERMANENT_GPU_PAIRS", setting.pairs, 1);
        gpu::GpuRangeEngine engine(inputs[i].matrix, setting.variant, perm::planChunks(inputs[i].matrix.n).chunkSize);
        Measurement m = measure(engine, inputs[i], budget, fullLimit, perm::planChunks(inputs[i].matrix.n));
        std::printf(" %s [%d] |", timeText(m).c_str(), engine.report().registers);
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    ::unsetenv("TCC_PERMANENT_GPU_UNROLL");
    ::unsetenv("TCC_PERMANENT_GPU_BLOCK_PRODUCT");
    ::unsetenv("TCC_PERMANENT_GPU_LEVELS");
    ::unsetenv("TCC_PERMANENT_GPU_PAIRS");
  }

  std::filesystem::create_directories(outDirectory);
  std::ofstream csv(outDirectory + "/permanent_gpu.csv");
  csv << "matrix,n,nnz,kernel,seconds,fraction_measured,full,setup_seconds,registers,local_bytes,resident_threads,"
         "register_columns,register_rows\n";
  for (size_t i = 0; i < inputs.size(); ++i)
    for (const auto& m : results[i])
      csv << inputs[i].name << "," << inputs[i].matrix.n << "," << inputs[i].matrix.nonzeros << "," << m.kernel << ","
          << m.seconds << "," << m.fraction << "," << m.full << "," << m.setupSeconds << "," << m.report.registers
          << "," << m.report.localBytes << "," << m.report.residentThreads << "," << m.report.registerColumns << ","
          << m.report.registerRows << "\n";
  writeSvg(outDirectory + "/permanent_gpu.svg", inputs, results);
  std::printf("\nwrote %s/permanent_gpu.csv and %s/permanent_gpu.svg\n", outDirectory.c_str(), outDirectory.c_str());
  std::printf("\n## Summary (geometric means of time ratios)\n\n| set | Hybrid vs baseline | Hybrid vs PureReg | "
              "Hybrid vs CPU |\n|---|---|---|---|\n");
  std::vector<std::string> groups;
  for (const auto& input : inputs)
    if (std::find(groups.begin(), groups.end(), input.group) == groups.end()) groups.push_back(input.group);
  groups.push_back("all");
  for (const auto& group : groups) {
    std::vector<double> base, pure, cpu;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (group != "all" && inputs[i].group != group) continue;
      base.push_back(results[i][1].seconds / results[i][3].seconds);
      pure.push_back(results[i][2].seconds / results[i][3].seconds);
      cpu.push_back(results[i][0].seconds / results[i][3].seconds);
    }
    std::printf("| %s | %.2fx | %.2fx | %.1fx |\n", group.c_str(), geometricMean(base), geometricMean(pure),
                geometricMean(cpu));
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == "ER n=40 p=0.1") {
      const Measurement& h = results[i][3];
      std::printf("\nER n=40 p=0.1 with CodeGen-Hybrid: %s s for the whole range%s, %.2f s generation + NVRTC "
                  "compilation, %.3f s end to end\n",
                  timeText(h).c_str(), h.full ? "" : " (extrapolated)", h.setupSeconds, h.seconds + h.setupSeconds);
      if (h.full) {
        const Measurement& p = results[i][2];
        std::printf("its permanent %.17g", h.permanent);
        if (p.full) std::printf(", PureReg's %.17g (relative difference %.1e)", p.permanent,
                                std::abs(p.permanent - h.permanent) / std::abs(h.permanent));
        std::printf("\n");
      }
    }

  std::printf("\nbench wall time %.0f s\n", secondsSince(benchStart));
  return 0;
}
