// STREAM's triad a = b + 3 c, the bandwidth peer of the memory-bound
// benches. It is compiled like the kernels it is compared with (same
// backend, same OpenMP runtime), so it runs on the same threads.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <new>
#include <memory>
#include <string>
#include <vector>

#include "stats.h"
#include "tcc/jit/jit.h"
#include "tcc/runtime/array_alloc.h"

using StreamTriad = void (*)(long, double*, const double*, const double*);

inline const char* const kStreamTriadSource = R"(
#ifdef _OPENMP
#include <omp.h>
#endif
extern "C" void triad(long n, double* __restrict a, const double* __restrict b, const double* __restrict c) {
  #pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
}
extern "C" void fill(long n, double* a, double v) {
  #pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) a[i] = v;
}
extern "C" int threads() {
#ifdef _OPENMP
  int t = 1;
  #pragma omp parallel
  {
    #pragma omp single
    t = omp_get_num_threads();
  }
  return t;
#else
  return 1;
#endif
}
)";

// The triad's module; `openmp` as the kernels are compiled.
inline std::shared_ptr<const tcc::jit::Module> compileStreamTriad(tcc::jit::Backend backend, bool openmp = true) {
  tcc::jit::CompileOptions options;
  options.backend = backend;
  options.openmp = openmp;
  return tcc::jit::compile(kStreamTriadSource, options);
}

// Elements of each array before the length followed the machine: 256 MB,
// larger than the caches of the machines first measured.
inline constexpr long kStreamTriadLength = long(1) << 25;

// Elements of each array on a machine whose last-level cache holds
// `llcBytes`: each array at least as large as that cache (the triad's
// reuse distance, its three arrays, at least three times it) and at least
// 256 MB, rounded up to a power of two. A last-level cache of 480 MB gives
// 3 x 512 MB.
inline long streamTriadLengthFor(long long llcBytes) {
  long length = kStreamTriadLength;
  while (static_cast<long long>(length) * 8 < llcBytes) length *= 2;
  return length;
}

// The median rate of `repeat` triads over arrays a, b, c of `n` elements
// that already hold 0, 1 and 2, in bytes per second as STREAM counts them
// (24 an element, no write-allocate).
inline double timeStreamTriad(StreamTriad triad, double* a, const double* b, const double* c, int repeat,
                              long n = kStreamTriadLength) {
  std::vector<double> samples;
  for (int r = 0; r < repeat; ++r) samples.push_back(seconds([&] { triad(n, a, b, c); }));
  if (a[n / 2] != 7.0) std::fprintf(stderr, "triad check failed\n");
  return 24.0 * n / median(samples);
}

// Triad arrays kept for timing one call at a time among other calls (so
// that the triad and the kernels see the same load): in 4 KB pages, or
// with `hugePages` in 2 MB pages where the system grants them (the
// runtime's allocator, as tcc's tensors of 4 MB and more get), first
// touched by the triad's threads.
class TriadArrays {
 public:
  // `length` elements an array (streamTriadLengthFor).
  TriadArrays(const tcc::jit::Module& module, bool hugePages, long length = kStreamTriadLength)
      : triad_(module.function<StreamTriad>("triad")), length_(length), a_(allocate(hugePages, length)),
        b_(allocate(hugePages, length)), c_(allocate(hugePages, length)) {
    using Fill = void (*)(long, double*, double);
    auto fill = module.function<Fill>("fill");
    fill(length_, a_.get(), 0.0), fill(length_, b_.get(), 1.0), fill(length_, c_.get(), 2.0);
  }
  // One triad, timed; bytes as STREAM counts them (24 an element).
  double seconds() { return ::seconds([&] { triad_(length_, a_.get(), b_.get(), c_.get()); }); }
  double bytes() const { return 24.0 * length_; }
  long length() const { return length_; }
  const double* data() const { return a_.get(); }

 private:
  struct Free {
    void operator()(double* array) const { std::free(array); }
  };
  static std::unique_ptr<double, Free> allocate(bool hugePages, long length) {
    const long long bytes = static_cast<long long>(length) * sizeof(double);
    auto* array = static_cast<double*>(tcc_array_alloc(bytes, hugePages ? TCC_HUGE_PAGE_DEFAULT_MIN_BYTES : 0));
    if (array == nullptr) throw std::bad_alloc();
    return std::unique_ptr<double, Free>(array);
  }
  StreamTriad triad_;
  long length_;
  std::unique_ptr<double, Free> a_, b_, c_;
};

// The same over arrays of its own, first touched by the triad's threads:
// in 4 KB pages, or with `hugePages` in 2 MB pages where the system grants
// them (the runtime's allocator, as tcc's tensors of 4 MB and more get).
inline double streamTriadBytesPerSecond(const tcc::jit::Module& module, int repeat, bool hugePages = false,
                                        long n = kStreamTriadLength) {
  using Fill = void (*)(long, double*, double);
  const long long bytes = static_cast<long long>(n) * sizeof(double);
  const long long minBytes = hugePages ? TCC_HUGE_PAGE_DEFAULT_MIN_BYTES : 0;
  struct Free {
    void operator()(double* array) const { std::free(array); }
  };
  auto allocate = [&] {
    auto* array = static_cast<double*>(tcc_array_alloc(bytes, minBytes));
    if (array == nullptr) throw std::bad_alloc();
    return std::unique_ptr<double, Free>(array);
  };
  auto a = allocate(), b = allocate(), c = allocate();
  auto fill = module.function<Fill>("fill");
  fill(n, a.get(), 0.0), fill(n, b.get(), 1.0), fill(n, c.get(), 2.0);
  return timeStreamTriad(module.function<StreamTriad>("triad"), a.get(), b.get(), c.get(), repeat, n);
}
