// compile(): hand-written kernels in the generated-code style, run through
// both backends and compared with plain C++ loops on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "handwritten_kernels.h"
#include "tcc/jit/jit.h"
#include "test_tensors.h"

// Called from JIT-compiled code: the test executable exports it.
extern "C" double tcc_jit_test_host_scale(double value) { return 3.0 * value + 1.0; }
int tcc_jit_test_destructions = 0;
extern "C" void tcc_jit_test_record_destruction(int value) { tcc_jit_test_destructions += value; }
namespace tcc::jit::testing {
namespace {

using KernelFunction = int (*)(tcc_tensor**);

class CompileTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (!isAvailable(GetParam())) GTEST_SKIP() << backendName(GetParam()) << " is not built";
  }
  CompileOptions options() const {
    CompileOptions options;
    options.backend = GetParam();
    return options;
  }
};

std::vector<double> referenceSpmv(const CsrMatrix& A, const std::vector<double>& x) {
  std::vector<double> y(A.rows, 0.0);
  for (int i = 0; i < A.rows; ++i)
    for (long long p = A.pos[i]; p < A.pos[i + 1]; ++p) y[i] += A.vals[p] * x[A.crd[p]];
  return y;
}

void expectNear(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-12 * (1.0 + std::abs(expected[i]))) << "at " << i;
}

std::vector<double> runSpmv(const Module& module, CsrMatrix& A, std::vector<double>& x) {
  std::vector<double> y(A.rows, -7.0);
  tcc_tensor yTensor = denseVectorView(y), ATensor = csrView(A), xTensor = denseVectorView(x);
  tcc_tensor* tensors[] = {&yTensor, &ATensor, &xTensor};
  EXPECT_EQ(module.function<KernelFunction>("spmv")(tensors), 0);
  return y;
}

TEST_P(CompileTest, CsrSpmvMatchesPlainLoop) {
  CsrMatrix A = randomCsr(1200, 900, 0.02, 1);
  std::vector<double> x = randomVector(900, 2);
  auto module = compile(spmvKernel(TCC_SOURCE_DIR), options());
  EXPECT_EQ(module->backend(), GetParam());
  expectNear(runSpmv(*module, A, x), referenceSpmv(A, x));
}

TEST_P(CompileTest, PreludeLibcFunctionsResolve) {
  CsrMatrix A = randomCsr(500, 700, 0.05, 3);
  auto module = compile(rowNormKernel(TCC_SOURCE_DIR), options());
  std::vector<double> y(A.rows, -1.0);
  tcc_tensor yTensor = denseVectorView(y), ATensor = csrView(A);
  tcc_tensor* tensors[] = {&yTensor, &ATensor};
  ASSERT_EQ(reinterpret_cast<KernelFunction>(module->symbol("row_norms"))(tensors), 0);
  std::vector<double> expected(A.rows, 0.0);
  for (int i = 0; i < A.rows; ++i) {
    for (long long p = A.pos[i]; p < A.pos[i + 1]; ++p) expected[i] += A.vals[p] * A.vals[p];
    expected[i] = std::sqrt(expected[i]);
  }
  expectNear(y, expected);
}

TEST_P(CompileTest, CsfMttkrpMatchesPlainLoop) {
  const int I = 40, K = 30, L = 35, J = 16;
  CsfTensor B = randomCsf(I, K, L, 3000, 4);
  std::vector<double> C = randomVector(K * J, 5), D = randomVector(L * J, 6), A(I * J, 99.0);
  auto module = compile(mttkrpKernel(TCC_SOURCE_DIR), options());
  tcc_tensor ATensor = denseMatrixView(A, I, J), BTensor = csfView(B), CTensor = denseMatrixView(C, K, J),
             DTensor = denseMatrixView(D, L, J);
  tcc_tensor* tensors[] = {&ATensor, &BTensor, &CTensor, &DTensor};
  ASSERT_EQ(reinterpret_cast<KernelFunction>(module->symbol("mttkrp"))(tensors), 0);

  // Reference from the coordinates, independent of the CSF walk's order.
  std::vector<double> expected(I * J, 0.0);
  for (size_t ip = 0; ip < B.crd[0].size(); ++ip)
    for (long long kp = B.pos[1][ip]; kp < B.pos[1][ip + 1]; ++kp)
      for (long long lp = B.pos[2][kp]; lp < B.pos[2][kp + 1]; ++lp) {
        int i = B.crd[0][ip], k = B.crd[1][kp], l = B.crd[2][lp];
        for (int j = 0; j < J; ++j) expected[i * J + j] += B.vals[lp] * C[k * J + j] * D[l * J + j];
      }
  for (size_t n = 0; n < A.size(); ++n) ASSERT_NEAR(A[n], expected[n], 1e-10 * (1.0 + std::abs(expected[n])));
}

TEST_P(CompileTest, CallsExternCFunctionOfTheHostExecutable) {
  const std::string source = R"(
extern "C" double tcc_jit_test_host_scale(double value);
extern "C" double scale_twice(double value) { return tcc_jit_test_host_scale(tcc_jit_test_host_scale(value)); }
)";
  auto module = compile(source, options());
  auto scaleTwice = reinterpret_cast<double (*)(double)>(module->symbol("scale_twice"));
  for (double v : {-2.5, 0.25, 10.0}) EXPECT_EQ(scaleTwice(v), tcc_jit_test_host_scale(tcc_jit_test_host_scale(v)));
}

TEST_P(CompileTest, SyntaxErrorRaisesCompileErrorWithDiagnostics) {
  const std::string source = "extern \"C\" int broken(int x) { return x + undeclared_name_42; }\n";
  try {
    compile(source, options());
    FAIL() << "expected CompileError";
  } catch (const CompileError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("undeclared_name_42"), std::string::npos) << message;
    // Both backends name the source kernel.cpp and give line and column.
    EXPECT_NE(message.find("kernel.cpp:1:"), std::string::npos) << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;
    EXPECT_EQ(message.find("/tmp"), std::string::npos) << message;
  }
}

struct BrokenSource {
  const char* what;
  std::string source;
  int line;  // where clang reports the first error
  int column;
  std::string message;  // clang's words for it
};

// Line 1 of every broken source: a struct declared inside extern "C" { },
// as the generated prelude declares the tensor ABI. Clang 16's incremental
// compiler crashed (in IncrementalParser::CleanUpPTU) instead of reporting
// any error in a source that had one.
const std::string kExternCStruct =
    "extern \"C\" { typedef struct tcc_tensor_like { long long size; double* vals; } tcc_tensor_like; }\n";

std::vector<BrokenSource> brokenSources() {
  return {
      {"undeclared identifier in a body",
       kExternCStruct +
           "typedef long long int64_t;\n"
           "extern \"C\" double sqrt(double);\n"
           "extern \"C\" int kernel(tcc_tensor_like* t) {\n"
           "  for (int64_t i = 0; i < t->size; ++i) t->vals[i] = sqrt(t->vals[i]) + undeclared_scale;\n"
           "  return 0;\n"
           "}\n",
       5, 73, "use of undeclared identifier 'undeclared_scale'"},
      {"type error",
       kExternCStruct +
           "extern \"C\" int kernel(tcc_tensor_like* t) {\n"
           "  double* out = t->size;\n"
           "  return out != nullptr;\n"
           "}\n",
       3, 11, "cannot initialize a variable of type 'double *' with an lvalue of type 'long long'"},
      {"missing semicolon at top level",
       kExternCStruct +
           "typedef long long int64_t;\n"
           "static const int64_t kBlock = 64\n"
           "extern \"C\" int64_t kernel(int64_t n) { return n / kBlock; }\n",
       3, 33, "expected ';' after top level declarator"},
      {"error in a template",
       kExternCStruct +
           "template <typename T> T firstValue(const T* values) { return values->missing_member; }\n"
           "extern \"C\" double kernel(const double* values) { return firstValue(values); }\n",
       2, 68, "member reference base type 'const double' is not a structure or union"},
  };
}

TEST_P(CompileTest, CompileErrorsAreReportedAtTheirLineAndColumnAndTheJitCarriesOn) {
  for (const BrokenSource& broken : brokenSources()) {
    SCOPED_TRACE(broken.what);
    try {
      compile(broken.source, options());
      ADD_FAILURE() << "expected CompileError";
    } catch (const CompileError& error) {
      const std::string message = error.what();
      const std::string where = "kernel.cpp:" + std::to_string(broken.line) + ":";
      if (GetParam() == Backend::ClangInterpreter) {
        const std::string expected = where + std::to_string(broken.column) + ": error: " + broken.message;
        EXPECT_NE(message.find(expected), std::string::npos) << "expected '" << expected << "' in:\n" << message;
      } else {
        // g++ words (and, for the missing semicolon, places) errors its own way.
        EXPECT_NE(message.find("kernel.cpp:"), std::string::npos) << message;
        EXPECT_NE(message.find("error"), std::string::npos) << message;
      }
    }
  }
  // The same process still compiles and runs a good kernel.
  CsrMatrix A = randomCsr(700, 500, 0.03, 11);
  std::vector<double> x = randomVector(500, 12);
  auto module = compile(spmvKernel(TCC_SOURCE_DIR), options());
  expectNear(runSpmv(*module, A, x), referenceSpmv(A, x));
}

TEST_P(CompileTest, UnresolvedExternalRaisesCompileError) {
  const std::string source = R"(
extern "C" int tcc_jit_test_function_nobody_defines(int);
extern "C" int calls_missing(int x) { return tcc_jit_test_function_nobody_defines(x); }
)";
  try {
    compile(source, options());
    FAIL() << "expected CompileError";
  } catch (const CompileError& error) {
    EXPECT_NE(std::string(error.what()).find("tcc_jit_test_function_nobody_defines"), std::string::npos)
        << error.what();
  }
}

TEST_P(CompileTest, MissingSymbolThrowsOutOfRange) {
  auto module = compile("extern \"C\" int answer() { return 42; }\n", options());
  EXPECT_EQ(reinterpret_cast<int (*)()>(module->symbol("answer"))(), 42);
  EXPECT_EQ(module->findSymbol("no_such_function"), nullptr);
  EXPECT_THROW(module->symbol("no_such_function"), std::out_of_range);
}

TEST_P(CompileTest, RunsStaticInitializers) {
  const std::string source = R"(
extern "C" double tcc_jit_test_host_scale(double value);
static double first = tcc_jit_test_host_scale(2.0);
struct Counter {
  int value;
  Counter() : value((int)first + 1) {}
};
static Counter counter;
extern "C" double table_first() { return first + counter.value; }
)";
  auto module = compile(source, options());
  const double expected = tcc_jit_test_host_scale(2.0) + (static_cast<int>(tcc_jit_test_host_scale(2.0)) + 1);
  EXPECT_EQ(reinterpret_cast<double (*)()>(module->symbol("table_first"))(), expected);
}

TEST_P(CompileTest, StaticDestructorsRunOnUnloadOrAreRejected) {
  const std::string source = R"(
extern "C" void tcc_jit_test_record_destruction(int value);
struct Reporter {
  ~Reporter() { tcc_jit_test_record_destruction(17); }
};
static Reporter reporter;
extern "C" int touch() { return 1; }
)";
  tcc_jit_test_destructions = 0;
  if (GetParam() == Backend::ClangInterpreter) {
    // ORC cannot honour __cxa_atexit registrations: a clear error instead.
    try {
      compile(source, options());
      FAIL() << "expected CompileError";
    } catch (const CompileError& error) {
      EXPECT_NE(std::string(error.what()).find("destructor"), std::string::npos) << error.what();
    }
    return;
  }
  {
    auto module = compile(source, options());
    EXPECT_EQ(reinterpret_cast<int (*)()>(module->symbol("touch"))(), 1);
    EXPECT_EQ(tcc_jit_test_destructions, 0);
  }
  EXPECT_EQ(tcc_jit_test_destructions, 17);
}

TEST_P(CompileTest, OpenmpKernelMatchesSerialLoop) {
  const std::string source = R"(
extern "C" void scaled_squares(int n, const double* x, double* y) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) y[i] = 2.0 * x[i] * x[i];
}
)";
  CompileOptions parallel = options();
  parallel.openmp = true;
  auto module = compile(source, parallel);
  std::vector<double> x = randomVector(10000, 21), y(x.size(), 0.0);
  reinterpret_cast<void (*)(int, const double*, double*)>(module->symbol("scaled_squares"))(
      static_cast<int>(x.size()), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2.0 * x[i] * x[i]) << "at " << i;
}

TEST_P(CompileTest, BadOptionsRaiseCompileError) {
  CompileOptions bad = options();
  bad.optLevel = 7;
  EXPECT_THROW(compile("extern \"C\" int f() { return 1; }\n", bad), CompileError);
}

TEST_P(CompileTest, UnknownCompilerFlagRaisesCompileError) {
  for (const char* flag : {"--tcc-no-such-flag", "-ftcc-no-such-flag"}) {
    CompileOptions bad = options();
    bad.extraFlags = {flag};
    try {
      compile("extern \"C\" int f() { return 1; }\n", bad);
      ADD_FAILURE() << "expected CompileError for " << flag;
    } catch (const CompileError& error) {
      EXPECT_NE(std::string(error.what()).find("tcc-no-such-flag"), std::string::npos) << error.what();
    }
  }
}

TEST_P(CompileTest, ExtraFlagsReachTheCompiler) {
  CompileOptions defined = options();
  defined.extraFlags = {"-DTCC_TEST_ANSWER=41"};
  auto module = compile("extern \"C\" int answer() { return TCC_TEST_ANSWER + 1; }\n", defined);
  EXPECT_EQ(reinterpret_cast<int (*)()>(module->symbol("answer"))(), 42);
}

TEST(CompileBackends, SameSpmvResultsFromBothBackends) {
  for (Backend backend : {Backend::ClangInterpreter, Backend::SystemCompiler})
    if (!isAvailable(backend)) GTEST_SKIP() << backendName(backend) << " is not built";
  CsrMatrix A = randomCsr(3000, 2500, 0.01, 7);
  std::vector<double> x = randomVector(2500, 8);
  auto jitted = compile(spmvKernel(TCC_SOURCE_DIR), {.backend = Backend::ClangInterpreter});
  auto systemBuilt = compile(spmvKernel(TCC_SOURCE_DIR), {.backend = Backend::SystemCompiler});
  std::vector<double> a = runSpmv(*jitted, A, x), b = runSpmv(*systemBuilt, A, x);
  EXPECT_EQ(a, b);  // same code from the same source: bit-identical results
}

INSTANTIATE_TEST_SUITE_P(Backends, CompileTest,
                         ::testing::Values(Backend::ClangInterpreter, Backend::SystemCompiler),
                         [](const auto& info) {
                           return info.param == Backend::ClangInterpreter ? std::string("ClangInterpreter")
                                                                          : std::string("SystemCompiler");
                         });

}  // namespace
}  // namespace tcc::jit::testing

