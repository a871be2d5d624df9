// Sparse outputs assembled on the GPU by tcc (CSR, float32: a kernel
// counts each row, a scan turns the counts into offsets, the host
// allocates, a kernel fills) against cuSPARSE in the same run:
//   C = A + B  against cusparseScsrgeam2 (bufferSizeExt, the buffer's
//              cudaMalloc, the row pointers' cudaMalloc, Xcsrgeam2Nnz,
//              the columns' and values' cudaMalloc, Scsrgeam2: timed as
//              one call, as a user makes it);
//   C = 2 * A  against the same with an empty B (cuSPARSE has no scaled
//              copy of its own, nor an elementwise product of two sparse
//              matrices);
// both of tcc's in three forms: the default mapping (which picks one of
// the next two per input by A's row lengths), a GPU thread a row
// (`parallelize(i, GPUThread)`), and a warp a row, the row's columns cut
// among the warp's lanes (`parallelize(i, GPUWarp)`, `parallelize(j,
// GPUThread)`: each lane merges a 32nd of the row's entries), whose arrays
// must equal the others';
// and tcc's sum again with the counts' prefix sum on one GPU thread
// (CompileOptions::gpuParallelPrefixSums off, the form before) against the
// parallel scan. Every result is held against the other: row pointers and
// columns equal, values within float rounding; the one-thread form's
// arrays equal the scan's.
//
//   tcc_bench_sparse_outputs MATRIX_DIR [repeats] [--quick] [--no-one-thread] [--only=A/B]
//   (--quick: three real matrices and two scale-ups; --no-one-thread: leave the
//   one-thread scan out; --only: the inputs whose names contain A or B)
//
// B is A's pattern with its columns moved one to the right (the last
// wrapped to the first), values of its own, so the sum merges two
// patterns that overlap where A's rows hold neighbouring columns.
// Times: medians of CUDA-event timings after a warm-up; tcc's are the
// runtime's own (RunResult::seconds: the launches, the count read back,
// the output's allocations).
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "../common/cuda_check.h"
#include "../common/cusparse_check.h"
#include "../common/stats.h"

namespace {

struct DeviceCsr {
  int32_t rows = 0, cols = 0;
  int nnz = 0;
  int32_t *pos = nullptr, *crd = nullptr;
  float* vals = nullptr;
  void release() {
    if (pos) CHECK_CUDA(cudaFree(pos));
    if (crd) CHECK_CUDA(cudaFree(crd));
    if (vals) CHECK_CUDA(cudaFree(vals));
    pos = crd = nullptr, vals = nullptr;
  }
};

DeviceCsr upload(const tcc::Tensor& csr) {
  tcc_tensor view = csr.abiView();
  DeviceCsr d;
  d.rows = view.dims[0], d.cols = view.dims[1], d.nnz = static_cast<int>(view.vals_size);
  std::vector<int32_t> pos(view.levels[1].pos, view.levels[1].pos + d.rows + 1);
  CHECK_CUDA(cudaMalloc(&d.pos, sizeof(int32_t) * (d.rows + 1)));
  CHECK_CUDA(cudaMalloc(&d.crd, sizeof(int32_t) * std::max(d.nnz, 1)));
  CHECK_CUDA(cudaMalloc(&d.vals, sizeof(float) * std::max(d.nnz, 1)));
  CHECK_CUDA(cudaMemcpy(d.pos, pos.data(), sizeof(int32_t) * (d.rows + 1), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d.crd, view.levels[1].crd, sizeof(int32_t) * d.nnz, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d.vals, view.vals, sizeof(float) * d.nnz, cudaMemcpyHostToDevice));
  return d;
}

// A CSR matrix read back from the device.
struct HostCsr {
  std::vector<int32_t> pos, crd;
  std::vector<float> vals;
};

// C = alpha A + beta B by csrgeam2, every step of a user's call; returns
// the median seconds of `repeats` calls (after a warm-up) and the last C.
double csrgeam2Seconds(cusparseHandle_t handle, const DeviceCsr& a, float alpha, const DeviceCsr& b, float beta,
                       int repeats, HostCsr& result) {
  cusparseMatDescr_t descr;
  CHECK_CUSPARSE(cusparseCreateMatDescr(&descr));
  CHECK_CUSPARSE(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
  CHECK_CUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
  CHECK_CUSPARSE(cusparseSetPointerMode(handle, CUSPARSE_POINTER_MODE_HOST));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  DeviceCsr c;
  for (int run = 0; run < repeats + 1; ++run) {
    c.release();
    CHECK_CUDA(cudaEventRecord(start));
    size_t bufferBytes = 0;
    CHECK_CUSPARSE(cusparseScsrgeam2_bufferSizeExt(handle, a.rows, a.cols, &alpha, descr, a.nnz, a.vals, a.pos, a.crd,
                                                   &beta, descr, b.nnz, b.vals, b.pos, b.crd, descr, nullptr, nullptr,
                                                   nullptr, &bufferBytes));
    void* buffer = nullptr;
    CHECK_CUDA(cudaMalloc(&buffer, std::max<size_t>(bufferBytes, 16)));
    CHECK_CUDA(cudaMalloc(&c.pos, sizeof(int32_t) * (a.rows + 1)));
    int nnz = 0;
    CHECK_CUSPARSE(cusparseXcsrgeam2Nnz(handle, a.rows, a.cols, descr, a.nnz, a.pos, a.crd, descr, b.nnz, b.pos,
                                        b.crd, descr, c.pos, &nnz, buffer));
    CHECK_CUDA(cudaMalloc(&c.crd, sizeof(int32_t) * std::max(nnz, 1)));
    CHECK_CUDA(cudaMalloc(&c.vals, sizeof(float) * std::max(nnz, 1)));
    CHECK_CUSPARSE(cusparseScsrgeam2(handle, a.rows, a.cols, &alpha, descr, a.nnz, a.vals, a.pos, a.crd, &beta, descr,
                                     b.nnz, b.vals, b.pos, b.crd, descr, c.vals, c.pos, c.crd, buffer));
    CHECK_CUDA(cudaFree(buffer));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (run > 0) times.push_back(ms * 1e-3);
    c.nnz = nnz, c.rows = a.rows;
  }
  result.pos.resize(c.rows + 1);
  result.crd.resize(c.nnz);
  result.vals.resize(c.nnz);
  CHECK_CUDA(cudaMemcpy(result.pos.data(), c.pos, sizeof(int32_t) * (c.rows + 1), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(result.crd.data(), c.crd, sizeof(int32_t) * c.nnz, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(result.vals.data(), c.vals, sizeof(float) * c.nnz, cudaMemcpyDeviceToHost));
  c.release();
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  cusparseDestroyMatDescr(descr);
  return median(times);
}

// How far tcc's CSR result is from cuSPARSE's: -1 where the patterns
// differ (reported), else the largest value difference relative to the
// largest value.
double differenceFrom(const tcc::Tensor& ours, const HostCsr& theirs, const std::string& what) {
  tcc_tensor view = ours.abiView();
  const int64_t rows = view.dims[0];
  if (static_cast<int64_t>(theirs.pos.size()) != rows + 1 || view.vals_size != static_cast<long long>(theirs.crd.size())) {
    std::fprintf(stderr, "%s: %lld entries against cuSPARSE's %zu\n", what.c_str(), view.vals_size, theirs.crd.size());
    return -1;
  }
  for (int64_t r = 0; r <= rows; ++r)
    if (view.levels[1].pos[r] != theirs.pos[r]) {
      std::fprintf(stderr, "%s: row pointer %lld differs (%lld against %d)\n", what.c_str(), static_cast<long long>(r),
                   view.levels[1].pos[r], theirs.pos[r]);
      return -1;
    }
  const float* values = static_cast<const float*>(view.vals);
  double largest = 0, difference = 0;
  for (size_t k = 0; k < theirs.crd.size(); ++k) {
    if (view.levels[1].crd[k] != theirs.crd[k]) {
      std::fprintf(stderr, "%s: column of entry %zu differs\n", what.c_str(), k);
      return -1;
    }
    largest = std::max(largest, std::fabs(double(theirs.vals[k])));
    difference = std::max(difference, std::fabs(double(values[k]) - theirs.vals[k]));
  }
  return largest > 0 ? difference / largest : difference;
}

// Whether two of tcc's CSR results hold the same arrays.
bool sameArrays(const tcc::Tensor& a, const tcc::Tensor& b) {
  tcc_tensor x = a.abiView(), y = b.abiView();
  if (x.vals_size != y.vals_size || x.dims[0] != y.dims[0]) return false;
  return std::equal(x.levels[1].pos, x.levels[1].pos + x.dims[0] + 1, y.levels[1].pos) &&
         std::equal(x.levels[1].crd, x.levels[1].crd + x.vals_size, y.levels[1].crd) &&
         std::equal(static_cast<const float*>(x.vals), static_cast<const float*>(x.vals) + x.vals_size,
                    static_cast<const float*>(y.vals));
}

// A's pattern, each column moved one to the right (the last to the
// first), values in [-1, 1) of its own.
tcc::rt::Coo shiftedPattern(const tcc::rt::Coo& a, uint64_t seed) {
  tcc::rt::Coo b = tcc::rt::Coo::ofShape(a.dims);
  b.reserve(a.nnz());
  uint64_t state = seed;
  for (size_t k = 0; k < a.nnz(); ++k) {
    int32_t c[2] = {a.coords[0][k], (a.coords[1][k] + 1) % a.dims[1]};
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    b.push(c, static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0);
  }
  return b;
}

struct Timed {
  double seconds;
  tcc::Tensor result;
  size_t kernels;
};

Timed timeTcc(const tcc::Kernel& kernel, const std::map<std::string, tcc::Tensor>& inputs, int repeats) {
  tcc::RunResult run = kernel.run(inputs, tcc::RunOptions{repeats + 1});
  run.seconds.erase(run.seconds.begin());  // the warm-up
  return {median(run.seconds), run.tensors.at("C"), run.gpuKernels.size()};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  bool quick = false, oneThread = true;
  std::string only;
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    if (arg == "--quick") quick = true;
    else if (arg == "--no-one-thread") oneThread = false;
    else if (arg.rfind("--only=", 0) == 0) only = arg.substr(7);
    else positional.push_back(arg);
  }
  if (positional.empty()) {
    std::fprintf(stderr, "usage: %s MATRIX_DIR [repeats] [--quick] [--no-one-thread] [--only=A/B]\n", argv[0]);
    return 2;
  }
  const std::string dir = positional[0];
  const int repeats = positional.size() > 1 ? std::atoi(positional[1].c_str()) : 10;
  auto real = [&](const std::string& name) { return tcc::rt::readMatrixMarket(dir + "/" + name + ".mtx"); };
  auto wanted = [&](const std::string& name) {
    if (only.empty()) return true;
    for (size_t start = 0; start <= only.size();) {
      size_t slash = only.find('/', start);
      if (slash == std::string::npos) slash = only.size();
      if (slash > start && name.find(only.substr(start, slash - start)) != std::string::npos) return true;
      start = slash + 1;
    }
    return false;
  };
  struct Input {
    std::string name, kind;
    std::function<tcc::rt::Coo()> build;
  };
  std::vector<Input> inputs;
  std::vector<std::string> realNames = {"bcsstk16", "bcsstk13", "mbeacxc", "Pd", "cryg2500", "watt_2", "bayer10",
                                        "adder_dcop_05"};
  if (quick) realNames = {"bcsstk16", "Pd", "adder_dcop_05"};
  for (const auto& name : realNames) inputs.push_back({name, "real", [&, name] { return real(name); }});
  // Scale-ups: rows past 2^20 (1.67 M and 2.6 M) and one of many entries.
  inputs.push_back({"kron(Pd,impcol_a)", "scale-up",
                    [&] { return tcc::rt::kroneckerProduct(real("Pd"), real("impcol_a")); }});
  if (!quick)
    inputs.push_back({"kron(bcsstk13,cage5)", "scale-up",
                      [&] { return tcc::rt::kroneckerProduct(real("bcsstk13"), real("cage5")); }});
  inputs.push_back({"kron(bcspwr10,494_bus)", "scale-up",
                    [&] { return tcc::rt::kroneckerProduct(real("bcspwr10"), real("494_bus")); }});

  cusparseHandle_t handle;
  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "cusparseCreate failed\n");
    return 1;
  }
  int version = 0;
  cusparseGetVersion(handle, &version);
  printCudaVersions();
  std::printf("cuSPARSE %d; %d repeats, medians of CUDA-event times after a warm-up\n", version, repeats);

  // (Float32 throughout: the inputs are packed so, and cuSPARSE's S routines.)
  const std::string head = "tensor C(I, J) : csr of float32\ntensor A(I, J) : csr of float32\n";
  const std::string sumText = head + "tensor B(I, J) : csr of float32\nC(i, j) = A(i, j) + B(i, j)\ntarget cuda\n";
  const std::string scaledText = head + "C(i, j) = 2 * A(i, j)\ntarget cuda\n";
  tcc::Kernel sum = tcc::compile(tcc::Program::fromText(sumText, "sum.tc"));
  tcc::Kernel scaled = tcc::compile(tcc::Program::fromText(scaledText, "scaled.tc"));
  const std::string laneSlices = "schedule {\nparallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)\n}\n";
  const std::string rowThreads = "schedule {\nparallelize(i, GPUThread, NoRaces)\n}\n";
  tcc::Kernel sumThread = tcc::compile(tcc::Program::fromText(sumText + rowThreads, "sum_thread.tc"));
  tcc::Kernel scaledThread = tcc::compile(tcc::Program::fromText(scaledText + rowThreads, "scaled_thread.tc"));
  tcc::Kernel sumWarp = tcc::compile(tcc::Program::fromText(sumText + laneSlices, "sum_warp.tc"));
  tcc::Kernel scaledWarp = tcc::compile(tcc::Program::fromText(scaledText + laneSlices, "scaled_warp.tc"));
  tcc::CompileOptions before;
  before.gpuParallelPrefixSums = false;
  tcc::Kernel sumOneThread = tcc::compile(tcc::Program::fromText(sumText, "sum.tc"), before);

  std::printf("\n%-24s %-9s %9s %10s %10s | %9s %9s %6s %9s %6s %9s %6s | %9s %9s %6s %9s %6s %9s %6s", "matrix",
              "kind", "rows", "nnz(A)", "nnz(A+B)", "A+B cusp", "tcc us", "x", "thread us", "x", "warp us", "x",
              "2A cusp", "tcc us", "x", "thread us", "x", "warp us", "x");
  if (oneThread) std::printf(" | %12s %6s", "1-thread us", "gain");
  std::printf("\n");
  std::vector<double> sumRatios, scaledRatios, scanGains, sumWarpRatios, scaledWarpRatios, sumThreadRatios,
      scaledThreadRatios;
  bool allMatch = true;
  for (const Input& input : inputs) {
    if (!wanted(input.name)) continue;
    auto built = std::chrono::steady_clock::now();
    tcc::rt::Coo a = input.build();
    tcc::rt::Coo bEntries = shiftedPattern(a, 17);
    std::map<std::string, tcc::Tensor> operands;
    operands.emplace("A", tcc::rt::pack(a, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float32));
    operands.emplace("B", tcc::rt::pack(bEntries, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float32));
    DeviceCsr da = upload(operands.at("A")), db = upload(operands.at("B"));
    DeviceCsr empty;
    empty.rows = da.rows, empty.cols = da.cols;
    CHECK_CUDA(cudaMalloc(&empty.pos, sizeof(int32_t) * (da.rows + 1)));
    CHECK_CUDA(cudaMemset(empty.pos, 0, sizeof(int32_t) * (da.rows + 1)));
    CHECK_CUDA(cudaMalloc(&empty.crd, sizeof(int32_t)));
    CHECK_CUDA(cudaMalloc(&empty.vals, sizeof(float)));

    HostCsr theirSum, theirScaled;
    double cuspSum = -1, cuspScaled = -1;
    try {
      cuspSum = csrgeam2Seconds(handle, da, 1.0f, db, 1.0f, repeats, theirSum);
    } catch (const CusparseFailure&) {
      CHECK_CUDA(cudaGetLastError());
    }
    try {
      cuspScaled = csrgeam2Seconds(handle, da, 2.0f, empty, 0.0f, repeats, theirScaled);
    } catch (const CusparseFailure&) {
      CHECK_CUDA(cudaGetLastError());
    }
    Timed ourSum = timeTcc(sum, operands, repeats);
    Timed ourScaled = timeTcc(scaled, {{"A", operands.at("A")}}, repeats);
    Timed threadSum = timeTcc(sumThread, operands, repeats);
    Timed threadScaled = timeTcc(scaledThread, {{"A", operands.at("A")}}, repeats);
    Timed warpSum = timeTcc(sumWarp, operands, repeats);
    Timed warpScaled = timeTcc(scaledWarp, {{"A", operands.at("A")}}, repeats);
    if (!sameArrays(warpSum.result, threadSum.result) || !sameArrays(warpScaled.result, threadScaled.result) ||
        !sameArrays(ourSum.result, threadSum.result) || !sameArrays(ourScaled.result, threadScaled.result)) {
      std::fprintf(stderr, "%s: the default, thread-a-row and warp-a-row forms' arrays differ\n", input.name.c_str());
      allMatch = false;
    }
    auto check = [&](const Timed& ours, const HostCsr& theirs, double cusp, const std::string& what) {
      if (cusp < 0) return;
      double difference = differenceFrom(ours.result, theirs, input.name + " " + what);
      if (difference < 0 || difference > 1e-6) {
        std::fprintf(stderr, "%s %s: tcc differs from cuSPARSE (%.2e)\n", input.name.c_str(), what.c_str(), difference);
        allMatch = false;
      }
    };
    check(ourSum, theirSum, cuspSum, "A + B");
    check(ourScaled, theirScaled, cuspScaled, "2 A");
    std::printf("%-24s %-9s %9d %10d %10lld | ", input.name.c_str(), input.kind.c_str(), da.rows, da.nnz,
                static_cast<long long>(ourSum.result.nnz()));
    auto cell = [&](double cusp, double ours, std::vector<double>& ratios) {
      if (cusp > 0) {
        ratios.push_back(cusp / ours);
        std::printf("%9.1f %9.1f %6.2f", cusp * 1e6, ours * 1e6, cusp / ours);
      } else {
        std::printf("%9s %9.1f %6s", "n/a", ours * 1e6, "n/a");
      }
    };
    auto formCell = [&](double cusp, double warp, std::vector<double>& ratios) {
      if (cusp > 0) {
        ratios.push_back(cusp / warp);
        std::printf(" %9.1f %6.2f", warp * 1e6, cusp / warp);
      } else {
        std::printf(" %9.1f %6s", warp * 1e6, "n/a");
      }
    };
    cell(cuspSum, ourSum.seconds, sumRatios);
    formCell(cuspSum, threadSum.seconds, sumThreadRatios);
    formCell(cuspSum, warpSum.seconds, sumWarpRatios);
    std::printf(" | ");
    cell(cuspScaled, ourScaled.seconds, scaledRatios);
    formCell(cuspScaled, threadScaled.seconds, scaledThreadRatios);
    formCell(cuspScaled, warpScaled.seconds, scaledWarpRatios);
    if (oneThread) {
      Timed old = timeTcc(sumOneThread, operands, std::min(repeats, 3));
      if (!sameArrays(old.result, ourSum.result)) {
        std::fprintf(stderr, "%s: the one-thread scan's sum differs from the parallel scan's\n", input.name.c_str());
        allMatch = false;
      }
      scanGains.push_back(old.seconds / ourSum.seconds);
      std::printf(" | %12.1f %6.1f", old.seconds * 1e6, old.seconds / ourSum.seconds);
    }
    std::printf("\n");
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %.1f s (tcc launched %zu kernels for the sum)\n", input.name.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - built).count(), ourSum.kernels);
    da.release(), db.release(), empty.release();
  }
  std::printf("\ncuSPARSE time / tcc time, geomean: A + B %.2fx (%zu matrices), 2 A %.2fx (%zu)", geomean(sumRatios),
              sumRatios.size(), geomean(scaledRatios), scaledRatios.size());
  std::printf("\ncuSPARSE time / tcc's thread-a-row time, geomean: A + B %.2fx, 2 A %.2fx",
              geomean(sumThreadRatios), geomean(scaledThreadRatios));
  std::printf("\ncuSPARSE time / tcc's warp-a-row time, geomean: A + B %.2fx, 2 A %.2fx", geomean(sumWarpRatios),
              geomean(scaledWarpRatios));
  if (oneThread)
    std::printf("; one-thread scan's time / the parallel scan's (A + B, whole call) %.1fx geomean", geomean(scanGains));
  std::printf("\nresults: %s\n", allMatch ? "every tcc result equals cuSPARSE's (and the three forms' arrays and the "
                                            "one-thread scan's are equal)"
                                          : "MISMATCH (see stderr)");
  cusparseDestroy(handle);
  return allMatch ? 0 : 1;
}
