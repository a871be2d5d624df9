// CSR SpMV, single-threaded: tcc in strict and in fast floating-point mode
// against the loop TACO emits for y(i) = A(i,j) * x(j), compiled as TACO
// compiles it (the system compiler, -O3 -ffast-math; here also
// -march=native, as tcc's kernels get).
//
//   tcc_spmv_fp_bench [--repeat N] [--rounds R] [--block B] [--in-cache-only | --out-of-cache-only] [--threads T]
//                     [--backend system|clang] [--kernel spmv|ttv] [--scale-ups BIG:SMALL,...]
//                     [--pages 2m|4k|both] [--huge-min BYTES] [--peer NAME=VALUE] [--llc-multiple M]
//                     [MATRIX ...]
//
// --scale-ups replaces the five out-of-cache Kronecker scale-ups with those named.
//
// Out of cache means out of this machine's last-level cache, read at run
// time (printed first, with the CPU): each scale-up kron(BIG, SMALL) is
// repeated k times along the diagonal, kron(I_k, BIG, SMALL), with the
// smallest k for which a call's bytes are at least M times the last-level
// cache (--llc-multiple, default 2) and the matrix holds at least 20 M
// entries; each triad array is at least as large as that cache (and 256
// MB). --llc-multiple 0 runs the sizes measured before this rule (one copy,
// 21-26 M entries, 3 x 256 MB triads), which fit a large last-level cache.
//
// --pages: the scale-ups' tensors in the runtime's default pages (2m: arrays
// of 4 MB and more in 2 MB pages, where the system grants them), all in
// 4 KB pages (4k), or both: two copies of each scale-up's tensors, every
// variant called on each in turn. Each row reports two STREAM triads, over
// arrays in 4 KB and in 2 MB pages, each called once between every round
// of the kernels' calls (medians), and the kernel against the triad whose
// arrays are in the tensors' pages (and against the 4 KB one); its last
// column says what share of the values and of x the system backed with
// 2 MB pages. Its last two columns set the fast kernel built with
// -DTCC_GATHER_SUMS=0 (the scalar loops it ran before it had a copy with
// AVX-512 gathers for AMD cores; elsewhere the same code) against the same
// triad, and the fast kernel against it. --peer NAME=VALUE builds that
// second copy with -DNAME=VALUE instead (say TCC_GATHER_PREFETCH=512, the
// gathers copy prefetching as far as before), the columns named after it.
// --huge-min sets the runtime's threshold (default 4 MB;
// tcc::rt::setHugePageMinBytes).
//
// --block B times B calls of each kernel in a row before the next kernel's
// (default 1: one call of each in turn). Kernels of a few microseconds in
// cache run faster back to back than between two others (the branch
// predictor and the caches keep their state); B > 1 times each in its own
// steady state and still spreads changes in the load over all three.
//
// --kernel ttv measures tensor-times-vector A(i,j) = B(i,j,k) * c(k) (B CSF,
// A dense) the same way (with --threads, B's first mode shared among them
// as SpMV's rows are), on the same matrices with their rows folded into B's
// first two modes (B(r / 8, r % 8, c) = M(r, c): every
// fibre along k is a row of M), against TACO's loop for that statement.
//
// --backend picks how tcc's kernels (and the triad) are compiled: the
// in-process Clang JIT where the build has it (the default), or the system
// compiler (the only one on builds without LLVM).
//
// In cache: real matrices, one thread. Out of cache: Kronecker products of
// a real matrix with a small real one (>= 20 M stored entries), reported as
// the bandwidth SpMV achieves (pos, crd, vals, x and y each moved once)
// against a STREAM triad on as many threads, measured in the same run. With
// --threads T > 1 only the out-of-cache part runs, every variant's row loop
// under `parallelize(i, CPUThread, NoRaces)` (tcc) or the same OpenMP
// schedule (the TACO-style loop). Only the calls are timed (the kernels'
// entry points on views bound once, y allocated once); in cache the fast
// kernel is also timed through Kernel::run, which binds the inputs and
// allocates y inside each call. Calls go round robin over the variants;
// times are medians of all samples. Every result is checked against strict tcc.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tcc/lowering/codegen.h"
#include "tcc/tcc.h"
#include "../common/folded_rows.h"
#include "../common/machine.h"
#include "../common/omp_threads.h"
#include "../common/page_share.h"
#include "../common/stats.h"
#include "../common/scale_up.h"
#include "../common/stream_triad.h"

namespace {

// TACO's compute loop for y(i) = A(i,j) * x(j) with A CSR (taco 0.x output,
// renamed to plain arguments), compiled as TACO compiles it.
// With threads, its row loop gets the OpenMP schedule tcc emits for
// parallelize(i, CPUThread, NoRaces).
const char* const kTacoStyleSpmv = R"(
extern "C" void taco_spmv(int A1_dimension, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                          const double* x_vals, double* y_vals) {
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < A1_dimension; i++) {
    double tjy_val = 0.0;
    for (long long jA = A2_pos[i]; jA < A2_pos[(i + 1)]; jA++) {
      int j = A2_crd[jA];
      tjy_val += A_vals[jA] * x_vals[j];
    }
    y_vals[i] = tjy_val;
  }
}
)";
using TacoSpmv = void (*)(int, const long long*, const int*, const double*, const double*, double*);

// TACO's compute loop for A(i,j) = B(i,j,k) * c(k), B CSF and A dense, as
// above; with threads, its loop over i gets the same schedule.
const char* const kTacoStyleTtv = R"(
extern "C" void taco_ttv(int A2_dimension, const long long* B1_pos, const int* B1_crd, const long long* B2_pos,
                         const int* B2_crd, const long long* B3_pos, const int* B3_crd, const double* B_vals,
                         const double* c_vals, double* A_vals) {
  #pragma omp parallel for schedule(dynamic, 16)
  for (long long iB = B1_pos[0]; iB < B1_pos[1]; iB++) {
    int i = B1_crd[iB];
    for (long long jB = B2_pos[iB]; jB < B2_pos[(iB + 1)]; jB++) {
      int j = B2_crd[jB];
      long long jA = (long long)i * A2_dimension + j;
      double tkA_val = 0.0;
      for (long long kB = B3_pos[jB]; kB < B3_pos[(jB + 1)]; kB++) {
        int k = B3_crd[kB];
        tkA_val += B_vals[kB] * c_vals[k];
      }
      A_vals[jA] = tkA_val;
    }
  }
}
)";
using TacoTtv = void (*)(int, const long long*, const int*, const long long*, const int*, const long long*, const int*,
                         const double*, const double*, double*);

const char* const kSpmv = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";
const char* const kTtv =
    "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n";
const char* const kParallelSchedule = "schedule { parallelize(i, CPUThread, NoRaces) }\n";

tcc::Kernel compileKernel(bool ttv, tcc::frontend::FloatingPointMode mode, bool parallel, tcc::jit::Backend backend) {
  tcc::CompileOptions options;
  options.floatingPoint = mode;
  options.backend = backend;
  std::string text = std::string(ttv ? kTtv : kSpmv) + (parallel ? kParallelSchedule : "");
  return tcc::compile(tcc::Program::fromText(text, "spmv.tc"), options);
}

// The kernels' entry points are called on views bound once: Kernel::run
// allocates and zeroes y inside its timed call, which neither a bandwidth
// figure nor a comparison of loops should count (out of cache y's pages
// would fault inside the kernel on every call).
using Entry = tcc::Kernel::EntryPoint;


// The system's transparent huge page mode ("madvise", "always", "never").
std::string transparentHugePages() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(file, line);
  size_t open = line.find('['), close = line.find(']');
  return open != std::string::npos && close > open ? line.substr(open + 1, close - open - 1) : "unknown";
}

tcc::rt::Coo readMatrix(const std::string& name) {
  return tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
}

struct Row {
  std::string matrix;
  int64_t rows = 0, nnz = 0;
  double bytes = 0;  // pos, crd, vals, x and y once each
  double strict = 0, fast = 0, taco = 0;
  double scalar = 0;  // the fast kernel built with -DTCC_GATHER_SUMS=0 (the loops before the gathers)
  double fastDifference = 0, tacoDifference = 0;
  double valsHuge = 0, xHuge = 0;  // share of the values and of x in 2 MB pages
};

double relativeDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 0, worst = 0;
  for (double v : b) scale = std::max(scale, std::abs(v));
  for (size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(a[k] - b[k]));
  return scale > 0 ? worst / scale : worst;
}

// The fast kernel through Kernel::run, which also binds the inputs and
// allocates and zeroes y inside each timed call: the library call's own
// cost, reported beside the kernel's.
double fastThroughRun(const tcc::rt::Coo& coo, const tcc::Kernel& fast, int repeat, int rounds) {
  tcc::Tensor A = tcc::rt::pack(coo, tcc::toRuntimeFormat(tcc::Format::csr()));
  tcc::Tensor x = tcc::rt::pack(tcc::rt::randomUniform({coo.dims[1]}, 1.0, 7),
                                tcc::toRuntimeFormat(tcc::Format::denseOfOrder(1)));
  std::map<std::string, tcc::Tensor> inputs = {{"A", A}, {"x", x}};
  std::vector<double> samples;
  for (int round = 0; round < rounds; ++round)
    for (double s : fast.run(inputs, tcc::RunOptions{repeat}).seconds) samples.push_back(s);
  return median(samples);
}

// One copy of a kernel's tensors, its views bound once; the output
// allocated once, which every variant writes (only the call is timed).
struct Setup {
  Row row;
  std::vector<tcc::Tensor> tensors;  // output first, as the views
  std::vector<tcc_tensor> views;
  std::vector<tcc_tensor*> pointers;
  double* out = nullptr;
  size_t outSize = 0;
  std::function<void()> taco;
  void bind() {
    for (auto& tensor : tensors) views.push_back(tensor.abiView());
    for (auto& view : views) pointers.push_back(&view);
    out = static_cast<double*>(views[0].vals);
  }
};

// TTV on `coo`, the matrix's rows folded (foldedRows), in the runtime's
// current pages.
std::unique_ptr<Setup> ttvSetup(const std::string& name, const tcc::rt::Coo& coo, TacoTtv taco) {
  auto setup = std::make_unique<Setup>();
  setup->tensors.push_back(tcc::Tensor({coo.dims[0], coo.dims[1]}, tcc::toRuntimeFormat(tcc::Format::denseOfOrder(2)),
                                       tcc::rt::ValueType::Float64));
  setup->tensors.push_back(tcc::rt::pack(coo, tcc::toRuntimeFormat(tcc::Format::csf(3))));
  setup->tensors.push_back(tcc::rt::pack(tcc::rt::randomUniform({coo.dims[2]}, 1.0, 7),
                                         tcc::toRuntimeFormat(tcc::Format::denseOfOrder(1))));
  setup->bind();
  const tcc_tensor& b = setup->views[1];
  auto level = [b](int l) { return reinterpret_cast<const long long*>(b.levels[l].pos); };
  const auto* vals = static_cast<const double*>(b.vals);
  const auto* cVals = static_cast<const double*>(setup->views[2].vals);
  double* aVals = setup->out;
  const int64_t fibres = level(1)[level(0)[1]];
  Row& row = setup->row;
  row = Row{name, fibres, static_cast<int64_t>(coo.nnz())};
  // pos and crd of the three levels, vals, c, and A's entries the fibres write
  row.bytes = 8.0 * (fibres + level(0)[1] + 3) + 4.0 * (fibres + level(0)[1]) + 12.0 * coo.nnz() +
              8.0 * coo.dims[2] + 8.0 * fibres;
  row.valsHuge = hugePageShare(vals, 8LL * static_cast<long long>(coo.nnz()));
  row.xHuge = hugePageShare(cVals, 8LL * coo.dims[2]);
  setup->outSize = size_t(coo.dims[0]) * coo.dims[1];
  const int j = coo.dims[1];
  setup->taco = [=] {
    taco(j, level(0), b.levels[0].crd, level(1), b.levels[1].crd, level(2), b.levels[2].crd, vals, cVals, aVals);
  };
  return setup;
}

// SpMV on `coo`, in the runtime's current pages.
std::unique_ptr<Setup> spmvSetup(const std::string& name, const tcc::rt::Coo& coo, TacoSpmv taco) {
  auto setup = std::make_unique<Setup>();
  setup->tensors.push_back(
      tcc::Tensor({coo.dims[0]}, tcc::toRuntimeFormat(tcc::Format::denseOfOrder(1)), tcc::rt::ValueType::Float64));
  setup->tensors.push_back(tcc::rt::pack(coo, tcc::toRuntimeFormat(tcc::Format::csr())));
  setup->tensors.push_back(tcc::rt::pack(tcc::rt::randomUniform({coo.dims[1]}, 1.0, 7),
                                         tcc::toRuntimeFormat(tcc::Format::denseOfOrder(1))));
  setup->bind();
  const tcc_tensor& a = setup->views[1];
  const auto* pos = reinterpret_cast<const long long*>(a.levels[1].pos);
  const int* crd = a.levels[1].crd;
  const auto* vals = static_cast<const double*>(a.vals);
  const auto* xVals = static_cast<const double*>(setup->views[2].vals);
  double* yVals = setup->out;
  Row& row = setup->row;
  row = Row{name, coo.dims[0], static_cast<int64_t>(coo.nnz())};
  row.bytes = 8.0 * (coo.dims[0] + 1) + 12.0 * coo.nnz() + 8.0 * coo.dims[1] + 8.0 * coo.dims[0];
  row.valsHuge = hugePageShare(vals, 8LL * static_cast<long long>(coo.nnz()));
  row.xHuge = hugePageShare(xVals, 8LL * coo.dims[1]);
  setup->outSize = size_t(coo.dims[0]);
  const int rows = coo.dims[0];
  setup->taco = [=] { taco(rows, pos, crd, vals, xVals, yVals); };
  return setup;
}

// Checks every variant on every setup against strict tcc, then times them
// round robin, `block` calls of each in turn (variants and setups: the
// same tensors in 4 KB and in 2 MB pages, say), and one call of each of
// `triads` between, so that a change in the machine's load falls on all
// alike; fills each setup's row and returns each triad's median rate.
std::vector<double> measure(std::vector<std::unique_ptr<Setup>>& setups, Entry strict, Entry fast, Entry scalar,
                            int repeat, int rounds, int block, const std::vector<TriadArrays*>& triads = {}) {
  for (auto& setup : setups) {
    tcc_tensor** pointers = setup->pointers.data();
    auto result = [&] { return std::vector<double>(setup->out, setup->out + setup->outSize); };
    if (strict(pointers) != 0 || fast(pointers) != 0 || scalar(pointers) != 0) throw std::runtime_error("kernel failed");
    strict(pointers);
    std::vector<double> strictOut = result();
    fast(pointers);
    setup->row.fastDifference = relativeDifference(result(), strictOut);
    scalar(pointers);
    setup->row.fastDifference = std::max(setup->row.fastDifference, relativeDifference(result(), strictOut));
    setup->taco();
    setup->row.tacoDifference = relativeDifference(result(), strictOut);
  }
  const size_t n = setups.size();
  std::vector<std::vector<double>> strictSamples(n), fastSamples(n), tacoSamples(n), scalarSamples(n),
      triadSamples(triads.size());
  for (int round = 0; round < rounds; ++round)
    for (int r = 0; r < repeat; r += block) {
      const int calls = std::min(block, repeat - r);
      for (size_t t = 0; t < triads.size(); ++t) triadSamples[t].push_back(triads[t]->seconds());
      for (size_t s = 0; s < n; ++s) {
        tcc_tensor** pointers = setups[s]->pointers.data();
        for (int k = 0; k < calls; ++k) strictSamples[s].push_back(seconds([&] { strict(pointers); }));
        for (int k = 0; k < calls; ++k) fastSamples[s].push_back(seconds([&] { fast(pointers); }));
        for (int k = 0; k < calls; ++k) tacoSamples[s].push_back(seconds(setups[s]->taco));
        for (int k = 0; k < calls; ++k) scalarSamples[s].push_back(seconds([&] { scalar(pointers); }));
      }
    }
  for (size_t s = 0; s < n; ++s) {
    setups[s]->row.strict = median(strictSamples[s]);
    setups[s]->row.fast = median(fastSamples[s]);
    setups[s]->row.taco = median(tacoSamples[s]);
    setups[s]->row.scalar = median(scalarSamples[s]);
  }
  std::vector<double> rates;
  for (size_t t = 0; t < triads.size(); ++t) rates.push_back(triads[t]->bytes() / median(triadSamples[t]));
  return rates;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 20, rounds = 3, block = 1;
  bool inCacheOnly = false, outOfCacheOnly = false;
  int threads = 1;
  std::vector<std::pair<std::string, std::string>> scaleUps = {
      {"bcsstk16", "LF10"}, {"bayer10", "cage5"}, {"bcsstk13", "mesh1e1"}, {"dnn_n1024_l1", "gent113"},
      {"mbeacxc", "bcspwr03"}};
  bool ttv = false;  // TTV on the matrices' rows folded into fibres instead of SpMV
  std::vector<bool> pageModes = {true};  // out of cache: tensors in the default (2 MB) pages, or 4 KB ones
  int64_t hugeMin = tcc::rt::hugePageMinBytes();
  std::string peer = "TCC_GATHER_SUMS=0";  // the define the second fast copy is built with
  OutOfCacheSizes sizes;
  tcc::jit::Backend backend = tcc::CompileOptions{}.backend;
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--block" && i + 1 < argc) block = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--in-cache-only") inCacheOnly = true;
    else if (arg == "--out-of-cache-only") outOfCacheOnly = true;
    else if (arg == "--scale-ups" && i + 1 < argc) {
      scaleUps.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) {
        size_t colon = item.find(':');
        if (colon == std::string::npos) {
          std::cerr << "tcc_spmv_fp_bench: --scale-ups wants BIG:SMALL,...\n";
          return 2;
        }
        scaleUps.push_back({item.substr(0, colon), item.substr(colon + 1)});
      }
    }
    else if (arg == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--pages" && i + 1 < argc &&
             (argv[i + 1] == std::string("2m") || argv[i + 1] == std::string("4k") || argv[i + 1] == std::string("both"))) {
      std::string pages = argv[++i];
      pageModes = pages == "both" ? std::vector<bool>{false, true} : std::vector<bool>{pages == "2m"};
    } else if (arg == "--huge-min" && i + 1 < argc) hugeMin = std::max<int64_t>(1, std::atoll(argv[++i]));
    else if (arg == "--peer" && i + 1 < argc && std::string(argv[i + 1]).find('=') != std::string::npos)
      peer = argv[++i];
    else if (arg == "--llc-multiple" && i + 1 < argc) sizes.llcMultiple = std::max(0.0, std::atof(argv[++i]));
    else if (arg == "--kernel" && i + 1 < argc &&
             (argv[i + 1] == std::string("spmv") || argv[i + 1] == std::string("ttv")))
      ttv = argv[++i] == std::string("ttv");
    else if (arg == "--backend" && i + 1 < argc &&
             (argv[i + 1] == std::string("system") || argv[i + 1] == std::string("clang")))
      backend = argv[++i] == std::string("system") ? tcc::jit::Backend::SystemCompiler
                                                   : tcc::jit::Backend::ClangInterpreter;
    else if (arg.rfind("--", 0) == 0) {
      std::cerr << "usage: tcc_spmv_fp_bench [--repeat N] [--rounds R] [--block B] [--in-cache-only | --out-of-cache-only]\n"
                   "                         [--threads T] [--backend system|clang] [--kernel spmv|ttv]\n"
                   "                         [--scale-ups BIG:SMALL,...] [--pages 2m|4k|both] [--huge-min BYTES]\n"
                   "                         [--peer NAME=VALUE] [--llc-multiple M] [MATRIX ...]\n";
      return 2;
    } else matrices.push_back(arg);
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "Franz6_id1959_aug", "mbeacxc",
                "cryg2500", "watt_2", "adder_dcop_05", "bcspwr10", "Pd", "G51", "dwt_992", "jagmesh7"};

  if (!runWithOmpThreads(threads, argv)) return 1;
  const Machine machine = thisMachine();
  sizes.llcBytes = machine.llcBytes;
  std::printf("machine: %s; load average at the start: %s\n\n", describe(machine).c_str(), loadAverageNow().c_str());
  tcc::rt::setHugePageMinBytes(hugeMin);
  const bool parallel = threads > 1;
  tcc::Kernel strict = compileKernel(ttv, tcc::frontend::FloatingPointMode::Strict, parallel, backend);
  tcc::Kernel fast = compileKernel(ttv, tcc::frontend::FloatingPointMode::Fast, parallel, backend);
  // The same fast kernel built with -DTCC_GATHER_SUMS=0: on AMD cores with
  // AVX-512 the loops printed before its gathers copy (elsewhere the same
  // code as `fast`); or with --peer's define.
  const std::string peerName = peer == "TCC_GATHER_SUMS=0" ? "fast without gathers" : "fast -D" + peer;
  tcc::jit::CompileOptions scalarFlags;
  scalarFlags.backend = backend;
  scalarFlags.openmp = parallel;
  scalarFlags.extraFlags = tcc::lowering::cppFloatingPointFlags(tcc::lowering::FloatingPointMode::Fast);
  scalarFlags.extraFlags.push_back("-D" + peer);
  auto scalarModule = tcc::jit::compile(fast.source(), scalarFlags);
  const Entry scalar = scalarModule->function<Entry>("tcc_kernel_0");
  tcc::jit::CompileOptions tacoFlags;
  tacoFlags.backend = tcc::jit::Backend::SystemCompiler;
  tacoFlags.openmp = parallel;
  tacoFlags.extraFlags = {"-ffast-math", "-ffp-contract=fast"};
  auto triadModule = compileStreamTriad(backend);
  const int triadThreads = triadModule->function<int (*)()>("threads")();
  if (triadThreads != threads) {
    std::fprintf(stderr, "expected %d threads, the OpenMP runtime runs %d\n", threads, triadThreads);
    return 1;
  }
  auto tacoModule = tcc::jit::compile(ttv ? kTacoStyleTtv : kTacoStyleSpmv, tacoFlags);
  // The kernel's tensors for each page size asked for (true: the runtime's
  // threshold, 2 MB pages from 4 MB; false: none), measured together.
  auto run = [&](const std::string& name, const tcc::rt::Coo& coo, int reps, const std::vector<bool>& pages,
                 const std::vector<TriadArrays*>& triads, std::vector<double>* triadRates) {
    tcc::rt::Coo folded = ttv ? foldedRows(coo) : tcc::rt::Coo{};
    std::vector<std::unique_ptr<Setup>> setups;
    for (bool huge : pages) {
      tcc::rt::setHugePageMinBytes(huge ? hugeMin : 0);
      setups.push_back(ttv ? ttvSetup(name, folded, tacoModule->function<TacoTtv>("taco_ttv"))
                           : spmvSetup(name, coo, tacoModule->function<TacoSpmv>("taco_spmv")));
    }
    tcc::rt::setHugePageMinBytes(hugeMin);
    std::vector<double> rates =
        measure(setups, strict.entryPoint(0), fast.entryPoint(0), scalar, reps, rounds, block, triads);
    if (triadRates) *triadRates = rates;
    std::vector<Row> rows;
    for (auto& setup : setups) rows.push_back(setup->row);
    return rows;
  };
  const char* kernelName = ttv ? "TTV, A(i,j) = B(i,j,k) * c(k), B the matrix's rows folded: B(r/8, r%8, c)" : "SpMV";
  const char* rowsName = ttv ? "fibres" : "rows";

  int status = 0;
  auto checked = [&](const Row& row) {
    if (row.fastDifference > 1e-9 || row.tacoDifference > 1e-9) status = 1;
  };
  if (!parallel && !outOfCacheOnly) {
    std::vector<double> overStrict, overFast, overScalar;
    std::printf("%s in cache (one thread; > 1: tcc faster)\n\n", kernelName);
    std::printf("| matrix | %s | nnz | strict us | fast us | TACO-style us | TACO/strict | TACO/fast | "
                "fast rel diff | fast through run() us | TACO/%s |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                rowsName, peerName.c_str());
    for (const auto& name : matrices) {
      tcc::rt::Coo coo = readMatrix(name);
      Row row = run(name, coo, repeat, {true}, {}, nullptr).front();
      char throughRun[32] = "-";  // SpMV only
      if (!ttv) std::snprintf(throughRun, sizeof throughRun, "%.2f", 1e6 * fastThroughRun(coo, fast, repeat, rounds));
      checked(row);
      overStrict.push_back(row.taco / row.strict);
      overFast.push_back(row.taco / row.fast);
      overScalar.push_back(row.taco / row.scalar);
      std::printf("| %s | %lld | %lld | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e | %s | %.2f |\n", name.c_str(),
                  (long long)row.rows, (long long)row.nnz, 1e6 * row.strict, 1e6 * row.fast, 1e6 * row.taco,
                  row.taco / row.strict, row.taco / row.fast, row.fastDifference, throughRun, row.taco / row.scalar);
      std::fflush(stdout);
    }
    std::printf("\ngeomean TACO-style / tcc strict: %.2f; TACO-style / tcc fast: %.2f (%s %.2f; %zu matrices)\n",
                geomean(overStrict), geomean(overFast), peerName.c_str(), geomean(overScalar), matrices.size());
  }
  if (inCacheOnly) {
    std::printf("\nload average at the end: %s\n", loadAverageNow().c_str());
    return status;
  }

  const long triadLength = sizes.llcMultiple > 0 ? streamTriadLengthFor(machine.llcBytes) : kStreamTriadLength;
  std::printf("\n%s out of cache: Kronecker scale-ups, %d thread%s, bandwidth against STREAM triads on as many, "
              "over arrays in 4 KB and in 2 MB pages (transparent huge pages: %s)\n",
              kernelName, threads, threads > 1 ? "s" : "", transparentHugePages().c_str());
  if (sizes.llcMultiple > 0)
    std::printf("sizes: each scale-up's bytes a call >= %.1f x the last-level cache (%.0f MB) and >= %lld M entries "
                "(kron(I_k,BIG,SMALL): k copies along the diagonal); triad arrays 3 x %.0f MB\n\n",
                sizes.llcMultiple, machine.llcBytes / 1048576.0, (long long)(sizes.minNnz / 1000000),
                8.0 * triadLength / 1048576.0);
  else
    std::printf("sizes: one copy of each scale-up (--llc-multiple 0); triad arrays 3 x %.0f MB\n\n",
                8.0 * triadLength / 1048576.0);
  std::printf("| matrix | pages | %s | nnz | MB moved | strict GB/s | fast GB/s | TACO-style GB/s | triad 4K GB/s | "
              "triad 2M GB/s | fast / triad, same pages | fast / 4K triad | TACO/fast time | in 2 MB pages: vals, x | "
              "%s / triad, same pages | fast / %s |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
              rowsName, peerName.c_str(), peerName.c_str());
  // The triads' arrays, 3 arrays in each page size, for the whole run.
  TriadArrays triads4k(*triadModule, false, triadLength), triads2m(*triadModule, true, triadLength);
  std::printf("(the triads' arrays in 2 MB pages: %.2f in 4 KB, %.2f in 2 MB)\n\n",
              hugePageShare(triads4k.data(), 8LL * triadLength), hugePageShare(triads2m.data(), 8LL * triadLength));
  for (const auto& [big, small] : scaleUps) {
    const auto [name, coo] = spmvScaleUp(sizes, big, readMatrix(big), small, readMatrix(small));
    int scaledRepeat = std::max(1, repeat / 4);
    // Both triads timed among the kernels' calls, at the same load.
    std::vector<double> triadRates;
    std::vector<Row> rows = run(name, coo, scaledRepeat, pageModes, {&triads4k, &triads2m}, &triadRates);
    const double triad4k = triadRates[0], triad2m = triadRates[1];
    for (size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows[k];
      const bool huge = pageModes[k];
      const double samePages = huge ? triad2m : triad4k;
      checked(row);
      std::printf("| %s | %s | %lld | %lld | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f, %.2f "
                  "| %.2f | %.2f |\n",
                  name.c_str(), huge ? "2M" : "4K", (long long)row.rows, (long long)row.nnz, row.bytes / 1e6,
                  row.bytes / row.strict / 1e9, row.bytes / row.fast / 1e9, row.bytes / row.taco / 1e9, triad4k / 1e9,
                  triad2m / 1e9, row.bytes / row.fast / samePages, row.bytes / row.fast / triad4k, row.taco / row.fast,
                  row.valsHuge, row.xHuge, row.bytes / row.scalar / samePages, row.scalar / row.fast);
    }
    std::fflush(stdout);
  }
  tcc::rt::setHugePageMinBytes(hugeMin);
  std::printf("\nload average at the end: %s\n", loadAverageNow().c_str());
  return status;
}
