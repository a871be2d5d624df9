// A tensor's arrays on the device: each level's pos and crd, and the values.
#include "tcc/runtime/cuda.h"

namespace tcc::rt::cuda {

size_t bytesPerValue(int datatype) {
  switch (datatype) {
    case TCC_FLOAT32: case TCC_INT32: return 4;
    case TCC_FLOAT16: return 2;
    default: return 8;
  }
}

DeviceTensor::DeviceTensor(const tcc_tensor& host) : view_(host) {
  buffers_.reserve(2 * TCC_MAX_ORDER + 1);
  auto copy = [&](const void* data, size_t bytes) {
    buffers_.emplace_back(bytes);
    buffers_.back().upload(data, bytes);
    return buffers_.back().get();
  };
  long long positions = 1;  // positions of the level above
  for (int level = 0; level < host.order; ++level) {
    const tcc_level& source = host.levels[level];
    tcc_level& target = view_.levels[level];
    if (source.kind == TCC_LEVEL_DENSE) {
      positions *= source.size;
    } else if (source.kind == TCC_LEVEL_COMPRESSED) {
      long long children = source.pos[positions];
      target.pos = static_cast<long long*>(copy(source.pos, sizeof(long long) * (positions + 1)));
      target.crd = static_cast<int*>(copy(source.crd, sizeof(int) * children));
      positions = children;
    } else if (source.kind == TCC_LEVEL_SINGLETON) {
      target.crd = static_cast<int*>(copy(source.crd, sizeof(int) * positions));
    } else if (source.kind == TCC_LEVEL_NM) {
      // The index matrix D: w x q, w = ceil(k / M) * N, q = ceil(n / L).
      long long windows = (host.levels[0].size + source.nm_m - 1) / source.nm_m;
      long long groups = (source.size + source.nm_l - 1) / source.nm_l;
      target.crd = static_cast<int*>(copy(source.crd, sizeof(int) * windows * source.nm_n * groups));
    } else {
      throw CudaError("level " + std::to_string(level + 1) + " of a tensor has a kind the GPU runtime cannot copy");
    }
  }
  valueBytes_ = bytesPerValue(host.datatype) * static_cast<size_t>(host.vals_size);
  view_.vals = copy(host.vals, valueBytes_);
  values_ = &buffers_.back();
}

void DeviceTensor::zeroValues() { values_->zero(); }

void DeviceTensor::downloadValues(const tcc_tensor& host) const { values_->download(host.vals, valueBytes_); }

}  // namespace tcc::rt::cuda
