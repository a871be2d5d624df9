// SpMV and SpMM (CSR, float32) compiled by tcc for the GPU against
// cusparseSpMV / cusparseSpMM, on the same device buffers' contents, in the
// same run; SpMV's achieved bandwidth against the measured device copy rate (%cp: bytes of
// the matrix, x and y over the time, against the copy rate).
//
//   tcc_bench_cusparse MATRIX_DIR [repeats] [spmv] [--quick] [--list] [--only=A/B] [--spmv=EXAMPLE]
//                      [--spmm=EXAMPLE] [--columns=32,128]
//   (spmv: leave SpMM out; --quick: 9 of the 17 matrices; --list: the inputs' names; --only=A/B: the
//   inputs whose names contain A or B, --only==NAME/=NAME2: the inputs named so (the others are not
//   even built); EXAMPLE: an examples/gpu file, --spmv=a,b / --spmm=a,b,...: several kernels side by
//   side, or a .tc file's path, either followed by ":guarded" for the unroll-and-jam's loads under their
//   copies' branches, the form before, and by ":strict" or ":fast" for that floating-point mode over the
//   file's (spmm_default:strict,spmm_default:fast: what fp strict costs); the defaults are the default
//   mappings, spmv_default and spmm_default; --columns: SpMM's N, 32,128,256 by default)
//
// Matrices: real ones from MATRIX_DIR, Kronecker products of two real ones
// (scale-ups, named kron(A,B)), an R-MAT power-law graph and a matrix of
// short rows with one very long one (synthetic).
// Times are medians of CUDA-event timings after a warm-up.
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tcc/runtime/value_type.h"
#include "tcc/tcc.h"
#include "../common/cuda_check.h"
#include "../common/cusparse_check.h"
#include "../common/stats.h"

namespace {

// Set once cusparseSpMV has failed (reported once) and SpMV's cuSPARSE
// times come from cusparseSpMM with one column.
bool spmvFailureReported = false;
bool spmvThroughSpmm = false;


// splitmix64: a cheap generator of 64 random bits per call.
struct SplitMix {
  uint64_t state;
  uint64_t operator()() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // In [-1, 1).
  double symmetric() { return static_cast<double>((*this)() >> 11) * 0x1.0p-52 - 1.0; }
};

// R-MAT (a, b, c, d) = (0.57, 0.19, 0.19, 0.05), duplicates dropped. Each
// level's quadrant comes from 16 random bits (four levels per 64-bit draw),
// and the keys are sorted by a radix sort: about a second for 2^23 edges
// at scale 20, where 64-bit uniform doubles per level and std::sort took
// several.
tcc::rt::Coo rmat(int scale, int64_t edges, uint64_t seed) {
  SplitMix random{seed};
  const uint32_t a = 0.57 * 65536, ab = 0.76 * 65536, abc = 0.95 * 65536;
  std::vector<uint64_t> keys(edges), scratch(edges);
  for (int64_t e = 0; e < edges; ++e) {
    uint64_t row = 0, col = 0, bits = 0;
    for (int level = 0; level < scale; ++level) {
      if (level % 4 == 0) bits = random();
      uint32_t r = static_cast<uint32_t>(bits & 0xFFFF);
      bits >>= 16;
      uint64_t quadrant = r < a ? 0 : r < ab ? 1 : r < abc ? 2 : 3;
      row = row * 2 + (quadrant >> 1);
      col = col * 2 + (quadrant & 1);
    }
    keys[e] = (row << scale) | col;
  }
  // LSD radix sort of the 2 * scale-bit keys, 11 bits a pass.
  for (int shift = 0; shift < 2 * scale; shift += 11) {
    std::vector<int64_t> counts(2049, 0);
    for (uint64_t key : keys) ++counts[((key >> shift) & 2047) + 1];
    for (int d = 0; d < 2048; ++d) counts[d + 1] += counts[d];
    for (uint64_t key : keys) scratch[counts[(key >> shift) & 2047]++] = key;
    keys.swap(scratch);
  }
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  int32_t n = 1 << scale;
  tcc::rt::Coo result = tcc::rt::Coo::ofShape({n, n});
  result.reserve(keys.size());
  for (uint64_t key : keys) {
    int32_t c[2] = {static_cast<int32_t>(key >> scale), static_cast<int32_t>(key & (uint64_t(n) - 1))};
    result.push(c, random.symmetric());
  }
  return result;
}

// `rows` rows of `length` entries (at random columns of `cols`) and row
// `rows / 2` of `longRow`: the one very long row the nonzero splits are for.
tcc::rt::Coo oneLongRow(int32_t rows, int32_t cols, int32_t length, int32_t longRow, uint64_t seed) {
  SplitMix random{seed};
  tcc::rt::Coo result = tcc::rt::Coo::ofShape({rows, cols});
  for (int32_t row = 0; row < rows; ++row) {
    const int32_t entries = row == rows / 2 ? longRow : length;
    // Columns in order: a stride from a random start (distinct while entries <= cols).
    const int32_t stride = std::max(1, cols / std::max(entries, 1));
    const int32_t start = static_cast<int32_t>(random() % static_cast<uint64_t>(stride));
    for (int32_t e = 0; e < entries; ++e) {
      int32_t c[2] = {row, (start + e * stride) % cols};
      result.push(c, random.symmetric());
    }
  }
  return result;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether the kernels a run launched add into their output atomically
// (their output must start at zero): each kernel's text in `source`.
bool launchedAtomics(const std::string& source, const std::vector<std::string>& launched) {
  for (const auto& name : launched) {
    size_t at = source.find(") " + name + "(");
    if (at == std::string::npos) return source.find("atomicAdd") != std::string::npos;
    size_t end = source.find("extern \"C\"", at);
    if (source.substr(at, end == std::string::npos ? std::string::npos : end - at).find("atomicAdd") !=
        std::string::npos)
      return true;
  }
  return false;
}

// The mark of a run's cell: '*' where it launched the default mapping's
// atomic nonzero split (the kernel that finds its rows by searching pos),
// '+' where the split in one order (fp strict: its shares' kernel keeps
// partial sums in slots), ' ' otherwise.
char splitMark(const std::string& source, const std::vector<std::string>& launched) {
  for (const auto& name : launched) {
    size_t at = source.find(") " + name + "(");
    if (at == std::string::npos) continue;
    size_t end = source.find("extern \"C\"", at);
    const std::string text = source.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (text.find("tcc_segment_of(") != std::string::npos)
      return text.find("_share_slots") != std::string::npos ? '+' : '*';
  }
  return ' ';
}

// Device-to-device copy rate, counting bytes read and written.
double copyBandwidth() {
  size_t bytes = size_t(1) << 30;
  void *a, *b;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMemset(a, 1, bytes));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int k = 0; k < 10; ++k) {
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e-3);
  }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return 2.0 * bytes / median(times);
}

// Median seconds of a cudaMemset of `bytes` (zeroing an output).
double memsetSeconds(size_t bytes, int repeats) {
  void* buffer;
  CHECK_CUDA(cudaMalloc(&buffer, std::max<size_t>(bytes, 1)));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int k = 0; k < repeats + 1; ++k) {
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUDA(cudaMemset(buffer, 0, bytes));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (k > 0) times.push_back(ms * 1e-3);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaFree(buffer));
  return median(times);
}

struct DeviceCsr {
  int32_t rows, cols;
  int64_t nnz;
  int32_t *pos, *crd;
  float* vals;
};

DeviceCsr upload(const tcc::Tensor& csr) {
  tcc_tensor view = csr.abiView();
  DeviceCsr d{view.dims[0], view.dims[1], view.vals_size, nullptr, nullptr, nullptr};
  std::vector<int32_t> pos(view.levels[1].pos, view.levels[1].pos + d.rows + 1);
  CHECK_CUDA(cudaMalloc(&d.pos, sizeof(int32_t) * (d.rows + 1)));
  CHECK_CUDA(cudaMalloc(&d.crd, sizeof(int32_t) * std::max<int64_t>(d.nnz, 1)));
  CHECK_CUDA(cudaMalloc(&d.vals, sizeof(float) * std::max<int64_t>(d.nnz, 1)));
  CHECK_CUDA(cudaMemcpy(d.pos, pos.data(), sizeof(int32_t) * (d.rows + 1), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d.crd, view.levels[1].crd, sizeof(int32_t) * d.nnz, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d.vals, view.vals, sizeof(float) * d.nnz, cudaMemcpyHostToDevice));
  return d;
}

// Median seconds of `repeats` cuSPARSE products, and the result.
double cusparseTimeOrThrow(cusparseHandle_t handle, const DeviceCsr& a, const std::vector<float>& dense, int columns,
                           int repeats, std::vector<float>& result);

// cuSPARSE's median time, or -1 when cuSPARSE fails.
double cusparseTime(cusparseHandle_t handle, const DeviceCsr& a, const std::vector<float>& dense, int columns,
                    int repeats, std::vector<float>& result) {
  try {
    return cusparseTimeOrThrow(handle, a, dense, columns, repeats, result);
  } catch (const CusparseFailure&) {
    CHECK_CUDA(cudaGetLastError());
    result.clear();
    return -1;
  }
}

double cusparseTimeOrThrow(cusparseHandle_t handle, const DeviceCsr& a, const std::vector<float>& dense, int columns,
                           int repeats, std::vector<float>& result) {
  cusparseSpMatDescr_t matrix;
  CHECK_CUSPARSE(cusparseCreateCsr(&matrix, a.rows, a.cols, a.nnz, a.pos, a.crd, a.vals, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  float *in, *out;
  // SpMV (columns == 0) writes one vector of a.rows entries.
  size_t inSize = dense.size(), outSize = static_cast<size_t>(a.rows) * std::max(columns, 1);
  CHECK_CUDA(cudaMalloc(&in, sizeof(float) * std::max<size_t>(inSize, 1)));
  CHECK_CUDA(cudaMalloc(&out, sizeof(float) * std::max<size_t>(outSize, 1)));
  CHECK_CUDA(cudaMemcpy(in, dense.data(), sizeof(float) * inSize, cudaMemcpyHostToDevice));
  float alpha = 1, beta = 0;
  void* buffer = nullptr;
  size_t bufferSize = 0;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  cusparseDnVecDescr_t x = nullptr, y = nullptr;
  cusparseDnMatDescr_t b = nullptr, c = nullptr;
  // SpMV: cusparseSpMV with each CSR algorithm in turn (its own buffer, then
  // cusparseSpMV_preprocess); where every one fails, cusparseSpMM with one
  // dense column (the same product, which cuSPARSE runs through SpMM's CSR
  // kernels), reported as such.
  cusparseSpMVAlg_t algorithm = CUSPARSE_SPMV_ALG_DEFAULT;
  bool vectorAsMatrix = false;
  if (columns == 0) {
    CHECK_CUSPARSE(cusparseCreateDnVec(&x, a.cols, in, CUDA_R_32F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&y, a.rows, out, CUDA_R_32F));
    bool found = false;
    for (cusparseSpMVAlg_t candidate : {CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
      size_t size = 0;
      cusparseStatus_t status = cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x,
                                                        &beta, y, CUDA_R_32F, candidate, &size);
      void* candidateBuffer = nullptr;
      if (status == CUSPARSE_STATUS_SUCCESS) CHECK_CUDA(cudaMalloc(&candidateBuffer, std::max<size_t>(size, 16)));
      if (status == CUSPARSE_STATUS_SUCCESS)
        status = cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x, &beta, y,
                                         CUDA_R_32F, candidate, candidateBuffer);
      if (status == CUSPARSE_STATUS_SUCCESS)
        status = cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x, &beta, y, CUDA_R_32F,
                              candidate, candidateBuffer);
      if (status == CUSPARSE_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess) {
        algorithm = candidate;
        buffer = candidateBuffer;
        found = true;
        break;
      }
      cudaGetLastError();
      if (candidateBuffer) CHECK_CUDA(cudaFree(candidateBuffer));
      if (!spmvFailureReported)
        std::fprintf(stderr, "cusparseSpMV with algorithm %d failed: %s\n", static_cast<int>(candidate),
                     cusparseGetErrorString(status));
    }
    if (!found) {
      spmvFailureReported = true;
      vectorAsMatrix = true;
      columns = 1;
    }
  }
  if (columns > 0) {
    CHECK_CUSPARSE(cusparseCreateDnMat(&b, a.cols, columns, columns, in, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    CHECK_CUSPARSE(cusparseCreateDnMat(&c, a.rows, columns, columns, out, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    CHECK_CUSPARSE(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           &alpha, matrix, b, &beta, c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                           &bufferSize));
    CHECK_CUDA(cudaMalloc(&buffer, std::max<size_t>(bufferSize, 16)));
  }
  if (vectorAsMatrix) spmvThroughSpmm = true;
  for (int k = 0; k < repeats + 1; ++k) {
    CHECK_CUDA(cudaEventRecord(start));
    if (b == nullptr) {
      CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix, x, &beta, y, CUDA_R_32F,
                                  algorithm, buffer));
    } else {
      CHECK_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                  matrix, b, &beta, c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer));
    }
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (k > 0) times.push_back(ms * 1e-3);  // the first is the warm-up
  }
  result.resize(outSize);
  CHECK_CUDA(cudaMemcpy(result.data(), out, sizeof(float) * outSize, cudaMemcpyDeviceToHost));
  if (x) cusparseDestroyDnVec(x);
  if (y) cusparseDestroyDnVec(y);
  if (b) cusparseDestroyDnMat(b);
  if (c) cusparseDestroyDnMat(c);
  cusparseDestroySpMat(matrix);
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  CHECK_CUDA(cudaFree(buffer));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return median(times);
}

// The relative difference of a dense float32 result (its values, row-major)
// from cuSPARSE's.
double relativeError(const tcc::Tensor& result, const std::vector<float>& b) {
  tcc_tensor view = result.abiView();
  if (view.datatype != TCC_FLOAT32 || view.vals_size != static_cast<long long>(b.size())) {
    std::fprintf(stderr, "a tcc result is not a dense float32 array of %zu values\n", b.size());
    return 1.0;
  }
  const float* a = static_cast<const float*>(view.vals);
  double difference = 0, norm = 0;
  for (size_t k = 0; k < b.size(); ++k) {
    difference += (double(a[k]) - b[k]) * (double(a[k]) - b[k]);
    norm += double(b[k]) * b[k];
  }
  return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

struct Input {
  std::string name, kind;
  tcc::rt::Coo coo;
  double buildSeconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  bool spmvOnly = false, quick = false, list = false;
  std::string spmvExample = "spmv_default", spmmExample = "spmm_default,spmm_tiles", only;
  std::vector<int> spmmColumns{32, 128, 256};
  for (int k = 1; k < argc; ++k) {
    std::string arg = argv[k];
    if (arg == "spmv") spmvOnly = true;
    else if (arg == "--quick") quick = true;
    else if (arg == "--list") list = true;
    else if (arg.rfind("--spmv=", 0) == 0) spmvExample = arg.substr(7);
    else if (arg.rfind("--spmm=", 0) == 0) spmmExample = arg.substr(7);
    else if (arg.rfind("--only=", 0) == 0) only = arg.substr(7);
    else if (arg.rfind("--columns=", 0) == 0) {
      spmmColumns.clear();
      for (size_t start = 10; start < arg.size();) {
        size_t comma = arg.find(',', start);
        if (comma == std::string::npos) comma = arg.size();
        spmmColumns.push_back(std::atoi(arg.substr(start, comma - start).c_str()));
        start = comma + 1;
      }
    }
    else positional.push_back(arg);
  }
  if (positional.empty()) {
    std::fprintf(stderr, "usage: %s MATRIX_DIR [repeats] [spmv] [--quick] [--list] [--only=A/B/...] [--spmv=EXAMPLES] "
                 "[--spmm=EXAMPLES] [--columns=N,N]\n  EXAMPLES: files of examples/gpu without .tc, comma-separated "
                 "(defaults spmv_default; spmm_default,spmm_tiles), each optionally followed by :strict or :fast "
                 "(the floating-point mode) and :guarded or :speculative; --only: inputs whose names contain A or B "
                 "or ..., =NAME: the input named NAME; --list: the inputs' names; --columns: SpMM's N (32,128,256)\n",
                 argv[0]);
    return 2;
  }
  std::string dir = positional[0];
  int repeats = positional.size() > 1 ? std::atoi(positional[1].c_str()) : 20;
  auto real = [&](const std::string& name) { return tcc::rt::readMatrixMarket(dir + "/" + name + ".mtx"); };

  // --quick: five real matrices (two of them skewed), three scale-ups and
  // the R-MAT graph.
  std::vector<Input> inputs;
  // --only=A/B: the matrices whose names contain A or B (the others are not even built).
  auto wanted = [&](const std::string& name) {
    if (only.empty()) return true;
    for (size_t start = 0; start <= only.size();) {
      size_t slash = only.find('/', start);
      if (slash == std::string::npos) slash = only.size();
      std::string token = only.substr(start, slash - start);
      // "=NAME": that input alone; "NAME": every input whose name contains it.
      if (token.size() > 1 && token[0] == '=' && name == token.substr(1)) return true;
      if (!token.empty() && token[0] != '=' && name.find(token) != std::string::npos) return true;
      start = slash + 1;
    }
    return false;
  };
  auto add = [&](const std::string& name, const char* kind, auto build) {
    if (list) {
      std::printf("%s (%s)\n", name.c_str(), kind);
      return;
    }
    if (!wanted(name)) return;
    auto start = std::chrono::steady_clock::now();
    inputs.push_back({name, kind, build()});
    inputs.back().buildSeconds = secondsSince(start);
  };
  std::vector<const char*> realNames = {"bcsstk16", "bayer10", "bcsstk13", "mbeacxc", "Franz6_id1959_aug",
                                        "dnn_n1024_l1", "Pd", "cryg2500", "watt_2", "adder_dcop_05"};
  if (quick) realNames = {"bcsstk16", "mbeacxc", "Pd", "watt_2", "adder_dcop_05"};
  for (const char* name : realNames) add(name, "real", [&] { return real(name); });
  if (!quick)
    add("kron(bayer10,LF10)", "scale-up", [&] { return tcc::rt::kroneckerProduct(real("bayer10"), real("LF10")); });
  add("kron(bcsstk13,cage5)", "scale-up", [&] { return tcc::rt::kroneckerProduct(real("bcsstk13"), real("cage5")); });
  if (!quick) {
    add("kron(Franz6,karate)", "scale-up", [&] { return tcc::rt::kroneckerProduct(real("Franz6_id1959_aug"), real("karate")); });
    add("kron(dnn_n1024_l1,bcspwr02)", "scale-up", [&] { return tcc::rt::kroneckerProduct(real("dnn_n1024_l1"), real("bcspwr02")); });
  }
  add("kron(Pd,cage5)", "scale-up", [&] { return tcc::rt::kroneckerProduct(real("Pd"), real("cage5")); });
  add("kron(mbeacxc,LF10)", "scale-up", [&] { return tcc::rt::kroneckerProduct(real("mbeacxc"), real("LF10")); });
  add("rmat(scale 20, 8M edges)", "synthetic", [&] { return rmat(20, 8 << 20, 7); });
  add("one long row (65536 rows of 4, one of 16384)", "synthetic",
      [&] { return oneLongRow(65536, 65536, 4, 16384, 11); });
  if (list) return 0;

  cusparseHandle_t handle;
  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "cusparseCreate failed\n");
    return 1;
  }
  // cuSPARSE's own error messages (say why a call fails), to stderr.
  cusparseLoggerSetCallback([](int level, const char* function, const char* message) {
    std::fprintf(stderr, "cuSPARSE log %d %s: %s\n", level, function, message);
  });
  cusparseLoggerSetLevel(1);
  int version = 0;
  cusparseGetVersion(handle, &version);
  std::printf("cuSPARSE %d (headers %d)\n", version, CUSPARSE_VERSION);
  {
    // cuSPARSE alone, before tcc touches the device: tells an environment
    // problem from an interaction.
    tcc::rt::Coo tiny = tcc::rt::randomUniform({3, 3}, 1.0, 1);
    DeviceCsr d = upload(tcc::rt::pack(tiny, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float32));
    std::vector<float> result;
    bool ok = cusparseTime(handle, d, {1, 2, 3}, 0, 1, result) > 0;
    std::printf("cuSPARSE self-test before tcc: %s%s\n", ok ? "ok" : "FAILED",
                !ok ? "" : spmvThroughSpmm ? " (cusparseSpMV failed; SpMV through cusparseSpMM with one column)"
                                           : " (cusparseSpMV)");
  }
  std::string examples = std::string(TCC_SOURCE_DIR) + "/examples/gpu/";
  // SpMM kernels: --spmm=a,b,... (each an examples/gpu file). A kernel that
  // adds into its output atomically needs it zeroed first, which tcc's
  // runtime does outside the time it measures: its time here includes a
  // cudaMemset of C, timed the same way, to compare with cuSPARSE's beta = 0.
  auto names = [](const std::string& list) {
    std::vector<std::string> result;
    for (size_t start = 0; start <= list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      if (comma > start) result.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    return result;
  };
  std::vector<std::string> spmmNames = names(spmmExample), spmvNames = names(spmvExample);
  std::vector<tcc::Kernel> spmvs;
  // A name ending in .tc is a file of its own (a schedule being tried); a
  // name ending in ":speculative" is compiled with the unroll-and-jam's
  // loads of possibly dead copies unguarded
  // (CompileOptions::gpuSpeculativeJamLoads = true; ":guarded", the
  // default form, is accepted too); ":strict" or ":fast" (before or after
  // those) sets the floating-point mode over the file's.
  const std::string guardedSuffix = ":guarded", speculativeSuffix = ":speculative";
  auto endsWith = [](const std::string& name, const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto suffixOf = [&](const std::string& name) {
    std::string suffix;
    for (bool found = true; found;) {
      found = false;
      for (const std::string& each : {speculativeSuffix, guardedSuffix, std::string(":strict"), std::string(":fast")})
        if (endsWith(name.substr(0, name.size() - suffix.size()), each)) {
          suffix = each + suffix;
          found = true;
        }
    }
    return suffix;
  };
  auto fileOf = [&](std::string name) {
    name.resize(name.size() - suffixOf(name).size());
    bool path = name.size() > 3 && name.compare(name.size() - 3, 3, ".tc") == 0;
    return path ? name : examples + name + ".tc";
  };
  auto shown = [&](const std::string& name) {
    std::string file = fileOf(name);
    bool path = file.compare(0, examples.size(), examples) != 0;
    return (path ? file : "examples/gpu/" + file.substr(examples.size())) + suffixOf(name);
  };
  auto compiled = [&](const std::string& name) {
    tcc::CompileOptions options;
    const std::string suffix = suffixOf(name);
    options.gpuSpeculativeJamLoads = suffix.find(speculativeSuffix) != std::string::npos;
    if (suffix.find(":strict") != std::string::npos) options.floatingPoint = tcc::frontend::FloatingPointMode::Strict;
    if (suffix.find(":fast") != std::string::npos) options.floatingPoint = tcc::frontend::FloatingPointMode::Fast;
    return tcc::compile(tcc::Program::fromFile(fileOf(name)), options);
  };
  for (const auto& name : spmvNames) spmvs.push_back(compiled(name));
  std::vector<tcc::Kernel> spmms;
  for (const auto& name : spmmNames) spmms.push_back(compiled(name));
  std::printf("tcc kernels: SpMV:");
  for (size_t k = 0; k < spmvNames.size(); ++k) std::printf(" [%zu] %s", k + 1, shown(spmvNames[k]).c_str());
  std::printf("; SpMM:");
  for (size_t k = 0; k < spmmNames.size(); ++k) std::printf(" [%zu] %s", k + 1, shown(spmmNames[k]).c_str());
  std::printf("\n(a run whose kernel adds into its output atomically has a cudaMemset of the output added to its "
              "time; '*': the kernel run was a nonzero split, '+': the nonzero split in one order of fp strict, "
              "which writes every entry itself)\n");
  double hbm = copyBandwidth();

  std::printf("device copy rate: %.2f TB/s (bytes read + written)\n", hbm * 1e-12);
  std::printf("%-28s %-9s %9s %10s | %9s", "matrix", "kind", "rows", "nnz", "cusp us");
  for (size_t k = 0; k < spmvs.size(); ++k) std::printf(" | [%zu] tcc us      x   %%cp", k + 1);
  if (!spmvOnly)
    for (size_t k = 0; k < spmms.size(); ++k) {
      std::printf(" | [%zu]", k + 1);
      for (int columns : spmmColumns) std::printf(" N=%-4d", columns);
    }
  std::printf("\n");
  std::vector<std::vector<double>> spmvRatios(spmvs.size());
  std::vector<std::vector<double>> spmmRatios(spmms.size());
  std::vector<std::vector<std::string>> spmmCells(spmms.size());
  double worstError = 0;
  // A kernel that reads A as float16: every kernel and cuSPARSE get A's
  // values as float16 holds them, scaled into [-1, 1] where larger (the
  // times do not depend on the values; float16 cannot hold many real
  // matrices' own).
  bool halfA = false;
  for (const auto* kernels : {&spmvs, &spmms})
    for (const tcc::Kernel& kernel : *kernels)
      halfA |= kernel.program().syntax().findTensor("A")->datatype() == tcc::ir::Datatype::Float16;
  if (halfA) std::printf("(a kernel reads A as float16: every matrix's values scaled into [-1, 1] where larger and rounded to float16)\n");
  for (Input& input : inputs) {
    auto hostStart = std::chrono::steady_clock::now();
    if (halfA) input.coo.values = tcc::rt::heldByFloat16(std::move(input.coo.values));
    tcc::Tensor a = tcc::rt::pack(input.coo, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float32);
    input.coo = tcc::rt::Coo::ofShape({1, 1});  // the entries are in a now
    DeviceCsr device = upload(a);
    // SpMV
    tcc::rt::Coo xCoo = tcc::rt::randomUniform({device.cols}, 1.0, 5);
    tcc::Tensor x = tcc::rt::pack(xCoo, tcc::rt::TensorFormat::dense(1), tcc::rt::ValueType::Float32);
    std::vector<float> xValues(static_cast<float*>(x.abiView().vals), static_cast<float*>(x.abiView().vals) + device.cols);
    std::vector<float> theirs;
    double cusparseSeconds = cusparseTime(handle, device, xValues, 0, repeats, theirs);
    double bytes = device.nnz * 8.0 + (device.rows + 1) * 8.0 + device.cols * 4.0 + device.rows * 4.0;
    std::printf("%-28s %-9s %9d %10lld | ", input.name.c_str(), input.kind.c_str(), device.rows,
                static_cast<long long>(device.nnz));
    if (cusparseSeconds > 0) std::printf("%9.1f", cusparseSeconds * 1e6);
    else std::printf("%9s", "n/a");
    double zeroingY = memsetSeconds(size_t(device.rows) * sizeof(float), repeats);
    for (size_t kernel = 0; kernel < spmvs.size(); ++kernel) {
      tcc::RunResult ours = spmvs[kernel].run({{"A", a}, {"x", x}}, tcc::RunOptions{repeats + 1});
      ours.seconds.erase(ours.seconds.begin());
      const std::string& source = spmvs[kernel].source();
      double tccSeconds = median(ours.seconds) + (launchedAtomics(source, ours.gpuKernels) ? zeroingY : 0.0);
      char mark = splitMark(source, ours.gpuKernels);
      if (cusparseSeconds > 0) {
        worstError = std::max(worstError, relativeError(ours.tensors.at("y"), theirs));
        spmvRatios[kernel].push_back(cusparseSeconds / tccSeconds);
        std::printf(" |     %9.1f %5.2f%c %5.0f", tccSeconds * 1e6, cusparseSeconds / tccSeconds, mark,
                    100 * bytes / tccSeconds / hbm);
      } else {
        std::printf(" |     %9.1f %6s %5.0f", tccSeconds * 1e6, "n/a", 100 * bytes / tccSeconds / hbm);
      }
    }
    for (auto& cells : spmmCells) cells.clear();
    for (int columns : spmmColumns) {
      if (spmvOnly) break;
      // B dense, its float values written in place (a coordinate list of
      // every entry, or doubles converted, take far longer to build for the
      // scale-ups and the R-MAT graph, whose B has 2^20 rows).
      tcc::Tensor b({device.cols, columns}, tcc::rt::TensorFormat::dense(2), tcc::rt::ValueType::Float32);
      float* bData = static_cast<float*>(b.abiView().vals);
      SplitMix bRandom{6 + static_cast<uint64_t>(columns)};
      for (size_t k = 0; k < size_t(device.cols) * columns; ++k) bData[k] = static_cast<float>(bRandom.symmetric());
      std::vector<float> bValues(bData, bData + size_t(device.cols) * columns);
      std::vector<float> reference;
      double theirSeconds = cusparseTime(handle, device, bValues, columns, repeats, reference);
      double zeroing = memsetSeconds(size_t(device.rows) * columns * sizeof(float), repeats);
      for (size_t kernel = 0; kernel < spmms.size(); ++kernel) {
        tcc::RunResult product = spmms[kernel].run({{"A", a}, {"B", b}}, tcc::RunOptions{repeats + 1});
        product.seconds.erase(product.seconds.begin());
        const std::string& source = spmms[kernel].source();
        double ourSeconds = median(product.seconds) + (launchedAtomics(source, product.gpuKernels) ? zeroing : 0.0);
        char mark = splitMark(source, product.gpuKernels);
        char cell[16];
        if (theirSeconds < 0) {
          std::snprintf(cell, sizeof cell, "%6s", "n/a");
        } else {
          worstError = std::max(worstError, relativeError(product.tensors.at("C"), reference));
          spmmRatios[kernel].push_back(theirSeconds / ourSeconds);
          std::snprintf(cell, sizeof cell, "%5.2f%c", theirSeconds / ourSeconds, mark);
        }
        spmmCells[kernel].push_back(cell);
      }
    }
    for (const auto& cells : spmmCells) {
      if (spmvOnly) break;
      std::printf(" |   ");
      for (const auto& cell : cells) std::printf(" %s", cell.c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %.1f s (inputs built in %.1f s)\n", input.name.c_str(), secondsSince(hostStart),
                 input.buildSeconds);
    CHECK_CUDA(cudaFree(device.pos));
    CHECK_CUDA(cudaFree(device.crd));
    CHECK_CUDA(cudaFree(device.vals));
  }
  auto geomean = [](const std::vector<double>& v) {
    if (v.empty()) return 0.0;
    double sum = 0;
    for (double r : v) sum += std::log(r);
    return std::exp(sum / v.size());
  };
  if (spmvThroughSpmm)
    std::printf("cusparseSpMV failed on this machine: the SpMV column 'cusp us' is cusparseSpMM with one dense "
                "column\n");
  std::printf("speed-up over cuSPARSE (cuSPARSE time / tcc time), geomean:");
  for (size_t k = 0; k < spmvs.size(); ++k)
    std::printf(" SpMV [%zu] %s %.2fx (%zu matrices),", k + 1, spmvNames[k].c_str(), geomean(spmvRatios[k]),
                spmvRatios[k].size());
  for (size_t k = 0; k < spmms.size() && !spmvOnly; ++k)
    std::printf(" SpMM [%zu] %s %.2fx (%zu cases),", k + 1, spmmNames[k].c_str(), geomean(spmmRatios[k]),
                spmmRatios[k].size());
  std::printf(" largest relative difference from cuSPARSE %.1e\n", worstError);
  cusparseDestroy(handle);
  return worstError < 1e-3 ? 0 : 1;
}
