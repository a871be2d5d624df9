// Internal: the 128-bit FNV-1a hash of a byte string, as 32 hex digits.
// Names cache files; entries also store their full key, so a collision costs
// a recompile, never a wrong kernel.
#ifndef TCC_JIT_SRC_DIGEST_H
#define TCC_JIT_SRC_DIGEST_H

#include <string>
#include <string_view>

namespace tcc::jit {

std::string fnv1a128Hex(std::string_view bytes);

}  // namespace tcc::jit

#endif  // TCC_JIT_SRC_DIGEST_H
