// Row-sum loops for fast-mode CSR SpMV, side by side, compiled through the
// system compiler or the JIT under tcc's fast flags (with and without
// -mprefer-vector-width=512) and against the TACO-style -O3 -ffast-math
// loop. It picks the loop the C++ printer emits; every variant is checked
// against an in-order reference.
//
//   tcc_spmv_variants [--backend system|clang] [--repeat N] [--rounds R] [--in-cache-only]
//                     [--out-of-cache-only] [--probes] [--huge-pages] [--threads T]
//                     [--only NAME[@512|@dflt],...] [--scale-ups BIG:SMALL,...] [--llc-multiple M]
//
// --scale-ups replaces the five out-of-cache Kronecker scale-ups with those named.
// They are sized as tcc_spmv_fp_bench sizes them, out of this machine's
// last-level cache (--llc-multiple M, default 2: kron(I_k, BIG, SMALL),
// k copies along the diagonal, a call's bytes >= M times the cache; 0:
// one copy, the sizes measured before), and so are the triads' arrays.
//
// --huge-pages copies the matrix, x and y, and allocates the triad's
// arrays, in memory asked to be backed by 2 MB pages (madvise
// MADV_HUGEPAGE; transparent huge pages in "madvise" mode or "always").
// Without it every array is in 4 KB pages (the runtime's threshold of 2 MB
// pages is set to 0).
//
// --probes adds, out of cache, columns that say where the time goes: the
// TACO-style loop, acc4_pf512_t1 and g8_base with every gather of x served from L1
// (crd folded into x's first 2048 entries: the same streams, x's other
// lines never touched), the streams alone (crd and vals, no x), and each
// matrix's distinct lines of x a row (64-byte lines) beside its entries a
// row. Probe columns compute other sums: they are not checked.
//
// With --threads T > 1 every loop's rows are shared by T OpenMP threads
// (tcc's parallelize schedule) and only the two out-of-cache parts run.
//
// In cache: the 14 real matrices of tcc_spmv_fp_bench, one thread, y
// allocated once (only the call is timed). Between: five Kronecker
// scale-ups of 1.4-6.9 M entries, around the printed kernel's switch to
// streaming. Out of cache: the five Kronecker scale-ups of
// tcc_spmv_fp_bench against a STREAM triad on as many threads (and, after
// the table, each loop's bytes against a triad in the matrix's pages timed
// once every round of the calls). Prints times relative to the
// TACO-style loop (> 1: the variant is faster) and their geomeans. The
// column tcc_fast is the kernel tcc prints for fast mode (entry point on
// bound views); calls go round robin over the variants.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <sys/mman.h>

#include "tcc/lowering/codegen.h"
#include "tcc/tcc.h"
#include "../common/machine.h"
#include "../common/omp_threads.h"
#include "../common/stats.h"
#include "../common/scale_up.h"
#include "../common/stream_triad.h"

namespace {

using Spmv = void (*)(int, const long long*, const int*, const double*, const double*, double*);

// One call's arguments: the plain arrays for the hand-written loops, the
// bound views for the kernel tcc prints.
struct Call {
  int n, m;  // rows, columns
  const long long* pos;
  const int* crd;
  const double* vals;
  const double* x;
  double* y;
  tcc_tensor** tensors;  // y, A, x
  const int* crdInL1;    // --probes: crd folded into x's first 2048 entries (16 KB), same stream
};
using Variant = std::function<void(const Call&)>;
Variant plain(Spmv f) {
  return [f](const Call& c) { f(c.n, c.pos, c.crd, c.vals, c.x, c.y); };
}
// The column panels take the number of columns as well.
using PanelSpmv = void (*)(int, int, const long long*, const int*, const double*, const double*, double*);
Variant panels(PanelSpmv f) {
  return [f](const Call& c) { f(c.n, c.m, c.pos, c.crd, c.vals, c.x, c.y); };
}
const std::vector<std::string> kPanelNames = {"panels_r128_p2k", "panels_r128_p4k", "panels_r128_p16k",
                                              "panels_r64_p8k"};

const char* const kTacoStyle = R"(
extern "C" void taco(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < n; i++) {
    double t = 0.0;
    for (long long p = pos[i]; p < pos[i + 1]; p++) {
      int j = crd[p];
      t += vals[p] * x[j];
    }
    y[i] = t;
  }
}
)";

// The variants, each the row loop the printer could emit.
const char* const kVariants = R"variants(
// The row loop; with --threads, under the schedule tcc prints for
// parallelize(i, CPUThread, NoRaces).
#define ROWS _Pragma("omp parallel for schedule(dynamic, 16)") for (int i = 0; i < n; i++)
#ifdef __clang__
#define NOVECTOR _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define NOVECTOR
#endif
// Today's fast mode: omp simd reduction on rows of >= 32 entries.
extern "C" void simd32(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0;
    long long end = pos[i + 1];
    if (end - pos[i] >= 32) {
      #pragma omp simd reduction(+: t)
      for (long long p = pos[i]; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    } else {
      for (long long p = pos[i]; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    }
    y[i] = t;
  }
}
// Same with simdlen(4) (256-bit vectors of doubles).
extern "C" void simd32_len4(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0;
    long long end = pos[i + 1];
    if (end - pos[i] >= 32) {
      #pragma omp simd reduction(+: t) simdlen(4)
      for (long long p = pos[i]; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    } else {
      for (long long p = pos[i]; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    }
    y[i] = t;
  }
}
// Every row through omp simd, no threshold.
extern "C" void simd_all(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0;
    long long end = pos[i + 1];
    #pragma omp simd reduction(+: t)
    for (long long p = pos[i]; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    y[i] = t;
  }
}
// Four scalar partial sums (no gathers), every row.
extern "C" void acc4(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    long long p = pos[i], end = pos[i + 1];
    NOVECTOR
    for (; p + 4 <= end; p += 4) {
      t0 += vals[p] * x[crd[p]];
      t1 += vals[p + 1] * x[crd[p + 1]];
      t2 += vals[p + 2] * x[crd[p + 2]];
      t3 += vals[p + 3] * x[crd[p + 3]];
    }
    NOVECTOR
    for (; p < end; p++) t0 += vals[p] * x[crd[p]];
    y[i] = (t0 + t1) + (t2 + t3);
  }
}
// Eight scalar partial sums, every row.
extern "C" void acc8(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0, t4 = 0.0, t5 = 0.0, t6 = 0.0, t7 = 0.0;
    long long p = pos[i], end = pos[i + 1];
    NOVECTOR
    for (; p + 8 <= end; p += 8) {
      t0 += vals[p] * x[crd[p]];
      t1 += vals[p + 1] * x[crd[p + 1]];
      t2 += vals[p + 2] * x[crd[p + 2]];
      t3 += vals[p + 3] * x[crd[p + 3]];
      t4 += vals[p + 4] * x[crd[p + 4]];
      t5 += vals[p + 5] * x[crd[p + 5]];
      t6 += vals[p + 6] * x[crd[p + 6]];
      t7 += vals[p + 7] * x[crd[p + 7]];
    }
    NOVECTOR
    for (; p < end; p++) t0 += vals[p] * x[crd[p]];
    y[i] = ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7));
  }
}
// acc4 with software prefetch of vals and crd DIST entries ahead.
#define ACC4_PREFETCH(NAME, DIST)                                                                                    \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                    \
    long long p = pos[i], end = pos[i + 1];                                                                           \
    __builtin_prefetch(vals + p + DIST);                                                                              \
    __builtin_prefetch(crd + p + DIST);                                                                               \
    NOVECTOR                                                                                                          \
    for (; p + 4 <= end; p += 4) {                                                                                    \
      __builtin_prefetch(vals + p + DIST + 4);                                                                        \
      __builtin_prefetch(crd + p + DIST + 4);                                                                         \
      t0 += vals[p] * x[crd[p]];                                                                                      \
      t1 += vals[p + 1] * x[crd[p + 1]];                                                                              \
      t2 += vals[p + 2] * x[crd[p + 2]];                                                                              \
      t3 += vals[p + 3] * x[crd[p + 3]];                                                                              \
    }                                                                                                                 \
    NOVECTOR                                                                                                          \
    for (; p < end; p++) t0 += vals[p] * x[crd[p]];                                                                   \
    y[i] = (t0 + t1) + (t2 + t3);                                                                                     \
  }                                                                                                                   \
}
ACC4_PREFETCH(acc4_pf128, 128)
ACC4_PREFETCH(acc4_pf256, 256)
ACC4_PREFETCH(acc4_pf512, 512)
ACC4_PREFETCH(acc4_pf1024, 1024)
// acc4 as the printer emits it: loop-local declarations, no pragmas.
extern "C" void acc4_plain(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    long long end = pos[i + 1];
    long long p = pos[i];
    for (; p + 4 <= end; p += 4) {
      int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];
      int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];
      int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];
      int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];
    }
    for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    t = (t + t1) + (t2 + t3);
    y[i] = t;
  }
}
// omp simd with simdlen(4) on rows of >= 8 entries, acc4 below.
extern "C" void simd8_len4(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0;
    long long p = pos[i], end = pos[i + 1];
    if (end - p >= 8) {
      #pragma omp simd reduction(+: t) simdlen(4)
      for (long long q = p; q < end; q++) t += vals[q] * x[crd[q]];
      y[i] = t;
    } else {
      for (; p < end; p++) t += vals[p] * x[crd[p]];
      y[i] = t;
    }
  }
}
// acc4_plain with an empty asm statement between the copies (no SLP gathers).
extern "C" void acc4_barrier(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    long long end = pos[i + 1];
    long long p = pos[i];
    for (; p + 4 <= end; p += 4) {
      int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];
      __asm__("" ::: "memory");
      int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];
      __asm__("" ::: "memory");
      int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];
      __asm__("" ::: "memory");
      int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];
    }
    for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    t = (t + t1) + (t2 + t3);
    y[i] = t;
  }
}
// Long rows (>= 32) through omp simd (simdlen LEN, or the compiler's width
// for 0), shorter ones as acc4_barrier: gathers keep more loads in flight
// out of cache, partial sums are faster on short rows.
#define HYBRID(NAME, SIMD_PRAGMA)                                                                                    \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                    \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= 32) {                                                                                              \
      SIMD_PRAGMA                                                                                                     \
      for (long long q = p; q < end; q++) { int j = crd[q]; long long c = (long long)j; t += vals[q] * x[c]; }       \
    } else {                                                                                                          \
      for (; p + 4 <= end; p += 4) {                                                                                  \
        int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                              \
        __asm__("" ::: "memory");                                                                                     \
        int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                             \
      }                                                                                                               \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
      t = (t + t1) + (t2 + t3);                                                                                       \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
HYBRID(hybrid_len4, _Pragma("omp simd reduction(+: t) simdlen(4)"))
HYBRID(hybrid_len8, _Pragma("omp simd reduction(+: t) simdlen(8)"))
HYBRID(hybrid_dflt, _Pragma("omp simd reduction(+: t)"))
// acc4_barrier with a prefetch of vals and crd 256 entries ahead.
extern "C" void acc4_barrier_pf(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    long long end = pos[i + 1];
    long long p = pos[i];
    for (; p + 4 <= end; p += 4) {
      __builtin_prefetch(vals + p + 256);
      __builtin_prefetch(crd + p + 256);
      int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];
      __asm__("" ::: "memory");
      int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];
      __asm__("" ::: "memory");
      int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];
      __asm__("" ::: "memory");
      int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];
    }
    for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    t = (t + t1) + (t2 + t3);
    y[i] = t;
  }
}
// GCC only: reassociation granted to one function by attribute, at the
// width GCC picks for itself on AVX-512 hosts (256 bits), as TACO's
// -O3 -ffast-math build gets it. Clang ignores `optimize`, so there these
// run in order.
#if defined(__GNUC__) && !defined(__clang__)
#define ASSOC __attribute__((optimize("associative-math", "no-signed-zeros"), target("prefer-vector-width=256")))
#define ASSOC512 __attribute__((optimize("associative-math", "no-signed-zeros")))
#define REASSOC
#else
#define ASSOC
#define ASSOC512
// Clang ignores `optimize`: a block that starts with this may reassociate.
#define REASSOC _Pragma("clang fp reassociate(on)")
#endif
// The TACO-style loop under that attribute (and tcc's fast flags).
extern "C" ASSOC void assoc_all(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) {
  ROWS {
    double t = 0.0;
    long long end = pos[i + 1];
    for (long long p = pos[i]; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }
    y[i] = t;
  }
}
// Rows of >= MIN entries as the attribute's vectorized loop (PREFETCH: a
// prefetch of vals and crd 256 entries ahead every 32 entries, the loop
// strip-mined so the chunks still vectorize), shorter ones as the printer's
// partial sums with their prefetch (acc4_barrier_pf); TAIL: an empty asm
// statement in the partial sums' tail, so GCC does not vectorize (and test
// for) a loop of at most three entries. MIN 0: every row vectorized.
// ATTR: ASSOC, or ASSOC512 for the width of tcc's flags (512 bits).
#define HYB_ATTR(NAME, MIN, PREFETCH, TAIL, ATTR)                                                                             \
extern "C" ATTR void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                    \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= MIN) {                                                                                             \
      if (PREFETCH) {                                                                                                 \
        for (; p + 32 <= end; p += 32) {                                                                              \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8));                                   \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8 + 64));                              \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8 + 128));                             \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8 + 192));                             \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + 256 * 4));                                    \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + 256 * 4 + 64));                               \
          for (long long c = p; c < p + 32; c++) { int j = crd[c]; long long q = (long long)j; t += vals[c] * x[q]; } \
        }                                                                                                             \
      }                                                                                                               \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else {                                                                                                          \
      for (; p + 4 <= end; p += 4) {                                                                                  \
        __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8));                                     \
        __builtin_prefetch((const void*)((unsigned long)(crd + p) + 256 * 4));                                      \
        int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                              \
        __asm__("" ::: "memory");                                                                                     \
        int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                             \
      }                                                                                                               \
      for (; p < end; p++) {                                                                                          \
        if (TAIL) __asm__("");                                                                                        \
        int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                              \
      }                                                                                                               \
      t = (t + t1) + (t2 + t3);                                                                                       \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
#define HYB_ASSOC(NAME, MIN, PREFETCH, TAIL) HYB_ATTR(NAME, MIN, PREFETCH, TAIL, ASSOC)
HYB_ASSOC(hyb_assoc8, 8, false, false)
HYB_ASSOC(hyb_assoc16, 16, false, false)
HYB_ASSOC(hyb_assoc32, 32, false, false)
HYB_ASSOC(hyb_assoc8_pf, 8, true, false)
HYB_ASSOC(hyb_assoc16_pf, 16, true, false)
HYB_ASSOC(hyb_assoc32_pf, 32, true, false)
HYB_ASSOC(hyb_assoc8t, 8, false, true)
HYB_ASSOC(hyb_assoc16t, 16, false, true)
HYB_ASSOC(hyb_assoc16t_pf, 16, true, true)
HYB_ASSOC(assoc_pf, 0, true, true)
HYB_ATTR(hyb_assoc16t_w512, 16, false, true, ASSOC512)
// In cache, short rows: rows of >= MIN entries as the attribute's
// vectorized loop; rows of fewer than SEQ entries as one in-order loop (an
// empty asm statement keeps it scalar: one loop exit to predict instead of
// two; ADD: each product kept apart from its add, an add's latency on the
// chain instead of a fused multiply-add's); the rest as partial sums, with
// the prefetch only if PF.
#define SEQ_ENTRY(ADD)                                                                                                \
  {                                                                                                                   \
    __asm__("");                                                                                                      \
    int j = crd[p];                                                                                                   \
    long long q = (long long)j;                                                                                       \
    double m = vals[p] * x[q];                                                                                        \
    if (ADD) __asm__("" : "+x"(m));                                                                                   \
    t += m;                                                                                                           \
  }
#define HYB_SHORT(NAME, MIN, SEQ, PF) HYB_SHORT_ADD(NAME, MIN, SEQ, PF, false)
#define HYB_SHORT_ADD(NAME, MIN, SEQ, PF, ADD)                                                                      \
extern "C" ASSOC void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0;                                                                                                   \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= MIN) {                                                                                             \
      REASSOC                                                                                                         \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else if (end - p < SEQ) {                                                                                       \
      for (; p < end; p++) SEQ_ENTRY(ADD)                                                                           \
    } else {                                                                                                          \
      double t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                            \
      for (; p + 4 <= end; p += 4) {                                                                                  \
        if (PF) {                                                                                                     \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8));                                   \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + 256 * 4));                                    \
        }                                                                                                             \
        int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                              \
        __asm__("" ::: "memory");                                                                                     \
        int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                             \
      }                                                                                                               \
      t = (t + t1) + (t2 + t3);                                                                                       \
      for (; p < end; p++) { __asm__(""); int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }         \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
// Rows of >= MIN entries as the attribute's vectorized loop; shorter ones
// as one loop of MIN iterations whose entries past the row are masked off
// (no branch on the row's length: GCC makes masked loads and gathers).
#define HYB_MASKED(NAME, MIN)                                                                                         \
extern "C" ASSOC void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0;                                                                                                   \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= MIN) {                                                                                             \
      REASSOC                                                                                                         \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else {                                                                                                          \
      REASSOC                                                                                                         \
      const long long begin = p;                                                                                      \
      for (; p < begin + MIN; p++)                                                                                    \
        if (p < end) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                            \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
HYB_MASKED(hyb8_masked, 8)
HYB_MASKED(hyb16_masked, 16)
// hyb8_masked, but rows of fewer than SEQ entries in order (as hyb8_seq
// runs them): the masked loop of 8 only for rows of SEQ to 7 entries.
#define HYB_MASKED_SEQ(NAME, SEQ)                                                                                     \
extern "C" ASSOC void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0;                                                                                                   \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= 8) {                                                                                               \
      REASSOC                                                                                                         \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else if (end - p < SEQ) {                                                                                       \
      for (; p < end; p++) SEQ_ENTRY(false)                                                                         \
    } else {                                                                                                          \
      REASSOC                                                                                                         \
      const long long begin = p;                                                                                      \
      for (; p < begin + 8; p++)                                                                                      \
        if (p < end) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                            \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
HYB_MASKED_SEQ(hyb8_masked_seq3, 3)
HYB_MASKED_SEQ(hyb8_masked_seq4, 4)
HYB_SHORT(hyb16_nopf, 16, 0, false)
HYB_SHORT(hyb8_nopf, 8, 0, false)
HYB_SHORT(hyb16_seq8, 16, 8, false)
HYB_SHORT(hyb16_seq, 16, 16, false)
HYB_SHORT(hyb8_seq, 8, 8, false)
HYB_SHORT_ADD(hyb16_seqadd, 16, 16, false, true)
HYB_SHORT_ADD(hyb16_seqadd8, 16, 8, false, true)
HYB_SHORT_ADD(hyb8_seqadd, 8, 8, false, true)
// Streaming: rows of >= 16 entries in strips of STRIP entries, each
// prefetching vals and crd DIST entries ahead (one prefetch a line); shorter
// rows as the partial sums with their prefetch. hyb_assoc16t_pf is
// STRIP_PF(32, 256).
#define STRIP_PF(NAME, STRIP, DIST) STRIP_PF_HINT(NAME, STRIP, DIST, 3)
// LOCALITY: __builtin_prefetch's third argument; 0 (non-temporal) keeps the
// matrix's streams from evicting x from the caches they bypass.
#define STRIP_PF_HINT(NAME, STRIP, DIST, LOCALITY)                                                                   \
extern "C" ASSOC void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0;                                                                                                   \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= 16) {                                                                                              \
      REASSOC                                                                                                         \
      for (; p + STRIP <= end;) {                                                                                     \
        for (unsigned long b = 0; b < STRIP * 8; b += 64)                                                             \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + DIST * 8 + b), 0, LOCALITY);                 \
        for (unsigned long b = 0; b < STRIP * 4; b += 64)                                                             \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + DIST * 4 + b), 0, LOCALITY);                  \
        const long long strip = p + STRIP;                                                                            \
        for (; p < strip; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                  \
      }                                                                                                               \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else {                                                                                                          \
      double t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                            \
      for (; p + 4 <= end; p += 4) {                                                                                  \
        __builtin_prefetch((const void*)((unsigned long)(vals + p) + 256 * 8), 0, LOCALITY);                        \
        __builtin_prefetch((const void*)((unsigned long)(crd + p) + 256 * 4), 0, LOCALITY);                         \
        int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                              \
        __asm__("" ::: "memory");                                                                                     \
        int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                             \
        __asm__("" ::: "memory");                                                                                     \
        int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                             \
      }                                                                                                               \
      t = (t + t1) + (t2 + t3);                                                                                       \
      for (; p < end; p++) { __asm__(""); int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }         \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
STRIP_PF_HINT(strip32_d256_nta, 32, 256, 0)
STRIP_PF_HINT(strip32_d512_nta, 32, 512, 0)
STRIP_PF_HINT(strip32_d1024_nta, 32, 1024, 0)
STRIP_PF_HINT(strip32_d256_t1, 32, 256, 2)
STRIP_PF(strip32_d256, 32, 256)
STRIP_PF(strip32_d512, 32, 512)
STRIP_PF(strip64_d512, 64, 512)
STRIP_PF(strip16_d256, 16, 256)
STRIP_PF_HINT(strip32_d512_t1, 32, 512, 2)
// Every row as the printer's partial sums (an empty asm statement between
// the copies and in the tail), each step prefetching vals and crd DIST
// entries ahead with LOCALITY: 3 into every cache level, 2 (prefetcht1) and
// 1 (prefetcht2) into the outer ones; the line then moves into L1 when it
// is read, and a prefetch does not hold a first-level miss buffer for a
// whole trip to memory.
#define ACC4_PF_HINT(NAME, DIST, LOCALITY)                                                                           \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                    \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    for (; p + 4 <= end; p += 4) {                                                                                    \
      __builtin_prefetch((const void*)((unsigned long)(vals + p) + DIST * 8), 0, LOCALITY);                         \
      __builtin_prefetch((const void*)((unsigned long)(crd + p) + DIST * 4), 0, LOCALITY);                          \
      int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                                \
      __asm__("" ::: "memory");                                                                                       \
      int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                               \
      __asm__("" ::: "memory");                                                                                       \
      int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                               \
      __asm__("" ::: "memory");                                                                                       \
      int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                               \
    }                                                                                                                 \
    t = (t + t1) + (t2 + t3);                                                                                         \
    for (; p < end; p++) { __asm__(""); int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }           \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
ACC4_PF_HINT(acc4_pf256_t0, 256, 3)
ACC4_PF_HINT(acc4_pf512_t0, 512, 3)
ACC4_PF_HINT(acc4_pf512_t1, 512, 2)
ACC4_PF_HINT(acc4_pf768_t1, 768, 2)
ACC4_PF_HINT(acc4_pf512_t2, 512, 1)
// In cache, rows of >= 8 entries as the attribute's vectorized loop (as
// hyb8_seq); a shorter one as GCC runs the tail of its own loop: four
// entries at once if it holds four, then the 0-3 left unrolled, no loop
// (BARRIER: an empty asm statement between the four products, which keeps
// them scalar).
#define HYB8_BLOCK4(NAME, BARRIER)                                                                                    \
extern "C" ASSOC void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0;                                                                                                   \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    if (end - p >= 8) {                                                                                               \
      REASSOC                                                                                                         \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else {                                                                                                          \
      if (end - p >= 4) {                                                                                             \
        double t0 = vals[p] * x[(long long)crd[p]];                                                                   \
        if (BARRIER) __asm__("" ::: "memory");                                                                        \
        double t1 = vals[p + 1] * x[(long long)crd[p + 1]];                                                           \
        if (BARRIER) __asm__("" ::: "memory");                                                                        \
        double t2 = vals[p + 2] * x[(long long)crd[p + 2]];                                                           \
        if (BARRIER) __asm__("" ::: "memory");                                                                        \
        double t3 = vals[p + 3] * x[(long long)crd[p + 3]];                                                           \
        t = (t0 + t1) + (t2 + t3);                                                                                    \
        p += 4;                                                                                                       \
      }                                                                                                               \
      if (p < end) {                                                                                                  \
        t += vals[p] * x[(long long)crd[p]];                                                                          \
        if (p + 1 < end) {                                                                                            \
          t += vals[p + 1] * x[(long long)crd[p + 1]];                                                                \
          if (p + 2 < end) t += vals[p + 2] * x[(long long)crd[p + 2]];                                               \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
HYB8_BLOCK4(hyb8_blk4, 0)
HYB8_BLOCK4(hyb8_blk4_asm, 1)
// The printed streaming row (GCC on Intel: rows of >= 8 entries in strips
// of 32 prefetching 512 ahead, shorter rows as partial sums prefetching 512
// ahead into L2) under other ways of sharing the rows among threads
// (sched_*; with one thread all run the rows in order).
#define PRINTED_ROW(i)                                                                                                \
  {                                                                                                                   \
    double t = 0.0;                                                                                                   \
    long long end = pos[(i) + 1];                                                                                     \
    long long p = pos[i];                                                                                             \
    if (end - p >= 8) {                                                                                               \
      for (; p + 32 <= end;) {                                                                                        \
        for (unsigned long b = 0; b < 32 * 4; b += 64)                                                                \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + 512 * 4 + b));                                  \
        for (unsigned long b = 0; b < 32 * 8; b += 64)                                                                \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 512 * 8 + b));                                 \
        const long long strip = p + 32;                                                                               \
        for (; p < strip; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                  \
      }                                                                                                               \
      for (; p < end; p++) { int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }                      \
    } else {                                                                                                          \
      if (p + 4 <= end) {                                                                                             \
        double t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                          \
        for (; p + 4 <= end; p += 4) {                                                                                \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + 512 * 4), 0, 2);                                \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 512 * 8), 0, 2);                               \
          int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                            \
          __asm__("" ::: "memory");                                                                                   \
          int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                           \
          __asm__("" ::: "memory");                                                                                   \
          int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                           \
          __asm__("" ::: "memory");                                                                                   \
          int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                           \
        }                                                                                                             \
        t = (t + t1) + (t2 + t3);                                                                                     \
      }                                                                                                               \
      for (; p < end; p++) { __asm__(""); int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }         \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }
#define SCHED_ARGS int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y
// What parallelize(i, CPUThread, NoRaces) prints today: chunks of 16 rows.
extern "C" ASSOC void sched_dyn16(SCHED_ARGS) {
  _Pragma("omp parallel for schedule(dynamic, 16)") for (int i = 0; i < n; i++) PRINTED_ROW(i)
}
// Chunks of about ENTRIES stored entries (rows * ENTRIES / nnz rows, at
// least 16): as many chunks to hand out whatever the rows' length.
#define SCHED_DYN_ENTRIES(NAME, ENTRIES)                                                                              \
extern "C" ASSOC void NAME(SCHED_ARGS) {                                                                              \
  const long long stored = pos[n] > 0 ? pos[n] : 1;                                                                   \
  const long long want = (long long)n * ENTRIES / stored;                                                             \
  const int chunk = want > 16 ? (want < 65536 ? (int)want : 65536) : 16;                                              \
  _Pragma("omp parallel for schedule(dynamic, chunk)") for (int i = 0; i < n; i++) PRINTED_ROW(i)                     \
}
SCHED_DYN_ENTRIES(sched_dyn_e2k, 2048)
SCHED_DYN_ENTRIES(sched_dyn_e8k, 8192)
SCHED_DYN_ENTRIES(sched_dyn_e32k, 32768)
SCHED_DYN_ENTRIES(sched_dyn_e128k, 131072)
// Equal numbers of rows per thread, one range each.
extern "C" ASSOC void sched_static(SCHED_ARGS) {
  _Pragma("omp parallel for schedule(static)") for (int i = 0; i < n; i++) PRINTED_ROW(i)
}
#ifdef _OPENMP
extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_num_threads(void);
#endif
// The first row whose entries start at or after `target`.
static inline int sched_row_at(const long long* pos, int n, long long target) {
  int low = 0, high = n;
  while (low < high) {
    int middle = low + (high - low) / 2;
    if (pos[middle] < target) low = middle + 1; else high = middle;
  }
  return low;
}
// One range of rows per thread holding about equal numbers of entries.
extern "C" ASSOC void sched_nnz(SCHED_ARGS) {
  _Pragma("omp parallel") {
    int thread = 0, threads = 1;
#ifdef _OPENMP
    thread = omp_get_thread_num(), threads = omp_get_num_threads();
#endif
    const long long stored = pos[n];
    const int first = thread == 0 ? 0 : sched_row_at(pos, n, stored * thread / threads);
    const int last = thread == threads - 1 ? n : sched_row_at(pos, n, stored * (thread + 1) / threads);
    for (int i = first; i < last; i++) PRINTED_ROW(i)
  }
}
// Ranges of about equal numbers of entries, PER a thread, handed out in
// order (a thread that falls behind takes fewer).
#define SCHED_NNZ_DYN(NAME, PER)                                                                                      \
extern "C" ASSOC void NAME(SCHED_ARGS) {                                                                              \
  int threads = 1;                                                                                                    \
  _Pragma("omp parallel") {                                                                                           \
    _Pragma("omp single") threads = sched_threads();                                                                  \
  }                                                                                                                   \
  const int parts = threads * PER;                                                                                    \
  const long long stored = pos[n];                                                                                    \
  _Pragma("omp parallel for schedule(dynamic, 1)") for (int part = 0; part < parts; part++) {                        \
    const int first = part == 0 ? 0 : sched_row_at(pos, n, stored * part / parts);                                    \
    const int last = part == parts - 1 ? n : sched_row_at(pos, n, stored * (part + 1) / parts);                       \
    for (int i = first; i < last; i++) PRINTED_ROW(i)                                                                 \
  }                                                                                                                   \
}
static inline int sched_threads() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}
SCHED_NNZ_DYN(sched_nnz_dyn4, 4)
SCHED_NNZ_DYN(sched_nnz_dyn16, 16)
// Streaming rows on AMD cores with AVX-512 (the prelude's tcc_gather_sum):
// rows of >= MIN entries (8 unless named) as 512-bit gathers of x, STEP entries a step (8: one
// vector of sums; 16: two), each step prefetching crd DIST entries ahead
// and vals DIST and DIST + AGAIN entries ahead (AGAIN 0: once) into the
// outer caches; the last 0-7 entries in one masked step (MASKED) or in
// order; shorter rows as acc4_pf512_t1. Headers are not included here, so
// the vector types and gathers are the compilers' builtins, as the
// prelude prints them.
#if defined(__AVX512F__) && defined(__AVX512VL__)
typedef double v8df __attribute__((vector_size(64)));
typedef int v8si __attribute__((vector_size(32)));
#ifdef __clang__
#define LOAD_V8SI_MASKED(p, none, lanes) __builtin_ia32_loaddqusi256_mask((const v8si*)(p), none, lanes)
#else
#define LOAD_V8SI_MASKED(p, none, lanes) __builtin_ia32_loaddqusi256_mask(p, none, lanes)
#endif
#define GATHER_ROW(NAME, STEP, DIST, AGAIN, MASKED) GATHER_ROW_MIN(NAME, STEP, DIST, AGAIN, MASKED, 8)
#define GATHER_ROW_MIN(NAME, STEP, DIST, AGAIN, MASKED, MIN) GATHER_ROW_FULL(NAME, STEP, DIST, AGAIN, MASKED, MIN, 1)
// FRESH: each gather into a register of its own (an empty asm statement on
// a zero vector); without it GCC 12 gathers into the last step's register
// (a gather merges into its destination), one chain through every gather.
#define GATHER_ROW_FULL(NAME, STEP, DIST, AGAIN, MASKED, MIN, FRESH)                                                 \
static inline __attribute__((always_inline)) double NAME##_row(const int* crd, const double* vals, const double* x,  \
                                                               long long p, long long end) {                        \
  const v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};                                                                        \
  v8df sum = zero, sum1 = zero;                                                                                       \
  for (; p + STEP <= end; p += STEP) {                                                                                \
    for (int b = 0; b < STEP * 4; b += 64) __builtin_prefetch((const void*)((unsigned long)(crd + p) + DIST * 4 + b), 0, 2); \
    for (int b = 0; b < STEP * 8; b += 64) {                                                                          \
      __builtin_prefetch((const void*)((unsigned long)(vals + p) + DIST * 8 + b), 0, 2);                            \
      if (AGAIN) __builtin_prefetch((const void*)((unsigned long)(vals + p) + (DIST + AGAIN) * 8 + b), 0, 2);       \
    }                                                                                                                 \
    v8si index; v8df v, into = zero;                                                                                  \
    __builtin_memcpy(&index, crd + p, 32); __builtin_memcpy(&v, vals + p, 64);                                        \
    if (FRESH) __asm__ volatile("" : "+v"(into));                                                                     \
    sum += v * __builtin_ia32_gathersiv8df(into, x, index, 0xFF, 8);                                                  \
    if (STEP == 16) {                                                                                                 \
      v8df into1 = zero;                                                                                              \
      __builtin_memcpy(&index, crd + p + 8, 32); __builtin_memcpy(&v, vals + p + 8, 64);                              \
      if (FRESH) __asm__ volatile("" : "+v"(into1));                                                                  \
      sum1 += v * __builtin_ia32_gathersiv8df(into1, x, index, 0xFF, 8);                                              \
    }                                                                                                                 \
  }                                                                                                                   \
  if (STEP == 16 && p + 8 <= end) {                                                                                   \
    v8si index; v8df v;                                                                                               \
    __builtin_memcpy(&index, crd + p, 32); __builtin_memcpy(&v, vals + p, 64);                                        \
    sum += v * __builtin_ia32_gathersiv8df(zero, x, index, 0xFF, 8);                                                  \
    p += 8;                                                                                                           \
  }                                                                                                                   \
  sum += sum1;                                                                                                        \
  if (MASKED && p < end) {                                                                                            \
    const unsigned char lanes = (unsigned char)((1u << (end - p)) - 1);                                               \
    const v8si none = {0, 0, 0, 0, 0, 0, 0, 0};                                                                       \
    const v8si index = LOAD_V8SI_MASKED(crd + p, none, lanes);                                                        \
    sum += __builtin_ia32_loadupd512_mask(vals + p, zero, lanes) * __builtin_ia32_gathersiv8df(zero, x, index, lanes, 8); \
    p = end;                                                                                                          \
  }                                                                                                                   \
  double t = ((sum[0] + sum[4]) + (sum[2] + sum[6])) + ((sum[1] + sum[5]) + (sum[3] + sum[7]));                       \
  for (; p < end; p++) { __asm__(""); t += vals[p] * x[crd[p]]; }                                                     \
  return t;                                                                                                           \
}                                                                                                                     \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    long long p = pos[i], end = pos[i + 1];                                                                           \
    double t = 0.0;                                                                                                   \
    if (end - p >= MIN) t = NAME##_row(crd, vals, x, p, end);                                                         \
    else {                                                                                                            \
      double t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                            \
      for (; p + 4 <= end; p += 4) {                                                                                  \
        __builtin_prefetch((const void*)((unsigned long)(crd + p) + 512 * 4), 0, 2);                                  \
        __builtin_prefetch((const void*)((unsigned long)(vals + p) + 512 * 8), 0, 2);                                 \
        t += vals[p] * x[crd[p]]; __asm__("" ::: "memory");                                                           \
        t1 += vals[p + 1] * x[crd[p + 1]]; __asm__("" ::: "memory");                                                  \
        t2 += vals[p + 2] * x[crd[p + 2]]; __asm__("" ::: "memory");                                                  \
        t3 += vals[p + 3] * x[crd[p + 3]];                                                                            \
      }                                                                                                               \
      t = (t + t1) + (t2 + t3);                                                                                       \
      for (; p < end; p++) { __asm__(""); t += vals[p] * x[crd[p]]; }                                                 \
    }                                                                                                                 \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
#else
// Without AVX-512 the gather rows are acc4_pf512_t1.
#define GATHER_ROW(NAME, STEP, DIST, AGAIN, MASKED) GATHER_ROW_MIN(NAME, STEP, DIST, AGAIN, MASKED, 8)
#define GATHER_ROW_MIN(NAME, STEP, DIST, AGAIN, MASKED, MIN) GATHER_ROW_FULL(NAME, STEP, DIST, AGAIN, MASKED, MIN, 1)
#define GATHER_ROW_FULL(NAME, STEP, DIST, AGAIN, MASKED, MIN, FRESH)                                                 \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  acc4_pf512_t1(n, pos, crd, vals, x, y);                                                                             \
}
#endif
GATHER_ROW(gather8_d512_a32, 8, 512, 32, true)
GATHER_ROW(gather8_d512_a128, 8, 512, 128, true)
GATHER_ROW(gather8_d512_a0, 8, 512, 0, true)
GATHER_ROW(gather8_d768_a32, 8, 768, 32, true)
GATHER_ROW(gather8_d384_a128, 8, 384, 128, true)
GATHER_ROW(gather8_d512_a32_seqtail, 8, 512, 32, false)
GATHER_ROW(gather16_d512_a32, 16, 512, 32, true)
GATHER_ROW_MIN(gather8_d512_a32_min32, 8, 512, 32, true, 32)
GATHER_ROW_MIN(gather8_d512_a32_min64, 8, 512, 32, true, 64)
GATHER_ROW_MIN(gather8_d512_a32_min128, 8, 512, 32, true, 128)
GATHER_ROW_FULL(gather8_d512_a32_min64_chained, 8, 512, 32, true, 64, 0)
// Variants of gather8_d512_a32_min64 (the prelude's tcc_gather_sum) for the
// rows whose x comes from L2 (kron(mbeacxc,bcspwr03)). Rows of fewer than 64
// entries run as acc4_pf512_t1 in all of them; a row's last 0-7 entries in
// one masked step.
#define G8_FALLBACK(NAME)                                                                                             \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  acc4_pf512_t1(n, pos, crd, vals, x, y);                                                                             \
}
#if defined(__AVX512F__) && defined(__AVX512VL__)
#define G8_PREFETCH(p) G8_PREFETCH_AT(p, 512)
#define G8_PREFETCH_AT(p, D)                                                                                          \
  __builtin_prefetch((const void*)((unsigned long)(crd + (p)) + (D) * 4), 0, 2);                                     \
  __builtin_prefetch((const void*)((unsigned long)(vals + (p)) + (D) * 8), 0, 2);                                    \
  __builtin_prefetch((const void*)((unsigned long)(vals + (p)) + ((D) + 32) * 8), 0, 2);
#define G8_SHORT_ROW(i) G8_SHORT_ROW_AT(i, 512)
#define G8_SHORT_ROW_AT(i, D)                                                                                         \
  {                                                                                                                   \
    long long p = pos[i], end = pos[(i) + 1];                                                                         \
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                    \
    for (; p + 4 <= end; p += 4) {                                                                                    \
      __builtin_prefetch((const void*)((unsigned long)(crd + p) + (D) * 4), 0, 2);                                    \
      __builtin_prefetch((const void*)((unsigned long)(vals + p) + (D) * 8), 0, 2);                                   \
      t += vals[p] * x[crd[p]]; __asm__("" ::: "memory");                                                             \
      t1 += vals[p + 1] * x[crd[p + 1]]; __asm__("" ::: "memory");                                                    \
      t2 += vals[p + 2] * x[crd[p + 2]]; __asm__("" ::: "memory");                                                    \
      t3 += vals[p + 3] * x[crd[p + 3]];                                                                              \
    }                                                                                                                 \
    t = (t + t1) + (t2 + t3);                                                                                         \
    for (; p < end; p++) { __asm__(""); t += vals[p] * x[crd[p]]; }                                                   \
    y[i] = t;                                                                                                         \
  }
// The kernel over all rows: rows of 64 or more entries through NAME##_row,
// shorter ones as the short-row loop prefetching DIST entries ahead.
#define G8_ROWS(NAME, DIST)                                                                                           \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    if (pos[i + 1] - pos[i] >= 64) y[i] = NAME##_row(crd, vals, x, pos[i], pos[i + 1]);                               \
    else G8_SHORT_ROW_AT(i, DIST)                                                                                     \
  }                                                                                                                   \
}
static inline __attribute__((always_inline)) double g8_hsum(v8df s) {
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}
// The last 0-7 entries of a row in one masked step.
static inline __attribute__((always_inline)) v8df g8_masked(const int* crd, const double* vals, const double* x,
                                                            long long p, long long end, v8df sum) {
  if (p < end) {
    const v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};
    const unsigned char lanes = (unsigned char)((1u << (end - p)) - 1);
    const v8si none = {0, 0, 0, 0, 0, 0, 0, 0};
    const v8si index = LOAD_V8SI_MASKED(crd + p, none, lanes);
    const v8df v = __builtin_ia32_loadupd512_mask(vals + p, zero, lanes);
    sum += v * __builtin_ia32_gathersiv8df(zero, x, index, lanes, 8);
  }
  return sum;
}
// One step of 8 entries at p into sum (VLOAD: vals loaded into a register
// before the gather, not folded into the FMA after it).
#define G8_STEP(sum, p, VLOAD)                                                                                        \
  {                                                                                                                   \
    v8si index; v8df v, into = zero;                                                                                  \
    __builtin_memcpy(&index, crd + (p), 32); __builtin_memcpy(&v, vals + (p), 64);                                    \
    if (VLOAD) __asm__ volatile("" : "+v"(v));                                                                        \
    __asm__ volatile("" : "+v"(into));                                                                                \
    sum += v * __builtin_ia32_gathersiv8df(into, x, index, 0xFF, 8);                                                  \
  }
// HEAD: a masked first step up to the next 64-byte boundary of vals (crd's
// 32-byte one too when both arrays start on such a boundary), so that no
// 512-bit load of vals spans two lines. PFX: each step also prefetches
// (prefetcht0) the lines of x that the step PFX entries ahead gathers.
// VLOAD: see G8_STEP. DIST: how far ahead crd and vals are prefetched, in
// the gathers and in the short rows (G8_ROW: 512 entries, as the prelude did).
#define G8_ROW(NAME, HEAD, PFX, VLOAD) G8_ROW_DIST(NAME, HEAD, PFX, VLOAD, 512)
#define G8_ROW_DIST(NAME, HEAD, PFX, VLOAD, DIST)                                                                     \
static inline __attribute__((always_inline)) double NAME##_row(const int* crd, const double* vals, const double* x,  \
                                                               long long p, long long end) {                        \
  const v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};                                                                        \
  v8df sum = zero;                                                                                                    \
  if (HEAD) {                                                                                                         \
    const long long head = (long long)((0 - ((unsigned long)(vals + p) >> 3)) & 7);                                   \
    if (head) { sum = g8_masked(crd, vals, x, p, p + head, sum); p += head; }                                         \
  }                                                                                                                   \
  for (; p + 8 <= end; p += 8) {                                                                                      \
    G8_PREFETCH_AT(p, DIST)                                                                                           \
    if (PFX) {                                                                                                        \
      if (p + PFX + 8 <= end)                                                                                         \
        for (int k = 0; k < 8; k++) __builtin_prefetch((const void*)(x + crd[p + PFX + k]), 0, 3);                    \
    }                                                                                                                 \
    G8_STEP(sum, p, VLOAD)                                                                                            \
  }                                                                                                                   \
  return g8_hsum(g8_masked(crd, vals, x, p, end, sum));                                                               \
}                                                                                                                     \
G8_ROWS(NAME, DIST)
G8_ROW(g8_base, 0, 0, 0)
G8_ROW(g8_head, 1, 0, 0)
G8_ROW(g8_vload, 0, 0, 1)
G8_ROW(g8_head_vload, 1, 0, 1)
G8_ROW(g8_pfx32, 0, 32, 0)
G8_ROW(g8_pfx64, 0, 64, 0)
G8_ROW_DIST(g8_d768, 0, 0, 0, 768)
G8_ROW_DIST(g8_d1024, 0, 0, 0, 1024)
G8_ROW_DIST(g8_d1536, 0, 0, 0, 1536)
// Two rows at once, a step of 8 entries of each, two chains of gathers
// (LEAD: only the second row's streams prefetched, as they run 1 row ahead
// of the first's; otherwise each row's), then each row's rest alone.
#define G8_PAIR(NAME, LEAD, HEAD)                                                                                     \
G8_ROW(NAME##_one, HEAD, 0, 0)                                                                                        \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  _Pragma("omp parallel for schedule(dynamic, 8)") for (int i = 0; i < n; i += 2) {                                  \
    if (i + 1 < n && pos[i + 1] - pos[i] >= 64 && pos[i + 2] - pos[i + 1] >= 64) {                                   \
      const v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};                                                                    \
      v8df s = zero, t = zero;                                                                                        \
      long long p = pos[i], pe = pos[i + 1], q = pos[i + 1], qe = pos[i + 2];                                         \
      for (; p + 8 <= pe && q + 8 <= qe; p += 8, q += 8) {                                                            \
        if (!LEAD) { G8_PREFETCH(p) }                                                                                 \
        G8_PREFETCH(q)                                                                                                \
        G8_STEP(s, p, 0)                                                                                              \
        G8_STEP(t, q, 0)                                                                                              \
      }                                                                                                               \
      y[i] = g8_hsum(s) + NAME##_one_row(crd, vals, x, p, pe);                                                        \
      y[i + 1] = g8_hsum(t) + NAME##_one_row(crd, vals, x, q, qe);                                                    \
    } else {                                                                                                          \
      for (int r = i; r < i + 2 && r < n; r++) {                                                                      \
        if (pos[r + 1] - pos[r] >= 64) y[r] = NAME##_one_row(crd, vals, x, pos[r], pos[r + 1]);                       \
        else G8_SHORT_ROW(r)                                                                                          \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
}
G8_PAIR(g8_pair, 0, 0)
G8_PAIR(g8_pair_lead, 1, 0)
// x gathered by scalar loads (MIX 0: all 8 entries of a step; MIX 1: a step
// of 16, the first 8 by one gather, the other 8 by scalar loads).
#define G8_SCALAR(NAME, MIX)                                                                                          \
static inline __attribute__((always_inline)) double NAME##_row(const int* crd, const double* vals, const double* x,  \
                                                               long long p, long long end) {                        \
  const v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};                                                                        \
  v8df sum = zero, sum1 = zero;                                                                                       \
  const long long step = MIX ? 16 : 8;                                                                                \
  for (; p + step <= end; p += step) {                                                                                \
    G8_PREFETCH(p)                                                                                                    \
    if (MIX) { __builtin_prefetch((const void*)((unsigned long)(vals + p) + 520 * 8), 0, 2); G8_STEP(sum, p, 0) }      \
    const long long s = MIX ? p + 8 : p;                                                                              \
    v8df v, g = {x[crd[s]], x[crd[s + 1]], x[crd[s + 2]], x[crd[s + 3]],                                              \
                 x[crd[s + 4]], x[crd[s + 5]], x[crd[s + 6]], x[crd[s + 7]]};                                         \
    __builtin_memcpy(&v, vals + s, 64);                                                                               \
    sum1 += v * g;                                                                                                    \
  }                                                                                                                   \
  for (; p + 8 <= end; p += 8) G8_STEP(sum, p, 0)                                                                     \
  return g8_hsum(g8_masked(crd, vals, x, p, end, sum + sum1));                                                        \
}                                                                                                                     \
G8_ROWS(NAME, 512)
G8_SCALAR(g8_scalar, 0)
G8_SCALAR(g8_mix, 1)
#else
G8_FALLBACK(g8_base) G8_FALLBACK(g8_head) G8_FALLBACK(g8_vload) G8_FALLBACK(g8_head_vload) G8_FALLBACK(g8_pfx32)
G8_FALLBACK(g8_pfx64) G8_FALLBACK(g8_d768) G8_FALLBACK(g8_d1024) G8_FALLBACK(g8_d1536) G8_FALLBACK(g8_pair)
G8_FALLBACK(g8_pair_lead) G8_FALLBACK(g8_scalar) G8_FALLBACK(g8_mix)
#endif
// Non-temporal loads of the streams (vmovntdqa) after a masked head that
// aligns vals to 64 bytes (crd to 32 where both arrays start on such a
// boundary, as here); GCC only (its builtins).
#if defined(__AVX512F__) && defined(__AVX512VL__) && !defined(__clang__)
typedef long long v8di __attribute__((vector_size(64)));
typedef long long v4di __attribute__((vector_size(32)));
#define G8_NT(NAME, NTCRD)                                                                                            \
static inline __attribute__((always_inline)) double NAME##_row(const int* crd, const double* vals, const double* x,  \
                                                               long long p, long long end) {                        \
  const v8df zero = {0, 0, 0, 0, 0, 0, 0, 0};                                                                        \
  v8df sum = zero;                                                                                                    \
  const long long head = (long long)((0 - ((unsigned long)(vals + p) >> 3)) & 7);                                     \
  if (head) { sum = g8_masked(crd, vals, x, p, p + head, sum); p += head; }                                           \
  const int aligned = (((unsigned long)(crd + p)) & 31) == 0;                                                         \
  for (; p + 8 <= end; p += 8) {                                                                                      \
    G8_PREFETCH(p)                                                                                                    \
    v8si index; v8df into = zero;                                                                                     \
    if (NTCRD && aligned) {                                                                                           \
      v4di i4 = __builtin_ia32_movntdqa256((v4di*)(crd + p));                                                         \
      __builtin_memcpy(&index, &i4, 32);                                                                              \
    } else                                                                                                            \
      __builtin_memcpy(&index, crd + p, 32);                                                                          \
    v8di v8 = __builtin_ia32_movntdqa512((v8di*)(vals + p));                                                          \
    v8df v; __builtin_memcpy(&v, &v8, 64);                                                                            \
    __asm__ volatile("" : "+v"(into));                                                                                \
    sum += v * __builtin_ia32_gathersiv8df(into, x, index, 0xFF, 8);                                                  \
  }                                                                                                                   \
  return g8_hsum(g8_masked(crd, vals, x, p, end, sum));                                                               \
}                                                                                                                     \
G8_ROWS(NAME, 512)
G8_NT(g8_nt, 1)
G8_NT(g8_ntvals, 0)
#else
G8_FALLBACK(g8_nt) G8_FALLBACK(g8_ntvals)
#endif
// acc4_pf512_t1 with vals prefetched a second time AGAIN entries further.
#define ACC4_PF_AGAIN(NAME, AGAIN)                                                                                    \
extern "C" void NAME(int n, const long long* pos, const int* crd, const double* vals, const double* x, double* y) { \
  ROWS {                                                                                                              \
    double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                    \
    long long end = pos[i + 1];                                                                                       \
    long long p = pos[i];                                                                                             \
    for (; p + 4 <= end; p += 4) {                                                                                    \
      __builtin_prefetch((const void*)((unsigned long)(crd + p) + 512 * 4), 0, 2);                                   \
      __builtin_prefetch((const void*)((unsigned long)(vals + p) + 512 * 8), 0, 2);                                  \
      __builtin_prefetch((const void*)((unsigned long)(vals + p) + (512 + AGAIN) * 8), 0, 2);                        \
      int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q];                                                \
      __asm__("" ::: "memory");                                                                                       \
      int j_1 = crd[p + 1]; long long q_1 = (long long)j_1; t1 += vals[p + 1] * x[q_1];                               \
      __asm__("" ::: "memory");                                                                                       \
      int j_2 = crd[p + 2]; long long q_2 = (long long)j_2; t2 += vals[p + 2] * x[q_2];                               \
      __asm__("" ::: "memory");                                                                                       \
      int j_3 = crd[p + 3]; long long q_3 = (long long)j_3; t3 += vals[p + 3] * x[q_3];                               \
    }                                                                                                                 \
    t = (t + t1) + (t2 + t3);                                                                                         \
    for (; p < end; p++) { __asm__(""); int j = crd[p]; long long q = (long long)j; t += vals[p] * x[q]; }           \
    y[i] = t;                                                                                                         \
  }                                                                                                                   \
}
ACC4_PF_AGAIN(acc4_pf512_t1_a32, 32)
// Column panels (hand-written only; not a loop the printer can emit): the
// matrix's columns cut into panels of P columns (8 P bytes of x) and its
// rows into blocks of R; a block runs panel by panel, each row of it from a
// cursor up to the panel's last column, so that the rows of a block gather
// x from one panel while it is in L1; y(i) adds up the row's panels.
// Takes the number of columns too (PanelSpmv).
#define PANELS(NAME, R, P)                                                                                            \
extern "C" void NAME(int n, int m, const long long* pos, const int* crd, const double* vals, const double* x,       \
                     double* y) {                                                                                     \
  long long cursor[R];                                                                                                \
  for (int i0 = 0; i0 < n; i0 += R) {                                                                                 \
    const int rows = n - i0 < R ? n - i0 : R;                                                                         \
    for (int r = 0; r < rows; r++) cursor[r] = pos[i0 + r], y[i0 + r] = 0.0;                                          \
    for (int j0 = 0; j0 < m; j0 += P) {                                                                               \
      const int last = j0 + P;                                                                                        \
      for (int r = 0; r < rows; r++) {                                                                                \
        long long p = cursor[r];                                                                                      \
        const long long end = pos[i0 + r + 1];                                                                        \
        double t = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;                                                                 \
        for (; p + 4 <= end && crd[p + 3] < last; p += 4) {                                                           \
          __builtin_prefetch((const void*)((unsigned long)(crd + p) + 512 * 4), 0, 2);                                \
          __builtin_prefetch((const void*)((unsigned long)(vals + p) + 512 * 8), 0, 2);                               \
          t += vals[p] * x[crd[p]]; __asm__("" ::: "memory");                                                         \
          t1 += vals[p + 1] * x[crd[p + 1]]; __asm__("" ::: "memory");                                                \
          t2 += vals[p + 2] * x[crd[p + 2]]; __asm__("" ::: "memory");                                                \
          t3 += vals[p + 3] * x[crd[p + 3]];                                                                          \
        }                                                                                                             \
        t = (t + t1) + (t2 + t3);                                                                                     \
        for (; p < end && crd[p] < last; p++) { __asm__(""); t += vals[p] * x[crd[p]]; }                              \
        cursor[r] = p;                                                                                                \
        y[i0 + r] += t;                                                                                               \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
}
PANELS(panels_r128_p2k, 128, 2048)
PANELS(panels_r128_p4k, 128, 4096)
PANELS(panels_r128_p16k, 128, 16384)
PANELS(panels_r64_p8k, 64, 8192)
// --probes: the matrix's streams alone (crd and vals, no x), reassociated
// so that the sum's latency does not bound it.
extern "C" ASSOC void stream_only(int n, const long long* pos, const int* crd, const double* vals, const double*,
                                  double* y) {
  ROWS {
    double t = 0.0;
    {
      REASSOC
      for (long long p = pos[i]; p < pos[i + 1]; p++) t += vals[p] * (double)crd[p];
    }
    y[i] = t;
  }
}
)variants";

const std::vector<std::string> kVariantNames = {
    "simd32",      "simd32_len4", "simd_all",    "acc4",        "acc4_plain",  "acc4_barrier",    "acc8",
    "acc4_pf128",  "acc4_pf256",  "acc4_pf512",  "acc4_pf1024", "simd8_len4",  "acc4_barrier_pf", "hybrid_len4",
    "hybrid_len8", "hybrid_dflt", "assoc_all",   "hyb_assoc8",  "hyb_assoc16", "hyb_assoc32",     "hyb_assoc8_pf",
    "hyb_assoc16_pf", "hyb_assoc32_pf", "hyb_assoc8t", "hyb_assoc16t", "hyb_assoc16t_pf", "assoc_pf",
    "hyb_assoc16t_w512", "hyb16_nopf", "hyb8_nopf", "hyb16_seq8", "hyb16_seq", "hyb8_seq", "hyb16_seqadd",
    "hyb16_seqadd8", "hyb8_seqadd", "hyb8_masked", "hyb16_masked", "hyb8_masked_seq3", "hyb8_masked_seq4", "strip32_d256",
    "strip32_d512", "strip64_d512", "strip16_d256", "strip32_d256_nta", "strip32_d512_nta", "strip32_d1024_nta",
    "strip32_d256_t1", "strip32_d512_t1", "acc4_pf256_t0", "acc4_pf512_t0", "acc4_pf512_t1", "acc4_pf768_t1",
    "acc4_pf512_t2", "sched_dyn16", "sched_dyn_e2k", "sched_dyn_e8k", "sched_dyn_e32k", "sched_static", "sched_nnz",
    "sched_nnz_dyn4", "sched_nnz_dyn16", "sched_dyn_e128k", "hyb8_blk4", "hyb8_blk4_asm", "gather8_d512_a32",
    "gather8_d512_a128", "gather8_d512_a0", "gather8_d768_a32", "gather8_d384_a128", "gather8_d512_a32_seqtail",
    "gather16_d512_a32", "acc4_pf512_t1_a32", "gather8_d512_a32_min32", "gather8_d512_a32_min64",
    "gather8_d512_a32_min128", "gather8_d512_a32_min64_chained", "g8_base", "g8_head", "g8_vload",
    "g8_head_vload", "g8_pfx32", "g8_pfx64", "g8_pair", "g8_pair_lead", "g8_scalar", "g8_mix", "g8_nt", "g8_ntvals",
    "g8_d768", "g8_d1024", "g8_d1536"};

// The column of the kernel tcc prints (SpMV in fast mode).
const char* const kPrintedName = "tcc_fast";

tcc::rt::Coo readMatrix(const std::string& name) {
  return tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
}


// --huge-pages: an array in 2 MB pages where the kernel grants them
// (transparent huge pages asked for with madvise), zeroed.
class HugePageArray {
 public:
  explicit HugePageArray(size_t bytes) : bytes_((bytes + kHuge - 1) / kHuge * kHuge) {
    data_ = std::aligned_alloc(kHuge, bytes_);
    if (!data_) throw std::bad_alloc();
    madvise(data_, bytes_, MADV_HUGEPAGE);
    std::memset(data_, 0, bytes_);
  }
  ~HugePageArray() { std::free(data_); }
  HugePageArray(const HugePageArray&) = delete;
  HugePageArray& operator=(const HugePageArray&) = delete;
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  static constexpr size_t kHuge = size_t(2) << 20;
  size_t bytes_;
  void* data_;
};

double triadBytesPerSecond(StreamTriad triad, int repeat, bool hugePages, long length) {
  const size_t bytes = hugePages ? length * sizeof(double) : 0;
  HugePageArray ha(bytes), hb(bytes), hc(bytes);
  std::vector<double> va(hugePages ? 0 : length), vb(va.size()), vc(va.size());
  double* a = hugePages ? ha.as<double>() : va.data();
  double* b = hugePages ? hb.as<double>() : vb.data();
  double* c = hugePages ? hc.as<double>() : vc.data();
  for (long i = 0; i < length; ++i) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  return timeStreamTriad(triad, a, b, c, repeat, length);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 20, rounds = 3, threads = 1;
  bool inCacheOnly = false, outOfCacheOnly = false, probes = false, hugePages = false;
  std::vector<std::string> only;  // variant names, with or without the @width suffix; empty: all
  std::vector<std::pair<std::string, std::string>> scaleUps = {
      {"bcsstk16", "LF10"}, {"bayer10", "cage5"}, {"bcsstk13", "mesh1e1"}, {"dnn_n1024_l1", "gent113"},
      {"mbeacxc", "bcspwr03"}};
  tcc::jit::Backend backend = tcc::jit::Backend::SystemCompiler;
  OutOfCacheSizes sizes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--llc-multiple" && i + 1 < argc) sizes.llcMultiple = std::max(0.0, std::atof(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--in-cache-only") inCacheOnly = true;
    else if (arg == "--out-of-cache-only") outOfCacheOnly = true;
    else if (arg == "--probes") probes = true;
    else if (arg == "--huge-pages") hugePages = true;
    else if (arg == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--scale-ups" && i + 1 < argc) {
      scaleUps.clear();
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = std::min(list.find(',', start), list.size());
        const std::string pair = list.substr(start, comma - start);
        const size_t colon = pair.find(':');
        if (colon != std::string::npos) scaleUps.push_back({pair.substr(0, colon), pair.substr(colon + 1)});
        start = comma + 1;
      }
    }
    else if (arg == "--only" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) only.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    }
    else if (arg == "--backend" && i + 1 < argc)
      backend = argv[++i] == std::string("clang") ? tcc::jit::Backend::ClangInterpreter
                                                  : tcc::jit::Backend::SystemCompiler;
    else {
      std::fprintf(stderr, "usage: tcc_spmv_variants [--backend system|clang] [--repeat N] [--rounds R] "
                           "[--in-cache-only] [--out-of-cache-only] [--probes] [--huge-pages] [--threads T] "
                           "[--only NAME[@512|@dflt],...] [--scale-ups BIG:SMALL,...] [--llc-multiple M]\n");
      return 2;
    }
  }
  if (!runWithOmpThreads(threads, argv)) return 1;
  const Machine machine = thisMachine();
  sizes.llcBytes = machine.llcBytes;
  const long triadLength = sizes.llcMultiple > 0 ? streamTriadLengthFor(machine.llcBytes) : kStreamTriadLength;
  std::printf("machine: %s; load average at the start: %s\n\n", describe(machine).c_str(), loadAverageNow().c_str());
  // Without --huge-pages every array stays in 4 KB pages, the runtime's
  // tensors too (which otherwise take 2 MB pages from 4 MB).
  if (!hugePages) tcc::rt::setHugePageMinBytes(0);
  const bool parallel = threads > 1;
  // Compiled twice: tcc's fast flags, and the same without a preferred width.
  std::vector<std::string> fast512 = tcc::lowering::cppFloatingPointFlags(tcc::lowering::FloatingPointMode::Fast);
  std::vector<std::string> fastDefault;
  for (const auto& flag : fast512)
    if (flag.rfind("-mprefer-vector-width", 0) != 0) fastDefault.push_back(flag);
  tcc::jit::CompileOptions options512{backend, 3, parallel, fast512};
  tcc::jit::CompileOptions optionsDefault{backend, 3, parallel, fastDefault};
  tcc::jit::CompileOptions tacoOptions{tcc::jit::Backend::SystemCompiler, 3, parallel,
                                       {"-ffast-math", "-ffp-contract=fast"}};
  auto module512 = tcc::jit::compile(kVariants, options512);
  auto moduleDefault = tcc::jit::compile(kVariants, optionsDefault);
  auto tacoModule = tcc::jit::compile(kTacoStyle, tacoOptions);
  auto triadModule = compileStreamTriad(backend, parallel);

  std::vector<std::pair<std::string, Variant>> variants = {{"taco", plain(tacoModule->function<Spmv>("taco"))}};
  auto selected = [&](const std::string& name, const std::string& label) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end() ||
           std::find(only.begin(), only.end(), label) != only.end();
  };
  // The kernel tcc prints for fast mode, compiled by the same backend.
  tcc::CompileOptions printedOptions;
  printedOptions.floatingPoint = tcc::frontend::FloatingPointMode::Fast;
  printedOptions.backend = backend;
  tcc::Kernel printed = tcc::compile(
      tcc::Program::fromText(std::string("tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
                                         "y(i) = A(i,j) * x(j)\n") +
                                 (parallel ? "schedule { parallelize(i, CPUThread, NoRaces) }\n" : ""),
                             "spmv.tc"),
      printedOptions);
  if (selected(kPrintedName, kPrintedName)) {
    auto entry = printed.entryPoint(0);
    variants.push_back({kPrintedName, [entry](const Call& c) { entry(c.tensors); }});
  }
  for (const auto& name : kVariantNames) {
    if (selected(name, name + "@512")) variants.push_back({name + "@512", plain(module512->function<Spmv>(name))});
    if (selected(name, name + "@dflt"))
      variants.push_back({name + "@dflt", plain(moduleDefault->function<Spmv>(name))});
  }
  for (const auto& name : kPanelNames) {
    if (selected(name, name + "@512"))
      variants.push_back({name + "@512", panels(module512->function<PanelSpmv>(name))});
    if (selected(name, name + "@dflt"))
      variants.push_back({name + "@dflt", panels(moduleDefault->function<PanelSpmv>(name))});
  }
  if (probes) {
    auto taco = tacoModule->function<Spmv>("taco");
    auto acc4 = module512->function<Spmv>("acc4_pf512_t1");
    auto stream = module512->function<Spmv>("stream_only");
    variants.push_back({"probe:taco_xL1", [taco](const Call& c) { taco(c.n, c.pos, c.crdInL1, c.vals, c.x, c.y); }});
    variants.push_back(
        {"probe:acc4_pf512_t1_xL1", [acc4](const Call& c) { acc4(c.n, c.pos, c.crdInL1, c.vals, c.x, c.y); }});
    variants.push_back({"probe:streams", plain(stream)});
    auto gathers = module512->function<Spmv>("g8_base");
    variants.push_back(
        {"probe:g8_base_xL1", [gathers](const Call& c) { gathers(c.n, c.pos, c.crdInL1, c.vals, c.x, c.y); }});
  }
  for (const auto& name : only) {
    std::string base = name.substr(0, name.find('@'));
    if (base != kPrintedName && std::find(kVariantNames.begin(), kVariantNames.end(), base) == kVariantNames.end() &&
        std::find(kPanelNames.begin(), kPanelNames.end(), base) == kPanelNames.end()) {
      std::fprintf(stderr, "tcc_spmv_variants: no variant named %s\n", base.c_str());
      return 2;
    }
  }

  // Out of cache, a triad in the same pages as the matrix is timed once
  // every round of the calls, so that it sees the same load, and each
  // variant's bytes are also set against it (printed after the table).
  std::string againstTriad;
  auto run = [&](const std::string& label, const tcc::rt::Coo& coo, int reps, int rnds,
                 std::vector<std::vector<double>>& ratios, double bytes, TriadArrays* triadAmong = nullptr) {
    tcc::Tensor A = tcc::rt::pack(coo, tcc::toRuntimeFormat(tcc::Format::csr()));
    const auto dense = tcc::toRuntimeFormat(tcc::Format::denseOfOrder(1));
    tcc::Tensor xTensor({coo.dims[1]}, dense, tcc::rt::ValueType::Float64);
    tcc::Tensor yTensor({coo.dims[0]}, dense, tcc::rt::ValueType::Float64);
    tcc_tensor views[3] = {yTensor.abiView(), A.abiView(), xTensor.abiView()};
    tcc_tensor* pointers[3] = {&views[0], &views[1], &views[2]};
    const tcc_tensor& view = views[1];
    const auto* pos = reinterpret_cast<const long long*>(view.levels[1].pos);
    const int* crd = view.levels[1].crd;
    const auto* vals = static_cast<const double*>(view.vals);
    const int rows = coo.dims[0];
    auto* x = static_cast<double*>(views[2].vals);
    auto* y = static_cast<double*>(views[0].vals);
    // --huge-pages: the same arrays copied into 2 MB pages, the views
    // pointed at the copies.
    std::vector<std::unique_ptr<HugePageArray>> copies;
    auto inHugePages = [&](auto*& array, int64_t count) {
      using T = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<decltype(array)>>>;
      copies.push_back(std::make_unique<HugePageArray>(size_t(count) * sizeof(T)));
      T* copy = copies.back()->as<T>();
      std::memcpy(copy, array, size_t(count) * sizeof(T));
      array = copy;
      return copy;
    };
    if (hugePages) {
      views[1].levels[1].pos = inHugePages(pos, rows + 1);
      const int64_t stored = pos[rows];
      views[1].levels[1].crd = const_cast<int*>(inHugePages(crd, stored));
      views[1].vals = const_cast<double*>(inHugePages(vals, stored));
      views[2].vals = inHugePages(x, coo.dims[1]);
      views[0].vals = inHugePages(y, rows);
    }
    for (int j = 0; j < coo.dims[1]; ++j) x[j] = 1.0 + 0.25 * double(j % 7);
    std::vector<int> crdInL1;
    std::string described = label;
    if (probes) {
      crdInL1.resize(size_t(pos[rows]));
      for (size_t p = 0; p < crdInL1.size(); ++p) crdInL1[p] = crd[p] % std::min(2048, coo.dims[1]);
      double lines = 0;
      std::vector<int> rowLines;
      for (int i = 0; i < rows; ++i) {
        rowLines.clear();
        for (long long p = pos[i]; p < pos[i + 1]; ++p) rowLines.push_back(crd[p] / 8);
        std::sort(rowLines.begin(), rowLines.end());
        lines += double(std::unique(rowLines.begin(), rowLines.end()) - rowLines.begin());
      }
      char text[96];
      std::snprintf(text, sizeof text, " (x lines %.0f / entries %.0f a row)", lines / rows, double(pos[rows]) / rows);
      described += text;
    }
    const Call call{rows, coo.dims[1], pos, crd, vals, x, y, pointers, crdInL1.data()};
    std::vector<double> reference(rows);
    for (int i = 0; i < rows; ++i)
      for (long long p = pos[i]; p < pos[i + 1]; ++p) reference[i] += vals[p] * x[crd[p]];
    double scale = 0;
    for (double v : reference) scale = std::max(scale, std::abs(v));
    std::vector<std::vector<double>> samples(variants.size());
    for (size_t v = 0; v < variants.size(); ++v) {
      std::fill(y, y + rows, 0.0);
      variants[v].second(call);
      if (variants[v].first.rfind("probe:", 0) == 0) continue;
      double worst = 0;
      for (int i = 0; i < rows; ++i) worst = std::max(worst, std::abs(y[i] - reference[i]));
      if (worst > 1e-9 * std::max(scale, 1.0)) {
        std::fprintf(stderr, "%s on %s: wrong result (%.3g)\n", variants[v].first.c_str(), label.c_str(), worst);
        std::exit(1);
      }
    }
    // Round robin, one call of each variant in turn, so that a change in
    // the machine's load falls on every variant alike.
    std::vector<double> triadSamples;
    for (int r = 0; r < rnds; ++r)
      for (int k = 0; k < reps; ++k) {
        for (size_t v = 0; v < variants.size(); ++v)
          samples[v].push_back(seconds([&] { variants[v].second(call); }));
        if (triadAmong) triadSamples.push_back(triadAmong->seconds());
      }
    const double taco = median(samples[0]);
    if (triadAmong) {
      const double triadRate = triadAmong->bytes() / median(triadSamples);
      char cell[64];
      std::snprintf(cell, sizeof cell, "| %s | %.2f |", label.c_str(), triadRate / 1e9);
      againstTriad += cell;
      for (size_t v = 0; v < variants.size(); ++v) {
        std::snprintf(cell, sizeof cell, " %.2f |", bytes / median(samples[v]) / triadRate);
        againstTriad += cell;
      }
      againstTriad += "\n";
    }
    std::printf("| %s | %.2f |", described.c_str(), bytes > 0 ? bytes / taco / 1e9 : 1e6 * taco);
    for (size_t v = 1; v < variants.size(); ++v) {
      double ratio = taco / median(samples[v]);
      ratios[v].push_back(ratio);
      std::printf(" %.2f |", ratio);
    }
    std::printf("\n");
    std::fflush(stdout);
  };
  auto header = [&](const char* first) {
    std::printf("| matrix | %s |", first);
    for (size_t v = 1; v < variants.size(); ++v) std::printf(" %s |", variants[v].first.c_str());
    std::printf("\n|---|---:|");
    for (size_t v = 1; v < variants.size(); ++v) std::printf("---:|");
    std::printf("\n");
  };
  auto footer = [&](const std::vector<std::vector<double>>& ratios) {
    std::printf("| geomean | |");
    for (size_t v = 1; v < variants.size(); ++v) std::printf(" %.2f |", geomean(ratios[v]));
    std::printf("\n");
  };

  const std::string onThreads = parallel ? std::to_string(threads) + " threads" : "one thread";
  if (!parallel && !outOfCacheOnly) {
    std::printf("In cache, one thread: TACO-style time / variant time (> 1: variant faster)\n\n");
    header("TACO us");
    std::vector<std::vector<double>> inCache(variants.size());
    for (const char* name : {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "Franz6_id1959_aug", "mbeacxc",
                             "cryg2500", "watt_2", "adder_dcop_05", "bcspwr10", "Pd", "G51", "dwt_992", "jagmesh7"})
      run(name, readMatrix(name), repeat, rounds, inCache, 0);
    footer(inCache);
  }
  if (inCacheOnly) return 0;

  if (!outOfCacheOnly) {
    // Between: scale-ups of 1.4-6.9 M entries (16-83 MB of CSR), past a
    // core's L2 but perhaps in the shared L3: where a switch between the
    // in-cache and the streaming loop would go.
    std::printf("\nBetween, %s: TACO-style time / variant time; TACO-style GB/s in the second column\n\n",
                onThreads.c_str());
    header("TACO GB/s");
    std::vector<std::vector<double>> between(variants.size());
    for (auto [big, small] : {std::pair{"dwt_992", "LF10"}, std::pair{"dnn_n1024_l1", "LF10"},
                              std::pair{"Pd", "cage5"}, std::pair{"mbeacxc", "LF10"}, std::pair{"bcsstk13", "LF10"}}) {
      tcc::rt::Coo coo = tcc::rt::kroneckerProduct(readMatrix(big), readMatrix(small));
      double bytes = 8.0 * (coo.dims[0] + 1) + 12.0 * coo.nnz() + 8.0 * coo.dims[1] + 8.0 * coo.dims[0];
      run(std::string("kron(") + big + "," + small + ") " + std::to_string(coo.nnz() / 1000) + "k", coo,
          std::max(1, repeat / 2), 2, between, bytes);
    }
    footer(between);
  }

  auto triad = triadModule->function<StreamTriad>("triad");
  TriadArrays triadAmong(*triadModule, hugePages, triadLength);
  std::printf("\nOut of cache, %s: TACO-style time / variant time; triad GB/s in the last line\n\n",
              onThreads.c_str());
  header("TACO GB/s");
  std::vector<std::vector<double>> outOfCache(variants.size());
  double triadSum = 0;
  int triads = 0;
  for (const auto& [big, small] : scaleUps) {
    const auto [name, coo] = spmvScaleUp(sizes, big, readMatrix(big), small, readMatrix(small));
    double bytes = spmvBytes(coo.dims[0], coo.dims[1], double(coo.nnz()));
    triadSum += triadBytesPerSecond(triad, 3, hugePages, triadLength), ++triads;
    run(name, coo, std::max(1, repeat / 5), 2, outOfCache, bytes, &triadAmong);
    triadSum += triadBytesPerSecond(triad, 3, hugePages, triadLength), ++triads;
  }
  footer(outOfCache);
  std::printf("\ntriad on %s: %.2f GB/s\n", onThreads.c_str(), triadSum / triads / 1e9);
  std::printf("\nOut of cache, %s: each loop's bytes / a triad's timed among the calls (%s pages)\n\n| matrix | triad GB/s |",
              onThreads.c_str(), hugePages ? "2 MB" : "4 KB");
  for (const auto& variant : variants) std::printf(" %s |", variant.first.c_str());
  std::printf("\n|---|---:|");
  for (size_t v = 0; v < variants.size(); ++v) std::printf("---:|");
  std::printf("\n%s", againstTriad.c_str());
  std::printf("\nload average at the end: %s\n", loadAverageNow().c_str());
  return 0;
}
