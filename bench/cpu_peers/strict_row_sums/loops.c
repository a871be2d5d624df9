/* Strict-mode CSR row sums, one chain of adds in loop order each, as loops
 * shaped differently: what tcc's C++ printer could emit for SpMV's row sum
 * (see ../RESULTS.md, "Strict SpMV: two entries a trip"). Every loop gives
 * the bits of `plain`; the driver checks it. */
#include <stdint.h>

#define ROW_SUM_ARGS                                                                              \
  int32_t rows, const int64_t *pos, const int32_t *crd, const double *vals, const double *x, double *y

#define TERM(q) t += vals[q] * x[crd[q]]
#define PRAGMA(text) _Pragma(#text)

/* tcc's loop before: one entry a trip. */
void loop_plain(ROW_SUM_ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0;
    int64_t end = pos[i + 1];
    for (int64_t p = pos[i]; p < end; p++) TERM(p);
    y[i] = t;
  }
}

/* The same loop unrolled by the compiler: #pragma GCC unroll N. */
#define UNROLLED(N)                                                                               \
  void loop_unroll##N(ROW_SUM_ARGS) {                                                             \
    for (int32_t i = 0; i < rows; i++) {                                                          \
      double t = 0.0;                                                                             \
      int64_t end = pos[i + 1];                                                                   \
      PRAGMA(GCC unroll N) for (int64_t p = pos[i]; p < end; p++) TERM(p);                   \
      y[i] = t;                                                                                   \
    }                                                                                             \
  }
UNROLLED(2)
UNROLLED(4)
UNROLLED(8)

/* Four entries a trip by hand, then up to three without a loop. */
void loop_four_then_tail(ROW_SUM_ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0;
    int64_t end = pos[i + 1], p = pos[i];
    for (; p + 4 <= end; p += 4) { TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); }
    if (p < end) { TERM(p); if (p + 1 < end) { TERM(p + 1); if (p + 2 < end) TERM(p + 2); } }
    y[i] = t;
  }
}

/* The first (length mod 4) entries without a loop, then four a trip. */
void loop_tail_then_four(ROW_SUM_ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0;
    int64_t end = pos[i + 1], p = pos[i], r = (end - p) & 3;
    if (r) { TERM(p); if (r > 1) { TERM(p + 1); if (r > 2) TERM(p + 2); } p += r; }
    for (; p < end; p += 4) { TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); }
    y[i] = t;
  }
}

/* MLIR 16's loop as clang -O3 builds it ahead of time (objdump of the
 * --aot-build executable): 64-bit coordinates, (length mod 8) entries
 * first, then eight a trip. */
void loop_mlir_shape(int32_t rows, const int64_t *pos, const int64_t *crd, const double *vals, const double *x,
                     double *y) {
  for (int64_t i = 0; i < rows; i++) {
    double t = 0.0;
    int64_t p = pos[i], end = pos[i + 1];
    for (int64_t r = (end - p) & 7; r; r--, p++) TERM(p);
    for (; p < end; p += 8) {
      TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); TERM(p + 4); TERM(p + 5); TERM(p + 6); TERM(p + 7);
    }
    y[i] = t;
  }
}
