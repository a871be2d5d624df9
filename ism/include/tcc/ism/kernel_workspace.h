// The workspaces behind the kernel entry points (kernel_api.h): one
// interface over every policy and order, so that the runtime and policies
// registered by a program (policy_registry.h) build the same objects.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ism/ism.h"

struct tcc_tensor;

namespace tcc::ism::kernel {

class AnyWorkspace {
 public:
  virtual ~AnyWorkspace() = default;
  virtual CompressedTensor finish(const std::vector<LevelSpec>& levels) = 0;
  virtual int order() const = 0;
  // The per-thread workspaces of a parallel producer; null for one workspace.
  virtual void** threadHandles() { return nullptr; }
  // Finishing per-thread workspaces on the caller's threads (kernel_api.h);
  // one workspace has nothing to do ahead of finish.
  virtual int threadCount() const { return 1; }
  virtual void finishThread(int) {}
  virtual int mergeParts(tcc_tensor*, int /*uniqueMask*/) { return 0; }
  virtual void mergePart(int) {}
  virtual void allocateOutput() {}
  virtual void fillPart(int) {}
  virtual void ownedRanges(const long long* /*cuts*/, int /*parts*/) {}
  // Workspaces that assemble the output themselves (in parts, on several
  // threads) do so here and return true; the others leave it to finish.
  virtual bool finishInto(tcc_tensor&, const std::vector<LevelSpec>&) { return false; }
  // Sorts, merges and compresses what was inserted since the last drain
  // into `drained`, and empties the workspace (kernel_api.h).
  virtual void drain() { throw std::logic_error("ism: a workspace per thread cannot be drained"); }
  // Insert through a virtual call: the entry point of registered policies
  // (tcc_ism_insert_user_N); coordinates in mode order.
  virtual int insertAny(const int* coordinates, double value) noexcept = 0;
  // Why an insert or a drain failed (of any thread's workspace); empty if none did.
  virtual std::string failed() const = 0;
  // The output's arrays from this size in 2 MB pages (0: never; the
  // kernel's create flag 4, tcc/runtime/array_alloc.h).
  long long hugePageMinBytes = 0;
  // For TCC_ISM_PROFILE: when the workspace was made, and how often its
  // accumulation arrays were sorted and merged into the all array so far.
  const std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
  virtual std::size_t merges() const { return 0; }
  // What the last drain produced: unique compressed levels in level order
  // (pos of level l has one entry per position of level l - 1, plus one),
  // kept between drains so that a workspace drained per row allocates
  // only when a row outgrows every earlier one.
  struct Drained {
    std::vector<int64_t> pos[kMaxOrder];
    std::vector<int32_t> crd[kMaxOrder];
    std::vector<double> vals;
  } drained;
};

template <template <int> class Policy, int N>
class TypedWorkspace final : public AnyWorkspace {
 public:
  TypedWorkspace(const Shape<N>& shape, const WorkspaceOptions& options) : workspace(shape, options) {}
  CompressedTensor finish(const std::vector<LevelSpec>& levels) override {
    throwIfFailed();
    return compress(workspace.finish(), workspace.shape(), levels);
  }
  int order() const override { return N; }
  int insertAny(const int* coordinates, double value) noexcept override {
    try {
      Coordinates<N> crd{};
      for (int m = 0; m < N; ++m) crd[m] = coordinates[m];
      workspace.insert(crd, value);
      return 0;
    } catch (const std::exception& error) {
      fail(error.what());
      return 1;
    }
  }
  std::string failed() const override { return failure; }
  std::size_t merges() const override { return workspace.merges(); }
  void drain() override {
    if (!failure.empty()) {
      // Empty levels, so that a kernel that reads them before it reports
      // the failure (one on threads, say) reads nothing.
      for (int l = 0; l < N; ++l) {
        drained.pos[l].assign(l == 0 ? 2 : 1, 0);
        drained.crd[l].clear();
      }
      drained.vals.clear();
      throw std::runtime_error(failure);
    }
    const AllArray<N>& all = workspace.drain();
    const auto& coordinates = all.coordinates();
    const auto& values = all.values();
    for (int l = 0; l < N; ++l) {
      drained.pos[l].assign(2, 0);
      drained.pos[l].resize(l == 0 ? 2 : 1);
      drained.crd[l].clear();
    }
    drained.vals.assign(values.begin(), values.end());
    // Components come sorted and distinct: each starts new positions from
    // the first level where it differs from the one before.
    for (std::size_t c = 0; c < coordinates.size(); ++c) {
      int first = 0;
      if (c > 0)
        while (first < N - 1 && coordinates[c][first] == coordinates[c - 1][first]) ++first;
      for (int l = first; l < N; ++l) {
        drained.crd[l].push_back(coordinates[c][l]);
        ++drained.pos[l].back();
        if (l + 1 < N) drained.pos[l + 1].push_back(drained.pos[l + 1].back());
      }
    }
    workspace.restart();
  }
  // A failed insert is kept (kernels do not stop in the middle of a
  // thread loop) and reported by finish.
  void fail(const char* reason) {
    if (failure.empty()) failure = reason;
  }
  void throwIfFailed() const {
    if (!failure.empty()) throw std::runtime_error(failure);
  }
  Workspace<Policy, N> workspace;
  std::string failure;
};

// A shape from the kernel's arrays (dims in mode order; level l stores
// mode levelOrder[l]); an empty mode gets size 1, receiving no inserts.
template <int N>
Shape<N> kernelShape(const int* dims, const int* levelOrder) {
  Shape<N> shape;
  for (int m = 0; m < N; ++m) {
    shape.modeDims[m] = dims[m] > 0 ? dims[m] : 1;
    shape.levelOrder[m] = levelOrder[m];
  }
  return shape;
}

}  // namespace tcc::ism::kernel
