/* Strict-mode CSR row sums shaped for short rows, one chain of adds in
 * loop order each (masked terms add -0.0, which changes no sum): what tcc's
 * C++ printer could emit for SpMV's row sum (../RESULTS.md, "Short rows").
 * s_unroll2 is the loop two a trip, s_select2_loop GCC's form, s_long4
 * Clang's (../RESULTS.md, "Long rows through the JIT"). */
#include <stdint.h>
#define ARGS int32_t rows, const int64_t *pos, const int32_t *crd, const double *vals, const double *x, double *y
#define TERM(q) t += vals[q] * x[crd[q]]
#define PRAGMA(text) _Pragma(#text)

void s_plain(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1];
    for (int64_t p = pos[i]; p < end; p++) TERM(p);
    y[i] = t;
  }
}
void s_unroll2(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1];
    PRAGMA(GCC unroll 2) for (int64_t p = pos[i]; p < end; p++) TERM(p);
    y[i] = t;
  }
}
/* MLIR's shape, 32-bit crd: (len mod 8) in a counted loop, then 8 a trip */
void s_rem8(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    for (int64_t r = (end - p) & 7; r; r--, p++) TERM(p);
    for (; p < end; p += 8) { TERM(p); TERM(p+1); TERM(p+2); TERM(p+3); TERM(p+4); TERM(p+5); TERM(p+6); TERM(p+7); }
    y[i] = t;
  }
}
/* (len mod 4) in a counted loop, then 4 a trip */
void s_rem4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    for (int64_t r = (end - p) & 3; r; r--, p++) TERM(p);
    for (; p < end; p += 4) { TERM(p); TERM(p+1); TERM(p+2); TERM(p+3); }
    y[i] = t;
  }
}
/* (len mod 2) by a test, then 2 a trip (what unroll 2 should be) */
void s_rem2(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    if ((end - p) & 1) { TERM(p); p++; }
    for (; p < end; p += 2) { TERM(p); TERM(p+1); }
    y[i] = t;
  }
}
void s_four_then_tail(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    for (; p + 4 <= end; p += 4) { TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); }
    if (p < end) { TERM(p); if (p + 1 < end) { TERM(p + 1); if (p + 2 < end) TERM(p + 2); } }
    y[i] = t;
  }
}
void s_tail_then_four(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i], r = (end - p) & 3;
    if (r) { TERM(p); if (r > 1) { TERM(p + 1); if (r > 2) TERM(p + 2); } p += r; }
    for (; p < end; p += 4) { TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); }
    y[i] = t;
  }
}
/* Branchless for 1..4 entries: clamped loads, each add kept or not by a select */
#define MTERM(k) { int64_t q = p + (k < len ? k : len - 1); double s = t + vals[q] * x[crd[q]]; t = k < len ? s : t; }
void s_select4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1], len = end - p;
    if (len > 0 && len <= 4) { MTERM(0) MTERM(1) MTERM(2) MTERM(3) }
    else { PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
/* select written out: every add kept, the masked ones adding -0.0 (exact) */
#define NTERM(k) { int64_t q = p + (k < len ? k : len - 1); double s = vals[q] * x[crd[q]]; t += k < len ? s : -0.0; }
void s_select4n(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1], len = end - p;
    if (len > 0 && len <= 4) { NTERM(0) NTERM(1) NTERM(2) NTERM(3) }
    else { PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
/* selects for the first 2, then the rest as a loop two a trip */
void s_select2_loop(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1], len = end - p;
    if (len > 0) { NTERM(0) NTERM(1) p += 2;
      PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
/* two a trip, the odd one last */
void s_two_then_one(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    for (; p + 2 <= end; p += 2) { TERM(p); TERM(p+1); }
    if (p < end) TERM(p);
    y[i] = t;
  }
}
/* four a trip, the rest in a plain loop */
void s_four_then_loop(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    for (; p + 4 <= end; p += 4) { TERM(p); TERM(p+1); TERM(p+2); TERM(p+3); }
    for (; p < end; p++) TERM(p);
    y[i] = t;
  }
}
/* remainder by its bits first (1, then 2), then four a trip */
void s_bits(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1], r = (end - p) & 3;
    if (r & 1) { TERM(p); p++; }
    if (r & 2) { TERM(p); TERM(p + 1); p += 2; }
    for (; p < end; p += 4) { TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); }
    y[i] = t;
  }
}
/* Rows of 8 or more: the remainder (len mod 4) by tests, then four a trip;
 * shorter rows: main's loop two a trip. One more test a row. */
#define TAIL_THEN_FOUR { int64_t r = (end - p) & 3; \
    if (r) { TERM(p); if (r > 1) { TERM(p + 1); if (r > 2) TERM(p + 2); } p += r; } \
    for (; p < end; p += 4) { TERM(p); TERM(p + 1); TERM(p + 2); TERM(p + 3); } }
void s_long4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    if (end - p >= 8) TAIL_THEN_FOUR
    else { PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
/* Rows of 8 or more: MLIR's shape (len mod 8 counted, then 8 a trip). */
void s_long8(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    if (end - p >= 8) {
      for (int64_t r = (end - p) & 7; r; r--, p++) TERM(p);
      for (; p < end; p += 8) { TERM(p); TERM(p+1); TERM(p+2); TERM(p+3); TERM(p+4); TERM(p+5); TERM(p+6); TERM(p+7); }
    } else { PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
/* Chosen once a call: 8 or more entries a row on average, every row the
 * remainder by tests then four a trip; else main's loop two a trip. */
void s_avg4(ARGS) {
  if (rows > 0 && pos[rows] - pos[0] >= 8 * (int64_t)rows) {
    for (int32_t i = 0; i < rows; i++) {
      double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
      TAIL_THEN_FOUR
      y[i] = t;
    }
  } else {
    for (int32_t i = 0; i < rows; i++) {
      double t = 0.0; int64_t end = pos[i + 1];
      PRAGMA(GCC unroll 2) for (int64_t p = pos[i]; p < end; p++) TERM(p);
      y[i] = t;
    }
  }
}
/* GCC's form now (select2_loop) for rows under 8, TAIL_THEN_FOUR from 8 */
void s_sel2_long4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1], len = end - p;
    if (len >= 8) TAIL_THEN_FOUR
    else if (len > 0) { NTERM(0) NTERM(1) p += 2;
      PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
/* Rows of 4 or more: TAIL_THEN_FOUR; shorter: main's loop two a trip. */
void s_ge4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t p = pos[i], end = pos[i + 1];
    if (end - p >= 4) TAIL_THEN_FOUR
    else { PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p); }
    y[i] = t;
  }
}
