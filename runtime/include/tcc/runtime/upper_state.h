// The upper halves of the vector registers, cleared on entry to the
// runtime's entry points that generated kernels call.
//
// The runtime libraries are compiled for baseline x86-64; kernels are
// compiled for the host (-march=native). A kernel that leaves the upper
// halves of the ymm/zmm registers dirty across a call makes every SSE
// instruction of the callee merge with them, until something clears the
// state: an insert loop into the ISM then ran 10x slower (A = B * B through
// a dense row and a bucket workspace on dwt_992, 15.2 ms against 1.5 ms),
// because g++ 12 left out the vzeroupper on one path into the loop of
// calls (entered from an inlined sort after the previous row's vectorized
// copy). The ABI makes the upper halves the caller's to save, so a callee
// may clear them; where the CPU has no AVX there is nothing to clear.
#pragma once

namespace tcc::rt {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX__)
inline void clearVectorUpperState() { __builtin_ia32_vzeroupper(); }
#else
__attribute__((target("avx"))) inline void vzeroupperOnAvx() { __builtin_ia32_vzeroupper(); }
inline void clearVectorUpperState() {
  static const bool hasAvx = __builtin_cpu_supports("avx");
  if (hasAvx) vzeroupperOnAvx();
}
#endif
#else
inline void clearVectorUpperState() {}
#endif

}  // namespace tcc::rt
