// Definitions of the C facade (c_api.h). Include from exactly one library
// translation unit: it defines the extern "C" functions, which dispatch to
// the C++ template core through one virtual call per operation.
#pragma once

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "tcc/ism/c_api.h"
#include "tcc/ism/ism.h"

namespace tcc::ism::capi {

class AnyWorkspace {
 public:
  virtual ~AnyWorkspace() = default;
  virtual int order() const = 0;
  virtual void insert(const int* coords, double value) = 0;
  virtual CompressedTensor finish(const std::vector<LevelSpec>& levels) = 0;
  virtual long long size() const = 0;
};

template <template <int> class Policy, int N>
class WorkspaceOfOrder final : public AnyWorkspace {
 public:
  WorkspaceOfOrder(const Shape<N>& shape, const WorkspaceOptions& options)
      : workspace_(shape, options) {}
  int order() const override { return N; }
  void insert(const int* coords, double value) override {
    Coordinates<N> crd;
    for (int m = 0; m < N; ++m) crd[m] = coords[m];
    workspace_.insert(crd, value);
  }
  CompressedTensor finish(const std::vector<LevelSpec>& levels) override {
    validateLevels(levels, N);
    return compress(workspace_.finish(), workspace_.shape(), levels);
  }
  long long size() const override { return static_cast<long long>(workspace_.allArray().size()); }

 private:
  Workspace<Policy, N> workspace_;
};

inline std::string& lastError() {
  thread_local std::string message;
  return message;
}

template <int N>
std::unique_ptr<AnyWorkspace> makeOfOrder(const int* dims, const int* levelOrder, int policy,
                                          const WorkspaceOptions& options) {
  Shape<N> shape;
  for (int m = 0; m < N; ++m) {
    shape.modeDims[m] = dims[m];
    shape.levelOrder[m] = levelOrder ? levelOrder[m] : m;
  }
  switch (policy) {
    case TCC_ISM_BUCKET: return std::make_unique<WorkspaceOfOrder<BucketPolicy, N>>(shape, options);
    case TCC_ISM_HASH: return std::make_unique<WorkspaceOfOrder<HashPolicy, N>>(shape, options);
    case TCC_ISM_COORD: return std::make_unique<WorkspaceOfOrder<CoordPolicy, N>>(shape, options);
    case TCC_ISM_MAP: return std::make_unique<WorkspaceOfOrder<MapPolicy, N>>(shape, options);
    case TCC_ISM_VECTOR: return std::make_unique<WorkspaceOfOrder<VectorPolicy, N>>(shape, options);
  }
  throw std::invalid_argument("ism: unknown policy id " + std::to_string(policy));
}

template <class Out, class T>
Out* copyToMalloc(const std::vector<T>& values) {
  static_assert(sizeof(Out) == sizeof(T), "C and C++ element types must match");
  if (values.empty()) return nullptr;
  Out* out = static_cast<Out*>(std::malloc(values.size() * sizeof(T)));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, values.data(), values.size() * sizeof(T));
  return out;
}

}  // namespace tcc::ism::capi

struct tcc_ism_workspace {
  std::unique_ptr<tcc::ism::capi::AnyWorkspace> workspace;
  bool finished = false;
};

extern "C" tcc_ism_workspace* tcc_ism_create(int order, const int* dims, const int* level_order,
                                             int policy, int flags, long long capacity,
                                             long long nnz_hint) {
  using namespace tcc::ism;
  try {
    if (dims == nullptr) throw std::invalid_argument("ism: dims is null");
    if (capacity < 0 || nnz_hint < 0) {
      throw std::invalid_argument("ism: capacity and nnz_hint must not be negative");
    }
    WorkspaceOptions options;
    options.pipelining = (flags & TCC_ISM_PIPELINE) != 0;
    options.doubleBuffering = (flags & TCC_ISM_DOUBLE_BUFFER) != 0;
    options.capacity = static_cast<std::size_t>(capacity);
    options.nnzHint = static_cast<std::size_t>(nnz_hint);
    auto handle = std::make_unique<tcc_ism_workspace>();
    switch (order) {
      case 1: handle->workspace = capi::makeOfOrder<1>(dims, level_order, policy, options); break;
      case 2: handle->workspace = capi::makeOfOrder<2>(dims, level_order, policy, options); break;
      case 3: handle->workspace = capi::makeOfOrder<3>(dims, level_order, policy, options); break;
      case 4: handle->workspace = capi::makeOfOrder<4>(dims, level_order, policy, options); break;
      default:
        throw std::invalid_argument("ism: order must be 1 to 4, got " + std::to_string(order));
    }
    return handle.release();
  } catch (const std::exception& e) {
    capi::lastError() = e.what();
    return nullptr;
  }
}

extern "C" int tcc_ism_insert(tcc_ism_workspace* workspace, const int* coords, double value) {
  try {
    if (workspace == nullptr || coords == nullptr) {
      throw std::invalid_argument("ism: insert with a null workspace or coordinates");
    }
    workspace->workspace->insert(coords, value);
    return 0;
  } catch (const std::exception& e) {
    tcc::ism::capi::lastError() = e.what();
    return 1;
  }
}

extern "C" int tcc_ism_finish(tcc_ism_workspace* workspace, const int* level_kinds,
                              const int* level_unique, tcc_ism_level_arrays* levels,
                              double** vals, long long* vals_size) {
  using namespace tcc::ism;
  std::vector<tcc_ism_level_arrays> written;
  try {
    if (workspace == nullptr || level_kinds == nullptr || levels == nullptr || vals == nullptr ||
        vals_size == nullptr) {
      throw std::invalid_argument("ism: finish with a null argument");
    }
    if (workspace->finished) throw std::logic_error("ism: finish called twice");
    int order = workspace->workspace->order();
    std::vector<LevelSpec> specs;
    for (int l = 0; l < order; ++l) {
      if (level_kinds[l] < 0 || level_kinds[l] > 2) {
        throw std::invalid_argument("ism: level " + std::to_string(l) + " has kind " +
                                    std::to_string(level_kinds[l]) +
                                    "; expected 0 (dense), 1 (compressed) or 2 (singleton)");
      }
      specs.push_back({static_cast<LevelKind>(level_kinds[l]),
                       level_unique == nullptr || level_unique[l] != 0});
    }
    CompressedTensor tensor = workspace->workspace->finish(specs);
    workspace->finished = true;
    for (int l = 0; l < order; ++l) {
      const CompressedLevel& level = tensor.levels[l];
      tcc_ism_level_arrays out{nullptr, 0, nullptr, 0};
      written.push_back(out);
      written.back().pos = capi::copyToMalloc<long long>(level.pos);
      written.back().pos_size = static_cast<long long>(level.pos.size());
      written.back().crd = capi::copyToMalloc<int>(level.crd);
      written.back().crd_size = static_cast<long long>(level.crd.size());
    }
    double* values = capi::copyToMalloc<double>(tensor.vals);
    for (int l = 0; l < order; ++l) levels[l] = written[l];
    *vals = values;
    *vals_size = static_cast<long long>(tensor.vals.size());
    return 0;
  } catch (const std::exception& e) {
    for (auto& level : written) {
      std::free(level.pos);
      std::free(level.crd);
    }
    capi::lastError() = e.what();
    return 1;
  }
}

extern "C" long long tcc_ism_size(const tcc_ism_workspace* workspace) {
  return workspace == nullptr ? 0 : workspace->workspace->size();
}

extern "C" void tcc_ism_destroy(tcc_ism_workspace* workspace) { delete workspace; }

extern "C" const char* tcc_ism_last_error(void) { return tcc::ism::capi::lastError().c_str(); }
