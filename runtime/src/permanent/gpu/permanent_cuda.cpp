// The GPU permanent's entry points: the variant from the environment, the
// matrix brought to the host (the cuda target hands device arrays), and
// the float permanent computed on a GPU engine by the chunk driver.
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "../chunk_plan.h"
#include "../distributed_sum.h"
#include "../engine_driver.h"
#include "cpu_fallback.h"
#include "gpu_engine.h"
#include "tcc/runtime/distributed.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/permanent_gpu.h"

namespace tcc::rt {

const char* gpuPermanentVariantName(GpuPermanentVariant variant) {
  switch (variant) {
    case GpuPermanentVariant::Baseline: return "baseline";
    case GpuPermanentVariant::PureReg: return "purereg";
    case GpuPermanentVariant::Hybrid: return "hybrid";
  }
  return "?";
}

const char* gpuPermanentVariantTitle(GpuPermanentVariant variant) {
  switch (variant) {
    case GpuPermanentVariant::Baseline: return "GPU-SparsePerman";
    case GpuPermanentVariant::PureReg: return "CodeGen-PureReg";
    case GpuPermanentVariant::Hybrid: return "CodeGen-Hybrid";
  }
  return "?";
}

std::optional<GpuPermanentVariant> parseGpuPermanentVariant(std::string_view text) {
  for (auto variant : {GpuPermanentVariant::Baseline, GpuPermanentVariant::PureReg, GpuPermanentVariant::Hybrid})
    if (text == gpuPermanentVariantName(variant)) return variant;
  return std::nullopt;
}

GpuPermanentVariant gpuPermanentVariantFromEnvironment() {
  const char* text = std::getenv("TCC_PERMANENT_GPU_VARIANT");
  if (!text || !*text) return GpuPermanentVariant::Hybrid;
  if (auto variant = parseGpuPermanentVariant(text)) return *variant;
  throw std::invalid_argument(std::string("perm: TCC_PERMANENT_GPU_VARIANT is '") + text +
                              "'; expected hybrid, purereg or baseline");
}

namespace {

using permanent::PermanentError;

double permanentOnGpu(const tcc_tensor& matrix, GpuPermanentVariant variant, const PermanentOptions& options) {
  permanent::SortedColumnMatrix sorted = permanent::readSortedColumnMatrix(matrix);
  return permanent::floatPermanentOnEngine(
      std::move(sorted), permanent::gpu::gpuCheckpointMode(variant), options,
      [&](const permanent::SortedColumnMatrix& equilibrated) -> std::unique_ptr<permanent::RangeEngine<double>> {
        // An MPI rank without a GPU sums the same chunks on its CPU cores.
        if (permanent::distributedRunActive() && cuda::deviceCount() == 0)
          return permanent::gpu::rankEngineWithoutGpu(equilibrated, variant, options);
        auto engine = std::make_unique<permanent::gpu::GpuRangeEngine>(
            equilibrated, variant, permanent::planChunks(equilibrated.n).chunkSize);
        if (options.progress == ProgressMode::On) {
          const RankPlacement placement = currentPlacement();
          if (placement.size > 1)
            std::fprintf(stderr, "perm: rank %d, device %d: %s\n", placement.rank, cuda::device().ordinal,
                         engine->description().c_str());
          else
            std::fprintf(stderr, "perm: %s\n", engine->description().c_str());
        }
        return engine;
      });
}

// A device tensor's arrays copied to the host, and the tcc_tensor over them.
class HostCopy {
 public:
  explicit HostCopy(const tcc_tensor& device) : view_(device) {
    int64_t positions = 1;
    for (int level = 0; level < device.order; ++level) {
      const tcc_level& source = device.levels[level];
      tcc_level& target = view_.levels[level];
      switch (source.kind) {
        case TCC_LEVEL_DENSE: positions *= source.size; break;
        case TCC_LEVEL_COMPRESSED: {
          auto& pos = positionArrays_.emplace_back(positions + 1);
          cuda::copyToHost(pos.data(), source.pos, sizeof(long long) * pos.size());
          target.pos = pos.data();
          positions = pos.back();
          auto& crd = coordinateArrays_.emplace_back(positions);
          cuda::copyToHost(crd.data(), source.crd, sizeof(int) * crd.size());
          target.crd = crd.data();
          break;
        }
        case TCC_LEVEL_SINGLETON: {
          auto& crd = coordinateArrays_.emplace_back(positions);
          cuda::copyToHost(crd.data(), source.crd, sizeof(int) * crd.size());
          target.crd = crd.data();
          break;
        }
        default: throw PermanentError("perm: the matrix has a level kind the GPU permanent cannot read");
      }
    }
    const size_t bytes = device.datatype == TCC_FLOAT32 || device.datatype == TCC_INT32 ? 4
                         : device.datatype == TCC_FLOAT16                               ? 2
                                                                                        : 8;
    values_.resize(bytes * static_cast<size_t>(std::max<long long>(0, device.vals_size)));
    cuda::copyToHost(values_.data(), device.vals, values_.size());
    view_.vals = values_.data();
  }
  const tcc_tensor& view() const { return view_; }

 private:
  tcc_tensor view_;
  std::vector<std::vector<long long>> positionArrays_;
  std::vector<std::vector<int>> coordinateArrays_;
  std::vector<unsigned char> values_;
};

thread_local std::string lastError;

}  // namespace

double gpuPermanent(const tcc_tensor& matrix, GpuPermanentVariant variant, const PermanentOptions& options) {
  return permanentOnGpu(matrix, variant, options);
}

}  // namespace tcc::rt

extern "C" int tcc_permanent_cuda(tcc_tensor* result, const tcc_tensor* matrix) {
  using namespace tcc::rt;
  return permanentStatusOf(lastError, [&] {
    if (result->order != 0 || !result->vals) throw std::runtime_error("perm: the result must be a scalar");
    if (result->datatype == TCC_INT32 || result->datatype == TCC_INT64)
      throw std::runtime_error(
          "perm: exact mode (an integer result) runs on the cpu target only: the GPU kernels sum in float64; "
          "declare the result float64, or run with --target cpu for the exact value");
    if (result->datatype != TCC_FLOAT64 && result->datatype != TCC_FLOAT32)
      throw std::runtime_error("perm: the result's element type has no arithmetic (float16 is storage only)");
    const GpuPermanentVariant variant = gpuPermanentVariantFromEnvironment();
    HostCopy host(*matrix);
    const double value = permanentOnGpu(host.view(), variant, permanent::currentPermanentOptions());
    if (result->datatype == TCC_FLOAT64) {
      cuda::copyToDevice(result->vals, &value, sizeof value);
    } else {
      const float single = static_cast<float>(value);
      cuda::copyToDevice(result->vals, &single, sizeof single);
    }
  });
}

extern "C" const char* tcc_permanent_cuda_last_error(void) { return tcc::rt::lastError.c_str(); }
