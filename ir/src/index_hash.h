// Hash mixing shared by the index notation nodes (internal).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tcc::ir::detail {

inline size_t hashCombine(size_t seed, size_t value) {
  // boost::hash_combine's mixing, widened to 64 bits.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

}  // namespace tcc::ir::detail
