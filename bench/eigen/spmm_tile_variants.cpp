// Forms of SpMM's register tile (C(i,k) = A(i,j) * B(j,k), A CSR, B and C
// dense row-major, 64 columns), side by side, compiled through the system
// compiler or the JIT under tcc's strict or fast flags. It picks what the
// C++ printer emits for the tile; every variant is checked against an
// in-order reference.
//
//   tcc_spmm_tile_variants [--backend system|clang] [--fp strict|fast] [--repeat N] [--rounds R] [MATRIX ...]
//
// One thread, the 14 real matrices of tcc_eigen_bench, C allocated once and
// zeroed inside the timed region (as Eigen's `C.noalias() = A * B` does).
// Variants are timed round-robin in R rounds of `repeat` calls each; a
// variant's time is the median of its round medians. Prints time relative
// to `scalar_tile` (the tile before vector variables; > 1: faster).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tcc/lowering/codegen.h"
#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

using Spmm = void (*)(int, int, const long long*, const int*, const double*, const double*, double*);

// Each variant handles the columns in tiles of 64 and leaves the rest to a
// plain loop (the bench uses 64 columns: only the tile runs).
const char* const kVariants = R"variants(
#define ARGS int rows, int n, const long long* pos, const int* crd, const double* a, const double* b, double* c
typedef double f64x8 __attribute__((vector_size(64), aligned(8), may_alias));
#define REST                                                                          \
  if (kb < n)                                                                         \
    for (long long p = pos[i]; p < pos[i + 1]; p++)                                   \
      for (int k = kb; k < n; k++) c[(long long)i * n + k] += a[p] * b[(long long)crd[p] * n + k];

// The tile as tcc printed it before: an array of 64, loops unrolled by pragma.
extern "C" void scalar_tile(ARGS) {
  for (int i = 0; i < rows; i++) {
    long long end = pos[i + 1];
    int kb = 0;
    if (pos[i] < end) {
      for (; kb + 64 <= n; kb += 64) {
        double t[64];
#pragma GCC unroll 64
        for (int l = 0; l < 64; l++) { int k = kb + l; t[l] = c[(long long)i * n + (long long)k]; }
        for (long long p = pos[i]; p < end; p++) {
          long long row = crd[p];
#pragma GCC unroll 64
          for (int l = 0; l < 64; l++) { int k = kb + l; long long q = row * n + (long long)k; t[l] += a[p] * b[q]; }
        }
#pragma GCC unroll 64
        for (int l = 0; l < 64; l++) { int k = kb + l; c[(long long)i * n + (long long)k] = t[l]; }
      }
    }
    REST
  }
}

#define LOAD_TILE(row) \
  f64x8 t0 = *(const f64x8*)(row + 0), t1 = *(const f64x8*)(row + 8), t2 = *(const f64x8*)(row + 16), \
        t3 = *(const f64x8*)(row + 24), t4 = *(const f64x8*)(row + 32), t5 = *(const f64x8*)(row + 40), \
        t6 = *(const f64x8*)(row + 48), t7 = *(const f64x8*)(row + 56);
#define STORE_TILE(row) \
  *(f64x8*)(row + 0) = t0; *(f64x8*)(row + 8) = t1; *(f64x8*)(row + 16) = t2; *(f64x8*)(row + 24) = t3; \
  *(f64x8*)(row + 32) = t4; *(f64x8*)(row + 40) = t5; *(f64x8*)(row + 48) = t6; *(f64x8*)(row + 56) = t7;
#define UPDATE(t, s, r)                                                                                   \
  t##0 += s * *(const f64x8*)(r + 0); t##1 += s * *(const f64x8*)(r + 8); t##2 += s * *(const f64x8*)(r + 16); \
  t##3 += s * *(const f64x8*)(r + 24); t##4 += s * *(const f64x8*)(r + 32); t##5 += s * *(const f64x8*)(r + 40); \
  t##6 += s * *(const f64x8*)(r + 48); t##7 += s * *(const f64x8*)(r + 56);

// The printer's vector tile: eight variables of 8 lanes, the value loaded once.
extern "C" void vector_tile(ARGS) {
  for (int i = 0; i < rows; i++) {
    long long end = pos[i + 1];
    int kb = 0;
    if (pos[i] < end) {
      for (; kb + 64 <= n; kb += 64) {
        double* out = c + (long long)i * n + kb;
        LOAD_TILE(out)
        for (long long p = pos[i]; p < end; p++) {
          const double s = a[p];
          const double* r = b + (long long)crd[p] * n + kb;
          UPDATE(t, s, r)
        }
        STORE_TILE(out)
      }
    }
    REST
  }
}

// The vector tile, prefetching the tile's part of B's row DISTANCE entries
// ahead (across rows; each 64-byte line of it).
#define PREFETCHED(NAME, DISTANCE)                                                           \
extern "C" void NAME(ARGS) {                                                                 \
  const long long nnz = pos[rows];                                                           \
  for (int i = 0; i < rows; i++) {                                                           \
    long long end = pos[i + 1];                                                              \
    int kb = 0;                                                                              \
    if (pos[i] < end) {                                                                      \
      for (; kb + 64 <= n; kb += 64) {                                                       \
        double* out = c + (long long)i * n + kb;                                             \
        LOAD_TILE(out)                                                                       \
        for (long long p = pos[i]; p < end; p++) {                                           \
          if (p + DISTANCE < nnz) {                                                          \
            const double* ahead = b + (long long)crd[p + DISTANCE] * n + kb;                 \
            for (int line = 0; line < 8; line++) __builtin_prefetch(ahead + 8 * line);       \
          }                                                                                  \
          const double s = a[p];                                                             \
          const double* r = b + (long long)crd[p] * n + kb;                                  \
          UPDATE(t, s, r)                                                                    \
        }                                                                                    \
        STORE_TILE(out)                                                                      \
      }                                                                                      \
    }                                                                                        \
    REST                                                                                     \
  }                                                                                          \
}
PREFETCHED(vector_pf2, 2)
PREFETCHED(vector_pf4, 4)
PREFETCHED(vector_pf8, 8)

// Two entries per iteration into the same tile, in order (strict-safe).
extern "C" void vector_x2(ARGS) {
  for (int i = 0; i < rows; i++) {
    long long end = pos[i + 1];
    int kb = 0;
    if (pos[i] < end) {
      for (; kb + 64 <= n; kb += 64) {
        double* out = c + (long long)i * n + kb;
        LOAD_TILE(out)
        long long p = pos[i];
        for (; p + 2 <= end; p += 2) {
          const double s = a[p], s1 = a[p + 1];
          const double* r = b + (long long)crd[p] * n + kb;
          const double* r1 = b + (long long)crd[p + 1] * n + kb;
          UPDATE(t, s, r)
          UPDATE(t, s1, r1)
        }
        for (; p < end; p++) {
          const double s = a[p];
          const double* r = b + (long long)crd[p] * n + kb;
          UPDATE(t, s, r)
        }
        STORE_TILE(out)
      }
    }
    REST
  }
}

// Two entries per iteration into two tiles, added at the end (reassociates:
// fast mode only).
extern "C" void vector_x2_split(ARGS) {
  for (int i = 0; i < rows; i++) {
    long long end = pos[i + 1];
    int kb = 0;
    if (pos[i] < end) {
      for (; kb + 64 <= n; kb += 64) {
        double* out = c + (long long)i * n + kb;
        LOAD_TILE(out)
        f64x8 u0 = {}, u1 = {}, u2 = {}, u3 = {}, u4 = {}, u5 = {}, u6 = {}, u7 = {};
        long long p = pos[i];
        for (; p + 2 <= end; p += 2) {
          const double s = a[p], s1 = a[p + 1];
          const double* r = b + (long long)crd[p] * n + kb;
          const double* r1 = b + (long long)crd[p + 1] * n + kb;
          UPDATE(t, s, r)
          UPDATE(u, s1, r1)
        }
        for (; p < end; p++) {
          const double s = a[p];
          const double* r = b + (long long)crd[p] * n + kb;
          UPDATE(t, s, r)
        }
        t0 += u0; t1 += u1; t2 += u2; t3 += u3; t4 += u4; t5 += u5; t6 += u6; t7 += u7;
        STORE_TILE(out)
      }
    }
    REST
  }
}

// Eigen's loop: the row of C updated in memory for every entry.
extern "C" void axpy(ARGS) {
  for (int i = 0; i < rows; i++)
    for (long long p = pos[i]; p < pos[i + 1]; p++) {
      const double s = a[p];
      const double* r = b + (long long)crd[p] * n;
      double* out = c + (long long)i * n;
      for (int k = 0; k < n; k++) out[k] += s * r[k];
    }
}
)variants";

const char* const kNames[] = {"scalar_tile", "vector_tile", "vector_pf2", "vector_pf4",
                              "vector_pf8",  "vector_x2",   "vector_x2_split", "axpy"};

tcc::rt::Coo readMatrix(const std::string& name) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  // Pattern matrices get seeded values (as in tcc_eigen_bench).
  if (std::all_of(coo.values.begin(), coo.values.end(), [](double v) { return v == 1; })) {
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> value(0.1, 1.1);
    for (double& v : coo.values) v = (random() & 1) ? value(random) : -value(random);
  }
  coo.sort();
  return coo;
}

std::string loadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10, rounds = 5;
  tcc::jit::Backend backend = tcc::jit::Backend::SystemCompiler;
  auto mode = tcc::lowering::FloatingPointMode::Fast;
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--fp" && i + 1 < argc)
      mode = argv[++i] == std::string("strict") ? tcc::lowering::FloatingPointMode::Strict
                                                : tcc::lowering::FloatingPointMode::Fast;
    else if (arg == "--backend" && i + 1 < argc)
      backend = argv[++i] == std::string("clang") ? tcc::jit::Backend::ClangInterpreter
                                                  : tcc::jit::Backend::SystemCompiler;
    else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: tcc_spmm_tile_variants [--backend system|clang] [--fp strict|fast] [--repeat N] "
                           "[--rounds R] [MATRIX ...]\n");
      return 2;
    } else matrices.push_back(arg);
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "Franz6_id1959_aug", "mbeacxc", "cryg2500",
                "watt_2", "adder_dcop_05", "bcspwr10", "Pd", "G51", "dwt_992", "jagmesh7"};
  const bool fast = mode == tcc::lowering::FloatingPointMode::Fast;
  auto module = tcc::jit::compile(kVariants, tcc::jit::CompileOptions{backend, 3, false,
                                                                      tcc::lowering::cppFloatingPointFlags(mode)});
  std::vector<std::string> names;
  std::vector<Spmm> variants;
  for (const char* name : kNames) {
    if (!fast && std::string(name) == "vector_x2_split") continue;  // reassociates
    names.push_back(name);
    variants.push_back(module->function<Spmm>(name));
  }
  const int columns = 64;
  std::printf("fp %s, %s, repeat %d, %d rounds; load average before: %s\n\n", fast ? "fast" : "strict",
              tcc::jit::backendName(backend), repeat, rounds, loadAverage().c_str());
  std::printf("| matrix | nnz/row | %s us |", names[0].c_str());
  for (size_t v = 1; v < names.size(); ++v) std::printf(" %s |", names[v].c_str());
  std::printf("\n|---|---:|---:|");
  for (size_t v = 1; v < names.size(); ++v) std::printf("---:|");
  std::printf("\n");
  std::vector<std::vector<double>> ratios(names.size());
  for (const auto& name : matrices) {
    tcc::rt::Coo coo = readMatrix(name);
    tcc::Tensor A = tcc::rt::pack(coo, tcc::toRuntimeFormat(tcc::Format::csr()));
    tcc_tensor view = A.abiView();
    const auto* pos = reinterpret_cast<const long long*>(view.levels[1].pos);
    const int* crd = view.levels[1].crd;
    const auto* vals = static_cast<const double*>(view.vals);
    const int rows = coo.dims[0];
    std::vector<double> b(static_cast<size_t>(coo.dims[1]) * columns), c(static_cast<size_t>(rows) * columns);
    std::mt19937_64 random(2);
    std::uniform_real_distribution<double> value(-1, 1);
    for (double& x : b) x = value(random);
    // The reference: every entry's terms in order, no contraction.
    std::vector<double> expected(c.size(), 0.0);
    for (int i = 0; i < rows; i++)
      for (long long p = pos[i]; p < pos[i + 1]; p++)
        for (int k = 0; k < columns; k++) {
          volatile double product = vals[p] * b[static_cast<size_t>(crd[p]) * columns + k];
          expected[static_cast<size_t>(i) * columns + k] += product;
        }
    auto call = [&](Spmm f) {
      std::memset(c.data(), 0, c.size() * sizeof(double));
      f(rows, columns, pos, crd, vals, b.data(), c.data());
    };
    for (size_t v = 0; v < variants.size(); ++v) {
      call(variants[v]);
      double difference = 0, scale = 0;
      for (size_t e = 0; e < c.size(); ++e)
        difference = std::max(difference, std::abs(c[e] - expected[e])), scale = std::max(scale, std::abs(expected[e]));
      if (!(difference <= 1e-12 * std::max(scale, 1.0)) || (!fast && difference != 0)) {
        std::fprintf(stderr, "%s on %s: max difference %.3g\n", names[v].c_str(), name.c_str(), difference);
        return 1;
      }
    }
    std::vector<std::vector<double>> medians(variants.size());
    for (int round = 0; round < rounds; ++round)
      for (size_t v = 0; v < variants.size(); ++v) {
        std::vector<double> samples;
        for (int r = 0; r < repeat; ++r) samples.push_back(seconds([&] { call(variants[v]); }));
        medians[v].push_back(median(samples));
      }
    double base = median(medians[0]);
    std::printf("| %s | %.1f | %.2f |", name.c_str(), double(coo.nnz()) / rows, 1e6 * base);
    for (size_t v = 1; v < variants.size(); ++v) {
      double ratio = base / median(medians[v]);
      ratios[v].push_back(ratio);
      std::printf(" %.2f |", ratio);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  std::printf("| geomean | | |");
  for (size_t v = 1; v < variants.size(); ++v) std::printf(" %.2f |", geomean(ratios[v]));
  std::printf("\n\nload average after: %s\n", loadAverage().c_str());
  return 0;
}
