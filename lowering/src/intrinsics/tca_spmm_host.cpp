// TCA-SpMM's host side: the preprocessing (tca_spmm_plan.inc, shared with
// the printed .cu files) and the host code of a printed .cu file.
#include "tca_spmm.h"

#include "tcc_tca_spmm_plan_text.h"

namespace tcc::lowering {
namespace {

namespace imp = ir::imp;

#include "tca_spmm_plan.inc"

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The printed .cu's host step: reads S's row positions, plans, uploads the
// three arrays, launches the kernel for N, and frees what it allocated.
constexpr const char* kHostRun = R"tcc(
static int32_t PREFIX_run(tcc_tensor* out, tcc_tensor* sparse, tcc_tensor* dense) {
  int rows = sparse->dims[0], columns = dense->dims[1];
  if (rows == 0 || columns == 0) return 0;
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1));
  if (!pos) return 2;
  if (cudaMemcpy(pos, sparse->levels[1].pos, sizeof(long long) * (rows + 1), cudaMemcpyDeviceToHost) != cudaSuccess) {
    free(pos);
    return 2;
  }
  int device = 0, multiprocessors = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    free(pos);
    return 2;
  }
  int least = 1;
  long long unit = tcc_tca_unit(pos, rows, columns, (long long)multiprocessors * 128, &least);
  long long warps = tcc_tca_count_warps(pos, rows, unit, least);
  int32_t status = 0;
  if (warps > 0) {
    int* host = (int*)malloc(sizeof(int) * 3 * warps);
    int* arrays = 0;
    if (!host) {
      status = 2;
    } else if (cudaMalloc((void**)&arrays, sizeof(int) * 3 * warps) != cudaSuccess) {
      status = 2;
    } else {
      tcc_tca_fill(pos, rows, unit, least, host, host + warps, host + 2 * warps);
      if (cudaMemcpy(arrays, host, sizeof(int) * 3 * warps, cudaMemcpyHostToDevice) != cudaSuccess) status = 2;
      long long blocks = (warps * 32 + KERNEL_THREADS - 1) / KERNEL_THREADS;
      int chunks = tcc_tca_chunks_per_step(columns);
      bool aligned = columns % 8 == 0;
      const long long* p = sparse->levels[1].pos;
      const int* c = sparse->levels[1].crd;
      const uint16_t* v = (const uint16_t*)sparse->vals;
      const uint16_t* d = (const uint16_t*)dense->vals;
      float* o = (float*)out->vals;
      if (status == 0) {
        switch (chunks * 2 + (aligned ? 1 : 0)) {
LAUNCHES        }
        if (cudaGetLastError() != cudaSuccess) status = 2;
      }
      if (cudaDeviceSynchronize() != cudaSuccess) status = 2;
    }
    if (arrays) cudaFree(arrays);
    free(host);
  }
  free(pos);
  return status;
}
)tcc";

}  // namespace

TcaSpmmPlan planTcaSpmm(const int64_t* pos, int rows, int columns, int64_t targetWarps) {
  static_assert(sizeof(long long) == sizeof(int64_t));
  const auto* positions = reinterpret_cast<const long long*>(pos);
  TcaSpmmPlan plan;
  plan.chunksPerStep = tcc_tca_chunks_per_step(columns);
  plan.aligned = columns % 8 == 0;
  plan.unit = tcc_tca_unit(positions, rows, columns, targetWarps, &plan.leastWarpsPerRow);
  int64_t warps = tcc_tca_count_warps(positions, rows, plan.unit, plan.leastWarpsPerRow);
  plan.rowIdForEachWarp.resize(warps);
  plan.numWarpsPerRow.resize(warps);
  plan.warpidWithinRow.resize(warps);
  tcc_tca_fill(positions, rows, plan.unit, plan.leastWarpsPerRow, plan.rowIdForEachWarp.data(), plan.numWarpsPerRow.data(),
               plan.warpidWithinRow.data());
  return plan;
}

std::string tcaSpmmDeviceCode(const imp::Intrinsic&, const std::string& prefix) { return tcaSpmmDeviceCode(prefix); }

std::string tcaSpmmHostDefinitions(const imp::Intrinsic&, const std::string& prefix) {
  std::string launches;
  for (int chunks : {1, 2, 4, 8})
    for (bool aligned : {true, false})
      launches += "          case " + std::to_string(chunks * 2 + (aligned ? 1 : 0)) + ": " +
                  tcaSpmmKernelName(prefix, chunks, aligned) +
                  "<<<(unsigned)blocks, KERNEL_THREADS>>>(arrays, arrays + warps, arrays + 2 * warps, warps, p, c, v, "
                  "d, o, columns); break;\n";
  std::string run = replaceAll(kHostRun, "LAUNCHES", launches);
  run = replaceAll(run, "KERNEL_THREADS", std::to_string(kTcaSpmmThreadsPerBlock));
  return "#include <stdlib.h>\n#ifndef TCC_TCA_SPMM_PLAN\n#define TCC_TCA_SPMM_PLAN\n" +
         std::string(detail::kTcaSpmmPlanText) + "#endif\n" + replaceAll(run, "PREFIX", prefix);
}

std::string tcaSpmmHostStatement(const imp::Intrinsic& op, const std::string& prefix) {
  return "if (int32_t tcc_status = " + prefix + "_run(" + op.tensors[0] + ", " + op.tensors[1] + ", " + op.tensors[2] +
         ")) return tcc_status;";
}

}  // namespace tcc::lowering
