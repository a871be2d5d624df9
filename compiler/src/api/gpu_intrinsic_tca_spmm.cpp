// TCA-SpMM's in-process host step (tcc/lowering/tca_spmm.h): the
// preprocessing arrays of a sparse operand are computed once and kept on
// the device, keyed by the allocation of its row positions, so repeated
// runs on the same matrix launch the kernel and nothing else.
#include <deque>
#include <memory>
#include <mutex>

#include "gpu_intrinsic_runners.h"
#include "tcc/lowering/tca_spmm.h"
#include "tcc/tcc.h"

namespace tcc::detail {
namespace {

struct PlanOnDevice {
  uint64_t positions = 0;  // rt::cuda::allocationId of S's pos array
  int rows = 0, columns = 0;
  int chunksPerStep = 1;
  bool aligned = true;
  int64_t warps = 0;
  rt::cuda::DeviceBuffer arrays;  // the three arrays, one after another
};

constexpr size_t kCachedPlans = 16;

std::shared_ptr<const PlanOnDevice> planFor(const tcc_tensor& sparse, int columns) {
  // Never destroyed: device memory outlives no driver shutdown this way.
  static auto* mutex = new std::mutex;
  static auto* cache = new std::deque<std::shared_ptr<const PlanOnDevice>>;
  const int rows = sparse.dims[0];
  const uint64_t positions = rt::cuda::allocationId(sparse.levels[1].pos);
  {
    std::lock_guard<std::mutex> lock(*mutex);
    if (positions != 0)
      for (const auto& plan : *cache)
        if (plan->positions == positions && plan->rows == rows && plan->columns == columns) return plan;
  }
  std::vector<int64_t> pos(static_cast<size_t>(rows) + 1);
  rt::cuda::copyToHost(pos.data(), sparse.levels[1].pos, sizeof(int64_t) * pos.size());
  const auto& device = rt::cuda::device();
  lowering::TcaSpmmPlan plan =
      lowering::planTcaSpmm(pos.data(), rows, columns, static_cast<int64_t>(device.multiprocessors) * 128);
  auto result = std::make_shared<PlanOnDevice>();
  result->positions = positions;
  result->rows = rows;
  result->columns = columns;
  result->chunksPerStep = plan.chunksPerStep;
  result->aligned = plan.aligned;
  result->warps = plan.warps();
  if (result->warps > 0) {
    std::vector<int32_t> arrays;
    arrays.reserve(3 * plan.warps());
    arrays.insert(arrays.end(), plan.rowIdForEachWarp.begin(), plan.rowIdForEachWarp.end());
    arrays.insert(arrays.end(), plan.numWarpsPerRow.begin(), plan.numWarpsPerRow.end());
    arrays.insert(arrays.end(), plan.warpidWithinRow.begin(), plan.warpidWithinRow.end());
    result->arrays = rt::cuda::DeviceBuffer(sizeof(int32_t) * arrays.size());
    result->arrays.upload(arrays.data(), sizeof(int32_t) * arrays.size());
  }
  if (positions != 0) {
    std::lock_guard<std::mutex> lock(*mutex);
    cache->push_front(result);
    if (cache->size() > kCachedPlans) cache->pop_back();
  }
  return result;
}

int32_t runTcaSpmm(const GpuIntrinsicRun& run) {
  const auto& names = run.call.op->tensors;
  tcc_tensor* out = run.tensors.at(names.at(0));
  tcc_tensor* sparse = run.tensors.at(names.at(1));
  tcc_tensor* dense = run.tensors.at(names.at(2));
  int rows = sparse->dims[0], columns = dense->dims[1];
  if (rows == 0 || columns == 0) return 0;
  std::shared_ptr<const PlanOnDevice> plan = planFor(*sparse, columns);
  if (plan->warps == 0) return 0;  // no nonzeros: O stays zero
  const auto* arrays = static_cast<const int32_t*>(plan->arrays.get());
  const int32_t* rowIds = arrays;
  const int32_t* warpsPerRow = arrays + plan->warps;
  const int32_t* warpIds = arrays + 2 * plan->warps;
  int64_t warps = plan->warps;
  const long long* pos = sparse->levels[1].pos;
  const int* crd = sparse->levels[1].crd;
  const void* vals = sparse->vals;
  const void* denseValues = dense->vals;
  void* outValues = out->vals;
  std::vector<void*> arguments = {&rowIds, &warpsPerRow, &warpIds, &warps,       &pos,
                                  &crd,    &vals,        &denseValues, &outValues, &columns};
  rt::cuda::LaunchShape shape;
  int64_t blocks = (warps * 32 + lowering::kTcaSpmmThreadsPerBlock - 1) / lowering::kTcaSpmmThreadsPerBlock;
  if (blocks > 2147483647) throw Error("TCA-SpMM: the matrix needs more than 2^31 blocks");
  shape.grid[0] = static_cast<unsigned>(blocks);
  shape.block[0] = lowering::kTcaSpmmThreadsPerBlock;
  rt::cuda::launch(run.module.function(lowering::tcaSpmmKernelName(run.call.prefix, plan->chunksPerStep, plan->aligned)),
                   shape, arguments);
  return 0;
}

}  // namespace

GpuIntrinsicRunner tcaSpmmRunner() { return runTcaSpmm; }

}  // namespace tcc::detail
