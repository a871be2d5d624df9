#include "digest.h"

namespace tcc::jit {

std::string fnv1a128Hex(std::string_view bytes) {
  using Word = unsigned __int128;
  const Word prime = (Word(1) << 88) | 0x13B;
  Word hash = (Word(0x6c62272e07bb0142ULL) << 64) | 0x62b821756295c58dULL;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= prime;
  }
  static const char digits[] = "0123456789abcdef";
  std::string hex(32, '0');
  for (int i = 31; i >= 0; --i, hash >>= 4) hex[i] = digits[static_cast<unsigned>(hash & 0xF)];
  return hex;
}

}  // namespace tcc::jit
