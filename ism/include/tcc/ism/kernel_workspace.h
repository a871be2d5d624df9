// The workspaces behind the kernel entry points (kernel_api.h): one
// interface over every policy and order, so that the runtime and policies
// registered by a program (policy_registry.h) build the same objects.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ism/ism.h"

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
  virtual int mergeParts() { return 0; }
  virtual void mergePart(int) {}
  // Sorts, merges and compresses what was inserted since the last drain
  // into `drained`, and empties the workspace (kernel_api.h).
  virtual void drain() { throw std::logic_error("ism: a workspace per thread cannot be drained"); }
  // Insert through a virtual call: the entry point of registered policies
  // (tcc_ism_insert_user_N); coordinates in mode order.
  virtual int insertAny(const int* coordinates, double value) noexcept = 0;
  CompressedTensor drained;
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
  void drain() override {
    throwIfFailed();
    std::vector<LevelSpec> levels(N, LevelSpec{LevelKind::Compressed, true});
    drained = compress(workspace.drain(), workspace.shape(), levels);
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
