// A host program built with GCC's OpenMP runtime (libgomp) calls tcc
// kernels, whose OpenMP is LLVM's libomp (Clang compiles them). Both
// runtimes export omp_get_thread_num and friends; a kernel that bound them
// to libgomp's would see thread 0 in every libomp thread, and its
// per-thread sparse workspaces would be filled by all threads at once.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/tcc.h"

namespace tcc {
namespace {

// Runs before main: libomp reads it when the first parallel kernel starts.
const bool kThreadsSet = [] { return setenv("OMP_NUM_THREADS", "4", 1) == 0; }();

class LibgompHost : public ::testing::TestWithParam<jit::Backend> {};

TEST_P(LibgompHost, PerThreadWorkspacesOfKernelsStayPerThread) {
  ASSERT_TRUE(kThreadsSet);
  if (!jit::isAvailable(GetParam())) GTEST_SKIP() << "this backend is not available here";
  CompileOptions options;
  options.backend = GetParam();
  int hostThreads = 0;
#pragma omp parallel reduction(+ : hostThreads)
  hostThreads += 1;  // libgomp is loaded and running in this process
  ASSERT_GE(hostThreads, 1);

  const std::string program = "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\n"
                              "A(i, j) = B(i, k) * C(k, j)\n";
  rt::Coo matrix = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/bcsstk13.mtx");
  std::map<std::string, Tensor> inputs = {{"B", rt::pack(matrix, rt::TensorFormat::csc())},
                                          {"C", rt::pack(matrix, rt::TensorFormat::csr())}};
  Kernel serial = compile(Program::fromText(program, "serial.tc"), options);
  Kernel parallel = compile(
    Program::fromText(program + "schedule {\n  parallelize(k, CPUThread, NoRaces)\n}\n", "parallel.tc"), options);
  std::vector<double> expected = rt::toDense(rt::unpack(serial.run(inputs).at("A")));
  double scale = 0;
  for (double v : expected) scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 0);
  for (int run = 0; run < 3; ++run) {
    std::vector<double> actual = rt::toDense(rt::unpack(parallel.run(inputs).at("A")));
    ASSERT_EQ(actual.size(), expected.size());
    double worst = 0;
    for (size_t k = 0; k < actual.size(); ++k) worst = std::max(worst, std::abs(actual[k] - expected[k]));
    EXPECT_LE(worst, 1e-12 * scale) << "run " << run;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LibgompHost,
                         ::testing::Values(jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler),
                         [](const auto& info) {
                           return info.param == jit::Backend::ClangInterpreter ? "ClangJit" : "SystemCompiler";
                         });

}  // namespace
}  // namespace tcc
