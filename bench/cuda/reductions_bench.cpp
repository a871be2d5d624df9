// The default GPU mapping's reductions (statements with no schedule whose
// outermost loop sums) against cuBLAS and cuSPARSE in the same run,
// float32:
//   dot      d = x(i) * z(i), x and z dense       against cublasSdot
//            (device pointer mode); tcc under fp fast (a block per 2048
//            entries, each block's total added atomically) and fp strict
//            (one block of 1024 threads: the same order every run);
//   colsums  s(j) = A(i, j), A CSR, rows summed   against cusparseSpMV
//            (A transposed times a vector of ones); tcc under fp fast (a
//            thread per row adding atomically); fp strict runs it in one
//            GPU thread (timed once, on the smallest matrix only).
// Each result is held against the peer's (relative difference to the
// largest magnitude printed; a difference past 1e-3 fails the run).
// Times: medians of CUDA-event timings after a warm-up; tcc's are the
// runtime's own (RunResult::seconds).
//
//   tcc_bench_reductions [repeats]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "../common/cublas_check.h"
#include "../common/cuda_check.h"
#include "../common/cusparse_check.h"
#include "../common/stats.h"

namespace {

int failures = 0;

double relativeDifference(const std::vector<float>& ours, const std::vector<float>& theirs) {
  double largest = 0, difference = 0;
  for (size_t k = 0; k < theirs.size(); ++k) {
    largest = std::max(largest, std::fabs(double(theirs[k])));
    difference = std::max(difference, std::fabs(double(ours[k]) - theirs[k]));
  }
  double relative = largest > 0 ? difference / largest : difference;
  if (!(relative <= 1e-3) || largest == 0) ++failures;  // (never on all-zero data)
  return relative;
}

std::vector<float> valuesOf(const tcc::Tensor& tensor) {
  auto values = tensor.values<float>();
  return {values.begin(), values.end()};
}

double timeTcc(const tcc::Kernel& kernel, const std::map<std::string, tcc::Tensor>& inputs, int repeats,
               const std::string& output, std::vector<float>& result) {
  tcc::RunResult run = kernel.run(inputs, tcc::RunOptions{repeats + 1});
  run.seconds.erase(run.seconds.begin());  // the warm-up
  result = valuesOf(run.tensors.at(output));
  return median(run.seconds);
}

// Median seconds of `repeats` calls of `body` after a warm-up, by CUDA events.
template <typename Body>
double timeDevice(int repeats, Body body) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int run = 0; run < repeats + 1; ++run) {
    CHECK_CUDA(cudaEventRecord(start));
    body();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (run > 0) times.push_back(ms * 1e-3);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return median(times);
}

tcc::Tensor denseVector(int32_t n, uint64_t seed) {
  tcc::Tensor vector({n}, tcc::rt::TensorFormat::dense(1), tcc::rt::ValueType::Float32);
  auto values = vector.values<float>();
  uint64_t state = seed;
  for (auto& value : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    value = static_cast<float>(static_cast<double>(state >> 11) * 0x1.0p-53 - 0.25);
  }
  return vector;
}

float* upload(const void* data, size_t bytes) {
  float* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, std::max<size_t>(bytes, 16)));
  CHECK_CUDA(cudaMemcpy(device, data, bytes, cudaMemcpyHostToDevice));
  return device;
}

const char* kDot = "tensor d : dense of float32\ntensor x(I) : dense of float32\ntensor z(I) : dense of float32\n"
                   "d = x(i) * z(i)\ntarget cuda\n";
const char* kColumnSums = "tensor s(J) : dense of float32\ntensor A(I, J) : csr of float32\ns(j) = A(i, j)\n"
                          "target cuda\n";

void benchDot(cublasHandle_t handle, int32_t n, int repeats) {
  tcc::Tensor x = denseVector(n, 7), z = denseVector(n, 11);
  tcc::Kernel fast = tcc::compile(tcc::Program::fromText(std::string(kDot) + "fp fast\n", "dot_fast.tc"));
  tcc::Kernel strict = tcc::compile(tcc::Program::fromText(kDot, "dot_strict.tc"));
  std::vector<float> fastResult, strictResult;
  double fastSeconds = timeTcc(fast, {{"x", x}, {"z", z}}, repeats, "d", fastResult);
  double strictSeconds = timeTcc(strict, {{"x", x}, {"z", z}}, repeats, "d", strictResult);
  float* dx = upload(x.valuesData(), sizeof(float) * n);
  float* dz = upload(z.valuesData(), sizeof(float) * n);
  float* dResult = nullptr;
  CHECK_CUDA(cudaMalloc(&dResult, sizeof(float)));
  CHECK_CUBLAS(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  double cublasSeconds = timeDevice(repeats, [&] { CHECK_CUBLAS(cublasSdot(handle, n, dx, 1, dz, 1, dResult)); });
  std::vector<float> theirs(1);
  CHECK_CUDA(cudaMemcpy(theirs.data(), dResult, sizeof(float), cudaMemcpyDeviceToHost));
  double fastDifference = relativeDifference(fastResult, theirs);
  double strictDifference = relativeDifference(strictResult, theirs);
  std::printf("| dot | n = %d | %.2f | %.2f (%.2fx) | %.2f (%.2fx) | %.1e, %.1e |\n", n, cublasSeconds * 1e6,
              fastSeconds * 1e6, cublasSeconds / fastSeconds, strictSeconds * 1e6, cublasSeconds / strictSeconds,
              fastDifference, strictDifference);
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dz));
  CHECK_CUDA(cudaFree(dResult));
}

void benchColumnSums(cusparseHandle_t handle, int32_t rows, int32_t cols, int32_t perRow, int repeats, bool strictToo) {
  tcc::Tensor a = tcc::rt::pack(tcc::rt::randomPerRow(rows, cols, perRow, 5), tcc::rt::TensorFormat::csr(),
                                tcc::rt::ValueType::Float32);
  tcc::Kernel fast = tcc::compile(tcc::Program::fromText(std::string(kColumnSums) + "fp fast\n", "colsums.tc"));
  std::vector<float> fastResult, strictResult;
  double fastSeconds = timeTcc(fast, {{"A", a}}, repeats, "s", fastResult);
  double strictSeconds = NAN;
  if (strictToo) {
    tcc::Kernel strict = tcc::compile(tcc::Program::fromText(kColumnSums, "colsums_strict.tc"));
    strictSeconds = timeTcc(strict, {{"A", a}}, 1, "s", strictResult);
  }
  tcc_tensor view = a.abiView();
  const int64_t nnz = view.vals_size;
  std::vector<int32_t> pos(view.levels[1].pos, view.levels[1].pos + rows + 1);
  int32_t *dPos = nullptr, *dCrd = nullptr;
  CHECK_CUDA(cudaMalloc(&dPos, sizeof(int32_t) * (rows + 1)));
  CHECK_CUDA(cudaMalloc(&dCrd, sizeof(int32_t) * std::max<int64_t>(nnz, 1)));
  CHECK_CUDA(cudaMemcpy(dPos, pos.data(), sizeof(int32_t) * (rows + 1), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dCrd, view.levels[1].crd, sizeof(int32_t) * nnz, cudaMemcpyHostToDevice));
  float* dVals = upload(view.vals, sizeof(float) * nnz);
  std::vector<float> ones(rows, 1.0f);
  float* dOnes = upload(ones.data(), sizeof(float) * rows);
  float* dSums = nullptr;
  CHECK_CUDA(cudaMalloc(&dSums, sizeof(float) * cols));
  cusparseSpMatDescr_t matrix;
  cusparseDnVecDescr_t in, out;
  CHECK_CUSPARSE(cusparseCreateCsr(&matrix, rows, cols, nnz, dPos, dCrd, dVals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&in, rows, dOnes, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&out, cols, dSums, CUDA_R_32F));
  const float alpha = 1, beta = 0;
  size_t bufferBytes = 0;
  CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_TRANSPOSE, &alpha, matrix, in, &beta, out,
                                         CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bufferBytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, std::max<size_t>(bufferBytes, 16)));
  double cusparseSeconds = timeDevice(repeats, [&] {
    CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_TRANSPOSE, &alpha, matrix, in, &beta, out, CUDA_R_32F,
                                CUSPARSE_SPMV_ALG_DEFAULT, buffer));
  });
  std::vector<float> theirs(cols);
  CHECK_CUDA(cudaMemcpy(theirs.data(), dSums, sizeof(float) * cols, cudaMemcpyDeviceToHost));
  double fastDifference = relativeDifference(fastResult, theirs);
  std::string strictText = "-", strictDifference = "-";
  if (strictToo) {
    char text[64];
    std::snprintf(text, sizeof text, "%.2f (%.3fx)", strictSeconds * 1e6, cusparseSeconds / strictSeconds);
    strictText = text;
    std::snprintf(text, sizeof text, "%.1e", relativeDifference(strictResult, theirs));
    strictDifference = text;
  }
  std::printf("| colsums | %d x %d, %d a row | %.2f | %.2f (%.2fx) | %s | %.1e, %s |\n", rows, cols, perRow,
              cusparseSeconds * 1e6, fastSeconds * 1e6, cusparseSeconds / fastSeconds, strictText.c_str(),
              fastDifference, strictDifference.c_str());
  cusparseDestroySpMat(matrix);
  cusparseDestroyDnVec(in);
  cusparseDestroyDnVec(out);
  CHECK_CUDA(cudaFree(buffer));
  CHECK_CUDA(cudaFree(dPos));
  CHECK_CUDA(cudaFree(dCrd));
  CHECK_CUDA(cudaFree(dVals));
  CHECK_CUDA(cudaFree(dOnes));
  CHECK_CUDA(cudaFree(dSums));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  printCudaVersions();
  cublasHandle_t blas;
  CHECK_CUBLAS(cublasCreate(&blas));
  cusparseHandle_t sparse;
  CHECK_CUSPARSE(cusparseCreate(&sparse));
  std::printf("median microseconds of %d runs; ratio = peer time / tcc time (above 1: tcc faster)\n\n", repeats);
  std::printf("| statement | input | peer (cuBLAS / cuSPARSE) | tcc, fp fast | tcc, fp strict | difference from peer |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  for (int32_t n : {1 << 16, 1 << 20, 1 << 24}) benchDot(blas, n, repeats);
  benchColumnSums(sparse, 10000, 10000, 10, repeats, /*strictToo=*/true);
  benchColumnSums(sparse, 1 << 20, 1 << 20, 10, repeats, false);
  benchColumnSums(sparse, 1 << 16, 1 << 16, 200, repeats, false);
  cublasDestroy(blas);
  cusparseDestroy(sparse);
  if (failures) std::printf("\n%d result(s) differ from the peer's by more than 1e-3 (relative)\n", failures);
  return failures ? 1 : 0;
}
