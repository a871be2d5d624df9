// Compile latency (DSL text -> callable kernel, kernel cache off) and kernel
// run time for the in-process Clang JIT and the system compiler, measured in
// the same run. Prints a Markdown table.
//
//   tcc_compile_latency_bench [--compiles N] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  const char* program;
};

const Case kCases[] = {
    {"SpMV (csr)", "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n"},
    {"SpGEMM (csr, dense workspace)",
     "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n"},
    {"MTTKRP (csf)",
     "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
     "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)\n"},
};

std::map<std::string, tcc::Tensor> inputsFor(int index) {
  using namespace tcc;
  switch (index) {
    case 0:
      return {{"A", rt::pack(rt::randomPerRow(200000, 200000, 16, 1), toRuntimeFormat(Format::csr()))},
              {"x", rt::pack(rt::randomUniform({200000}, 1.0, 2), toRuntimeFormat(Format::denseOfOrder(1)))}};
    case 1: {
      Tensor B = rt::pack(rt::randomPerRow(20000, 20000, 8, 3), toRuntimeFormat(Format::csr()));
      return {{"B", B}, {"C", B}};
    }
    default:
      return {{"B", rt::pack(rt::randomUniform({200, 200, 200}, 0.01, 4), toRuntimeFormat(Format::csf(3)))},
              {"C", rt::pack(rt::randomUniform({200, 32}, 1.0, 5), toRuntimeFormat(Format::denseOfOrder(2)))},
              {"D", rt::pack(rt::randomUniform({200, 32}, 1.0, 6), toRuntimeFormat(Format::denseOfOrder(2)))}};
  }
}

}  // namespace

int main(int argc, char** argv) {
  int compiles = 11, runs = 21;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--compiles")) compiles = std::atoi(argv[a + 1]);
    if (!std::strcmp(argv[a], "--runs")) runs = std::atoi(argv[a + 1]);
  }
  const tcc::jit::Backend backends[] = {tcc::jit::Backend::ClangInterpreter, tcc::jit::Backend::SystemCompiler};
  std::printf("| kernel | JIT compile ms | system compile ms | JIT run ms | system run ms | run ratio (system/JIT) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (int index = 0; index < 3; ++index) {
    const Case& c = kCases[index];
    double compileMs[2], runMs[2];
    auto inputs = inputsFor(index);
    for (int b = 0; b < 2; ++b) {
      tcc::CompileOptions options;
      options.backend = backends[b];
      options.useKernelCache = false;
      std::vector<double> latencies;
      tcc::Kernel kernel;
      for (int k = 0; k < compiles; ++k) {
        auto start = Clock::now();
        kernel = tcc::compile(tcc::Program::fromText(c.program, "bench.tc"), options);
        latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      }
      compileMs[b] = median(latencies);
      tcc::RunResult result = kernel.run(inputs, tcc::RunOptions{runs});
      runMs[b] = median(result.seconds) * 1e3;
    }
    std::printf("| %s | %.1f | %.1f | %.3f | %.3f | %.3f |\n", c.name, compileMs[0], compileMs[1], runMs[0], runMs[1],
                runMs[1] / runMs[0]);
  }
  return 0;
}
