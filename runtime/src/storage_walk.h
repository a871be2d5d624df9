// Visiting every stored position of a tensor with its coordinates.
#pragma once

#include <cstdint>

#include "tcc/runtime/nm.h"
#include "tcc/runtime/tensor.h"

namespace tcc::rt::detail {

// Whether a zero at a stored position may be left out of a coordinate list
// (a file, a printout, another format): only when every level is dense, so
// that positions say nothing about structure. Entries at compressed or
// singleton levels, and dense blocks under them, are stored on purpose (a
// mask, a symbolic pattern) and are kept, zeros included, as in scipy and
// TACO. A scalar's one value is always kept.
inline bool zerosAreImplicit(const Tensor& tensor) {
  return tensor.order() > 0 && tensor.format().isAllDense();
}

// Calls visit(const int32_t* coordByMode, int64_t position) for each
// position of the last level, in storage order.
template <typename Visit>
void forEachStoredPosition(const Tensor& tensor, Visit&& visit) {
  if (tensor.format().isNM()) {
    forEachNmEntry(tensor, visit);
    return;
  }
  int order = tensor.order();
  int32_t coord[TCC_MAX_ORDER > 0 ? TCC_MAX_ORDER : 1] = {};
  const TensorFormat& format = tensor.format();
  auto descend = [&](auto&& self, int level, int64_t parent) -> void {
    if (level == order) {
      visit(static_cast<const int32_t*>(coord), parent);
      return;
    }
    int mode = format.modeOfLevel(level);
    const LevelStorage& storage = tensor.levelStorage(level);
    switch (format.levels[level].kind) {
      case TCC_LEVEL_DENSE: {
        int32_t size = tensor.levelSize(level);
        for (int32_t c = 0; c < size; ++c) {
          coord[mode] = c;
          self(self, level + 1, parent * size + c);
        }
        return;
      }
      case TCC_LEVEL_COMPRESSED:
        for (int64_t p = storage.pos[parent]; p < storage.pos[parent + 1]; ++p) {
          coord[mode] = storage.crd[p];
          self(self, level + 1, p);
        }
        return;
      case TCC_LEVEL_SINGLETON:
        coord[mode] = storage.crd[parent];
        self(self, level + 1, parent);
        return;
    }
  };
  descend(descend, 0, 0);
}

}  // namespace tcc::rt::detail
