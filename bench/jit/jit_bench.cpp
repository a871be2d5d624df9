// Compile latency (source text -> callable) and run time of the two tcc_jit
// backends, in the same run. Kernels are the hand-written generated-style
// ones from test/jit. Prints a Markdown table (see RESULTS.md).
//
//   tcc_jit_bench [--compiles N] [--runs N] [--rows N] [--nnz-per-row N]
//                 [--jit-flag FLAG]...   (extra clang flags, clang-interpreter only)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "handwritten_kernels.h"
#include "tcc/jit/jit.h"
#include "tcc/jit/kernel_cache.h"
#include "test_tensors.h"
#include "../common/stats.h"

using namespace tcc::jit;
using namespace tcc::jit::testing;
using Clock = std::chrono::steady_clock;
using KernelFunction = int (*)(tcc_tensor**);

namespace {

std::vector<std::string> jitFlags;  // from --jit-flag

CompileOptions optionsFor(Backend backend) {
  CompileOptions options{.backend = backend};
  if (backend == Backend::ClangInterpreter) options.extraFlags = jitFlags;
  return options;
}

struct Arguments {
  int compiles = 15;
  int runs = 15;
  int rows = 1000000;
  int nonzerosPerRow = 16;
  std::vector<std::string> jitFlags;
};

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--jit-flag")) {
      arguments.jitFlags.push_back(argv[a + 1]);
      continue;
    }
    int value = std::atoi(argv[a + 1]);
    if (value <= 0) {
      std::fprintf(stderr, "%s needs a positive number\n", argv[a]);
      std::exit(2);
    }
    if (!std::strcmp(argv[a], "--compiles")) arguments.compiles = value;
    else if (!std::strcmp(argv[a], "--runs")) arguments.runs = value;
    else if (!std::strcmp(argv[a], "--rows")) arguments.rows = value;
    else if (!std::strcmp(argv[a], "--nnz-per-row")) arguments.nonzerosPerRow = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[a]);
      std::exit(2);
    }
  }
  return arguments;
}

double milliseconds(Clock::duration duration) { return std::chrono::duration<double, std::milli>(duration).count(); }

// CPU time of this thread plus that of finished child processes (the system
// compiler): unlike wall time, it does not grow when other jobs share the
// cores.
double cpuMilliseconds() {
  timespec thread{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &thread);
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return thread.tv_sec * 1e3 + thread.tv_nsec / 1e6 + ms(children.ru_utime) + ms(children.ru_stime);
}

struct Latency {
  double wallMs, cpuMs;
};

// Median compile latency per backend, samples interleaved so both see the
// same machine load.
std::vector<Latency> compileLatency(const std::string& source, const char* symbol, const std::vector<Backend>& backends,
                                    int samples) {
  std::vector<std::vector<double>> wall(backends.size()), cpu(backends.size());
  for (int s = 0; s < samples; ++s)
    for (size_t b = 0; b < backends.size(); ++b) {
      auto start = Clock::now();
      double cpuStart = cpuMilliseconds();
      auto module = compile(source, optionsFor(backends[b]));
      module->symbol(symbol);
      cpu[b].push_back(cpuMilliseconds() - cpuStart);
      wall[b].push_back(milliseconds(Clock::now() - start));
    }
  std::vector<Latency> medians;
  for (size_t b = 0; b < backends.size(); ++b) medians.push_back({median(wall[b]), median(cpu[b])});
  return medians;
}

// Median latency of a disk-cache hit (memory cache cleared each time).
std::vector<double> diskHitLatency(const std::string& source, const char* symbol, const std::vector<Backend>& backends,
                                   int samples) {
  std::string pattern = (std::filesystem::temp_directory_path() / "tcc-jit-bench-XXXXXX").string();
  if (!mkdtemp(pattern.data())) std::exit(1);
  KernelCache cache({.diskDirectory = std::filesystem::path(pattern)});
  for (Backend backend : backends) cache.getOrCompile(source, optionsFor(backend));
  std::vector<std::vector<double>> times(backends.size());
  for (int s = 0; s < samples; ++s)
    for (size_t b = 0; b < backends.size(); ++b) {
      cache.clearMemory();
      auto start = Clock::now();
      auto module = cache.getOrCompile(source, optionsFor(backends[b]));
      module->symbol(symbol);
      times[b].push_back(milliseconds(Clock::now() - start));
    }
  std::filesystem::remove_all(pattern);
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(median(t));
  return medians;
}

struct RunTime {
  double minimumWallMs, medianCpuMs;
};

double threadCpuMilliseconds() {
  timespec thread{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &thread);
  return thread.tv_sec * 1e3 + thread.tv_nsec / 1e6;
}

// Per kernel: the fastest wall time and the median thread CPU time over
// `runs` calls, interleaved so all kernels see the same machine load. On a
// shared machine both discount time the thread spent descheduled.
std::vector<RunTime> runTime(const std::vector<KernelFunction>& kernels, tcc_tensor** tensors, int runs) {
  std::vector<std::vector<double>> wall(kernels.size()), cpu(kernels.size());
  for (KernelFunction kernel : kernels) kernel(tensors);  // warm up
  for (int r = 0; r < runs; ++r)
    for (size_t k = 0; k < kernels.size(); ++k) {
      auto start = Clock::now();
      double cpuStart = threadCpuMilliseconds();
      if (kernels[k](tensors) != 0) std::exit(1);
      cpu[k].push_back(threadCpuMilliseconds() - cpuStart);
      wall[k].push_back(milliseconds(Clock::now() - start));
    }
  std::vector<RunTime> result;
  for (size_t k = 0; k < kernels.size(); ++k)
    result.push_back({*std::min_element(wall[k].begin(), wall[k].end()), median(cpu[k])});
  return result;
}

std::string columns(const std::vector<RunTime>& times) {
  char text[256];
  std::snprintf(text, sizeof text, "%.2f | %.2f | %.3f | %.2f | %.2f | %.3f |", times[0].minimumWallMs,
                times[1].minimumWallMs, times[0].minimumWallMs / times[1].minimumWallMs, times[0].medianCpuMs,
                times[1].medianCpuMs, times[0].medianCpuMs / times[1].medianCpuMs);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments arguments = parse(argc, argv);
  jitFlags = arguments.jitFlags;
  std::string flagText;
  for (const std::string& flag : jitFlags) flagText += " " + flag;
  if (!flagText.empty()) std::printf("extra clang-interpreter flags:%s\n\n", flagText.c_str());
  const std::vector<Backend> backends = {Backend::ClangInterpreter, Backend::SystemCompiler};
  for (Backend backend : backends)
    if (!isAvailable(backend)) {
      std::fprintf(stderr, "%s is not built\n", backendName(backend));
      return 1;
    }
  const std::string spmv = spmvKernel(TCC_SOURCE_DIR), mttkrp = mttkrpKernel(TCC_SOURCE_DIR);

  std::printf("## Compile latency, source text -> callable (median of %d)\n\n", arguments.compiles);
  std::printf("| kernel | clang-interpreter wall ms | system-compiler wall ms | clang-interpreter CPU ms | system-compiler CPU ms "
              "| clang disk-cache hit ms | system disk-cache hit ms |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (auto [name, source, symbol] : {std::tuple{"SpMV (CSR)", &spmv, "spmv"}, std::tuple{"MTTKRP (CSF)", &mttkrp, "mttkrp"}}) {
    auto compiles = compileLatency(*source, symbol, backends, arguments.compiles);
    auto hits = diskHitLatency(*source, symbol, backends, arguments.compiles);
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", name, compiles[0].wallMs, compiles[1].wallMs,
                compiles[0].cpuMs, compiles[1].cpuMs, hits[0], hits[1]);
    std::fflush(stdout);
  }

  const char* compiler = std::getenv("CXX");
  std::printf("\n## Run time (%d runs, interleaved; system compiler: %s)\n\n", arguments.runs,
              compiler && *compiler ? compiler : "c++");
  std::printf("| kernel | input | clang-interpreter min wall ms | system-compiler min wall ms | jit / system (wall) "
              "| clang-interpreter median CPU ms | system-compiler median CPU ms | jit / system (CPU) |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  {
    CsrMatrix A = randomCsr(arguments.rows, arguments.rows, double(arguments.nonzerosPerRow) / arguments.rows, 1);
    std::vector<double> x = randomVector(A.columns, 2), y(A.rows, 0.0);
    tcc_tensor yTensor = denseVectorView(y), ATensor = csrView(A), xTensor = denseVectorView(x);
    tcc_tensor* tensors[] = {&yTensor, &ATensor, &xTensor};
    std::vector<std::shared_ptr<const Module>> modules;
    std::vector<KernelFunction> kernels;
    for (Backend backend : backends) {
      modules.push_back(compile(spmv, optionsFor(backend)));
      kernels.push_back(reinterpret_cast<KernelFunction>(modules.back()->symbol("spmv")));
    }
    auto times = runTime(kernels, tensors, arguments.runs);
    std::printf("| SpMV (CSR) | %d x %d, %zu nonzeros | %s\n", A.rows, A.columns, A.vals.size(), columns(times).c_str());
    std::fflush(stdout);
  }
  {
    const int I = 2000, K = 2000, L = 2000, J = 32;
    CsfTensor B = randomCsf(I, K, L, 2000000, 3);
    std::vector<double> C = randomVector(size_t(K) * J, 4), D = randomVector(size_t(L) * J, 5), A(size_t(I) * J);
    tcc_tensor ATensor = denseMatrixView(A, I, J), BTensor = csfView(B), CTensor = denseMatrixView(C, K, J),
               DTensor = denseMatrixView(D, L, J);
    tcc_tensor* tensors[] = {&ATensor, &BTensor, &CTensor, &DTensor};
    std::vector<std::shared_ptr<const Module>> modules;
    std::vector<KernelFunction> kernels;
    for (Backend backend : backends) {
      modules.push_back(compile(mttkrp, optionsFor(backend)));
      kernels.push_back(reinterpret_cast<KernelFunction>(modules.back()->symbol("mttkrp")));
    }
    auto times = runTime(kernels, tensors, arguments.runs);
    std::printf("| MTTKRP (CSF) | %d x %d x %d, %zu nonzeros, J = %d | %s\n", I, K, L, B.vals.size(), J,
                columns(times).c_str());
  }
  return 0;
}
