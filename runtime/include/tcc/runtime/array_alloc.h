/* Tensor arrays, large ones in 2 MB pages: the one allocator of the
 * runtime's storage (MallocArray), the sparse-workspace runtime's outputs
 * and generated kernels (lowering's prelude pastes this file in).
 *
 * An array of at least `min_bytes` bytes (min_bytes > 0) is allocated
 * 2 MB-aligned, its size rounded up to whole 2 MB pages, and advised
 * MADV_HUGEPAGE before it is touched, so that transparent huge pages in
 * "madvise" mode (or "always") back it with 2 MB pages; smaller arrays, a
 * min_bytes of 0 or less, and other systems than Linux get plain malloc.
 * Where the system refuses (no memory at that alignment, or a kernel
 * without transparent huge pages: madvise fails) the array is still
 * allocated, in 4 KB pages. Every array comes from the malloc family, so
 * free() frees it and realloc() may grow it (losing the alignment, which
 * tcc_array_realloc keeps): the kernel ABI (abi.h) is unchanged.
 *
 * Plain C with no includes when TCC_ARRAY_ALLOC_DECLARED is defined (the
 * prelude declares malloc, posix_memalign, madvise, memcpy and memset
 * itself); otherwise it includes the system headers it needs.
 */
#ifndef TCC_RUNTIME_ARRAY_ALLOC_H
#define TCC_RUNTIME_ARRAY_ALLOC_H

#ifndef TCC_ARRAY_ALLOC_DECLARED
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#endif

/* The size of a huge page, and the default threshold: 4 MB, two huge
 * pages (rounding up to whole pages then adds at most a third to an
 * array's memory, and below it the 4 KB entries of a core's second-level
 * TLB, 1.5-2 K of them, 6-8 MB, already cover a few such arrays). */
#define TCC_HUGE_PAGE_SIZE 2097152LL
#define TCC_HUGE_PAGE_DEFAULT_MIN_BYTES 4194304LL

#if defined(__linux__)
#ifdef MADV_HUGEPAGE
#define TCC_MADV_HUGEPAGE MADV_HUGEPAGE
#else
#define TCC_MADV_HUGEPAGE 14 /* Linux's value, where the headers predate it */
#endif
#endif

/* Whether an array of `bytes` bytes goes to 2 MB pages under `min_bytes`. */
static inline int tcc_array_is_huge(long long bytes, long long min_bytes) {
#if defined(__linux__)
  return min_bytes > 0 && bytes >= min_bytes;
#else
  (void)bytes;
  (void)min_bytes;
  return 0;
#endif
}

/* `bytes` bytes (at least one), uninitialised; NULL when out of memory. */
static inline void* tcc_array_alloc(long long bytes, long long min_bytes) {
  if (bytes < 1) bytes = 1;
#if defined(__linux__)
  if (tcc_array_is_huge(bytes, min_bytes)) {
    const long long rounded = (bytes + TCC_HUGE_PAGE_SIZE - 1) / TCC_HUGE_PAGE_SIZE * TCC_HUGE_PAGE_SIZE;
    void* array = 0;
    if (posix_memalign(&array, (size_t)TCC_HUGE_PAGE_SIZE, (size_t)rounded) == 0) {
      /* Refused (EINVAL without transparent huge pages): 4 KB pages. */
      (void)madvise(array, (size_t)rounded, TCC_MADV_HUGEPAGE);
      return array;
    }
  }
#endif
  return malloc((size_t)bytes);
}

/* The same, every byte 0. (A large array is zeroed by a pass over it:
 * memory from posix_memalign may be reused, not fresh from the system.) */
static inline void* tcc_array_alloc_zeroed(long long bytes, long long min_bytes) {
  if (!tcc_array_is_huge(bytes, min_bytes)) return calloc((size_t)(bytes < 1 ? 1 : bytes), 1);
  void* array = tcc_array_alloc(bytes, min_bytes);
  if (array) memset(array, 0, (size_t)bytes);
  return array;
}

/* Grows or shrinks `array` (NULL: a new one), whose first `kept_bytes`
 * bytes are kept, to `bytes` bytes. An array that reaches `min_bytes` moves
 * to a new one in 2 MB pages (a copy of the kept bytes, where realloc might
 * have moved its pages for free but leaves them 4 KB pages); smaller ones
 * are realloc'd. On failure NULL, and `array` is left as it was. */
static inline void* tcc_array_realloc(void* array, long long kept_bytes, long long bytes, long long min_bytes) {
  if (bytes < 1) bytes = 1;
  if (!tcc_array_is_huge(bytes, min_bytes)) return realloc(array, (size_t)bytes);
  if (!array) return tcc_array_alloc(bytes, min_bytes);
  void* moved = tcc_array_alloc(bytes, min_bytes);
  if (!moved) return 0;
  if (kept_bytes > bytes) kept_bytes = bytes;
  if (kept_bytes > 0) memcpy(moved, array, (size_t)kept_bytes);
  free(array);
  return moved;
}

#endif /* TCC_RUNTIME_ARRAY_ALLOC_H */
