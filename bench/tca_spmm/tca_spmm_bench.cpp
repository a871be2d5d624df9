// TCA-SpMM, O = S * D with S CSR float16, D dense float16, O float32, as
// tcc compiles it for the GPU (the tca_spmm intrinsic, through
// Kernel::run), against cusparseSpMM on the same matrices in the same run:
// CSR with float16 A and B and float32 C and compute, and all float32.
//
//   tcc_bench_tca_spmm MATRIX_DIR [--quick] [--repeats R] [--budget S] [--csv FILE] [--svg FILE] [--markdown FILE]
//
// --markdown writes the table and the geomeans for RESULTS.md.
//
// Matrices: real ones from MATRIX_DIR and Kronecker products of two real
// ones (scale-ups to 2-20 M nonzeros, named kron(A,B)); N = 32, 64, 128,
// 256 dense columns (--quick: fewer matrices, N = 32 and 128). Times are
// medians of CUDA-event timings after a warm-up; achieved TFLOP/s counts
// useful flops only, 2 nnz N. cuSPARSE's time is the better of its default
// and CSR_ALG2 algorithms. Every tcc result is compared with cuSPARSE's
// float16 one (relative Frobenius difference; nan or above 1e-3 fails the
// run). Each matrix's values are divided by its largest |value| first, so
// that float16 holds them. Matrices are measured in
// order (real ones, then scale-ups by size) until `--budget` seconds (80)
// have passed; the summary covers those measured.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "../common/cuda_check.h"
#include "../common/cusparse_check.h"
#include "../common/stats.h"

namespace {


template <typename T>
T* deviceCopy(const std::vector<T>& host) {
  T* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, sizeof(T) * std::max<size_t>(host.size(), 1)));
  if (!host.empty()) CHECK_CUDA(cudaMemcpy(device, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  return device;
}

// The CSR matrix on the device as cuSPARSE takes it (32-bit offsets).
struct CusparseCsr {
  int32_t rows = 0, cols = 0;
  int64_t nnz = 0;
  int32_t *pos = nullptr, *crd = nullptr;
  void* vals = nullptr;
};

// A cusparseSpMM of `valueType` A and B into `outType` C: its median time
// over `repeats` runs (best algorithm of those tried), and C.
struct CusparseResult {
  double seconds = -1;
  std::vector<float> out;
  std::string algorithm;
};

CusparseResult cusparseSpmm(cusparseHandle_t handle, const CusparseCsr& a, const void* dense, int columns,
                            cudaDataType valueType, int repeats, bool keepResult, cudaDataType outType = CUDA_R_32F) {
  CusparseResult result;
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseDnMatDescr_t b = nullptr, c = nullptr;
  void* out = nullptr;
  const size_t outBytes = outType == CUDA_R_16F ? 2 : 4;
  void* buffer = nullptr;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  size_t outSize = size_t(a.rows) * columns;
  CHECK_CUDA(cudaMalloc(&out, outBytes * std::max<size_t>(outSize, 1)));
  try {
    CHECK_CUSPARSE(cusparseCreateCsr(&matrix, a.rows, a.cols, a.nnz, a.pos, a.crd, a.vals, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, valueType));
    CHECK_CUSPARSE(cusparseCreateDnMat(&b, a.cols, columns, columns, const_cast<void*>(dense), valueType,
                                       CUSPARSE_ORDER_ROW));
    CHECK_CUSPARSE(cusparseCreateDnMat(&c, a.rows, columns, columns, out, outType, CUSPARSE_ORDER_ROW));
    float alpha = 1, beta = 0;
    const std::pair<cusparseSpMMAlg_t, const char*> algorithms[] = {{CUSPARSE_SPMM_ALG_DEFAULT, "default"},
                                                                     {CUSPARSE_SPMM_CSR_ALG2, "csr_alg2"}};
    for (auto [algorithm, name] : algorithms) {
      size_t bytes = 0;
      if (cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                  matrix, b, &beta, c, CUDA_R_32F, algorithm, &bytes) != CUSPARSE_STATUS_SUCCESS)
        continue;
      if (buffer) CHECK_CUDA(cudaFree(buffer));
      buffer = nullptr;
      CHECK_CUDA(cudaMalloc(&buffer, std::max<size_t>(bytes, 1)));
      std::vector<double> times;
      bool failed = false;
      for (int k = 0; k < repeats + 1 && !failed; ++k) {
        CHECK_CUDA(cudaEventRecord(start));
        failed = cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, matrix,
                              b, &beta, c, CUDA_R_32F, algorithm, buffer) != CUSPARSE_STATUS_SUCCESS;
        CHECK_CUDA(cudaEventRecord(stop));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (k > 0) times.push_back(ms * 1e-3);
      }
      if (failed) {
        cudaGetLastError();
        continue;
      }
      double seconds = median(times);
      if (result.seconds < 0 || seconds < result.seconds) {
        result.seconds = seconds;
        result.algorithm = name;
        if (keepResult) {
          result.out.resize(outSize);
          if (outType == CUDA_R_16F) {
            std::vector<uint16_t> halves(outSize);
            CHECK_CUDA(cudaMemcpy(halves.data(), out, 2 * outSize, cudaMemcpyDeviceToHost));
            for (size_t k = 0; k < outSize; ++k) result.out[k] = tcc::rt::halfToFloat(halves[k]);
          } else {
            CHECK_CUDA(cudaMemcpy(result.out.data(), out, sizeof(float) * outSize, cudaMemcpyDeviceToHost));
          }
        }
      }
    }
  } catch (const CusparseFailure&) {
    cudaGetLastError();
  }
  if (b) cusparseDestroyDnMat(b);
  if (c) cusparseDestroyDnMat(c);
  if (matrix) cusparseDestroySpMat(matrix);
  if (buffer) CHECK_CUDA(cudaFree(buffer));
  CHECK_CUDA(cudaFree(out));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return result;
}

double relativeDifference(const float* a, size_t size, const std::vector<float>& b) {
  if (b.size() != size) return 1;
  double difference = 0, norm = 0;
  for (size_t k = 0; k < size; ++k) {
    difference += (a[k] - b[k]) * (a[k] - b[k]);
    norm += double(b[k]) * b[k];
  }
  return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

struct Row {
  std::string matrix, kind;
  int32_t rows = 0;
  int64_t nnz = 0;
  int columns = 0;
  double tcc = -1, half = -1, single = -1;  // seconds
  std::string halfAlgorithm, singleAlgorithm;
  double difference = 0;
};

// Speed-up over cuSPARSE float16 per case, log scale, one bar per case.
void writeSvg(const std::string& path, const std::vector<Row>& rows, const std::string& title) {
  std::vector<const Row*> cases;
  for (const Row& row : rows)
    if (row.tcc > 0 && row.half > 0) cases.push_back(&row);
  const double width = 60 + 14.0 * cases.size() + 40, height = 420, top = 40, bottom = 300, left = 60;
  const double low = std::log2(0.125), high = std::log2(16.0);
  auto y = [&](double ratio) {
    double v = std::clamp(std::log2(ratio), low, high);
    return bottom - (v - low) / (high - low) * (bottom - top);
  };
  std::ofstream out(path);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"10\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << left << "\" y=\"20\" font-size=\"13\">" << title << "</text>\n";
  for (double ratio : {0.125, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0, 8.0, 16.0}) {
    out << "<line x1=\"" << left << "\" x2=\"" << width - 20 << "\" y1=\"" << y(ratio) << "\" y2=\"" << y(ratio)
        << "\" stroke=\"" << (ratio == 1.0 ? "black" : ratio == 1.5 ? "#c00" : "#ddd") << "\""
        << (ratio == 1.5 ? " stroke-dasharray=\"4 3\"" : "") << "/>\n";
    out << "<text x=\"" << left - 6 << "\" y=\"" << y(ratio) + 3 << "\" text-anchor=\"end\">" << ratio << "x</text>\n";
  }
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"};
  auto colorOf = [&](int columns) { return colors[columns <= 32 ? 0 : columns <= 64 ? 1 : columns <= 128 ? 2 : 3]; };
  for (size_t k = 0; k < cases.size(); ++k) {
    const Row& row = *cases[k];
    double ratio = row.half / row.tcc, x = left + 6 + 14.0 * k;
    double y0 = y(1.0), y1 = y(ratio);
    out << "<rect x=\"" << x << "\" y=\"" << std::min(y0, y1) << "\" width=\"11\" height=\"" << std::abs(y1 - y0)
        << "\" fill=\"" << colorOf(row.columns) << "\"><title>" << row.matrix << " N=" << row.columns << ": " << ratio
        << "x</title></rect>\n";
    if (k == 0 || cases[k - 1]->matrix != row.matrix)
      out << "<text transform=\"translate(" << x + 8 << "," << bottom + 8 << ") rotate(60)\">" << row.matrix
          << "</text>\n";
  }
  double legendX = left;
  for (int columns : {32, 64, 128, 256}) {
    out << "<rect x=\"" << legendX << "\" y=\"" << height - 16 << "\" width=\"10\" height=\"10\" fill=\""
        << colorOf(columns) << "\"/><text x=\"" << legendX + 14 << "\" y=\"" << height - 7 << "\">N=" << columns
        << "</text>\n";
    legendX += 60;
  }
  out << "<text x=\"" << legendX + 10 << "\" y=\"" << height - 7
      << "\">bars: cuSPARSE float16 time / tcc time (log scale); dashed: 1.5x</text>\n</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s MATRIX_DIR [--quick] [--repeats R] [--budget S] [--csv FILE] [--svg FILE] [--markdown FILE]\n",
                 argv[0]);
    return 2;
  }
  std::string dir = argv[1], csvPath, svgPath, markdownPath;
  bool quick = false;
  int repeats = 10;
  double budget = 80;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  for (int k = 2; k < argc; ++k) {
    std::string argument = argv[k];
    if (argument == "--quick") quick = true;
    else if (argument == "--repeats" && k + 1 < argc) repeats = std::max(1, std::atoi(argv[++k]));
    else if (argument == "--budget" && k + 1 < argc) budget = std::atof(argv[++k]);
    else if (argument == "--csv" && k + 1 < argc) csvPath = argv[++k];
    else if (argument == "--svg" && k + 1 < argc) svgPath = argv[++k];
    else if (argument == "--markdown" && k + 1 < argc) markdownPath = argv[++k];
    else {
      std::fprintf(stderr, "unknown argument %s\n", argument.c_str());
      return 2;
    }
  }
  std::map<std::string, tcc::rt::Coo> loaded;
  auto real = [&](const std::string& name) -> const tcc::rt::Coo& {
    auto found = loaded.find(name);
    if (found == loaded.end()) found = loaded.emplace(name, tcc::rt::readMatrixMarket(dir + "/" + name + ".mtx")).first;
    return found->second;
  };
  std::vector<std::string> realNames = {"bcsstk16", "bayer10", "mbeacxc", "Franz6_id1959_aug", "bcsstk13",
                                        "dnn_n1024_l1", "bcspwr10", "Pd", "cryg2500", "watt_2", "adder_dcop_05",
                                        "dwt_992", "G51", "rajat19"};
  // Scale-ups, smallest first: 3.0, 4.1, 5.5, 7.6, 7.8 and 19.5 M nonzeros.
  std::vector<std::pair<std::string, std::string>> kronNames = {
      {"Pd", "cage5"},     {"mbeacxc", "LF10"},   {"dnn_n1024_l1", "bcspwr02"}, {"Franz6_id1959_aug", "karate"},
      {"bayer10", "LF10"}, {"bcsstk13", "cage5"}};
  std::vector<int> columnsList = {32, 64, 128, 256};
  if (quick) {
    realNames = {"bcsstk16", "bayer10", "mbeacxc", "bcsstk13", "dnn_n1024_l1", "Pd"};
    kronNames = {{"Pd", "cage5"}, {"bcsstk13", "cage5"}};
    columnsList = {32, 128};
  }

  cusparseHandle_t handle;
  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "cusparseCreate failed\n");
    return 1;
  }
  tcc::Kernel kernel = tcc::compile(tcc::Program::fromText(R"(
tensor O(I, J) : dense of float32
tensor S(I, K) : csr of float16
tensor D(K, J) : dense of float16
O(i, j) = S(i, k) * D(k, j)
schedule { tensorcore() }
target cuda
)"));
  cudaDeviceProp properties;
  CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
  std::printf("device: %s; %d repeats, medians; x = cuSPARSE time / tcc time\n", properties.name, repeats);
  printCudaVersions();
  std::printf("%-26s %-8s %8s %9s %4s | %9s %7s | %9s %6s %-8s | %9s %6s | %8s\n", "matrix", "kind", "rows", "nnz", "N",
              "tcc us", "TFLOP/s", "cusp16 us", "x", "alg", "cusp32 us", "x", "rel.diff");
  std::vector<Row> results;
  auto measure = [&](const std::string& name, const std::string& kind, tcc::rt::Coo coo) {
    // float16 holds magnitudes up to 65504: each matrix is divided by its
    // largest |value| first (the work is the same; no value turns into inf).
    double largest = 0;
    for (double v : coo.values) largest = std::max(largest, std::abs(v));
    if (largest > 0)
      for (double& v : coo.values) v /= largest;
    tcc::Tensor s = tcc::rt::pack(coo, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float16);
    tcc_tensor view = s.abiView();
    CusparseCsr half, single;
    half.rows = single.rows = view.dims[0];
    half.cols = single.cols = view.dims[1];
    half.nnz = single.nnz = view.vals_size;
    std::vector<int32_t> pos(view.levels[1].pos, view.levels[1].pos + half.rows + 1);
    std::vector<int32_t> crd(view.levels[1].crd, view.levels[1].crd + half.nnz);
    std::vector<uint16_t> halfValues(static_cast<uint16_t*>(view.vals), static_cast<uint16_t*>(view.vals) + half.nnz);
    std::vector<float> singleValues(half.nnz);
    for (int64_t k = 0; k < half.nnz; ++k) singleValues[k] = tcc::rt::halfToFloat(halfValues[k]);
    half.pos = single.pos = deviceCopy(pos);
    half.crd = single.crd = deviceCopy(crd);
    half.vals = deviceCopy(halfValues);
    single.vals = deviceCopy(singleValues);
    for (int columns : columnsList) {
      if (elapsed() > budget + 10) break;  // a large matrix's last N
      Row row{name, kind, half.rows, half.nnz, columns};
      // D: uniform in [-1, 1], rounded to float16.
      size_t denseSize = size_t(half.cols) * columns;
      tcc::Tensor d({half.cols, columns}, tcc::rt::TensorFormat::dense(2), tcc::rt::ValueType::Float16);
      std::vector<uint16_t> dHalfValues(denseSize);
      std::vector<float> dSingleValues(denseSize);
      std::mt19937 random(17 + columns);
      std::uniform_real_distribution<float> uniform(-1, 1);
      for (size_t k = 0; k < denseSize; ++k) {
        dHalfValues[k] = tcc::rt::floatToHalf(uniform(random));
        dSingleValues[k] = tcc::rt::halfToFloat(dHalfValues[k]);
      }
      std::copy(dHalfValues.begin(), dHalfValues.end(), static_cast<uint16_t*>(d.valuesData()));
      tcc::RunResult ours = kernel.run({{"S", s}, {"D", d}}, tcc::RunOptions{repeats + 1});
      ours.seconds.erase(ours.seconds.begin());  // the warm-up, which also plans
      row.tcc = median(ours.seconds);
      const auto* product = static_cast<const float*>(ours.tensors.at("O").valuesData());
      uint16_t* dHalfDevice = deviceCopy(dHalfValues);
      float* dSingleDevice = deviceCopy(dSingleValues);
      CusparseResult theirsHalf = cusparseSpmm(handle, half, dHalfDevice, columns, CUDA_R_16F, repeats, true);
      if (theirsHalf.seconds < 0) {
        // Where cuSPARSE lacks float16 in / float32 out: float16 out, float32 compute.
        theirsHalf = cusparseSpmm(handle, half, dHalfDevice, columns, CUDA_R_16F, repeats, true, CUDA_R_16F);
        if (theirsHalf.seconds > 0) theirsHalf.algorithm += ",f16out";
      }
      CusparseResult theirsSingle =
          cusparseSpmm(handle, single, dSingleDevice, columns, CUDA_R_32F, repeats, theirsHalf.seconds < 0);
      CHECK_CUDA(cudaFree(dHalfDevice));
      CHECK_CUDA(cudaFree(dSingleDevice));
      row.half = theirsHalf.seconds;
      row.single = theirsSingle.seconds;
      row.halfAlgorithm = theirsHalf.algorithm;
      row.singleAlgorithm = theirsSingle.algorithm;
      row.difference = relativeDifference(product, size_t(half.rows) * columns,
                                          theirsHalf.seconds > 0 ? theirsHalf.out : theirsSingle.out);
      double flops = 2.0 * row.nnz * columns;
      std::printf("%-26s %-8s %8d %9lld %4d | %9.1f %7.2f | ", name.c_str(), kind.c_str(), row.rows,
                  static_cast<long long>(row.nnz), columns, row.tcc * 1e6, flops / row.tcc * 1e-12);
      if (row.half > 0) std::printf("%9.1f %6.2f %-8s | ", row.half * 1e6, row.half / row.tcc, row.halfAlgorithm.c_str());
      else std::printf("%9s %6s %-8s | ", "n/a", "n/a", "");
      if (row.single > 0) std::printf("%9.1f %6.2f | ", row.single * 1e6, row.single / row.tcc);
      else std::printf("%9s %6s | ", "n/a", "n/a");
      std::printf("%8.1e\n", row.difference);
      std::fflush(stdout);
      results.push_back(row);
    }
    CHECK_CUDA(cudaFree(half.pos));
    CHECK_CUDA(cudaFree(half.crd));
    CHECK_CUDA(cudaFree(half.vals));
    CHECK_CUDA(cudaFree(single.vals));
  };
  int skipped = 0;
  for (const auto& name : realNames) {
    if (elapsed() > budget) {
      ++skipped;
      continue;
    }
    measure(name, "real", real(name));
  }
  for (const auto& [a, b] : kronNames) {
    if (elapsed() > budget) {
      ++skipped;
      continue;
    }
    std::string shortA = a.substr(0, a.find('_')), shortB = b.substr(0, b.find('_'));
    measure("kron(" + shortA + "," + shortB + ")", "scale-up", tcc::rt::kroneckerProduct(real(a), real(b)));
  }
  if (skipped) std::printf("%d matrices left out: the %.0f s budget was spent\n", skipped, budget);

  std::vector<double> overHalf, overSingle, overHalfReal, overHalfScaled;
  std::map<int, std::vector<double>> overHalfByColumns;
  // A difference that is nan (never below a tolerance) or above 1e-3 fails the run.
  constexpr double kTolerance = 1e-3;
  double worst = 0;
  int wrong = 0;
  for (const Row& row : results) {
    if (!(row.difference <= kTolerance)) {
      ++wrong;
      std::printf("FAILED: %s N=%d: tcc differs from cuSPARSE by %.1e (tolerance %.0e)\n", row.matrix.c_str(),
                  row.columns, row.difference, kTolerance);
    }
    worst = std::isnan(row.difference) || std::isnan(worst) ? std::nan("") : std::max(worst, row.difference);
    if (row.half > 0) {
      overHalf.push_back(row.half / row.tcc);
      (row.kind == "real" ? overHalfReal : overHalfScaled).push_back(row.half / row.tcc);
      overHalfByColumns[row.columns].push_back(row.half / row.tcc);
    }
    if (row.single > 0) overSingle.push_back(row.single / row.tcc);
  }
  std::printf("geomean speed-up over cuSPARSE float16: %.2fx (%zu cases; real %.2fx, scale-ups %.2fx); over cuSPARSE "
              "float32: %.2fx\n",
              geomean(overHalf), overHalf.size(), geomean(overHalfReal), geomean(overHalfScaled), geomean(overSingle));
  for (const auto& [columns, ratios] : overHalfByColumns)
    std::printf("  N = %d: %.2fx over cuSPARSE float16\n", columns, geomean(ratios));
  std::printf("largest relative difference from cuSPARSE: %.1e\n", worst);
  if (!csvPath.empty()) {
    std::ofstream csv(csvPath);
    csv << "matrix,kind,rows,nnz,N,tcc_us,tcc_tflops,cusparse_f16_us,cusparse_f16_alg,cusparse_f32_us,"
           "cusparse_f32_alg,speedup_f16,speedup_f32,relative_difference\n";
    for (const Row& row : results)
      csv << '"' << row.matrix << "\"," << row.kind << "," << row.rows << "," << row.nnz << "," << row.columns << ","
          << row.tcc * 1e6 << "," << 2.0 * row.nnz * row.columns / row.tcc * 1e-12 << "," << row.half * 1e6 << ","
          << row.halfAlgorithm << "," << row.single * 1e6 << "," << row.singleAlgorithm << ","
          << (row.half > 0 ? row.half / row.tcc : 0) << "," << (row.single > 0 ? row.single / row.tcc : 0) << ","
          << row.difference << "\n";
  }
  if (!markdownPath.empty()) {
    std::ofstream md(markdownPath);
    char line[400];
    std::snprintf(line, sizeof line,
                  "Device: %s. Geomean speed-up over cuSPARSE float16: **%.2fx** (%zu cases; real %.2fx, scale-ups "
                  "%.2fx); over cuSPARSE float32: %.2fx. Largest relative difference from cuSPARSE: %.1e.\n\n",
                  properties.name, geomean(overHalf), overHalf.size(), geomean(overHalfReal), geomean(overHalfScaled),
                  geomean(overSingle), worst);
    md << line;
    for (const auto& [columns, ratios] : overHalfByColumns) {
      std::snprintf(line, sizeof line, "- N = %d: %.2fx over cuSPARSE float16\n", columns, geomean(ratios));
      md << line;
    }
    md << "\n| matrix | kind | rows | nnz | N | tcc us | tcc TFLOP/s | cuSPARSE f16 us | x | cuSPARSE f32 us | x |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Row& row : results) {
      std::snprintf(line, sizeof line, "| %s | %s | %d | %lld | %d | %.1f | %.2f | %.1f | %.2f | %.1f | %.2f |\n",
                    row.matrix.c_str(), row.kind.c_str(), row.rows, static_cast<long long>(row.nnz), row.columns,
                    row.tcc * 1e6, 2.0 * row.nnz * row.columns / row.tcc * 1e-12, row.half * 1e6,
                    row.half > 0 ? row.half / row.tcc : 0.0, row.single * 1e6,
                    row.single > 0 ? row.single / row.tcc : 0.0);
      md << line;
    }
  }
  if (!svgPath.empty()) {
    char title[200];
    std::snprintf(title, sizeof title, "TCA-SpMM vs cuSPARSE SpMM (float16), %s: geomean %.2fx", properties.name,
                  geomean(overHalf));
    writeSvg(svgPath, results, title);
  }
  cusparseDestroy(handle);
  if (wrong) {
    std::printf("FAILED: %d of %zu cases differ from cuSPARSE beyond %.0e or are nan\n", wrong, results.size(),
                kTolerance);
    return 1;
  }
  return 0;
}
