// Visiting every stored position of a tensor with its coordinates.
#pragma once

#include <cstdint>

#include "tcc/runtime/tensor.h"

namespace tcc::rt::detail {

// Calls visit(const int32_t* coordByMode, int64_t position, bool underDense)
// for each position of the last level, in storage order. underDense says
// whether some level on the path is dense (so the entry may be implicit).
template <typename Visit>
void forEachStoredPosition(const Tensor& tensor, Visit&& visit) {
  int order = tensor.order();
  int32_t coord[TCC_MAX_ORDER > 0 ? TCC_MAX_ORDER : 1] = {};
  const TensorFormat& format = tensor.format();
  auto descend = [&](auto&& self, int level, int64_t parent, bool underDense) -> void {
    if (level == order) {
      visit(static_cast<const int32_t*>(coord), parent, underDense);
      return;
    }
    int mode = format.modeOfLevel(level);
    const LevelStorage& storage = tensor.levelStorage(level);
    switch (format.levels[level].kind) {
      case TCC_LEVEL_DENSE: {
        int32_t size = tensor.levelSize(level);
        for (int32_t c = 0; c < size; ++c) {
          coord[mode] = c;
          self(self, level + 1, parent * size + c, true);
        }
        return;
      }
      case TCC_LEVEL_COMPRESSED:
        for (int64_t p = storage.pos[parent]; p < storage.pos[parent + 1]; ++p) {
          coord[mode] = storage.crd[p];
          self(self, level + 1, p, underDense);
        }
        return;
      case TCC_LEVEL_SINGLETON:
        coord[mode] = storage.crd[parent];
        self(self, level + 1, parent, underDense);
        return;
    }
  };
  descend(descend, 0, 0, false);
}

}  // namespace tcc::rt::detail
