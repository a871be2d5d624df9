#include "tcc_abi_text.h"
#include "tcc/lowering/codegen.h"

namespace tcc::lowering {

namespace {

constexpr const char* kPreludeDeclarations = R"tcc(
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned long size_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;

extern "C" {
void* malloc(size_t size);
void* calloc(size_t count, size_t size);
void* realloc(void* pointer, size_t size);
void free(void* pointer);
void* memset(void* destination, int value, size_t size);
void* memcpy(void* destination, const void* source, size_t size);
// OpenMP, for kernels with per-thread workspaces (linked only when used).
int omp_get_thread_num(void);
int omp_get_max_threads(void);
int sched_yield(void);
int posix_memalign(void** pointer, size_t alignment, size_t size);
// The builtins abs, sqrt and exp (computed in double).
double fabs(double x);
double sqrt(double x);
double exp(double x);
#if defined(__linux__)
int madvise(void* address, size_t length, int advice);
#endif
}
#define TCC_ARRAY_ALLOC_DECLARED 1

template <typename T> static inline T tcc_min(T a, T b) { return a < b ? a : b; }
template <typename T> static inline T tcc_max(T a, T b) { return a < b ? b : a; }

// A float16 input's value (IEEE binary16 bits) as a float, exactly.
static inline float tcc_half_to_float(uint16_t half) {
  const uint32_t sign = (uint32_t)(half & 0x8000u) << 16, exponent = (half >> 10) & 0x1fu, fraction = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (fraction << 13);  // infinity, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (fraction << 13);
  } else {
    float subnormal = (float)fraction * 5.9604644775390625e-8f;  // fraction * 2^-24, exact
    memcpy(&bits, &subnormal, 4);
    bits |= sign;
  }
  float value;
  memcpy(&value, &bits, 4);
  return value;
}

// Sorts n coordinates in place: insertion sort for short runs, otherwise an
// in-place quicksort with median-of-three pivots.
static inline void tcc_sort_coordinates(int32_t* a, int64_t n) {
  while (n > 16) {
    int32_t x = a[0], y = a[n / 2], z = a[n - 1];
    int32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    int64_t i = 0, j = n - 1;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) { int32_t t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (j + 1 < n - i) { tcc_sort_coordinates(a, j + 1); a += i; n -= i; }
    else { tcc_sort_coordinates(a + i, n - i); n = j + 1; }
  }
  for (int64_t i = 1; i < n; i++) {
    int32_t v = a[i];
    int64_t j = i - 1;
    while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; j--; }
    a[j + 1] = v;
  }
}

// The segment s of a level's pos array that holds `position`:
// pos[s] <= position < pos[s + 1], skipping empty segments.
static inline int64_t tcc_segment_of(const int64_t* pos, int64_t segments, int64_t position) {
  int64_t low = 0, high = segments;
  while (high - low > 1) {
    int64_t middle = low + (high - low) / 2;
    if (pos[middle] <= position) low = middle; else high = middle;
  }
  return low;
}

// The first position in [begin, end) of a sorted coordinate segment whose
// coordinate is at least `coordinate` (end when there is none). A segment
// wholly on one side of the coordinate costs one load.
static inline int64_t tcc_lower_bound(const int32_t* crd, int64_t begin, int64_t end, int64_t coordinate) {
  if (begin == end || crd[begin] >= coordinate) return begin;
  if (crd[end - 1] < coordinate) return end;
  while (begin < end) {
    int64_t middle = begin + (end - begin) / 2;
    if (crd[middle] < coordinate) begin = middle + 1; else end = middle;
  }
  return begin;
}

// a * b, or the int64 limit on the product's side where it would overflow
// (the products of the rules that pick a kernel per input; the launcher's
// saturatingMul in tcc/lowering/gpu_kernels.h; a template, as
// tcc_longest_segment: a unit that never calls it compiles without a warning).
template <typename = void> static inline int64_t tcc_saturating_mul(int64_t a, int64_t b) {
  const int64_t most = 9223372036854775807LL, least = -most - 1;
  if (a > 0 ? (b > 0 ? a > most / b : b < least / a) : (b > 0 ? a < least / b : (a != 0 && b < most / a)))
    return (a < 0) != (b < 0) ? least : most;
  return a * b;
}
// The most positions any of `segments` segments of a pos array holds (the
// longest row). The cuda target's host part reads a host copy of a device
// array (codegen_cuda.cpp); the lowered IR of such a host part, run on the
// CPU with its GPU loops serial, reads the array itself.
template <typename T> static inline int64_t tcc_longest_segment(const T* pos, int64_t segments) {
  int64_t longest = 0;
  for (int64_t s = 0; s < segments; ++s) longest = pos[s + 1] - pos[s] > longest ? pos[s + 1] - pos[s] : longest;
  return longest;
}

// Cuts [0, extent) into ranges of about equal work (work[c] >= 0:
// coordinate c's) and returns how many: a multiple of `threads`, at most
// `maxParts`, and fewer where the work is small beside the `scan` segments
// every range searches (each range should do at least 20 units of work per
// segment). Range p is [cuts[p], cuts[p + 1]), cuts[0] = 0 and
// cuts[parts] = extent. Each cut lies at the coordinate boundary nearest
// to where the running sum reaches p / parts of the whole; a coordinate
// heavier than a share leaves ranges after it empty. With no work at all,
// the ranges hold equal numbers of coordinates.
static inline int64_t tcc_cut_by_work(const int64_t* work, int64_t extent, int64_t maxParts, int64_t threads,
                                      int64_t scan, int64_t* cuts) {
  double total = 0;
  for (int64_t c = 0; c < extent; c++) total += (double)work[c];
  int64_t parts = maxParts;
  if (threads > 0 && scan > 0) {
    double perThread = total / (20.0 * (double)scan * (double)threads);
    int64_t multiple = perThread < 1 ? 1 : (int64_t)perThread;
    if (threads * multiple < parts) parts = threads * multiple;
  }
  if (parts < 1) parts = 1;
  cuts[0] = 0;
  if (total <= 0) {
    for (int64_t p = 1; p <= parts; p++) cuts[p] = p * extent / parts;
    return parts;
  }
  int64_t p = 1;
  double sum = 0;
  for (int64_t c = 0; c < extent && p < parts; c++) {
    double before = sum;
    sum += (double)work[c];
    for (double target = total * (double)p / (double)parts; p < parts && sum >= target;
         target = total * (double)p / (double)parts) {
      int64_t cut = target - before < sum - target ? c : c + 1;
      cuts[p] = cut < cuts[p - 1] ? cuts[p - 1] : cut;
      p++;
    }
  }
  for (; p <= parts; p++) cuts[p] = extent;
  return parts;
}

// How many iterations of a parallel loop over `iterations` rows holding
// `values` stored values a thread takes at a time: about `perChunk` values'
// worth, at least 16 rows, and few enough that every thread gets 8 chunks
// or more.
static inline int tcc_chunk_by_values(int64_t iterations, int64_t values, int64_t perChunk, int64_t threads) {
  int64_t chunk = values > 0 ? iterations * perChunk / values : 16;
  const int64_t most = threads > 0 ? iterations / (8 * threads) : iterations;
  if (chunk > most) chunk = most;
  if (chunk < 16) chunk = 16;
  return chunk > 1073741824 ? 1073741824 : (int)chunk;
}

// 1 where the compiler targets an AMD core (-march=native names a Zen
// core; GCC and Clang define these), which takes neither the streaming
// stores below nor the C++ printer's prefetching strips: 0 elsewhere.
#if defined(__znver1__) || defined(__znver2__) || defined(__znver3__) || defined(__znver4__) || defined(__znver5__)
#define TCC_AMD_ZEN 1
#else
#define TCC_AMD_ZEN 0
#endif

// Fast mode: 1 where a kernel of gather sums (SpMV, TTV) runs inputs in
// cache through its copy with reassociated row loops (a row of 8 or more
// entries as one loop the compiler vectorizes, a shorter one without a
// loop). GCC on x86 reassociates that copy by its optimize attribute, Clang
// by a reassociating pragma in the long rows' block, on x86 cores other
// than AMD's: in cache Clang's scalar row loops ran 1.14x the TACO-style
// loop on the 2-core AMD VM but 0.95-1.02x on an Intel Xeon with AVX-512,
// where the reassociated copy ran 1.26x (bench/spmv_fp, "An Intel Xeon
// with a 480 MB L3"). A build may set -DTCC_REASSOCIATED_ROWS=0 to keep the
// scalar row loops (the benchmarks' "before").
#ifndef TCC_REASSOCIATED_ROWS
#if defined(__x86_64__) && ((defined(__GNUC__) && !defined(__clang__)) || (defined(__clang__) && !TCC_AMD_ZEN))
#define TCC_REASSOCIATED_ROWS 1
#else
#define TCC_REASSOCIATED_ROWS 0
#endif
#endif

// Fast mode, streaming inputs, an AMD core with AVX-512 (Zen 4 and later):
// the row sum of vals[p] * x[crd[p]] over [p, end) in 512-bit gathers of x,
// 8 entries a step into one vector of sums, the last 0-7 entries in one
// masked step. The C++ printer calls it for rows of 64 entries or more in
// the copy of a kernel that streaming inputs run; other sums keep their
// scalar loops. Each step prefetches crd TCC_GATHER_PREFETCH entries ahead
// and vals twice, that far and TCC_GATHER_PREFETCH_AGAIN entries further,
// all into the outer caches (prefetcht1): on the 2-core Zen 4 VM the loop
// that prefetched each line of vals once moved 0.70-0.79 of a triad on
// kron(mbeacxc,bcspwr03), the one that prefetched it twice 0.75-0.81
// (bench/spmv_fp, "AVX-512 gathers on AMD cores"). 768 entries ahead, with
// the copy's short rows prefetching as far (the printer prints
// TCC_GATHER_PREFETCH there): 0.97-1.08x the copy at 512 on
// kron(mbeacxc,bcspwr03) (median 1.03 over 16 runs at load 3.5-6.4), level
// or ahead on the other scale-ups, 1.01-1.08x on 39 of 40 rows at load 2-3;
// 1024 was no better (bench/spmv_fp,
// "Prefetching 768 entries ahead in the gathers copy"). Inlined by force: GCC
// does not inline a function into one whose attributes differ, as that
// copy's do. A build may set -DTCC_GATHER_SUMS=0 to keep the scalar loops
// (the benchmarks' "before").
#ifndef TCC_GATHER_SUMS
#if TCC_AMD_ZEN && defined(__AVX512F__) && defined(__AVX512VL__) && (defined(__GNUC__) || defined(__clang__))
#define TCC_GATHER_SUMS 1
#else
#define TCC_GATHER_SUMS 0
#endif
#endif
#if TCC_GATHER_SUMS
#ifndef TCC_GATHER_PREFETCH
#define TCC_GATHER_PREFETCH 768
#endif
#ifndef TCC_GATHER_PREFETCH_AGAIN
#define TCC_GATHER_PREFETCH_AGAIN 32
#endif
typedef double tcc_v8df __attribute__((vector_size(64)));
typedef int32_t tcc_v8si __attribute__((vector_size(32)));
static inline __attribute__((always_inline)) double tcc_gather_sum(const double* vals, const int32_t* crd, const double* x,
                                                                  int64_t p, int64_t end) {
  const tcc_v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};
  tcc_v8df sum = zero;
  for (; p + 8 <= end; p += 8) {
    __builtin_prefetch((const void*)((size_t)(crd + p) + TCC_GATHER_PREFETCH * sizeof(*crd)), 0, 2);
    __builtin_prefetch((const void*)((size_t)(vals + p) + TCC_GATHER_PREFETCH * sizeof(*vals)), 0, 2);
    __builtin_prefetch(
        (const void*)((size_t)(vals + p) + (TCC_GATHER_PREFETCH + TCC_GATHER_PREFETCH_AGAIN) * sizeof(*vals)), 0, 2);
    tcc_v8si index;
    tcc_v8df values, gathered = zero;
    __builtin_memcpy(&index, crd + p, sizeof index);
    __builtin_memcpy(&values, vals + p, sizeof values);
    // A gather merges into its destination: GCC 12 gathered into the last
    // step's register, which chained every gather on the one before.
    __asm__ volatile("" : "+v"(gathered));
    sum += values * __builtin_ia32_gathersiv8df(gathered, x, index, 0xFF, 8);
  }
  if (p < end) {
    const unsigned char lanes = (unsigned char)((1u << (end - p)) - 1);
    const tcc_v8si none = {0, 0, 0, 0, 0, 0, 0, 0};
#if defined(__clang__)
    const tcc_v8si index = __builtin_ia32_loaddqusi256_mask((const tcc_v8si*)(crd + p), none, lanes);
#else
    const tcc_v8si index = __builtin_ia32_loaddqusi256_mask(crd + p, none, lanes);
#endif
    const tcc_v8df values = __builtin_ia32_loadupd512_mask(vals + p, zero, lanes);
    sum += values * __builtin_ia32_gathersiv8df(zero, x, index, lanes, 8);
  }
  return ((sum[0] + sum[4]) + (sum[2] + sum[6])) + ((sum[1] + sum[5]) + (sum[3] + sum[7]));
}
#endif

// Stores past the caches (non-temporal, no read of the line first) for a
// sparse output's appended coordinates and values, in the copy of a kernel
// that its entry point calls when the inputs hold more than
// TCC_STREAMING_STORE_VALUES stored values in all (-1: never), and there
// only into arrays whose pages were resident when allocated (not the fresh
// pages the operating system zeroes during the call, whose lines the zeroing
// leaves in cache; TCC_STREAMING_STORES_ON_FRESH_PAGES=1: into those too);
// each thread fences its own before its results are read. A plain store
// where the target has none. By default on x86 cores other than AMD's (on
// the 2-core Zen VM one thread ran them level or slower; bench/sparse_add),
// from 4 M values (about 48 MB of CSR output).
// The same for a kernel whose streaming stores all copy whole chunks out
// (tcc_stream_bytes: a row-parallel output in one pass), on AMD cores too:
// on the 2-core Zen VM (GCC) the chunks streamed took the one pass from
// 0.75-0.89x the two-pass kernel to 0.96-1.28x at two threads, and from
// 0.76-0.85x to 0.88-1.10x at one, where the plain copy overlapped nothing
// (bench/sparse_add). A build that sets TCC_STREAMING_STORE_VALUES sets both.
#ifndef TCC_STREAMING_COPY_VALUES
#if defined(TCC_STREAMING_STORE_VALUES)
#define TCC_STREAMING_COPY_VALUES TCC_STREAMING_STORE_VALUES
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define TCC_STREAMING_COPY_VALUES 4194304LL
#else
#define TCC_STREAMING_COPY_VALUES -1
#endif
#endif
#ifndef TCC_STREAMING_STORE_VALUES
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !TCC_AMD_ZEN
#define TCC_STREAMING_STORE_VALUES 4194304LL
#else
#define TCC_STREAMING_STORE_VALUES -1
#endif
#endif
#ifndef TCC_STREAMING_STORES_ON_FRESH_PAGES
#define TCC_STREAMING_STORES_ON_FRESH_PAGES 0
#endif
#if defined(__linux__)
extern "C" int mincore(void* address, size_t length, unsigned char* resident);
#endif
// Whether the whole pages of bytes [0, bytes) of `array` are in memory
// (the first, middle and last of them; false without a whole page).
static inline bool tcc_pages_resident(const void* array, int64_t bytes) {
  if (TCC_STREAMING_STORES_ON_FRESH_PAGES) return true;
#if defined(__linux__)
  const size_t page = 4096, first = ((size_t)array + page - 1) & ~(page - 1);
  const size_t end = ((size_t)array + (size_t)bytes) & ~(page - 1);
  if (end <= first) return false;
  const size_t probes[3] = {first, first + (((end - first) / 2) & ~(page - 1)), end - page};
  for (size_t k = 0; k < 3; k++) {
    unsigned char resident = 0;
    if (mincore((void*)probes[k], page, &resident) != 0 || !(resident & 1)) return false;
  }
  return true;
#else
  return false;
#endif
}
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
static inline void tcc_stream(int32_t* a, int64_t i, int32_t v) { __builtin_ia32_movnti(a + i, v); }
static inline void tcc_stream(int64_t* a, int64_t i, int64_t v) { __builtin_ia32_movnti64(a + i, v); }
static inline void tcc_stream(float* a, int64_t i, float v) {
  int32_t bits;
  __builtin_memcpy(&bits, &v, sizeof bits);
  __builtin_ia32_movnti((int32_t*)(a + i), bits);
}
static inline void tcc_stream(double* a, int64_t i, double v) {
  int64_t bits;
  __builtin_memcpy(&bits, &v, sizeof bits);
  __builtin_ia32_movnti64((int64_t*)(a + i), bits);
}
static inline void tcc_stream_fence() { __builtin_ia32_sfence(); }
// Copies `bytes` (a multiple of 4; both arrays aligned to 4) past the
// caches: 4-byte stores up to a 64-byte boundary of the target, then whole
// vectors (64 bytes with AVX-512, 32 with AVX, 16 otherwise; Clang splits
// its 64-byte ones where it must), then 4-byte stores. A row-parallel
// output's chunks go out this way: on the Xeon host at 16 threads the
// 64-byte stores moved 6-16 % more than 4- and 8-byte ones (bench/sparse_add).
typedef long long tcc_v2di __attribute__((vector_size(16)));
typedef long long tcc_v4di __attribute__((vector_size(32)));
typedef long long tcc_v8di __attribute__((vector_size(64)));
static inline void tcc_stream_bytes(void* destination, const void* source, int64_t bytes) {
  char* to = (char*)destination;
  const char* from = (const char*)source;
  for (; bytes >= 4 && ((size_t)to & 63); to += 4, from += 4, bytes -= 4) {
    int32_t word;
    __builtin_memcpy(&word, from, 4);
    __builtin_ia32_movnti((int32_t*)to, word);
  }
#if defined(__clang__)
  for (; bytes >= 64; to += 64, from += 64, bytes -= 64) {
    tcc_v8di vector;
    __builtin_memcpy(&vector, from, 64);
    __builtin_nontemporal_store(vector, (tcc_v8di*)to);
  }
#elif defined(__AVX512F__)
  for (; bytes >= 64; to += 64, from += 64, bytes -= 64) {
    tcc_v8di vector;
    __builtin_memcpy(&vector, from, 64);
    __builtin_ia32_movntdq512((tcc_v8di*)to, vector);
  }
#elif defined(__AVX__)
  for (; bytes >= 32; to += 32, from += 32, bytes -= 32) {
    tcc_v4di vector;
    __builtin_memcpy(&vector, from, 32);
    __builtin_ia32_movntdq256((tcc_v4di*)to, vector);
  }
#else
  for (; bytes >= 16; to += 16, from += 16, bytes -= 16) {
    tcc_v2di vector;
    __builtin_memcpy(&vector, from, 16);
    __builtin_ia32_movntdq((tcc_v2di*)to, vector);
  }
#endif
  for (; bytes >= 4; to += 4, from += 4, bytes -= 4) {
    int32_t word;
    __builtin_memcpy(&word, from, 4);
    __builtin_ia32_movnti((int32_t*)to, word);
  }
}
#else
template <typename T, typename V> static inline void tcc_stream(T* a, int64_t i, V v) { a[i] = (T)v; }
static inline void tcc_stream_fence() {}
static inline void tcc_stream_bytes(void* destination, const void* source, int64_t bytes) {
  memcpy(destination, source, (size_t)bytes);
}
#endif
template <typename T, typename V> static inline void tcc_store(T* a, int64_t i, V v, bool streaming) {
  if (streaming) tcc_stream(a, i, (T)v);
  else a[i] = (T)v;
}

// Rows of a sparse output assembled on threads in one pass (the C++
// lowering's chunked rows): chunks of rows claimed in order from a shared
// counter; each chunk, once appended, publishes its size and learns its
// offset by looking back over the chunks before it (a decoupled look-back):
// state[c] is 0 until chunk c publishes, then (size << 2) | 1, and
// (inclusive prefix << 2) | 2 once its offset is known. A chunk waits only
// on chunks claimed before it, by threads that are appending them.
static inline int64_t tcc_claim_chunk(int64_t* next) { return __atomic_fetch_add(next, (int64_t)1, __ATOMIC_RELAXED); }
static inline int64_t tcc_chunk_offset(int64_t* state, int64_t chunk, int64_t size) {
  if (chunk == 0) {
    __atomic_store_n(&state[0], (size << 2) | 2, __ATOMIC_RELEASE);
    return 0;
  }
  __atomic_store_n(&state[chunk], (size << 2) | 1, __ATOMIC_RELEASE);
  int64_t offset = 0;
  for (int64_t before = chunk - 1;; before--) {
    int64_t published;
    // (A thread that waits long yields its core: the chunk it waits on may
    // be on a thread the system has not scheduled.)
    for (int spins = 0; (published = __atomic_load_n(&state[before], __ATOMIC_ACQUIRE)) == 0; spins++) {
      if (spins >= 4096) {
        sched_yield();
        continue;
      }
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    offset += published >> 2;
    if (published & 2) break;
  }
  __atomic_store_n(&state[chunk], ((offset + size) << 2) | 2, __ATOMIC_RELEASE);
  return offset;
}
// The entries of all chunks, once every chunk has its offset.
static inline int64_t tcc_chunk_total(const int64_t* state, int64_t chunks) {
  return chunks > 0 ? state[chunks - 1] >> 2 : 0;
}
// Rows a chunk: about TCC_CHUNK_ENTRIES entries of the bound on average
// (a thread's arrays stay in its cache; 4096 and 16384 were slower on the
// Xeon host at 16 threads), but at least 8 chunks a thread, at least one
// row and at most 4096; a thread's arrays start at twice that many
// entries. (A build may set it with -D, as the tests do to run a chunk a
// row.)
#ifndef TCC_CHUNK_ENTRIES
#define TCC_CHUNK_ENTRIES 8192
#endif
static inline int64_t tcc_rows_per_chunk(int64_t rows, int64_t entries, int64_t threads) {
  int64_t per = entries > 0 ? (int64_t)((double)TCC_CHUNK_ENTRIES * (double)rows / (double)entries) : rows;
  const int64_t spread = rows / (8 * (threads > 0 ? threads : 1));
  per = per < spread ? per : spread;
  return per < 1 ? 1 : per > 4096 ? 4096 : per;
}
static inline int64_t tcc_chunk_capacity() { return 2 * (int64_t)TCC_CHUNK_ENTRIES; }

// Puts the coordinates a workspace touched in order: by sorting the list
// when it is short, by scanning the touched flags when n log n would cost
// more than the dimension.
static inline void tcc_order_touched(int32_t* list, int64_t n, const bool* touched, int64_t dimension) {
  int64_t log2n = 1;
  while ((1LL << log2n) < n) log2n++;
  if (n * log2n <= dimension) { tcc_sort_coordinates(list, n); return; }
  int64_t k = 0;
  for (int64_t c = 0; c < dimension; c++)
    if (touched[c]) list[k++] = (int32_t)c;
}
)tcc";

// Precompiled runtime kernels that intrinsics call (tcc/runtime/permanent.h).
constexpr const char* kRuntimeEntryPoints = R"tcc(
extern "C" int tcc_permanent(tcc_tensor* result, const tcc_tensor* matrix);
)tcc";

// The kernel's own arrays (a sparse output's pos, crd and vals, its
// workspaces) come from the runtime's allocator (array_alloc.h, pasted
// before this): from TCC_HUGE_PAGE_MIN_BYTES bytes (4 MB by default; a
// build sets -DTCC_HUGE_PAGE_MIN_BYTES=0 to keep every array in 4 KB
// pages, as CompileOptions::hugePages = false does) in 2 MB pages.
constexpr const char* kKernelAllocation = R"tcc(
#ifndef TCC_HUGE_PAGE_MIN_BYTES
#define TCC_HUGE_PAGE_MIN_BYTES TCC_HUGE_PAGE_DEFAULT_MIN_BYTES
#endif
static inline void* tcc_alloc(long long bytes) { return tcc_array_alloc(bytes, TCC_HUGE_PAGE_MIN_BYTES); }
static inline void* tcc_alloc_zeroed(long long bytes) { return tcc_array_alloc_zeroed(bytes, TCC_HUGE_PAGE_MIN_BYTES); }
// Grows (or shrinks) an array whose first kept_bytes bytes are kept.
static inline void* tcc_realloc(void* array, long long kept_bytes, long long bytes) {
  return tcc_array_realloc(array, kept_bytes, bytes, TCC_HUGE_PAGE_MIN_BYTES);
}
)tcc";

}  // namespace

const std::string& abiText() {
  static const std::string text = detail::kAbiHeaderText;
  return text;
}

const std::string& cppPrelude() {
  static const std::string prelude = std::string("// tcc prelude\n") + kPreludeDeclarations + "\n" +
                                     detail::kArrayAllocText + kKernelAllocation + "\n" + detail::kAbiHeaderText +
                                     "\n" + detail::kIsmKernelApiText + "\n" + kRuntimeEntryPoints;
  return prelude;
}

}  // namespace tcc::lowering
