/* Fast-mode CSR row sums (reassociation allowed): f_now is main's
 * reassociated copy (rows of 8 or more vectorized, shorter ones four terms
 * apart and a test an entry), the others its short rows shaped otherwise;
 * f_u2only is the loop this change runs when rows hold fewer than 3
 * entries on average (../RESULTS.md, "Short rows"). */
#include <stdint.h>
#define ARGS int32_t rows, const int64_t *pos, const int32_t *crd, const double *vals, const double *x, double *y
#define TERM(q) t += vals[q] * x[crd[q]]
#define PRAGMA(text) _Pragma(#text)
#if defined(__GNUC__) && !defined(__clang__)
#define ATTR __attribute__((noinline, optimize("associative-math", "no-signed-zeros"), target("prefer-vector-width=256")))
#else
#define ATTR __attribute__((noinline))
#endif
#if defined(__clang__)
#define REASSOC PRAGMA(clang fp reassociate(on))
#else
#define REASSOC
#endif
#define LONG_ROW \
      if (end - p >= 8) { \
        REASSOC \
        for (; p < end; p++) TERM(p); \
      }

/* what tcc prints now: long rows vectorized, shorter ones 4 at once then nested tests */
ATTR void f_now(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    LONG_ROW else {
      if (end - p >= 4) { double t1 = 0, t2 = 0, t3 = 0;
        t += vals[p] * x[crd[p]]; t1 += vals[p+1] * x[crd[p+1]]; t2 += vals[p+2] * x[crd[p+2]]; t3 += vals[p+3] * x[crd[p+3]];
        t = (t + t1) + (t2 + t3); p += 4; }
      if (p < end) { TERM(p); if (p + 1 < end) { TERM(p + 1); if (p + 2 < end) TERM(p + 2); } }
    }
    y[i] = t;
  }
}
/* long rows vectorized, short ones as strict's loop two a trip */
ATTR void f_unroll2(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    LONG_ROW else {
      PRAGMA(GCC unroll 2) for (; p < end; p++) TERM(p);
    }
    y[i] = t;
  }
}
/* short rows as a plain loop (asm keeps it scalar) */
ATTR void f_plain(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    LONG_ROW else {
      for (; p < end; p++) { __asm__(""); TERM(p); }
    }
    y[i] = t;
  }
}
/* short rows: (len mod 4) counted, then 4 a trip (<8 so at most one) */
ATTR void f_rem4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    LONG_ROW else {
      for (int64_t r = (end - p) & 3; r; r--, p++) { __asm__(""); TERM(p); }
      if (p < end) { double t1 = 0, t2 = 0, t3 = 0;
        t += vals[p] * x[crd[p]]; t1 += vals[p+1] * x[crd[p+1]]; t2 += vals[p+2] * x[crd[p+2]]; t3 += vals[p+3] * x[crd[p+3]];
        t = (t + t1) + (t2 + t3); }
    }
    y[i] = t;
  }
}
/* short rows by selects (clamped loads) up to 4, else the 4+tail shape */
#define MTERM(k) { int64_t q = p + (k < len ? k : len - 1); double s = vals[q] * x[crd[q]]; t += k < len ? s : 0.0; }
ATTR void f_select4(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i], len = end - p;
    LONG_ROW else if (len > 0 && len <= 4) { MTERM(0) MTERM(1) MTERM(2) MTERM(3) }
    else {
      for (; p < end; p++) { __asm__(""); TERM(p); }
    }
    y[i] = t;
  }
}
/* what tcc prints now, but rows under 4 as strict's loop two a trip (in order) */
ATTR void f_now_u2(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    LONG_ROW else if (end - p >= 4) { double t1 = 0, t2 = 0, t3 = 0;
        t += vals[p] * x[crd[p]]; t1 += vals[p+1] * x[crd[p+1]]; t2 += vals[p+2] * x[crd[p+2]]; t3 += vals[p+3] * x[crd[p+3]];
        t = (t + t1) + (t2 + t3); p += 4;
      if (p < end) { TERM(p); if (p + 1 < end) { TERM(p + 1); if (p + 2 < end) TERM(p + 2); } }
    } else {
      PRAGMA(GCC unroll 2) for (; p < end; p++) { __asm__(""); TERM(p); }
    }
    y[i] = t;
  }
}
/* per-call choice, short-rows version: the in-order loop two a trip alone */
ATTR void f_u2only(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    PRAGMA(GCC unroll 2) for (; p < end; p++) { __asm__(""); TERM(p); }
    y[i] = t;
  }
}
ATTR void f_u2only_noasm(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    PRAGMA(GCC unroll 2) for (; p < end; p++) { TERM(p); }
    y[i] = t;
  }
}
ATTR void f_plainonly(ARGS) {
  for (int32_t i = 0; i < rows; i++) {
    double t = 0.0; int64_t end = pos[i + 1], p = pos[i];
    for (; p < end; p++) { __asm__(""); TERM(p); }
    y[i] = t;
  }
}
