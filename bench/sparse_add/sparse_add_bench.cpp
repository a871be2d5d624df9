// CSR + CSR -> CSR out of cache: tcc's sparse add, in strict and fast
// floating-point mode, against a TACO-style loop, a two-pass (count, then
// fill) merge and Eigen's A + B, on Kronecker scale-ups of real matrices,
// with the bandwidth each achieves set against a STREAM triad measured in
// the same run.
//
//   tcc_sparse_add_bench [--repeat N] [--rounds R] [--threads T] [--backend system|clang]
//                        [--keep-heap] [--rows-on-threads] [--candidates] [--only VARIANT,...]
//                        [--pairs BIG:SMALL,...] [--llc-multiple M]
//
// A pair `random:ROWSxK` adds two random square matrices of K entries a
// row instead (independent coordinates: a merge no branch predictor learns).
//
// Inputs: A = kron(BIG, SMALL) and B = kron(SMALL, BIG), both of shape
// (rows(BIG) rows(SMALL)) x (cols(BIG) cols(SMALL)), each >= 20 M stored
// entries. Out of cache means out of this machine's last-level cache, read
// at run time (printed first, with the CPU): where A and B together read
// less than M times it (--llc-multiple, default 2), each is repeated k
// times along the diagonal, A = kron(I_k, BIG, SMALL) and B = kron(I_k,
// SMALL, BIG), with the smallest such k; the triad's arrays are each at
// least as large as that cache (and 256 MB). --llc-multiple 0 runs the
// sizes measured before this rule (one copy, 3 x 256 MB triads), which fit
// a large last-level cache. The two hold the same values in a different pattern (B is A
// with its rows and columns permuted by the perfect shuffle), so a row of
// C = A + B merges two long, unrelated coordinate lists: some coordinates
// in both, most in one.
//
// Every variant allocates its output inside the timed call, as a kernel
// that assembles a sparse result must, and the bench frees it after the
// call, outside the timing. With glibc's defaults an output of this size
// is mmap'd fresh on every call, so its pages fault in (and are zeroed by
// the operating system) inside the call; --keep-heap turns mmap off and
// trimming off (mallopt), so later calls reuse pages already touched and
// a realloc that grows an array copies it.
//
// Bytes: the lower bound is what any kernel must move: A's and B's pos,
// crd and vals read once, C's pos, crd and vals written once (8 bytes a
// pos entry, 4 a coordinate, 8 a value). Each row also says what the code
// moves beyond that (a counting pass reading pos and crd again, a prefix
// sum over pos), without the pages' zeroing and realloc's copies, which
// depend on the allocator. GB/s columns are lower-bound bytes / time.
//
// Peers, compiled by the system compiler as TACO compiles kernels (-O3
// -ffast-math, and -march=native as tcc's kernels get):
// - TACO-style: the loop TACO emits for C(i,j) = A(i,j) + B(i,j) with C
//   CSR, assembling while computing (its output arrays start at 2^20
//   entries and double by realloc).
// - two-pass: a counting pass over the coordinates, a prefix sum, then a
//   fill pass into arrays of the exact size (Eigen's and MKL's approach,
//   and tcc's own for a parallel schedule); with --threads both passes run
//   rows in parallel, as tcc's parallel kernel does.
// - Eigen 3 (one thread only; where the build has Eigen): `C = A + B` on
//   row-major SparseMatrix<double, RowMajor, int>.
//
// With --threads T > 1 tcc's kernel is compiled with
// `parallelize(i, CPUThread, NoRaces)` (rows in one pass: chunks of rows
// each thread appends to arrays of its own, then copies to their offsets),
// and once more in two passes ("tcc fast two-pass": count, prefix sum,
// fill; CompileOptions::rowsInOnePass = false), the two-pass peer gets the
// OpenMP schedule of the latter, and the triad runs on T threads; the
// TACO-style loop (TACO does not parallelize an assembled output) and Eigen
// are left out. --rows-on-threads does the same at one thread (the
// parallel kernels' per-thread cost, no thread waiting on another). "tcc
// fast plain copy", only where --only names it, is the one-pass kernel with
// its chunks copied out by plain stores on every input (on AMD cores, what
// it ran before the chunk copies streamed there; see the prelude's
// TCC_STREAMING_COPY_VALUES).
//
// --candidates adds the hand-written loops that decided what tcc prints
// (see kCandidates; with --threads they run on one thread, but for
// two_pass_nt, tcc_like_nt_dynamic, tcc_like_nt_static, ceiling_count_pass,
// lookback* and bound_then_compact_nt, which run rows on the threads) and tcc's kernel as
// printed before (tcc_before); candidates named ceiling_* compute
// something else (what a part of the work costs) and are not checked;
// --only keeps the variants named, in that order (the two-pass peer, the
// reference, must be among them).
//
// Every result is checked entry by entry (pos, crd and the value's bits)
// against the two-pass peer's, and Eigen's against it by value (Eigen adds
// 0 to an entry of one operand alone, turning -0 into +0). Calls go round
// robin over the variants; times are medians of all samples.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifdef TCC_BENCH_WITH_EIGEN
#include <Eigen/Sparse>
#endif

#include "tcc/jit/jit.h"
#include "tcc/lowering/codegen.h"
#include "tcc/tcc.h"
#include "../common/machine.h"
#include "../common/omp_threads.h"
#include "../common/stats.h"
#include "../common/scale_up.h"
#include "../common/stream_triad.h"

namespace {

std::string loadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

long minorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A CSR result as the peers return it: malloc'd arrays the caller frees.
struct CsrOut {
  long long* pos = nullptr;
  int* crd = nullptr;
  double* vals = nullptr;
};
using AddFunction = long long (*)(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                  const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out);

// The peers. taco_add is TACO's compute-and-assemble loop for
// C(i,j) = A(i,j) + B(i,j), all CSR (taco 0.x output with plain arguments
// and 64-bit positions); two_pass_add counts each row's entries first.
const char* const kPeers = R"(
#include <stdlib.h>
struct CsrOut { long long* pos; int* crd; double* vals; };
#define TACO_MIN(a, b) ((a) < (b) ? (a) : (b))

extern "C" long long taco_add(int C1_dimension, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                              const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long* C2_pos = (long long*)malloc(sizeof(long long) * (C1_dimension + 1));
  C2_pos[0] = 0;
  long long C2_crd_size = 1048576;
  int* C2_crd = (int*)malloc(sizeof(int) * C2_crd_size);
  long long pC2 = 0;
  long long C_capacity = 1048576;
  double* C_vals = (double*)malloc(sizeof(double) * C_capacity);
  for (int i = 0; i < C1_dimension; i++) {
    long long jA = A2_pos[i];
    long long pA2_end = A2_pos[(i + 1)];
    long long jB = B2_pos[i];
    long long pB2_end = B2_pos[(i + 1)];
    while (jA < pA2_end && jB < pB2_end) {
      int jA0 = A2_crd[jA];
      int jB0 = B2_crd[jB];
      int j = TACO_MIN(jA0, jB0);
      if (jA0 == j && jB0 == j) {
        if (C_capacity <= pC2) {
          C_vals = (double*)realloc(C_vals, sizeof(double) * (C_capacity * 2));
          C_capacity *= 2;
        }
        C_vals[pC2] = A_vals[jA] + B_vals[jB];
        if (C2_crd_size <= pC2) {
          C2_crd = (int*)realloc(C2_crd, sizeof(int) * (C2_crd_size * 2));
          C2_crd_size *= 2;
        }
        C2_crd[pC2] = j;
        pC2++;
      }
      else if (jA0 == j) {
        if (C_capacity <= pC2) {
          C_vals = (double*)realloc(C_vals, sizeof(double) * (C_capacity * 2));
          C_capacity *= 2;
        }
        C_vals[pC2] = A_vals[jA];
        if (C2_crd_size <= pC2) {
          C2_crd = (int*)realloc(C2_crd, sizeof(int) * (C2_crd_size * 2));
          C2_crd_size *= 2;
        }
        C2_crd[pC2] = j;
        pC2++;
      }
      else {
        if (C_capacity <= pC2) {
          C_vals = (double*)realloc(C_vals, sizeof(double) * (C_capacity * 2));
          C_capacity *= 2;
        }
        C_vals[pC2] = B_vals[jB];
        if (C2_crd_size <= pC2) {
          C2_crd = (int*)realloc(C2_crd, sizeof(int) * (C2_crd_size * 2));
          C2_crd_size *= 2;
        }
        C2_crd[pC2] = j;
        pC2++;
      }
      jA += (long long)(jA0 == j);
      jB += (long long)(jB0 == j);
    }
    while (jA < pA2_end) {
      int j = A2_crd[jA];
      if (C_capacity <= pC2) {
        C_vals = (double*)realloc(C_vals, sizeof(double) * (C_capacity * 2));
        C_capacity *= 2;
      }
      C_vals[pC2] = A_vals[jA];
      if (C2_crd_size <= pC2) {
        C2_crd = (int*)realloc(C2_crd, sizeof(int) * (C2_crd_size * 2));
        C2_crd_size *= 2;
      }
      C2_crd[pC2] = j;
      pC2++;
      jA++;
    }
    while (jB < pB2_end) {
      int j = B2_crd[jB];
      if (C_capacity <= pC2) {
        C_vals = (double*)realloc(C_vals, sizeof(double) * (C_capacity * 2));
        C_capacity *= 2;
      }
      C_vals[pC2] = B_vals[jB];
      if (C2_crd_size <= pC2) {
        C2_crd = (int*)realloc(C2_crd, sizeof(int) * (C2_crd_size * 2));
        C2_crd_size *= 2;
      }
      C2_crd[pC2] = j;
      pC2++;
      jB++;
    }
    C2_pos[i + 1] = pC2;
  }
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC2;
}

extern "C" long long two_pass_add(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                  const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1));
  pos[0] = 0;
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], count = 0;
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      pA += jA <= jB;
      pB += jB <= jA;
      count++;
    }
    pos[i + 1] = count + (endA - pA) + (endB - pB);
  }
  for (int i = 0; i < rows; i++) pos[i + 1] += pos[i];
  const long long nnz = pos[rows];
  int* crd = (int*)malloc(sizeof(int) * (nnz > 0 ? nnz : 1));
  double* vals = (double*)malloc(sizeof(double) * (nnz > 0 ? nnz : 1));
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], pC = pos[i];
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      if (jA == jB) { crd[pC] = jA; vals[pC] = A_vals[pA] + B_vals[pB]; pA++; pB++; }
      else if (jA < jB) { crd[pC] = jA; vals[pC] = A_vals[pA]; pA++; }
      else { crd[pC] = jB; vals[pC] = B_vals[pB]; pB++; }
      pC++;
    }
    for (; pA < endA; pA++, pC++) { crd[pC] = A2_crd[pA]; vals[pC] = A_vals[pA]; }
    for (; pB < endB; pB++, pC++) { crd[pC] = B2_crd[pB]; vals[pC] = B_vals[pB]; }
  }
  out->pos = pos;
  out->crd = crd;
  out->vals = vals;
  return nnz;
}
)";

// Candidates for tcc's serial kernel (--candidates): output arrays sized by
// the bound nnz(A) + nnz(B) up front (no capacity test per entry), with or
// without transparent huge pages or prefaulted pages, with the merge's
// cases as branches or as selects; and tcc's kernel as it was before
// (tcc_before), compiled the same way, to compare in one run.
const char* const kCandidates = R"(
#include <stdlib.h>
#include <sys/mman.h>
struct CsrOut { long long* pos; int* crd; double* vals; };

static void* allocate(long long bytes, bool huge) {
  void* p = malloc(bytes > 0 ? bytes : 1);
#ifdef MADV_HUGEPAGE
  if (huge && bytes >= (4 << 20)) {
    char* begin = (char*)(((unsigned long)p + (2 << 20) - 1) & ~((unsigned long)(2 << 20) - 1));
    char* end = (char*)(((unsigned long)p + bytes) & ~((unsigned long)(2 << 20) - 1));
    if (end > begin) madvise(begin, end - begin, MADV_HUGEPAGE);
  }
#endif
  return p;
}

// Prefaults the pages of bytes [from, to) of an array (whole pages inside
// it) in one system call instead of one fault a page.
static void populate(void* array, long long from, long long to) {
#ifdef MADV_POPULATE_WRITE
  unsigned long begin = ((unsigned long)array + from + 4095) & ~4095ul, end = ((unsigned long)array + to) & ~4095ul;
  if (end > begin) madvise((void*)begin, end - begin, MADV_POPULATE_WRITE);
#endif
}

// populate: 0 none, 1 the whole bound up front, 2 in steps of 4 MB of
// values ahead of the rows being written.
template <bool huge, bool select, int prefetch, int populating = 0, bool advanceInCases = false>
static long long bound_add(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                           const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long bound = A2_pos[rows] + B2_pos[rows];
  long long* C2_pos = (long long*)allocate(sizeof(long long) * (rows + 1LL), huge);
  int* C2_crd = (int*)allocate(sizeof(int) * bound, huge);
  double* C_vals = (double*)allocate(sizeof(double) * bound, huge);
  C2_pos[0] = 0;
  long long pC = 0, populated = 0;
  if (populating == 1) populate(C2_crd, 0, 4 * bound), populate(C_vals, 0, 8 * bound);
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
    if (populating == 2 && pC + (endA - pA) + (endB - pB) > populated) {
      long long next = pC + (endA - pA) + (endB - pB) + (1 << 19);
      if (next > bound) next = bound;
      populate(C2_crd, 4 * populated, 4 * next), populate(C_vals, 8 * populated, 8 * next);
      populated = next;
    }
    while (pA < endA && pB < endB) {
      if (prefetch) {
        __builtin_prefetch(A2_crd + pA + prefetch);
        __builtin_prefetch(A_vals + pA + prefetch);
        __builtin_prefetch(B2_crd + pB + prefetch);
        __builtin_prefetch(B_vals + pB + prefetch);
      }
      int jA = A2_crd[pA], jB = B2_crd[pB];
      int j = jA < jB ? jA : jB;
      if (select) {
        double a = A_vals[pA], b = B_vals[pB], ab = a + b;
        bool inA = jA == j, inB = jB == j;
        C2_crd[pC] = j;
        C_vals[pC] = inA ? (inB ? ab : a) : b;
        pC++;
        pA += inA;
        pB += inB;
      } else if (advanceInCases) {
        // Each case moves its own cursors on: the next coordinates' loads
        // depend on the branch taken, not on the comparison's value.
        if (jA == j && jB == j) { C2_crd[pC] = j; C_vals[pC] = A_vals[pA] + B_vals[pB]; pC++; pA++; pB++; }
        else if (jA == j) { C2_crd[pC] = j; C_vals[pC] = A_vals[pA]; pC++; pA++; }
        else { C2_crd[pC] = j; C_vals[pC] = B_vals[pB]; pC++; pB++; }
      } else {
        if (jA == j && jB == j) { C2_crd[pC] = j; C_vals[pC] = A_vals[pA] + B_vals[pB]; pC++; }
        else if (jA == j) { C2_crd[pC] = j; C_vals[pC] = A_vals[pA]; pC++; }
        else { C2_crd[pC] = j; C_vals[pC] = B_vals[pB]; pC++; }
        if (jA == j) pA++;
        if (jB == j) pB++;
      }
    }
    for (; pA < endA; pA++, pC++) { C2_crd[pC] = A2_crd[pA]; C_vals[pC] = A_vals[pA]; }
    for (; pB < endB; pB++, pC++) { C2_crd[pC] = B2_crd[pB]; C_vals[pC] = B_vals[pB]; }
    C2_pos[i + 1] = pC;
  }
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC;
}
#define CANDIDATE(name, ...)                                                                                 \
  extern "C" long long name(int rows, const long long* a, const int* b, const double* c, const long long* d, \
                            const int* e, const double* f, CsrOut* out) {                                    \
    return bound_add<__VA_ARGS__>(rows, a, b, c, d, e, f, out);                                               \
  }
CANDIDATE(bound_branches, false, false, 0)
CANDIDATE(bound_select, false, true, 0)
CANDIDATE(bound_branches_huge, true, false, 0)
CANDIDATE(bound_select_huge, true, true, 0)
CANDIDATE(bound_select_huge_pf, true, true, 256)
CANDIDATE(bound_select_populate, false, true, 0, 1)

// The same merge writing its output with non-temporal (streaming) stores:
// no read of the output's lines before they are written.
extern "C" long long bound_select_nt(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                     const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long bound = A2_pos[rows] + B2_pos[rows];
  long long* C2_pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* C2_crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* C_vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  C2_pos[0] = 0;
  long long pC = 0;
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      int j = jA < jB ? jA : jB;
      double a = A_vals[pA], b = B_vals[pB], ab = a + b;
      bool inA = jA == j, inB = jB == j;
      double v = inA ? (inB ? ab : a) : b;
      long long bits;
      __builtin_memcpy(&bits, &v, 8);
      __builtin_ia32_movnti(C2_crd + pC, j);
      __builtin_ia32_movnti64((long long*)(C_vals + pC), bits);
      pC++;
      pA += inA;
      pB += inB;
    }
    for (; pA < endA; pA++, pC++) { C2_crd[pC] = A2_crd[pA]; C_vals[pC] = A_vals[pA]; }
    for (; pB < endB; pB++, pC++) { C2_crd[pC] = B2_crd[pB]; C_vals[pC] = B_vals[pB]; }
    C2_pos[i + 1] = pC;
  }
  __builtin_ia32_sfence();
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC;
}

// Two rows merged at once (rows i and i + 1 in one loop, two independent
// chains of loads and compares): row i + 1 is written from its bound
// (where row i's output could end at most) and moved down over the gap
// that row i's shared coordinates left.
static inline void merge_step(const int* A2_crd, const double* A_vals, const int* B2_crd, const double* B_vals,
                              long long& pA, long long& pB, long long& pC, int* C2_crd, double* C_vals) {
  int jA = A2_crd[pA], jB = B2_crd[pB];
  int j = jA < jB ? jA : jB;
  double a = A_vals[pA], b = B_vals[pB], ab = a + b;
  bool inA = jA == j, inB = jB == j;
  C2_crd[pC] = j;
  C_vals[pC] = inA ? (inB ? ab : a) : b;
  pC++;
  pA += inA;
  pB += inB;
}
static inline void merge_tail(const int* A2_crd, const double* A_vals, const int* B2_crd, const double* B_vals,
                              long long pA, long long endA, long long pB, long long endB, long long& pC, int* C2_crd,
                              double* C_vals) {
  while (pA < endA && pB < endB) merge_step(A2_crd, A_vals, B2_crd, B_vals, pA, pB, pC, C2_crd, C_vals);
  for (; pA < endA; pA++, pC++) { C2_crd[pC] = A2_crd[pA]; C_vals[pC] = A_vals[pA]; }
  for (; pB < endB; pB++, pC++) { C2_crd[pC] = B2_crd[pB]; C_vals[pC] = B_vals[pB]; }
}
extern "C" long long bound_select_two_rows(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                           const long long* B2_pos, const int* B2_crd, const double* B_vals,
                                           CsrOut* out) {
  long long bound = A2_pos[rows] + B2_pos[rows];
  long long* C2_pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* C2_crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* C_vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  C2_pos[0] = 0;
  long long pC = 0;
  int i = 0;
  for (; i + 1 < rows; i += 2) {
    long long pA0 = A2_pos[i], eA0 = A2_pos[i + 1], pB0 = B2_pos[i], eB0 = B2_pos[i + 1];
    long long pA1 = A2_pos[i + 1], eA1 = A2_pos[i + 2], pB1 = B2_pos[i + 1], eB1 = B2_pos[i + 2];
    long long pC0 = pC, start1 = pC + (eA0 - pA0) + (eB0 - pB0), pC1 = start1;
    while (pA0 < eA0 && pB0 < eB0 && pA1 < eA1 && pB1 < eB1) {
      merge_step(A2_crd, A_vals, B2_crd, B_vals, pA0, pB0, pC0, C2_crd, C_vals);
      merge_step(A2_crd, A_vals, B2_crd, B_vals, pA1, pB1, pC1, C2_crd, C_vals);
    }
    merge_tail(A2_crd, A_vals, B2_crd, B_vals, pA0, eA0, pB0, eB0, pC0, C2_crd, C_vals);
    merge_tail(A2_crd, A_vals, B2_crd, B_vals, pA1, eA1, pB1, eB1, pC1, C2_crd, C_vals);
    long long n1 = pC1 - start1;
    if (start1 != pC0)
      for (long long k = 0; k < n1; k++) C2_crd[pC0 + k] = C2_crd[start1 + k], C_vals[pC0 + k] = C_vals[start1 + k];
    C2_pos[i + 1] = pC0;
    pC = pC0 + n1;
    C2_pos[i + 2] = pC;
  }
  for (; i < rows; i++) {
    merge_tail(A2_crd, A_vals, B2_crd, B_vals, A2_pos[i], A2_pos[i + 1], B2_pos[i], B2_pos[i + 1], pC, C2_crd, C_vals);
    C2_pos[i + 1] = pC;
  }
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC;
}

// tcc's kernel before the output was sized up front and the merge lost its
// branches (as printed at commit f5ee17f, arguments made plain): a capacity
// test at every entry, arrays from 1024 entries doubled by realloc.
extern "C" long long tcc_before(int C1_dimension, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long pC2 = 0;
  long long* C2_pos = (long long*)calloc(sizeof(long long), (size_t)(C1_dimension + 1LL));
  long long C2_crd_capacity = 1024;
  int* C2_crd = (int*)malloc(sizeof(int) * (size_t)C2_crd_capacity);
  double* C_vals = (double*)malloc(sizeof(double) * (size_t)C2_crd_capacity);
#define TCC_GROW                                                                     \
  if (pC2 >= C2_crd_capacity) {                                                      \
    C2_crd_capacity = C2_crd_capacity * 2 > pC2 + 1 ? C2_crd_capacity * 2 : pC2 + 1; \
    C2_crd = (int*)realloc(C2_crd, sizeof(int) * (size_t)C2_crd_capacity);           \
    C_vals = (double*)realloc(C_vals, sizeof(double) * (size_t)C2_crd_capacity);     \
  }
  for (int i = 0; i < C1_dimension; i++) {
    long long pA2 = A2_pos[i], pA2_end = A2_pos[i + 1], pB2 = B2_pos[i], pB2_end = B2_pos[i + 1];
    while (((pA2 < pA2_end) && (pB2 < pB2_end))) {
      int jA = A2_crd[pA2];
      int jB = B2_crd[pB2];
      int j = jA < jB ? jA : jB;
      if (((jA == j) && (jB == j))) {
        TCC_GROW
        C2_crd[pC2] = j;
        C_vals[pC2] = (A_vals[pA2] + B_vals[pB2]);
        pC2 += 1LL;
      } else if ((jA == j)) {
        TCC_GROW
        C2_crd[pC2] = j;
        C_vals[pC2] = A_vals[pA2];
        pC2 += 1LL;
      } else if ((jB == j)) {
        TCC_GROW
        C2_crd[pC2] = j;
        C_vals[pC2] = B_vals[pB2];
        pC2 += 1LL;
      }
      if ((jA == j)) pA2 = (pA2 + 1LL);
      if ((jB == j)) pB2 = (pB2 + 1LL);
    }
    while ((pA2 < pA2_end)) {
      TCC_GROW
      C2_crd[pC2] = A2_crd[pA2];
      C_vals[pC2] = A_vals[pA2];
      pC2 += 1LL;
      pA2 = (pA2 + 1LL);
    }
    while ((pB2 < pB2_end)) {
      TCC_GROW
      C2_crd[pC2] = B2_crd[pB2];
      C_vals[pC2] = B_vals[pB2];
      pC2 += 1LL;
      pB2 = (pB2 + 1LL);
    }
    C2_pos[i + 1] = pC2;
  }
#undef TCC_GROW
  for (long long p = 0; p < C1_dimension; p++)
    if (C2_pos[p + 1] < C2_pos[p]) C2_pos[p + 1] = C2_pos[p];
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC2;
}
CANDIDATE(bound_select_populate_steps, false, true, 0, 2)
CANDIDATE(bound_branches_advance, false, false, 0, 0, true)
CANDIDATE(bound_branches_advance_pf64, false, false, 64, 0, true)
CANDIDATE(bound_branches_advance_pf256, false, false, 256, 0, true)

// Stores that skip the cache (movnti): the output's lines are not read
// before they are written (no write-allocate), 12 bytes an entry of C less.
static inline void store_nt_value(double* vals, long long p, double v) {
  long long bits;
  __builtin_memcpy(&bits, &v, 8);
  __builtin_ia32_movnti64((long long*)(vals + p), bits);
}
static inline void store_nt(int* crd, double* vals, long long p, int j, double v) {
  long long bits;
  __builtin_memcpy(&bits, &v, 8);
  __builtin_ia32_movnti(crd + p, j);
  __builtin_ia32_movnti64((long long*)(vals + p), bits);
}

// The printed merge (each case moving its own cursors) with streaming
// stores (nt) or plain ones, and optionally a prefetch of the four input
// streams `prefetch` entries ahead, into L1 (locality 3, prefetcht0) or
// the outer caches (2, prefetcht1, as tcc's SpMV prefetches).
template <int prefetch, int locality, bool nt>
static long long advance_loop(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                              const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long bound = A2_pos[rows] + B2_pos[rows];
  long long* C2_pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* C2_crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* C_vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  C2_pos[0] = 0;
  long long pC = 0;
#define STORE(j, v)                                 \
  if (nt) store_nt(C2_crd, C_vals, pC, (j), (v)); \
  else C2_crd[pC] = (j), C_vals[pC] = (v);
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
    while (pA < endA && pB < endB) {
      if (prefetch) {
        __builtin_prefetch(A2_crd + pA + prefetch, 0, locality);
        __builtin_prefetch(A_vals + pA + prefetch, 0, locality);
        __builtin_prefetch(B2_crd + pB + prefetch, 0, locality);
        __builtin_prefetch(B_vals + pB + prefetch, 0, locality);
      }
      int jA = A2_crd[pA], jB = B2_crd[pB];
      int j = jA < jB ? jA : jB;
      if (jA == j && jB == j) { STORE(j, A_vals[pA] + B_vals[pB]) pC++; pA++; pB++; }
      else if (jA == j) { STORE(j, A_vals[pA]) pC++; pA++; }
      else { STORE(j, B_vals[pB]) pC++; pB++; }
    }
    for (; pA < endA; pA++, pC++) { STORE(A2_crd[pA], A_vals[pA]) }
    for (; pB < endB; pB++, pC++) { STORE(B2_crd[pB], B_vals[pB]) }
    C2_pos[i + 1] = pC;
  }
#undef STORE
  if (nt) __builtin_ia32_sfence();
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC;
}
#define ADVANCE(name, ...)                                                                                   \
  extern "C" long long name(int rows, const long long* a, const int* b, const double* c, const long long* d, \
                            const int* e, const double* f, CsrOut* out) {                                    \
    return advance_loop<__VA_ARGS__>(rows, a, b, c, d, e, f, out);                                            \
  }
ADVANCE(bound_branches_advance_nt, 0, 3, true)
ADVANCE(bound_branches_advance_pf256_nt, 256, 3, true)
ADVANCE(bound_branches_advance_pf512_t1, 512, 2, false)
ADVANCE(bound_branches_advance_pf512_t1_nt, 512, 2, true)

// Not an add: each row's entries of A, then B's, copied to C by memcpy (same bytes
// read and written as the add, no merge). What these six streams reach
// without the merge's control; not checked (its result is not C).
extern "C" long long ceiling_concat(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                    const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long bound = A2_pos[rows] + B2_pos[rows];
  long long* C2_pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* C2_crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* C_vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  C2_pos[0] = 0;
  long long pC = 0;
  for (int i = 0; i < rows; i++) {
    long long a = A2_pos[i], nA = A2_pos[i + 1] - a, b = B2_pos[i], nB = B2_pos[i + 1] - b;
    __builtin_memcpy(C2_crd + pC, A2_crd + a, 4 * nA);
    __builtin_memcpy(C_vals + pC, A_vals + a, 8 * nA);
    pC += nA;
    __builtin_memcpy(C2_crd + pC, B2_crd + b, 4 * nB);
    __builtin_memcpy(C_vals + pC, B_vals + b, 8 * nB);
    pC += nB;
    C2_pos[i + 1] = pC;
  }
  out->pos = C2_pos;
  out->crd = C2_crd;
  out->vals = C_vals;
  return pC;
}

// Not an add: the counting pass of tcc's row-parallel kernel alone (each
// row's entries counted by the printed merge, rows on the threads, then the
// prefix sum), writing only C's pos (crd and vals left empty; not checked).
// What the first of the parallel kernel's two passes costs.
extern "C" long long ceiling_count_pass(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                        const long long* B2_pos, const int* B2_crd, const double* B_vals,
                                        CsrOut* out) {
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1));
  pos[0] = 0;
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], count = 0;
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      int j = jA < jB ? jA : jB;
      if (jA == j && jB == j) { count++; pA++; pB++; }
      else if (jA == j) { count++; pA++; }
      else { count++; pB++; }
    }
    pos[i + 1] = count + (endA - pA) + (endB - pB);
  }
  for (int i = 0; i < rows; i++) pos[i + 1] += pos[i];
  out->pos = pos;
  out->crd = (int*)malloc(sizeof(int));
  out->vals = (double*)malloc(sizeof(double));
  return pos[rows];
}

// The two-pass merge (rows on OpenMP threads where compiled with OpenMP,
// as tcc's row-parallel kernel runs) with the fill's stores streaming.
extern "C" long long two_pass_nt(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                 const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1));
  pos[0] = 0;
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], count = 0;
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      pA += jA <= jB;
      pB += jB <= jA;
      count++;
    }
    pos[i + 1] = count + (endA - pA) + (endB - pB);
  }
  for (int i = 0; i < rows; i++) pos[i + 1] += pos[i];
  const long long nnz = pos[rows];
  int* crd = (int*)malloc(sizeof(int) * (nnz > 0 ? nnz : 1));
  double* vals = (double*)malloc(sizeof(double) * (nnz > 0 ? nnz : 1));
  #pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], pC = pos[i];
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      if (jA == jB) { store_nt(crd, vals, pC, jA, A_vals[pA] + B_vals[pB]); pA++; pB++; }
      else if (jA < jB) { store_nt(crd, vals, pC, jA, A_vals[pA]); pA++; }
      else { store_nt(crd, vals, pC, jB, B_vals[pB]); pB++; }
      pC++;
    }
    for (; pA < endA; pA++, pC++) store_nt(crd, vals, pC, A2_crd[pA], A_vals[pA]);
    for (; pB < endB; pB++, pC++) store_nt(crd, vals, pC, B2_crd[pB], B_vals[pB]);
    __builtin_ia32_sfence();
  }
  out->pos = pos;
  out->crd = crd;
  out->vals = vals;
  return nnz;
}

// tcc's row-parallel kernel as its streaming copy runs it (the counting
// pass, the prefix sum, then the fill with streaming stores, each thread
// fencing once at its end), rows dealt out in chunks of 16 (dynamic, as
// tcc prints) or in one contiguous range a thread (static).
static long long two_pass_nt_fenced_once(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                         const long long* B2_pos, const int* B2_crd, const double* B_vals,
                                         CsrOut* out) {
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1));
  pos[0] = 0;
  #pragma omp parallel for schedule(runtime)
  for (int i = 0; i < rows; i++) {
    long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], count = 0;
    while (pA < endA && pB < endB) {
      int jA = A2_crd[pA], jB = B2_crd[pB];
      int j = jA < jB ? jA : jB;
      if (jA == j && jB == j) { count++; pA++; pB++; }
      else if (jA == j) { count++; pA++; }
      else { count++; pB++; }
    }
    pos[i + 1] = count + (endA - pA) + (endB - pB);
  }
  for (int i = 0; i < rows; i++) pos[i + 1] += pos[i];
  const long long nnz = pos[rows];
  int* crd = (int*)malloc(sizeof(int) * (nnz > 0 ? nnz : 1));
  double* vals = (double*)malloc(sizeof(double) * (nnz > 0 ? nnz : 1));
  #pragma omp parallel
  {
    #pragma omp for schedule(runtime) nowait
    for (int i = 0; i < rows; i++) {
      long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1], pC = pos[i];
      while (pA < endA && pB < endB) {
        int jA = A2_crd[pA], jB = B2_crd[pB];
        int j = jA < jB ? jA : jB;
        if (jA == j && jB == j) { store_nt(crd, vals, pC, j, A_vals[pA] + B_vals[pB]); pC++; pA++; pB++; }
        else if (jA == j) { store_nt(crd, vals, pC, j, A_vals[pA]); pC++; pA++; }
        else { store_nt(crd, vals, pC, j, B_vals[pB]); pC++; pB++; }
      }
      for (; pA < endA; pA++, pC++) store_nt(crd, vals, pC, A2_crd[pA], A_vals[pA]);
      for (; pB < endB; pB++, pC++) store_nt(crd, vals, pC, B2_crd[pB], B_vals[pB]);
    }
    __builtin_ia32_sfence();
  }
  out->pos = pos;
  out->crd = crd;
  out->vals = vals;
  return nnz;
}
#ifdef _OPENMP
extern "C" void omp_set_schedule(int kind, int chunk);  // omp_sched_static 1, omp_sched_dynamic 2
#endif
extern "C" long long tcc_like_nt_dynamic(int rows, const long long* a, const int* b, const double* c,
                                         const long long* d, const int* e, const double* f, CsrOut* out) {
#ifdef _OPENMP
  omp_set_schedule(2, 16);
#endif
  return two_pass_nt_fenced_once(rows, a, b, c, d, e, f, out);
}
extern "C" long long tcc_like_nt_static(int rows, const long long* a, const int* b, const double* c,
                                        const long long* d, const int* e, const double* f, CsrOut* out) {
#ifdef _OPENMP
  omp_set_schedule(1, 0);
#endif
  return two_pass_nt_fenced_once(rows, a, b, c, d, e, f, out);
}

// One pass, no counting (round 18's candidates). Rows in chunks of ROWS,
// claimed in order from a shared counter; a thread merges a chunk into a
// buffer of its own (in its L2), publishes the chunk's size, looks back over
// the chunks before it for its offset (decoupled look-back: a predecessor
// that has its inclusive prefix ends the walk, one that has only its size
// adds it), publishes its own prefix, then copies the buffer to the output
// (sized nnz(A) + nnz(B)) at that offset: streaming stores, scalar (1) or
// 64-byte vectors (2), or plain (0). Each input is read once, C written once.
#include <immintrin.h>
#ifdef _OPENMP
extern "C" int omp_get_num_threads(void);
extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_max_threads(void);
#else
static inline int omp_get_num_threads() { return 1; }
static inline int omp_get_thread_num() { return 0; }
static inline int omp_get_max_threads() { return 1; }
#endif
static inline void copy_out(int* crd, double* vals, long long at, const int* bcrd, const double* bvals, long long n,
                            int mode) {
  if (mode == 0) {
    __builtin_memcpy(crd + at, bcrd, 4 * n);
    __builtin_memcpy(vals + at, bvals, 8 * n);
    return;
  }
#ifdef __AVX512F__
  if (mode == 2) {
    long long k = 0;
    for (; k < n && ((unsigned long)(crd + at + k) & 63); k++) __builtin_ia32_movnti(crd + at + k, bcrd[k]);
    for (; k + 16 <= n; k += 16) _mm512_stream_si512((__m512i*)(crd + at + k), _mm512_loadu_si512(bcrd + k));
    for (; k < n; k++) __builtin_ia32_movnti(crd + at + k, bcrd[k]);
    k = 0;
    for (; k < n && ((unsigned long)(vals + at + k) & 63); k++) store_nt_value(vals, at + k, bvals[k]);
    for (; k + 8 <= n; k += 8) _mm512_stream_pd(vals + at + k, _mm512_loadu_pd(bvals + k));
    for (; k < n; k++) store_nt_value(vals, at + k, bvals[k]);
    return;
  }
#endif
  for (long long k = 0; k < n; k++) store_nt(crd, vals, at + k, bcrd[k], bvals[k]);
}
// The chunk after `chunk` (chunks are claimed in order: a chunk waits only
// on chunks other threads hold), its size published, the sizes of the
// chunks before it looked back over: its offset.
static inline long long chunk_offset(long long* state, long long c, long long size) {
  if (c == 0) {
    __atomic_store_n(&state[0], (size << 2) | 2, __ATOMIC_RELEASE);
    return 0;
  }
  __atomic_store_n(&state[c], (size << 2) | 1, __ATOMIC_RELEASE);
  long long offset = 0;
  for (long long q = c - 1;; q--) {
    long long s;
    while ((s = __atomic_load_n(&state[q], __ATOMIC_ACQUIRE)) == 0) __builtin_ia32_pause();
    offset += s >> 2;
    if (s & 2) break;
  }
  __atomic_store_n(&state[c], ((offset + size) << 2) | 2, __ATOMIC_RELEASE);
  return offset;
}
// ROWS rows a chunk, or (ROWS = 0) as many as hold about 8192 entries of
// the bound on average. count: each chunk's rows counted first (their
// coordinates stay in cache), then merged straight into the output at the
// chunk's offset (streaming stores), no buffer.
template <int ROWS, int mode, bool count = false>
static long long lookback_add(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                              const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  const long long bound = A2_pos[rows] + B2_pos[rows];
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  pos[0] = 0;
  long long per = ROWS;
  if (per == 0) {
    per = bound > 0 ? 8192LL * rows / bound : rows;
    per = per < 1 ? 1 : per > 4096 ? 4096 : per;
  }
  const long long chunks = (rows + per - 1) / per;
  long long* state = (long long*)calloc(chunks > 0 ? chunks : 1, sizeof(long long));
  long long next = 0;
  #pragma omp parallel
  {
    long long capacity = count ? 0 : 1 << 16;
    int* bcrd = count ? 0 : (int*)malloc(4 * capacity);
    double* bvals = count ? 0 : (double*)malloc(8 * capacity);
    for (;;) {
      long long c = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
      if (c >= chunks) break;
      int first = (int)(c * per), last = rows - first < per ? rows : (int)(first + per);
      long long p = 0;
      if (count) {
        for (int i = first; i < last; i++) {
          long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
          while (pA < endA && pB < endB) {
            int jA = A2_crd[pA], jB = B2_crd[pB];
            int j = jA < jB ? jA : jB;
            if (jA == j && jB == j) { p++; pA++; pB++; }
            else if (jA == j) { p++; pA++; }
            else { p++; pB++; }
          }
          p += (endA - pA) + (endB - pB);
        }
        long long q = chunk_offset(state, c, p);
        for (int i = first; i < last; i++) {
          long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
          while (pA < endA && pB < endB) {
            int jA = A2_crd[pA], jB = B2_crd[pB];
            int j = jA < jB ? jA : jB;
            if (jA == j && jB == j) { store_nt(crd, vals, q, j, A_vals[pA] + B_vals[pB]); q++; pA++; pB++; }
            else if (jA == j) { store_nt(crd, vals, q, j, A_vals[pA]); q++; pA++; }
            else { store_nt(crd, vals, q, j, B_vals[pB]); q++; pB++; }
          }
          for (; pA < endA; pA++, q++) store_nt(crd, vals, q, A2_crd[pA], A_vals[pA]);
          for (; pB < endB; pB++, q++) store_nt(crd, vals, q, B2_crd[pB], B_vals[pB]);
          pos[i + 1] = q;
        }
        continue;
      }
      long long need = (A2_pos[last] - A2_pos[first]) + (B2_pos[last] - B2_pos[first]);
      if (need > capacity) {
        capacity = need;
        bcrd = (int*)realloc(bcrd, 4 * capacity);
        bvals = (double*)realloc(bvals, 8 * capacity);
      }
      for (int i = first; i < last; i++) {
        long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
        while (pA < endA && pB < endB) {
          int jA = A2_crd[pA], jB = B2_crd[pB];
          int j = jA < jB ? jA : jB;
          if (jA == j && jB == j) { bcrd[p] = j; bvals[p] = A_vals[pA] + B_vals[pB]; p++; pA++; pB++; }
          else if (jA == j) { bcrd[p] = j; bvals[p] = A_vals[pA]; p++; pA++; }
          else { bcrd[p] = j; bvals[p] = B_vals[pB]; p++; pB++; }
        }
        for (; pA < endA; pA++, p++) { bcrd[p] = A2_crd[pA]; bvals[p] = A_vals[pA]; }
        for (; pB < endB; pB++, p++) { bcrd[p] = B2_crd[pB]; bvals[p] = B_vals[pB]; }
        pos[i + 1] = p;
      }
      long long offset = chunk_offset(state, c, p);
      copy_out(crd, vals, offset, bcrd, bvals, p, mode);
      for (int i = first; i < last; i++) pos[i + 1] += offset;
    }
    if (mode || count) __builtin_ia32_sfence();
    free(bcrd);
    free(bvals);
  }
  long long nnz = chunks > 0 ? state[chunks - 1] >> 2 : 0;
  free(state);
  out->pos = pos;
  out->crd = crd;
  out->vals = vals;
  return nnz;
}
// The same with each chunk's copy spread over the merge of the thread's
// next chunk (two buffers a thread: after each row merged, a share of the
// previous chunk goes out), so that a thread's stores overlap its merge as
// a merge straight into the output does; 64-byte streaming stores.
static long long lookback_overlap(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                  const long long* B2_pos, const int* B2_crd, const double* B_vals, CsrOut* out) {
  const long long bound = A2_pos[rows] + B2_pos[rows];
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  pos[0] = 0;
  long long per = bound > 0 ? 8192LL * rows / bound : rows;
  per = per < 1 ? 1 : per > 4096 ? 4096 : per;
  const long long chunks = (rows + per - 1) / per;
  long long* state = (long long*)calloc(chunks > 0 ? chunks : 1, sizeof(long long));
  long long next = 0;
  #pragma omp parallel
  {
    long long capacity[2] = {1 << 15, 1 << 15};
    int* bcrd[2] = {(int*)malloc(4 * capacity[0]), (int*)malloc(4 * capacity[1])};
    double* bvals[2] = {(double*)malloc(8 * capacity[0]), (double*)malloc(8 * capacity[1])};
    int cur = 0;
    long long prevSize = 0, prevCopied = 0, prevOffset = 0;
    for (;;) {
      long long c = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
      if (c >= chunks) break;
      int first = (int)(c * per), last = rows - first < per ? rows : (int)(first + per);
      long long need = (A2_pos[last] - A2_pos[first]) + (B2_pos[last] - B2_pos[first]);
      if (need > capacity[cur]) {
        capacity[cur] = need;
        bcrd[cur] = (int*)realloc(bcrd[cur], 4 * capacity[cur]);
        bvals[cur] = (double*)realloc(bvals[cur], 8 * capacity[cur]);
      }
      int* tc = bcrd[cur];
      double* tv = bvals[cur];
      const int prev = 1 - cur;
      const long long share = (prevSize + (last - first) - 1) / (last - first > 0 ? last - first : 1);
      long long p = 0;
      for (int i = first; i < last; i++) {
        long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
        while (pA < endA && pB < endB) {
          int jA = A2_crd[pA], jB = B2_crd[pB];
          int j = jA < jB ? jA : jB;
          if (jA == j && jB == j) { tc[p] = j; tv[p] = A_vals[pA] + B_vals[pB]; p++; pA++; pB++; }
          else if (jA == j) { tc[p] = j; tv[p] = A_vals[pA]; p++; pA++; }
          else { tc[p] = j; tv[p] = B_vals[pB]; p++; pB++; }
        }
        for (; pA < endA; pA++, p++) { tc[p] = A2_crd[pA]; tv[p] = A_vals[pA]; }
        for (; pB < endB; pB++, p++) { tc[p] = B2_crd[pB]; tv[p] = B_vals[pB]; }
        pos[i + 1] = p;
        if (prevCopied < prevSize) {
          long long n = prevSize - prevCopied < share ? prevSize - prevCopied : share;
          copy_out(crd, vals, prevOffset + prevCopied, bcrd[prev] + prevCopied, bvals[prev] + prevCopied, n, 2);
          prevCopied += n;
        }
      }
      if (prevCopied < prevSize)
        copy_out(crd, vals, prevOffset + prevCopied, bcrd[prev] + prevCopied, bvals[prev] + prevCopied,
                 prevSize - prevCopied, 2);
      long long offset = chunk_offset(state, c, p);
      for (int i = first; i < last; i++) pos[i + 1] += offset;
      prevSize = p, prevCopied = 0, prevOffset = offset;
      cur = prev;
    }
    if (prevCopied < prevSize)
      copy_out(crd, vals, prevOffset + prevCopied, bcrd[1 - cur] + prevCopied, bvals[1 - cur] + prevCopied,
               prevSize - prevCopied, 2);
    __builtin_ia32_sfence();
    for (int b = 0; b < 2; b++) free(bcrd[b]), free(bvals[b]);
  }
  long long nnz = chunks > 0 ? state[chunks - 1] >> 2 : 0;
  free(state);
  out->pos = pos;
  out->crd = crd;
  out->vals = vals;
  return nnz;
}
extern "C" long long lookback_auto_nt512_overlap(int rows, const long long* a, const int* b, const double* c,
                                                 const long long* d, const int* e, const double* f, CsrOut* out) {
  return lookback_overlap(rows, a, b, c, d, e, f, out);
}
#define LOOKBACK(name, ...)                                                                                   \
  extern "C" long long name(int rows, const long long* a, const int* b, const double* c, const long long* d, \
                            const int* e, const double* f, CsrOut* out) {                                    \
    return lookback_add<__VA_ARGS__>(rows, a, b, c, d, e, f, out);                                            \
  }
LOOKBACK(lookback16, 16, 0)
LOOKBACK(lookback16_nt, 16, 1)
LOOKBACK(lookback16_nt512, 16, 2)
LOOKBACK(lookback64_nt, 64, 1)
LOOKBACK(lookback64_nt512, 64, 2)
LOOKBACK(lookback_auto, 0, 0)
LOOKBACK(lookback_auto_nt512, 0, 2)
LOOKBACK(lookback16_count_nt, 16, 1, true)
LOOKBACK(lookback_auto_count_nt, 0, 1, true)

// One pass, then a compaction: each thread merges one contiguous range of
// rows (cut by their bound nnz(A rows) + nnz(B rows)) with streaming stores
// into the output at the range's bound offset (A2_pos[first] +
// B2_pos[first]), keeping each row's end; after a barrier every range but
// the first moves left to its real offset: the head that lands below its
// own start is set aside first, the rest moved forward, and after a second
// barrier the head is written (every range's source has then been read).
extern "C" long long bound_then_compact_nt(int rows, const long long* A2_pos, const int* A2_crd, const double* A_vals,
                                           const long long* B2_pos, const int* B2_crd, const double* B_vals,
                                           CsrOut* out) {
  const long long bound = A2_pos[rows] + B2_pos[rows];
  long long* pos = (long long*)malloc(sizeof(long long) * (rows + 1LL));
  int* crd = (int*)malloc(sizeof(int) * (bound > 0 ? bound : 1));
  double* vals = (double*)malloc(sizeof(double) * (bound > 0 ? bound : 1));
  pos[0] = 0;
  long long* sizes = (long long*)malloc(sizeof(long long) * omp_get_max_threads());
  long long nnz = 0;
  #pragma omp parallel
  {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    // range t: rows whose bound offset lies in [t, t + 1) * bound / T
    auto cut = [&](int k) {
      long long target = bound / T * k + (bound % T) * k / T;
      int lo = 0, hi = rows;
      while (lo < hi) { int mid = lo + (hi - lo) / 2; if (A2_pos[mid] + B2_pos[mid] < target) lo = mid + 1; else hi = mid; }
      return k == T ? rows : lo;
    };
    const int first = cut(t), last = cut(t + 1);
    const long long start = A2_pos[first] + B2_pos[first];
    long long p = start;
    for (int i = first; i < last; i++) {
      long long pA = A2_pos[i], endA = A2_pos[i + 1], pB = B2_pos[i], endB = B2_pos[i + 1];
      while (pA < endA && pB < endB) {
        int jA = A2_crd[pA], jB = B2_crd[pB];
        int j = jA < jB ? jA : jB;
        if (jA == j && jB == j) { store_nt(crd, vals, p, j, A_vals[pA] + B_vals[pB]); p++; pA++; pB++; }
        else if (jA == j) { store_nt(crd, vals, p, j, A_vals[pA]); p++; pA++; }
        else { store_nt(crd, vals, p, j, B_vals[pB]); p++; pB++; }
      }
      for (; pA < endA; pA++, p++) store_nt(crd, vals, p, A2_crd[pA], A_vals[pA]);
      for (; pB < endB; pB++, p++) store_nt(crd, vals, p, B2_crd[pB], B_vals[pB]);
      pos[i + 1] = p - start;
    }
    sizes[t] = p - start;
    __builtin_ia32_sfence();
    #pragma omp barrier
    long long offset = 0;
    for (int u = 0; u < t; u++) offset += sizes[u];
    if (t == T - 1) nnz = offset + sizes[t];
    const long long size = sizes[t], shift = start - offset;
    const long long head = shift < size ? shift : size;
    int* hcrd = 0;
    double* hvals = 0;
    if (shift > 0) {
      hcrd = (int*)malloc(4 * (head > 0 ? head : 1));
      hvals = (double*)malloc(8 * (head > 0 ? head : 1));
      __builtin_memcpy(hcrd, crd + start, 4 * head);
      __builtin_memcpy(hvals, vals + start, 8 * head);
      for (long long k = head; k < size; k++) store_nt(crd, vals, offset + k, crd[start + k], vals[start + k]);
    }
    for (int i = first; i < last; i++) pos[i + 1] += offset;
    __builtin_ia32_sfence();
    #pragma omp barrier
    if (shift > 0) {
      __builtin_memcpy(crd + offset, hcrd, 4 * head);
      __builtin_memcpy(vals + offset, hvals, 8 * head);
      free(hcrd);
      free(hvals);
    }
  }
  free(sizes);
  out->pos = pos;
  out->crd = crd;
  out->vals = vals;
  return nnz;
}
)";



// Outputs of this size are mmap'd fresh every call (glibc's defaults), or
// (kept) taken from a heap that keeps the pages freed calls leave (no mmap,
// no trimming), so that later calls reuse pages already touched. Set once,
// before anything is allocated.
void setHeapKept(bool kept) {
  if (!kept) return;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);  // never: the outputs of several variants exceed any finite threshold
  mallopt(M_TOP_PAD, 64 << 20);
}

tcc::rt::Coo readMatrix(const std::string& name) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  // Pattern matrices read as ones; give them distinct values so that sums
  // are not all 2 (seeded, reproducible).
  uint64_t state = 0x9E3779B97F4A7C15ull;
  if (std::all_of(coo.values.begin(), coo.values.end(), [](double v) { return v == 1; }))
    for (double& v : coo.values) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      v = 0.5 + double(state >> 11) * 0x1.0p-53;
    }
  return coo;
}

// kron(left, right) stored CSR, built row by row in order (the same
// entries as tcc::rt::kroneckerProduct, packed without sorting 20 M of
// them): row i * rows(right) + k holds left's row i times right's row k.
tcc::Tensor kronCsr(tcc::rt::Coo left, tcc::rt::Coo right) {
  left.sort(), right.sort();
  auto rowStarts = [](const tcc::rt::Coo& m) {
    std::vector<int64_t> start(size_t(m.dims[0]) + 1, 0);
    for (size_t k = 0; k < m.nnz(); ++k) start[size_t(m.coords[0][k]) + 1]++;
    for (size_t r = 0; r < size_t(m.dims[0]); ++r) start[r + 1] += start[r];
    return start;
  };
  const std::vector<int64_t> leftRows = rowStarts(left), rightRows = rowStarts(right);
  const int64_t rows = int64_t(left.dims[0]) * right.dims[0], columns = int64_t(left.dims[1]) * right.dims[1];
  const int64_t entries = int64_t(left.nnz()) * int64_t(right.nnz());
  tcc_tensor abi = tcc::rt::Tensor::emptyAssembledOutput({int32_t(rows), int32_t(columns)},
                                                         tcc::toRuntimeFormat(tcc::Format::csr()),
                                                         tcc::rt::ValueType::Float64);
  auto* pos = static_cast<long long*>(std::malloc(sizeof(long long) * size_t(rows + 1)));
  auto* crd = static_cast<int*>(std::malloc(sizeof(int) * size_t(std::max<int64_t>(entries, 1))));
  auto* vals = static_cast<double*>(std::malloc(sizeof(double) * size_t(std::max<int64_t>(entries, 1))));
  int64_t p = 0;
  pos[0] = 0;
  for (int32_t i = 0; i < left.dims[0]; ++i)
    for (int32_t k = 0; k < right.dims[0]; ++k) {
      for (int64_t a = leftRows[i]; a < leftRows[i + 1]; ++a)
        for (int64_t b = rightRows[k]; b < rightRows[k + 1]; ++b, ++p) {
          crd[p] = left.coords[1][a] * right.dims[1] + right.coords[1][b];
          vals[p] = left.values[a] * right.values[b];
        }
      pos[int64_t(i) * right.dims[0] + k + 1] = p;
    }
  abi.levels[1].pos = pos;
  abi.levels[1].crd = crd;
  abi.vals = vals;
  abi.vals_size = entries;
  return tcc::rt::Tensor::adopt(std::move(abi));
}

// A result's storage, whoever made it.
struct Result {
  std::vector<long long> pos;
  std::vector<int> crd;
  std::vector<double> vals;
};

Result copyOf(int rows, const long long* pos, const int* crd, const double* vals) {
  Result r;
  r.pos.assign(pos, pos + rows + 1);
  r.crd.assign(crd, crd + pos[rows]);
  r.vals.assign(vals, vals + pos[rows]);
  return r;
}

// Where two results first differ ("" when they hold the same bits).
std::string difference(const Result& a, const Result& b, bool bitwise) {
  if (a.pos != b.pos) {
    size_t k = 0;
    while (k < a.pos.size() && k < b.pos.size() && a.pos[k] == b.pos[k]) ++k;
    return "pos differs at row " + std::to_string(k);
  }
  if (a.crd != b.crd) return "crd differs";
  for (size_t k = 0; k < a.vals.size(); ++k) {
    bool same = bitwise ? std::memcmp(&a.vals[k], &b.vals[k], sizeof(double)) == 0 : a.vals[k] == b.vals[k];
    if (!same) return "value " + std::to_string(k) + " differs";
  }
  return "";
}

struct Variant {
  std::string name;
  std::function<void()> call;     // one timed call: allocates and fills an output
  std::function<void()> release;  // frees that output (not timed)
  std::function<Result()> result;  // the last call's output, copied
  double extraBytes = 0;          // moved beyond the lower bound (see the header)
  std::vector<double> samples;
  long faults = 0;
};

struct Operands {
  int rows = 0, cols = 0;  // kron(BIG,SMALL) and kron(SMALL,BIG) have the same shape
  tcc::Tensor A, B;
  tcc_tensor aView{}, bView{};
  const long long* aPos() const { return reinterpret_cast<const long long*>(aView.levels[1].pos); }
  const long long* bPos() const { return reinterpret_cast<const long long*>(bView.levels[1].pos); }
};

Variant tccVariant(const std::string& name, tcc::Kernel::EntryPoint entry, Operands& in, double extraBytes) {
  auto output = std::make_shared<tcc_tensor>();
  const int rows = in.rows, cols = in.cols;
  auto release = [output] {
    std::free(output->levels[1].pos);
    std::free(output->levels[1].crd);
    std::free(output->vals);
    output->levels[1].pos = nullptr, output->levels[1].crd = nullptr, output->vals = nullptr;
  };
  Operands* operands = &in;
  return {name,
          [output, entry, operands, rows, cols] {
            *output = tcc::rt::Tensor::emptyAssembledOutput({rows, cols}, tcc::toRuntimeFormat(tcc::Format::csr()),
                                                            tcc::rt::ValueType::Float64);
            tcc_tensor* pointers[3] = {output.get(), &operands->aView, &operands->bView};
            if (entry(pointers) != 0) throw std::runtime_error("tcc kernel failed");
          },
          release,
          [output, rows] {
            return copyOf(rows, reinterpret_cast<const long long*>(output->levels[1].pos), output->levels[1].crd,
                          static_cast<const double*>(output->vals));
          },
          extraBytes};
}

Variant tccVariant(const std::string& name, const tcc::Kernel& kernel, Operands& in, double extraBytes) {
  return tccVariant(name, kernel.entryPoint(0), in, extraBytes);
}

Variant peerVariant(const std::string& name, AddFunction add, Operands& in, double extraBytes) {
  auto output = std::make_shared<CsrOut>();
  Operands* o = &in;
  return {name,
          [output, add, o] {
            add(o->rows, o->aPos(), o->aView.levels[1].crd, static_cast<const double*>(o->aView.vals), o->bPos(),
                o->bView.levels[1].crd, static_cast<const double*>(o->bView.vals), output.get());
          },
          [output] {
            std::free(output->pos), std::free(output->crd), std::free(output->vals);
            *output = CsrOut{};
          },
          [output, o] { return copyOf(o->rows, output->pos, output->crd, output->vals); }, extraBytes};
}

#ifdef TCC_BENCH_WITH_EIGEN
using SparseRow = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

// Eigen's matrices share tcc's arrays (Map), converted to the int
// positions Eigen stores.
struct EigenOperands {
  std::vector<int> aPos, bPos;
  std::unique_ptr<Eigen::Map<const SparseRow>> A, B;
  SparseRow C;
};

Variant eigenVariant(Operands& in, EigenOperands& e) {
  auto positions = [&](const long long* pos) { return std::vector<int>(pos, pos + in.rows + 1); };
  e.aPos = positions(in.aPos());
  e.bPos = positions(in.bPos());
  e.A = std::make_unique<Eigen::Map<const SparseRow>>(in.rows, in.cols, e.aPos[in.rows], e.aPos.data(),
                                                      in.aView.levels[1].crd, static_cast<const double*>(in.aView.vals));
  e.B = std::make_unique<Eigen::Map<const SparseRow>>(in.rows, in.cols, e.bPos[in.rows], e.bPos.data(),
                                                      in.bView.levels[1].crd, static_cast<const double*>(in.bView.vals));
  EigenOperands* p = &e;
  const int rows = in.rows;
  // Eigen's assignment builds the sum in a temporary and swaps it in; the
  // previous result is freed there, inside the call, so release frees it
  // first (outside the timing) to keep the calls alike.
  return {"Eigen",
          [p] { p->C = *p->A + *p->B; },
          [p] { p->C = SparseRow(); },
          [p, rows] {
            Result r;
            r.pos.assign(p->C.outerIndexPtr(), p->C.outerIndexPtr() + rows + 1);
            r.crd.assign(p->C.innerIndexPtr(), p->C.innerIndexPtr() + r.pos[rows]);
            r.vals.assign(p->C.valuePtr(), p->C.valuePtr() + r.pos[rows]);
            return r;
          },
          0.0};
}
#endif

const char* const kAdd =
    "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nC(i, j) = A(i, j) + B(i, j)\n";
const char* const kParallelSchedule = "schedule { parallelize(i, CPUThread, NoRaces) }\n";

tcc::Kernel compileAdd(tcc::frontend::FloatingPointMode mode, bool parallel, tcc::jit::Backend backend,
                       bool rowsInOnePass = true) {
  tcc::CompileOptions options;
  options.floatingPoint = mode;
  options.backend = backend;
  options.rowsInOnePass = rowsInOnePass;
  return tcc::compile(tcc::Program::fromText(std::string(kAdd) + (parallel ? kParallelSchedule : ""), "add.tc"),
                      options);
}

// tcc's fast kernel, rows in one pass, its chunks copied out with plain
// stores on every input (the prelude's TCC_STREAMING_COPY_VALUES set to -1
// in the printed source): what AMD cores ran before the chunk copies
// streamed there.
std::shared_ptr<const tcc::jit::Module> compilePlainCopy(tcc::jit::Backend backend) {
  tcc::CompileOptions options;
  options.floatingPoint = tcc::frontend::FloatingPointMode::Fast;
  options.backend = backend;
  tcc::Lowered lowered =
      tcc::lowerProgram(tcc::Program::fromText(std::string(kAdd) + kParallelSchedule, "add.tc"), options);
  tcc::jit::CompileOptions flags;
  flags.backend = backend;
  flags.openmp = true;
  flags.extraFlags = tcc::lowering::cppFloatingPointFlags(tcc::lowering::FloatingPointMode::Fast);
  return tcc::jit::compile("#define TCC_STREAMING_COPY_VALUES -1\n" + lowered.cpp, flags);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5, rounds = 2, threads = 1;
  bool keepHeap = false, candidates = false, rowsOnThreads = false;
  std::vector<std::string> only;  // variants to run, in this order (--only); all when empty
  tcc::jit::Backend backend = tcc::CompileOptions{}.backend;
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"bcsstk16", "LF10"}, {"bayer10", "cage5"}, {"bcsstk13", "mesh1e1"}, {"dnn_n1024_l1", "gent113"},
      {"mbeacxc", "bcspwr03"}};
  OutOfCacheSizes sizes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--llc-multiple" && i + 1 < argc) sizes.llcMultiple = std::max(0.0, std::atof(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--keep-heap") keepHeap = true;
    else if (arg == "--rows-on-threads") rowsOnThreads = true;
    else if (arg == "--candidates") candidates = true;
    else if (arg == "--only" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) only.push_back(item);
    }
    else if (arg == "--backend" && i + 1 < argc &&
             (argv[i + 1] == std::string("system") || argv[i + 1] == std::string("clang")))
      backend = argv[++i] == std::string("system") ? tcc::jit::Backend::SystemCompiler
                                                   : tcc::jit::Backend::ClangInterpreter;
    else if (arg == "--pairs" && i + 1 < argc) {
      pairs.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) {
        size_t colon = item.find(':');
        if (colon == std::string::npos) {
          std::cerr << "tcc_sparse_add_bench: --pairs wants BIG:SMALL,...\n";
          return 2;
        }
        pairs.push_back({item.substr(0, colon), item.substr(colon + 1)});
      }
    } else {
      std::cerr << "usage: tcc_sparse_add_bench [--repeat N] [--rounds R] [--threads T] [--backend system|clang]\n"
                   "                            [--keep-heap] [--rows-on-threads] [--candidates] [--only VARIANT,...]\n"
                   "                            [--pairs BIG:SMALL,...] [--llc-multiple M]\n";
      return 2;
    }
  }
  if (!runWithOmpThreads(threads, argv)) return 1;
  setHeapKept(keepHeap);
  const bool parallel = threads > 1 || rowsOnThreads;
  const Machine machine = thisMachine();
  sizes.llcBytes = machine.llcBytes;
  const long triadLength = sizes.llcMultiple > 0 ? streamTriadLengthFor(machine.llcBytes) : kStreamTriadLength;
  std::printf("machine: %s\nload average at the start: %s\n", describe(machine).c_str(), loadAverage().c_str());
  if (sizes.llcMultiple > 0)
    std::printf("sizes: A and B together read >= %.1f x the last-level cache and >= %lld M entries each "
                "(kron(I_k,...): k copies along the diagonal); triad arrays 3 x %.0f MB\n",
                sizes.llcMultiple, (long long)(sizes.minNnz / 1000000), 8.0 * triadLength / 1048576.0);
  else
    std::printf("sizes: one copy of each pair (--llc-multiple 0); triad arrays 3 x %.0f MB\n",
                8.0 * triadLength / 1048576.0);

  tcc::Kernel strict = compileAdd(tcc::frontend::FloatingPointMode::Strict, parallel, backend);
  tcc::Kernel fast = compileAdd(tcc::frontend::FloatingPointMode::Fast, parallel, backend);
  // With --threads: tcc's row-parallel kernel in two passes (count, prefix
  // sum, fill), as printed before the one-pass form.
  tcc::Kernel fastTwoPass = compileAdd(tcc::frontend::FloatingPointMode::Fast, parallel, backend, false);
  // Only where asked for (--only): the one-pass kernel, its chunks copied plainly.
  std::shared_ptr<const tcc::jit::Module> plainCopy;
  if (parallel && std::find(only.begin(), only.end(), "tcc fast plain copy") != only.end())
    plainCopy = compilePlainCopy(backend);
  tcc::jit::CompileOptions peerFlags;
  peerFlags.backend = tcc::jit::Backend::SystemCompiler;
  peerFlags.openmp = parallel;
  peerFlags.extraFlags = {"-ffast-math", "-march=native"};
  auto peers = tcc::jit::compile(kPeers, peerFlags);
  const std::vector<std::string> candidateNames = {"bound_branches", "bound_select", "bound_branches_huge",
                                                   "bound_select_huge", "bound_select_huge_pf",
                                                   "bound_select_populate", "bound_select_populate_steps", "tcc_before",
                                                   "bound_select_two_rows", "bound_select_nt", "bound_branches_advance",
                                                   "bound_branches_advance_pf64", "bound_branches_advance_pf256",
                                                   "bound_branches_advance_nt", "bound_branches_advance_pf256_nt",
                                                   "bound_branches_advance_pf512_t1", "bound_branches_advance_pf512_t1_nt",
                                                   "ceiling_concat", "two_pass_nt", "ceiling_count_pass",
                                                   "tcc_like_nt_dynamic", "tcc_like_nt_static", "lookback16",
                                                   "lookback16_nt", "lookback16_nt512", "lookback64_nt",
                                                   "lookback64_nt512", "lookback_auto", "lookback_auto_nt512",
                                                   "lookback16_count_nt", "lookback_auto_count_nt",
                                                   "lookback_auto_nt512_overlap",
                                                   "bound_then_compact_nt"};
  std::shared_ptr<const tcc::jit::Module> candidateModule;
  if (candidates) {
    // With --threads the serial candidates run on one thread; two_pass_nt
    // runs rows on the threads.
    tcc::jit::CompileOptions flags;
    flags.backend = backend;
    flags.openmp = parallel;
    flags.extraFlags = {"-march=native", "-ffp-contract=off"};  // as tcc's strict kernels
    candidateModule = tcc::jit::compile(kCandidates, flags);
  }
  auto triadModule = compileStreamTriad(backend);
  const int triadThreads = triadModule->function<int (*)()>("threads")();
  if (triadThreads != threads) {
    std::fprintf(stderr, "expected %d threads, the OpenMP runtime runs %d\n", threads, triadThreads);
    return 1;
  }

  std::printf("\nC = A + B, all CSR, A = kron(BIG,SMALL), B = kron(SMALL,BIG); %d thread%s; "
              "GB/s = lower-bound bytes / median time;\npages: fresh (glibc's defaults: the output's pages fault in "
              "every call) or kept (no mmap, no trim: reused)\n\n",
              threads, parallel ? "s" : "");
  std::string header = "| A = kron(BIG,SMALL) | pages | rows | nnz A | nnz B | nnz C | lower bound MB |";
  std::string rule = "|---|---|---:|---:|---:|---:|---:|";
  std::vector<std::string> names = {"tcc strict", "tcc fast"};
  if (parallel) names.push_back("tcc fast two-pass");
  if (plainCopy) names.push_back("tcc fast plain copy");
  if (!parallel) names.push_back("TACO-style");
  names.push_back("two-pass");
#ifdef TCC_BENCH_WITH_EIGEN
  if (!parallel) names.push_back("Eigen");
#endif
  if (candidateModule) names.insert(names.end(), candidateNames.begin(), candidateNames.end());
  if (!only.empty()) {
    for (const auto& name : only)
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::fprintf(stderr, "--only: no variant %s here\n", name.c_str());
        return 2;
      }
    names = only;
  }
  if (std::find(names.begin(), names.end(), "two-pass") == names.end()) {
    std::fprintf(stderr, "the two-pass peer is the reference every result is checked against: keep it\n");
    return 2;
  }
  for (const auto& name : names) header += " " + name + " GB/s |", rule += "---:|";
  header += " triad GB/s | fast / triad | peer time / fast time |";
  rule += "---:|---:|---:|";
  std::printf("%s\n%s\n", header.c_str(), rule.c_str());
  std::fflush(stdout);

  int status = 0;
  std::vector<std::string> notes;  // bytes moved beyond the lower bound, per matrix
  for (const auto& [big, small] : pairs) {
    Operands in;
    std::string name = "kron(" + big + "," + small + ")";
    if (big == "random") {
      // random:ROWSxK: two random square matrices of K entries a row, their
      // coordinates independent (a merge no predictor learns).
      const int32_t rows = std::atoi(small.c_str()), perRow = std::atoi(small.c_str() + small.find('x') + 1);
      name = "random(" + std::to_string(rows) + " rows, " + std::to_string(perRow) + " a row)";
      in.rows = in.cols = rows;
      in.A = tcc::rt::pack(tcc::rt::randomPerRow(rows, rows, perRow, 1), tcc::toRuntimeFormat(tcc::Format::csr()));
      in.B = tcc::rt::pack(tcc::rt::randomPerRow(rows, rows, perRow, 2), tcc::toRuntimeFormat(tcc::Format::csr()));
    } else {
      tcc::rt::Coo bigCoo = readMatrix(big), smallCoo = readMatrix(small);
      const double nnzOne = double(bigCoo.nnz()) * double(smallCoo.nnz());
      const double rowsOne = double(bigCoo.dims[0]) * smallCoo.dims[0];
      const int copies = sizes.copies(2.0 * (8.0 * (rowsOne + 1) + 12.0 * nnzOne), nnzOne);
      name = "kron(" + std::string(copies > 1 ? "I_" + std::to_string(copies) + "," : "") + big + "," + small + ")";
      in.A = kronCsr(diagonalCopies(bigCoo, copies), smallCoo);
      in.B = kronCsr(diagonalCopies(smallCoo, copies), bigCoo);
      in.rows = in.A.dims()[0];
      in.cols = in.A.dims()[1];
    }
    in.aView = in.A.abiView();
    in.bView = in.B.abiView();
    const double rows = in.rows, nnzA = double(in.aPos()[in.rows]), nnzB = double(in.bPos()[in.rows]);
    // A counting pass reads pos and crd of both inputs again; the prefix
    // sum reads and writes C's pos; tcc's serial kernel reads C's pos once
    // more at the end (rows without entries).
    const double countPass = 16.0 * (rows + 1) + 4.0 * (nnzA + nnzB) + 16.0 * (rows + 1);
    std::vector<Variant> variants;
    // tcc's row-parallel kernel in one pass: the rows' ends added to once more.
    const double onePass = 16.0 * (rows + 1);
    variants.push_back(tccVariant("tcc strict", strict, in, parallel ? onePass : 8.0 * (rows + 1)));
    variants.push_back(tccVariant("tcc fast", fast, in, parallel ? onePass : 8.0 * (rows + 1)));
    if (parallel) variants.push_back(tccVariant("tcc fast two-pass", fastTwoPass, in, countPass));
    if (plainCopy)
      variants.push_back(tccVariant("tcc fast plain copy", plainCopy->function<tcc::Kernel::EntryPoint>("tcc_kernel_0"),
                                    in, onePass));
    if (!parallel) variants.push_back(peerVariant("TACO-style", peers->function<AddFunction>("taco_add"), in, 0.0));
    variants.push_back(peerVariant("two-pass", peers->function<AddFunction>("two_pass_add"), in, countPass));
#ifdef TCC_BENCH_WITH_EIGEN
    EigenOperands eigen;
    if (!parallel) variants.push_back(eigenVariant(in, eigen));
#endif
    if (candidateModule)
      for (const auto& name : candidateNames)
        variants.push_back(peerVariant(name, candidateModule->function<AddFunction>(name), in, 0.0));
    {
      // Keep the variants named, in the order named.
      std::vector<Variant> kept;
      for (const auto& name : names)
        for (auto& v : variants)
          if (v.name == name) kept.push_back(std::move(v));
      variants = std::move(kept);
    }
    // One call each, checked against the two-pass peer's result (the
    // simplest loop, arrays of the exact size): tcc's and the TACO-style
    // loop's bit for bit, Eigen's by value.
    Result reference;
    {
      Variant* twoPass = nullptr;
      for (auto& v : variants)
        if (v.name == "two-pass") twoPass = &v;
      twoPass->call();
      reference = twoPass->result();
      twoPass->release();
      for (auto& v : variants) {
        if (&v == twoPass) continue;
        v.call();
        if (v.name.rfind("ceiling", 0) == 0) {  // not an add (see ceiling_concat)
          v.release();
          continue;
        }
        Result r = v.result();
        v.release();
        std::string why = difference(r, reference, v.name != "Eigen");
        if (!why.empty()) {
          std::fprintf(stderr, "%s: %s's result differs from the two-pass peer's: %s\n", big.c_str(), v.name.c_str(),
                       why.c_str());
          status = 1;
        }
      }
    }
    const double nnzC = double(reference.pos[in.rows]);
    const double lowerBound = 16.0 * (rows + 1) + 12.0 * (nnzA + nnzB) + 8.0 * (rows + 1) + 12.0 * nnzC;
    reference = Result{};

    double triad = streamTriadBytesPerSecond(*triadModule, std::max(3, repeat), false, triadLength);
    for (int round = 0; round < rounds; ++round)
      for (int r = 0; r < repeat; ++r)
        for (auto& v : variants) {
          long before = minorFaults();
          v.samples.push_back(seconds(v.call));
          v.faults += minorFaults() - before;
          v.release();
        }
    triad = 0.5 * (triad + streamTriadBytesPerSecond(*triadModule, std::max(3, repeat), false, triadLength));

    std::printf("| %s | %s | %d | %.0f | %.0f | %.0f | %.0f |", name.c_str(), keepHeap ? "kept" : "fresh", in.rows, nnzA,
                nnzB, nnzC, lowerBound / 1e6);
    double fastTime = 0, bestPeer = INFINITY;
    for (auto& v : variants) {
      double t = median(v.samples);
      std::printf(" %.2f |", lowerBound / t / 1e9);
      if (v.name == "tcc fast" || (fastTime == 0 && v.name == "tcc strict")) fastTime = t;
      else if (v.name == "TACO-style" || v.name == "two-pass" || v.name == "Eigen") bestPeer = std::min(bestPeer, t);
    }
    std::printf(" %.2f | %.2f | %.2f |\n", triad / 1e9, lowerBound / fastTime / triad, bestPeer / fastTime);
    std::fflush(stdout);
    std::string note = name + (keepHeap ? ", pages kept:" : ", fresh pages:");
    for (auto& v : variants)
      if (v.extraBytes > 0) {
        char text[96];
        std::snprintf(text, sizeof text, " %s +%.0f MB (+%.0f%%)", v.name.c_str(), v.extraBytes / 1e6,
                      100.0 * v.extraBytes / lowerBound);
        note += text;
      }
    note += "; minor page faults a call:";
    for (auto& v : variants) {
      char text[96];
      std::snprintf(text, sizeof text, " %s %.0f", v.name.c_str(), double(v.faults) / double(v.samples.size()));
      note += text;
    }
    notes.push_back(note);
  }
  std::printf("\nmoved beyond the lower bound (counting pass, prefix sum, a reread of pos), and page faults:\n");
  for (const auto& note : notes) std::printf("  %s\n", note.c_str());
  std::printf("\npeer time / fast time: the fastest peer's median over tcc fast's (> 1: tcc faster)\n");
  std::printf("load average at the end: %s\n", loadAverage().c_str());
  return status;
}
