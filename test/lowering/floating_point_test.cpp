// The floating-point mode: every kernel family in strict and fast mode
// against the dense reference (fast within a relative tolerance), on random
// and real inputs; the `fp` line, CompileOptions and the kernel cache each
// take the mode; strict stays bit-identical across the JIT backends; fast
// mode still propagates infinities and NaNs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernel_check.h"
#include "tcc/jit/jit.h"
#include "tcc/jit/kernel_cache.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/cpp_loop_forms.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

// The C++ printer's loop forms as given while it lives, then as before.
struct LoopFormsScope {
  lowering::CppLoopForms saved = lowering::cppLoopForms();
  explicit LoopFormsScope(const lowering::CppLoopForms& forms) { lowering::setCppLoopForms(forms); }
  ~LoopFormsScope() { lowering::setCppLoopForms(saved); }
};

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const char* const kSpmv = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";
const char* const kSpmm = "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\n"
                          "C(i,k) = A(i,j) * B(j,k)\n";
const char* const kMttkrp = "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\n"
                            "tensor D(L, J) : dense\nA(i,j) = B(i,k,l) * C(k,j) * D(l,j)\n";
// In TACO's form: the k loop reads D(k,j) down a column of a row-major D.
const char* const kSddmm = "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, K) : dense\n"
                           "tensor D(K, J) : dense\nA(i,j) = B(i,j) * C(i,k) * D(k,j)\n";

// Row i holds i % 41 entries: every count of fast mode's four partial sums
// and their tail, empty rows included, and rows on both sides of the
// length from which a row runs as one vectorized loop (8), and of one strip
// (32).
rt::Coo rowsOfEveryLength() {
  rt::Coo coo = rt::Coo::ofShape({90, 53});
  for (int32_t i = 0; i < 90; ++i)
    for (int32_t k = 0; k < i % 41; ++k) {
      int32_t c[2] = {i, (7 * k + i) % 53};
      coo.push(c, 0.3 + 0.5 * k - 0.125 * i);
    }
  return coo;
}

std::vector<ProgramCase> programCases() {
  rt::Coo bus = realMatrix("494_bus.mtx");
  const int32_t n = bus.dims[0];
  return {
      {"SpMV", kSpmv, {{"A", randomSparse({61, 47}, 0.2, 11)}, {"x", randomDense({47}, 12)}}},
      {"SpMVRowLengths", kSpmv, {{"A", rowsOfEveryLength()}, {"x", randomDense({53}, 35)}}},
      {"SpMVReal", kSpmv, {{"A", realMatrix("bcsstk13.mtx")}, {"x", randomDense({2003}, 13)}}},
      {"SpMVCsc",
       "tensor y(I) : dense\ntensor A(I, J) : csc\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n",
       {{"A", randomSparse({40, 52}, 0.15, 14)}, {"x", randomDense({52}, 15)}}},
      {"SpMM", kSpmm, {{"A", randomSparse({33, 29}, 0.2, 16)}, {"B", randomDense({29, 17}, 17)}}},
      {"SpMMReal", kSpmm, {{"A", bus}, {"B", randomDense({n, 8}, 18)}}},
      {"SDDMM", kSddmm,
       {{"B", randomSparse({30, 26}, 0.2, 19)}, {"C", randomDense({30, 21}, 20)}, {"D", randomDense({21, 26}, 21)}}},
      // K = 7: one step of fast mode's four partial sums and a tail of three.
      {"SDDMMReal", kSddmm, {{"B", bus}, {"C", randomDense({n, 7}, 36)}, {"D", randomDense({7, n}, 37)}}},
      {"MTTKRP", kMttkrp,
       {{"B", randomSparse({12, 10, 9}, 0.1, 22)}, {"C", randomDense({10, 13}, 23)}, {"D", randomDense({9, 13}, 24)}}},
      {"TTV", "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n",
       {{"B", randomSparse({11, 12, 40}, 0.2, 25)}, {"c", randomDense({40}, 26)}}},
      {"TTM",
       "tensor A(I, J, K) : dense\ntensor B(I, J, L) : csf\ntensor C(K, L) : dense\nA(i,j,k) = B(i,j,l) * C(k,l)\n",
       {{"B", randomSparse({8, 9, 30}, 0.2, 27)}, {"C", randomDense({11, 30}, 28)}}},
      {"SparseAdd", "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i,j) = B(i,j) + C(i,j)\n",
       {{"B", randomSparse({30, 40}, 0.1, 29)}, {"C", randomSparse({30, 40}, 0.1, 30)}}},
      {"SpGEMM", "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n",
       {{"B", bus}, {"C", bus}}},
      {"Residual",
       "tensor r(I) : dense\ntensor b(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
       "r(i) = b(i) - sum(j, A(i,j) * x(j))\n",
       {{"A", bus}, {"b", randomDense({n}, 31)}, {"x", randomDense({n}, 32)}}},
      {"InnerProduct", "tensor a\ntensor B(I, J) : csr\ntensor C(I, J) : csr\na = B(i,j) * C(i,j)\n",
       {{"B", randomSparse({50, 50}, 0.3, 33)}, {"C", randomSparse({50, 50}, 0.3, 34)}}},
  };
}

class FloatingPointModes : public ::testing::TestWithParam<std::tuple<size_t, FloatingPointMode>> {};

TEST_P(FloatingPointModes, KernelMatchesReference) {
  static const std::vector<ProgramCase> cases = programCases();
  const auto& [index, mode] = GetParam();
  const ProgramCase& program = cases.at(index);
  SCOPED_TRACE(program.name + " in " + frontend::toString(mode) + " mode");
  CompileOptions options;
  options.floatingPoint = mode;
  // Fast mode reassociates sums: equal to the reference within rounding.
  double tolerance = mode == FloatingPointMode::Fast ? 1e-9 : 1e-10;
  std::string source = expectProgramMatchesReference(program.program, program.inputs, options, tolerance);
  EXPECT_TRUE(contains(source, std::string("// Floating-point mode: ") + frontend::toString(mode)));
}

INSTANTIATE_TEST_SUITE_P(Kernels, FloatingPointModes,
                         ::testing::Combine(::testing::Range<size_t>(0, 15),
                                            ::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast)),
                         [](const auto& info) {
                           static const std::vector<ProgramCase> cases = programCases();
                           return cases.at(std::get<0>(info.param)).name + "_" +
                                  frontend::toString(std::get<1>(info.param));
                         });

TEST(FloatingPointMode, TheProgramsLineTakesEffect) {
  Lowered strict = lowerProgram(Program::fromText(kSpmv, "test.tc"));
  EXPECT_EQ(strict.floatingPoint, FloatingPointMode::Strict);
  EXPECT_FALSE(contains(strict.cpp, "#pragma omp simd"));
  EXPECT_TRUE(contains(strict.cpp, "-ffp-contract=off"));
  Lowered fast = lowerProgram(Program::fromText(std::string(kSpmv) + "fp fast\n", "test.tc"));
  EXPECT_EQ(fast.floatingPoint, FloatingPointMode::Fast);
  // SpMV's row sum reads x through crd: four scalar partial sums.
  EXPECT_TRUE(contains(fast.cpp, "ty_u3 += ")) << fast.cpp;
  EXPECT_TRUE(contains(fast.cpp, "ty = (ty + ty_u1) + (ty_u2 + ty_u3);")) << fast.cpp;
  EXPECT_TRUE(contains(fast.cpp, "-ffp-contract=fast -fno-trapping-math -fno-math-errno"));
  EXPECT_FALSE(contains(fast.cpp, "finite-math"));
}

TEST(FloatingPointMode, CompileOptionsOverrideTheLine) {
  CompileOptions options;
  options.floatingPoint = FloatingPointMode::Strict;
  Lowered lowered = lowerProgram(Program::fromText(std::string(kSpmv) + "fp fast\n", "test.tc"), options);
  EXPECT_EQ(lowered.floatingPoint, FloatingPointMode::Strict);
  EXPECT_FALSE(contains(lowered.cpp, "#pragma omp simd"));
  options.floatingPoint = FloatingPointMode::Fast;
  EXPECT_TRUE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc"), options).cpp, "ty_u1"));
}

TEST(FloatingPointMode, OnlyPureScalarSumsAreMarkedSimd) {
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  // SpMM's inner loop stores into C (no scalar sum); SpGEMM's loops scatter
  // into a workspace: neither is a simd reduction.
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmm, "test.tc"), fast).cpp, "reduction(+:"));
  std::string spgemm = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n";
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(spgemm, "test.tc"), fast).cpp, "#pragma omp simd"));
}

TEST(FloatingPointMode, OnlySumsOverGatheredOperandsGetPartialSums) {
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  // A dot product of two dense vectors reads nothing through an index it
  // loaded: it stays a simd reduction.
  std::string dot = "tensor a\ntensor b(I) : dense\ntensor c(I) : dense\na = b(i) * c(i)\n";
  std::string cpp = lowerProgram(Program::fromText(dot, "test.tc"), fast).cpp;
  EXPECT_TRUE(contains(cpp, "#pragma omp simd reduction(+:")) << cpp;
  EXPECT_FALSE(contains(cpp, "partial sums")) << cpp;
  // Strict mode never splits a sum.
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp, "partial sums"));
}

TEST(FloatingPointMode, SumsOverAStridedOperandGetPartialSumsNotAVectorLoop) {
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  // SDDMM's k loop reads D(k,j) at a stride of D's row length: as a vector
  // loop it gathered D a lane at a time; four scalar partial sums instead.
  std::string cpp = lowerProgram(Program::fromText(kSddmm, "test.tc"), fast).cpp;
  EXPECT_TRUE(contains(cpp, "(an operand read at a stride)")) << cpp;
  EXPECT_TRUE(contains(cpp, "tA = (tA + tA_u1) + (tA_u2 + tA_u3);")) << cpp;
  EXPECT_FALSE(contains(cpp, "#pragma omp simd")) << cpp;
  // With D stored column by column the same loop reads D at unit stride:
  // it stays a vector loop.
  std::string byColumn = kSddmm;
  byColumn.replace(byColumn.find("tensor D(K, J) : dense"), 22, "tensor D(K, J) : dense order (1, 0)");
  cpp = lowerProgram(Program::fromText(byColumn, "test.tc"), fast).cpp;
  EXPECT_TRUE(contains(cpp, "#pragma omp simd reduction(+: tA)")) << cpp;
  EXPECT_FALSE(contains(cpp, "read at a stride")) << cpp;
}

TEST(FloatingPointMode, GccReassociatesOnlyFunctionsWhoseSumsAreGatherSums) {
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  const std::string reassociate = "optimize(\"associative-math\", \"no-signed-zeros\")";
  std::string spmv = lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp;
  EXPECT_TRUE(contains(spmv, reassociate)) << spmv;
  // Through GCC, and Clang on x86 cores other than AMD's, the body twice,
  // as two functions: inputs in cache call the first (long rows
  // reassociated and vectorized, short ones as four terms apart and the
  // rest unrolled, no loop); the entry point itself runs GCC's streaming
  // loops (long rows in prefetching strips, except on AMD, short ones as
  // partial sums) and the partial sums of Clang and other compilers on
  // every input that takes no other copy.
  EXPECT_TRUE(contains(spmv, "#if TCC_REASSOCIATED_ROWS\nstatic __attribute__((noinline))")) << spmv;
  EXPECT_TRUE(contains(spmv, "#if defined(__x86_64__) && ((defined(__GNUC__) && !defined(__clang__)) || "
                             "(defined(__clang__) && !TCC_AMD_ZEN))\n#define TCC_REASSOCIATED_ROWS 1"))
      << spmv;
  EXPECT_TRUE(contains(spmv, "if ((int64_t)A->vals_size + (int64_t)x->vals_size <= 1048576LL) "
                             "return tcc_kernel_0_reassociated(tcc_tensors);"))
      << spmv;
  EXPECT_EQ(count(spmv, "return tcc_kernel_0_reassociated(tcc_tensors);"), 1u) << spmv;
  // The reassociated copy, the copy with AVX-512 gathers (printed for
  // AMD cores, see StreamingGathersOnAmdCores) and the entry point.
  EXPECT_EQ(count(spmv, reassociate), 3u) << spmv;
  // Clang reassociates only the long rows of the reassociated copy.
  EXPECT_EQ(count(spmv, "#pragma clang"), 1u) << spmv;
  EXPECT_TRUE(contains(spmv, "if (pA2_end - pA2 >= 8) {\n#if defined(__clang__)\n#pragma clang fp reassociate(on)\n"
                             "#endif\n"))
      << spmv;
  EXPECT_EQ(count(spmv, "if (pA2_end - pA2 >= 8) {"), 2u) << spmv;
  EXPECT_TRUE(contains(spmv, "__asm__(\"\");  // keeps the compiler from vectorizing a short row")) << spmv;
  EXPECT_TRUE(contains(spmv, "#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && "
                             "!TCC_AMD_ZEN\n"))
      << spmv;
  // The prelude defines the test once, for the strips and for the streaming stores.
  EXPECT_EQ(count(spmv, "defined(__znver1__)"), 1u) << spmv;
  EXPECT_TRUE(contains(spmv, "#define TCC_AMD_ZEN 1")) << spmv;
  EXPECT_TRUE(contains(spmv, "const int64_t pA2_strip = pA2 + 32;")) << spmv;
  // The partial sums (entry point, gathers copy) and a short row's four terms.
  EXPECT_EQ(count(spmv, "ty_u3 += "), 3u) << spmv;
  EXPECT_EQ(count(spmv, "if (pA2_end - pA2 >= 4) {"), 1u) << spmv;
  EXPECT_EQ(count(spmv, "if (pA2 + 2 < pA2_end) {"), 1u) << spmv;
  // The partial sums prefetch into the outer caches (prefetcht1).
  EXPECT_TRUE(
      contains(spmv, "__builtin_prefetch((const void*)((size_t)(A_vals + pA2) + 512 * sizeof(*A_vals)), 0, 2);"))
      << spmv;
  // SpMM's register tiles: reassociation let GCC vectorize across their sums.
  const std::string fastSpmm = lowerProgram(Program::fromText(kSpmm, "test.tc"), fast).cpp;
  EXPECT_FALSE(contains(fastSpmm, "associative-math")) << fastSpmm;
  EXPECT_FALSE(contains(fastSpmm, "#pragma clang fp reassociate")) << fastSpmm;
  // Strict: no reassociation anywhere; SpMM's tiles at 512 bits, SpMV as before.
  std::string strictSpmv = lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp;
  // (In the kernel: the prelude's vector types carry attributes.)
  const std::string& prelude = lowering::cppPrelude();
  ASSERT_NE(strictSpmv.find(prelude), std::string::npos);
  EXPECT_FALSE(contains(strictSpmv.substr(strictSpmv.find(prelude) + prelude.size()), "__attribute__((")) << strictSpmv;
  std::string strictSpmm = lowerProgram(Program::fromText(kSpmm, "test.tc")).cpp;
  EXPECT_TRUE(contains(strictSpmm, "__attribute__((target(\"prefer-vector-width=512\")))")) << strictSpmm;
  EXPECT_FALSE(contains(strictSpmm, "associative-math")) << strictSpmm;
}

// The reassociated copy runs through GCC (the system compiler) and, on x86
// cores other than AMD's, through Clang (the JIT): fast sums through each
// against the reference, rows of every length up to 40 entries (both sides
// of the vectorized loop's threshold) and a real matrix.
TEST(FloatingPointMode, FastSumsThroughEachCompilerMatchTheReference) {
  for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
    if (!jit::isAvailable(backend)) continue;
    SCOPED_TRACE(jit::backendName(backend));
    CompileOptions options;
    options.floatingPoint = FloatingPointMode::Fast;
    options.backend = backend;
    rt::Coo real = realMatrix("bcsstk13.mtx");
    for (const auto& [name, dsl, inputs] :
         {std::tuple("SpMVRowLengths", kSpmv,
                     std::map<std::string, rt::Coo>{{"A", rowsOfEveryLength()}, {"x", randomDense({53}, 36)}}),
          std::tuple("SpMVReal", kSpmv,
                     std::map<std::string, rt::Coo>{{"A", real}, {"x", randomDense({real.dims[1]}, 37)}}),
          std::tuple("TTV", "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n",
                     std::map<std::string, rt::Coo>{{"B", randomSparse({9, 10, 60}, 0.4, 38)}, {"c", randomDense({60}, 39)}}),
          std::tuple("Residual",
                     "tensor r(I) : dense\ntensor b(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
                     "r(i) = b(i) - sum(j, A(i,j) * x(j))\n",
                     std::map<std::string, rt::Coo>{{"A", rowsOfEveryLength()}, {"b", randomDense({90}, 40)},
                                                    {"x", randomDense({53}, 41)}})}) {
      SCOPED_TRACE(name);
      std::string source = expectProgramMatchesReference(dsl, inputs, options, 1e-9);
      EXPECT_TRUE(contains(source, "associative-math")) << source;
    }
  }
}

// Through GCC a fast-mode gather sum runs one of two copies of the body,
// chosen once a call from its inputs' size: inputs of at most 2^20 stored
// values in all take the reassociated loops (rows of 8 or more vectorized,
// shorter ones in order), larger ones the streaming loops (prefetching
// strips of 32 entries for rows of 8 or more, partial sums for shorter
// ones; on AMD partial sums for every row); through Clang inputs in cache
// take the reassociated loops on x86 cores other than AMD's, and every
// other input the partial sums.
constexpr int64_t kStreamingValues = int64_t(1) << 20;

// A matrix of `cols` columns whose stored values and x's together hold
// exactly `totalValues`: rows 0-89 of i % 41 entries (empty rows, every
// length of the partial sums and their tail, both sides of 8 and of one
// strip of 32), then rows of 1000-1044 entries (whole strips and every
// remainder), the last one cut to fit.
rt::Coo rowsAroundTheStreamingSwitch(int64_t totalValues, int32_t cols) {
  std::vector<int32_t> lengths;
  int64_t stored = 0;
  for (int32_t i = 0; i < 90; ++i) lengths.push_back(i % 41), stored += i % 41;
  for (int32_t i = 0; stored + cols < totalValues; ++i) {
    int32_t length = int32_t(std::min<int64_t>(1000 + i % 45, totalValues - cols - stored));
    lengths.push_back(length), stored += length;
  }
  rt::Coo coo = rt::Coo::ofShape({int32_t(lengths.size()), cols});
  coo.reserve(size_t(stored));
  for (int32_t i = 0; i < int32_t(lengths.size()); ++i)
    for (int32_t k = 0; k < lengths[i]; ++k) {
      int32_t c[2] = {i, int32_t((int64_t(k) * cols) / lengths[i] + i % 3) % cols};
      coo.push(c, 0.25 + 0.5 * ((k * 7 + i) % 13) / 13.0 - 0.0625 * (i % 5));
    }
  coo.sort();
  return coo;
}

// A matrix of `cols` columns whose rows hold lengths[i % lengths.size()]
// entries each (0 for an empty row), and row `longRow` (if any) every
// column.
rt::Coo rowsOfLengths(int32_t rows, int32_t cols, const std::vector<int32_t>& lengths, int32_t longRow = -1) {
  rt::Coo coo = rt::Coo::ofShape({rows, cols});
  for (int32_t i = 0; i < rows; ++i) {
    const int32_t length = i == longRow ? cols : lengths[size_t(i) % lengths.size()];
    for (int32_t k = 0; k < length; ++k) {
      int32_t c[2] = {i, int32_t((int64_t(k) * cols) / length + i % 3) % cols};
      coo.push(c, 0.25 + 0.5 * ((k * 7 + i) % 13) / 13.0 - 0.0625 * (i % 5));
    }
  }
  coo.sort();
  return coo;
}

// Fast mode, inputs in cache: a loop of gather sums whose segments (CSR
// rows, CSF fibres) hold fewer than 3 entries on average runs each sum in
// order, two entries a trip; at 3 or more the reassociated loops run as
// before. Through GCC and the JIT against the dense reference: both sides
// of the average, empty rows, a long row among short ones (in order), a
// single row, real matrices (ash219: 2 a row; impcol_a: 2.8; 494_bus: 3.4),
// random sparse SpMV and TTV.
TEST(FloatingPointMode, ShortSegmentsOnAverageRunInOrder) {
  const std::string ttv = "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n";
  const std::string marker = "// fp fast: segments of fewer than 3 entries on average";
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  // Printed once, in the copy for inputs in cache, before the row loop.
  const std::string spmv = lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp;
  EXPECT_EQ(count(spmv, marker), 1u) << spmv;
  EXPECT_TRUE(contains(spmv, "if (A2_pos[(int64_t)(y1_dimension)] - A2_pos[(int64_t)(0)] < 3LL * "
                             "((int64_t)(y1_dimension) - (int64_t)(0))) {"))
      << spmv;
  EXPECT_TRUE(contains(spmv, "#pragma GCC unroll 2\n        for (; pA2 < pA2_end; pA2++) {\n"
                             "          __asm__(\"\");  // keeps the compiler from vectorizing a short row\n"))
      << spmv;
  EXPECT_EQ(count(lowerProgram(Program::fromText(ttv, "test.tc"), fast).cpp, marker), 1u);
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp, marker));
  {
    LoopFormsScope before({.shortSegmentsInOrder = false});
    EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp, marker));
  }

  const std::vector<std::pair<std::string, rt::Coo>> matrices = {
      {"lengths 0-3 (1.5 a row)", rowsOfLengths(300, 40, {0, 1, 2, 3})},
      {"lengths 1-3 and a row of 40 (1.9 a row)", rowsOfLengths(300, 40, {1, 2, 3, 1}, 7)},
      {"lengths 2 and 4 (2.9 a row)", rowsOfLengths(300, 40, {2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 3})},
      {"lengths 3 (3 a row: the reassociated loops)", rowsOfLengths(300, 40, {3})},
      {"one row of 2", rowsOfLengths(1, 40, {2})},
      {"one row of 40", rowsOfLengths(1, 40, {40})},
      {"every length 0-40", rowsOfEveryLength()},
      {"random, 1.9 a row", randomSparse({61, 47}, 0.04, 70)},
      {"ash219", realMatrix("ash219.mtx")},
      {"impcol_a", realMatrix("impcol_a.mtx")},
      {"494_bus", realMatrix("494_bus.mtx")},
  };
  for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
    if (!jit::isAvailable(backend)) continue;
    CompileOptions options = fast;
    options.backend = backend;
    for (const auto& [name, A] : matrices) {
      SCOPED_TRACE(name + ", " + jit::backendName(backend));
      expectProgramMatchesReference(kSpmv, {{"A", A}, {"x", randomDense({A.dims[1]}, 71)}}, options, 1e-9);
    }
    // DCSR and COO rows (the short-rows test of DCSR counts its stored
    // rows; COO's rows are segments of its first level), in both modes.
    for (const char* format : {"dcsr", "coo"})
      for (FloatingPointMode mode : {FloatingPointMode::Fast, FloatingPointMode::Strict}) {
        SCOPED_TRACE(std::string(format) + ", " + frontend::toString(mode) + ", " + jit::backendName(backend));
        CompileOptions formatOptions = options;
        formatOptions.floatingPoint = mode;
        const std::string dsl = std::string("tensor y(I) : dense\ntensor A(I, J) : ") + format +
                                "\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";
        for (const auto& A : {rowsOfLengths(300, 40, {0, 1, 2, 3, 0, 0}), rowsOfLengths(300, 40, {0, 5, 9}, 11)})
          expectProgramMatchesReference(dsl, {{"A", A}, {"x", randomDense({40}, 76)}}, formatOptions, 1e-10);
      }
    SCOPED_TRACE(std::string("TTV, ") + jit::backendName(backend));
    // Fibres of about 1.2 entries, and of about 12.
    expectProgramMatchesReference(ttv, {{"B", randomSparse({20, 30, 40}, 0.03, 72)}, {"c", randomDense({40}, 73)}},
                                  options, 1e-9);
    expectProgramMatchesReference(ttv, {{"B", randomSparse({20, 30, 40}, 0.3, 74)}, {"c", randomDense({40}, 75)}},
                                  options, 1e-9);
  }
}

// Both sides of the switch (2^20 values: in cache; one more: streaming),
// strict and fast, through GCC and the JIT, against the dense reference.
TEST(FloatingPointMode, BothSidesOfTheStreamingSwitchMatchTheReference) {
  const int32_t cols = 1100;
  for (int64_t total : {kStreamingValues, kStreamingValues + 1}) {
    rt::Coo A = rowsAroundTheStreamingSwitch(total, cols);
    ASSERT_EQ(int64_t(A.nnz()) + cols, total);
    std::map<std::string, rt::Coo> inputs = {{"A", A}, {"x", randomDense({cols}, 60)}};
    for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
      if (!jit::isAvailable(backend)) continue;
      for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
        SCOPED_TRACE(std::to_string(total) + " values, " + jit::backendName(backend) + ", " +
                     frontend::toString(mode));
        CompileOptions options;
        options.backend = backend;
        options.floatingPoint = mode;
        std::string source =
            expectProgramMatchesReference(kSpmv, inputs, options, mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
        EXPECT_EQ(contains(source, "<= 1048576LL)"), mode == FloatingPointMode::Fast) << source;
      }
    }
  }
}

// Which streaming loops GCC runs depends on the CPU -march names: strips
// of 32 entries for long rows, except on AMD cores (the partial sums). The
// printed kernel is compiled through the system compiler for this machine
// and for a generic x86-64 (v3: AVX2 and FMA, no vendor), so each machine
// runs both GCC paths (on an AMD one the generic build runs the strips),
// on inputs past the switch, against the in-order sums.
TEST(FloatingPointMode, StreamingLoopsForEveryVendorMatchTheReference) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("bmi2"))
    GTEST_SKIP() << "this CPU runs no x86-64-v3 code";
  const int32_t cols = 1100;
  rt::Coo coo = rowsAroundTheStreamingSwitch(kStreamingValues + 1, cols);
  Tensor A = rt::pack(coo, toRuntimeFormat(Format::csr()));
  Tensor x = rt::pack(randomDense({cols}, 62), toRuntimeFormat(Format::denseOfOrder(1)));
  const int32_t rows = coo.dims[0];
  const auto pos = A.pos(1);
  const auto crd = A.crd(1);
  const auto vals = A.values<double>();
  const auto xs = x.values<double>();
  std::vector<double> reference(rows, 0.0);
  for (int32_t i = 0; i < rows; ++i)
    for (int64_t p = pos[i]; p < pos[i + 1]; ++p) reference[i] += vals[p] * xs[crd[p]];
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  const std::string source = lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp;
  const std::vector<std::vector<std::string>> marches = {{}, {"-march=x86-64-v3"}};
  for (const std::vector<std::string>& march : marches) {
    SCOPED_TRACE(march.empty() ? "-march=native" : march[0]);
    jit::CompileOptions options{jit::Backend::SystemCompiler, 3, false,
                                lowering::cppFloatingPointFlags(lowering::FloatingPointMode::Fast)};
    options.extraFlags.insert(options.extraFlags.end(), march.begin(), march.end());
    auto module = jit::compile(source, options);
    auto entry = module->function<int32_t (*)(tcc_tensor**)>("tcc_kernel_0");
    Tensor y({rows}, toRuntimeFormat(Format::denseOfOrder(1)));
    tcc_tensor views[3] = {y.abiView(), A.abiView(), x.abiView()};
    tcc_tensor* pointers[3] = {&views[0], &views[1], &views[2]};
    ASSERT_EQ(entry(pointers), 0);
    const auto ys = y.values<double>();
    size_t wrong = 0;
    for (int32_t i = 0; i < rows; ++i)
      wrong += std::abs(ys[i] - reference[i]) > 1e-9 * std::max(1.0, std::abs(reference[i]));
    EXPECT_EQ(wrong, 0u);
  }
#else
  GTEST_SKIP() << "the vendor test is for x86-64";
#endif
}

// TTV's fibres take the same loops: a tensor past the switch, fibres of
// 0-40 entries in the first slice and of about 2000 in the others.
TEST(FloatingPointMode, StreamingTtvMatchesTheReference) {
  const int32_t K = 2100;
  rt::Coo B = rt::Coo::ofShape({4, 200, K});
  for (int32_t i = 0; i < 4; ++i)
    for (int32_t j = 0; j < 200; ++j) {
      const int32_t length = i == 0 ? j % 41 : K - (j % 97);
      for (int32_t k = 0; k < length; ++k) {
        int32_t c[3] = {i, j, int32_t((int64_t(k) * K) / length)};
        B.push(c, 0.5 - 0.125 * ((k + j) % 9) + 0.03125 * i);
      }
    }
  ASSERT_GT(int64_t(B.nnz()) + K, kStreamingValues);
  std::map<std::string, rt::Coo> inputs = {{"B", B}, {"c", randomDense({K}, 61)}};
  const std::string ttv =
      "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n";
  for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
    if (!jit::isAvailable(backend)) continue;
    for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
      SCOPED_TRACE(std::string(jit::backendName(backend)) + ", " + frontend::toString(mode));
      CompileOptions options;
      options.backend = backend;
      options.floatingPoint = mode;
      expectProgramMatchesReference(ttv, inputs, options, mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
    }
  }
}

// Under parallelize(i, CPUThread, NoRaces) a fast-mode gather sum's entry
// point hands out rows in chunks of about 32768 stored values
// (tcc_chunk_by_values); the reassociated copy and strict mode keep chunks
// of 16. SpMV past the switch with long and short rows, SpMV of 2^20 values
// in rows of 1-5 entries (chunks of thousands of rows), and TTV, both modes
// and backends, against the reference.
TEST(FloatingPointMode, ParallelGatherSumsMatchTheReference) {
  const std::string parallel = "schedule { parallelize(i, CPUThread, NoRaces) }\n";
  const int32_t cols = 1100;
  // Rows of 1-5 entries over 8 columns (a small dense reference).
  const int32_t narrow = 8;
  rt::Coo shortRows = rt::Coo::ofShape({400000, narrow});
  for (int32_t i = 0, stored = 0; i < 400000 && stored + narrow <= kStreamingValues; ++i)
    for (int32_t k = 0; k < 1 + i % 5 && stored + narrow <= kStreamingValues; ++k, ++stored) {
      int32_t c[2] = {i, (i + k) % narrow};
      shortRows.push(c, 0.75 - 0.0625 * ((i + k) % 11));
    }
  ASSERT_GT(int64_t(shortRows.nnz()) + narrow, kStreamingValues);
  // Fibres of 0-4199 entries along k.
  const int32_t K = 4200;
  rt::Coo fibres = rt::Coo::ofShape({80, 8, K});
  for (int32_t i = 0; i < 80; ++i)
    for (int32_t j = 0; j < 8; ++j)
      for (int32_t k = 0; k < (i * 8 + j) * 37 % K; ++k) {
        int32_t c[3] = {i, j, k};
        fibres.push(c, 0.5 - 0.125 * ((k + j) % 9) + 0.03125 * i);
      }
  ASSERT_GT(int64_t(fibres.nnz()) + K, kStreamingValues);
  const std::string ttv =
      "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n";
  for (const auto& [name, dsl, inputs] :
       {std::tuple("SpMV", std::string(kSpmv),
                   std::map<std::string, rt::Coo>{{"A", rowsAroundTheStreamingSwitch(kStreamingValues + 1, cols)},
                                                  {"x", randomDense({cols}, 63)}}),
        std::tuple("SpMVShortRows", std::string(kSpmv),
                   std::map<std::string, rt::Coo>{{"A", shortRows}, {"x", randomDense({narrow}, 64)}}),
        std::tuple("TTV", ttv, std::map<std::string, rt::Coo>{{"B", fibres}, {"c", randomDense({K}, 65)}})}) {
    for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
      if (!jit::isAvailable(backend)) continue;
      for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
        SCOPED_TRACE(std::string(name) + ", " + jit::backendName(backend) + ", " + frontend::toString(mode));
        CompileOptions options;
        options.backend = backend;
        options.floatingPoint = mode;
        std::string source = expectProgramMatchesReference(dsl + parallel, inputs, options,
                                                           mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
        const std::string kernels = source.substr(source.find("int32_t tcc_kernel_0"));
        // Fast: the entry point and the copy with AVX-512 gathers.
        EXPECT_EQ(count(kernels, "schedule(dynamic, tcc_chunk_"), mode == FloatingPointMode::Fast ? 2u : 0u)
            << kernels;
        EXPECT_EQ(count(kernels, "schedule(dynamic, 16)"), 1u) << kernels;
      }
    }
  }
}

// On an AMD core with AVX-512 (the prelude's TCC_GATHER_SUMS) fast mode's
// row sums over streaming inputs run in a copy of the kernel whose rows of
// 64 or more entries call the prelude's tcc_gather_sum (512-bit gathers of
// x, the last 0-7 entries in one masked step). Its sums of every length
// from 0 to 40 and at every start within a vector, through the system
// compiler and the JIT, against the in-order sums; the lanes past a row's
// end hold NaN in vals and an index far outside x, which the masked step
// must not read. (The kernels that call it are checked against the dense
// reference past the streaming switch above.)
TEST(FloatingPointMode, StreamingGathersOnAmdCores) {
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  const std::string spmv = lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp;
  EXPECT_TRUE(contains(spmv, "#if TCC_GATHER_SUMS\nstatic __attribute__((noinline))")) << spmv;
  EXPECT_TRUE(contains(spmv, "if ((int64_t)A->vals_size + (int64_t)x->vals_size > 1048576LL) "
                             "return tcc_kernel_0_gathers(tcc_tensors);"))
      << spmv;
  EXPECT_EQ(count(spmv, "ty += tcc_gather_sum(A_vals, A2_crd, x_vals, pA2, pA2_end);"), 1u) << spmv;
  EXPECT_EQ(count(spmv, "if (pA2_end - pA2 >= 64) {"), 1u) << spmv;
  // The copy's short rows prefetch as far ahead as tcc_gather_sum; the entry point's 512 entries.
  EXPECT_EQ(count(spmv, "(size_t)(A_vals + pA2) + TCC_GATHER_PREFETCH * sizeof(*A_vals)), 0, 2);"), 1u) << spmv;
  EXPECT_EQ(count(spmv, "(size_t)(A_vals + pA2) + 512 * sizeof(*A_vals)), 0, 2);"), 1u) << spmv;
  EXPECT_TRUE(contains(spmv, "#define TCC_GATHER_PREFETCH 768\n")) << spmv;
  // A row sum of three factors is no such sum: partial sums only, no gathers copy.
  const std::string three = lowerProgram(Program::fromText("tensor y(I) : dense\ntensor A(I, J) : csr\n"
                                                           "tensor x(J) : dense\ntensor z(J) : dense\n"
                                                           "y(i) = A(i,j) * x(j) * z(j)\n",
                                                           "test.tc"),
                                          fast)
                                .cpp;
  const std::string threeKernels = three.substr(three.find("int32_t tcc_kernel_0"));
  EXPECT_FALSE(contains(threeKernels, "tcc_gather_sum")) << three;
  EXPECT_TRUE(contains(threeKernels, "ty_u3 += ")) << three;

  const std::string unit = lowering::cppPrelude() +
                           "extern \"C\" int gathers() { return TCC_GATHER_SUMS; }\n"
                           "#if TCC_GATHER_SUMS\n"
                           "extern \"C\" double sum(const double* vals, const int32_t* crd, const double* x,\n"
                           "                        int64_t p, int64_t end) {\n"
                           "  return tcc_gather_sum(vals, crd, x, p, end);\n}\n"
                           "#endif\n";
  const int32_t cols = 300;
  std::vector<double> x(cols);
  for (int32_t j = 0; j < cols; ++j) x[j] = 0.75 - 0.01 * j;
  for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
    if (!jit::isAvailable(backend)) continue;
    SCOPED_TRACE(jit::backendName(backend));
    auto module = jit::compile(unit, jit::CompileOptions{backend, 3, false,
                                                         lowering::cppFloatingPointFlags(lowering::FloatingPointMode::Fast)});
    if (module->function<int (*)()>("gathers")() == 0) GTEST_SKIP() << "no AVX-512 on an AMD core here";
    auto gatherSum = module->function<double (*)(const double*, const int32_t*, const double*, int64_t, int64_t)>("sum");
    for (int64_t start = 0; start < 8; ++start)
      for (int64_t length = 0; length <= 40; ++length) {
        const int64_t end = start + length;
        std::vector<double> vals(size_t(end + 16), std::numeric_limits<double>::quiet_NaN());
        std::vector<int32_t> crd(size_t(end + 16), 1 << 30);
        double expected = 0;
        for (int64_t p = start; p < end; ++p) {
          vals[size_t(p)] = 0.5 + 0.125 * double((p * 5) % 11) - 0.25 * double(length % 3);
          crd[size_t(p)] = int32_t((p * 37 + length) % cols);
          expected += vals[size_t(p)] * x[size_t(crd[size_t(p)])];
        }
        const double got = gatherSum(vals.data(), crd.data(), x.data(), start, end);
        EXPECT_NEAR(got, expected, 1e-12 * std::max(1.0, std::abs(expected))) << "start " << start << ", " << length
                                                                               << " entries";
      }
  }
}

// The gathers copy serves every row sum of that form, whatever level the
// row is stored in: SpMV over COO (a singleton level) and DCSR past the
// streaming switch, fast, through GCC and the JIT, against the reference.
TEST(FloatingPointMode, StreamingGathersOverCooAndDcsrMatchTheReference) {
  const int32_t cols = 1100;
  std::map<std::string, rt::Coo> inputs = {{"A", rowsAroundTheStreamingSwitch(kStreamingValues + 1, cols)},
                                           {"x", randomDense({cols}, 66)}};
  for (const char* format : {"coo", "dcsr"}) {
    const std::string dsl = std::string("tensor y(I) : dense\ntensor A(I, J) : ") + format +
                            "\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";
    for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
      if (!jit::isAvailable(backend)) continue;
      SCOPED_TRACE(std::string(format) + ", " + jit::backendName(backend));
      CompileOptions options;
      options.backend = backend;
      options.floatingPoint = FloatingPointMode::Fast;
      const std::string source = expectProgramMatchesReference(dsl, inputs, options, 1e-9);
      EXPECT_TRUE(contains(source.substr(source.find("int32_t tcc_kernel_0")), "tcc_gather_sum(")) << source;
    }
  }
}

// tcc_chunk_by_values, the prelude's: about perChunk values' worth of
// iterations, at least 16, and at most iterations / (8 threads) where that
// is 16 or more.
TEST(FloatingPointMode, ChunksByValuesKeepEveryThreadBusy) {
  auto module = jit::compile(lowering::cppPrelude() +
                                 "extern \"C\" int chunk(int64_t n, int64_t values, int64_t per, int64_t threads) {\n"
                                 "  return tcc_chunk_by_values(n, values, per, threads);\n}\n",
                             jit::CompileOptions{jit::Backend::SystemCompiler, 2, false, {}});
  auto chunk = module->function<int (*)(int64_t, int64_t, int64_t, int64_t)>("chunk");
  EXPECT_EQ(chunk(497132, 22117758 + 497132, 32768, 16), 720);  // kron(bayer10,cage5): 44 entries a row
  EXPECT_EQ(chunk(87912, 23810996 + 87912, 32768, 16), 120);    // kron(bcsstk16,LF10): 271 a row
  EXPECT_EQ(chunk(87912, 23810996, 32768, 1), 120);
  EXPECT_EQ(chunk(100000, 100000, 32768, 16), 781);  // one value a row: 100000 / (8 * 16) at most
  EXPECT_EQ(chunk(5000, 290000, 32768, 16), 39);     // at most 5000 / 128
  EXPECT_EQ(chunk(1000, 290000, 32768, 16), 16);     // never under 16
  EXPECT_EQ(chunk(10, 0, 32768, 16), 16);            // no values
  EXPECT_EQ(chunk(int64_t(1) << 40, 1, 1, 1), 1073741824);  // an int
}

// Strict mode prints none of fast mode's loops: its sums stay in order.
TEST(FloatingPointMode, StrictPrintsNoneOfFastModesLoops) {
  for (const char* dsl : {kSpmv, kSpmm, kMttkrp}) {
    std::string unit = lowerProgram(Program::fromText(dsl, "test.tc")).cpp;
    std::string strict = unit.substr(unit.find("int32_t tcc_kernel_0("));  // the kernel, without the prelude
    for (const char* fastOnly : {"vals_size", "__asm__", "__builtin_prefetch", "_strip", "_u1", "associative-math",
                                 "reassociate", "tcc_gather_sum", "_gathers"})
      EXPECT_FALSE(contains(strict, fastOnly)) << fastOnly << " in\n" << strict;
  }
}

TEST(FloatingPointMode, TheKernelCacheKeysOnTheMode) {
  jit::KernelCache cache(jit::KernelCacheSettings{});
  const std::string source = lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp;
  jit::CompileOptions strict, fast;
  // The system compiler is in every build (the clang interpreter only where LLVM is).
  strict.backend = fast.backend = jit::Backend::SystemCompiler;
  strict.extraFlags = lowering::cppFloatingPointFlags(lowering::FloatingPointMode::Strict);
  fast.extraFlags = lowering::cppFloatingPointFlags(lowering::FloatingPointMode::Fast);
  EXPECT_NE(cache.keyDigest(source, strict), cache.keyDigest(source, fast));
  // The unit records its mode too, so the sources differ as well.
  CompileOptions fastProgram;
  fastProgram.floatingPoint = FloatingPointMode::Fast;
  EXPECT_NE(lowerProgram(Program::fromText(kSpmv, "test.tc"), fastProgram).cpp, source);
}

// Bind real inputs and run with each backend; strict results must be equal bit for bit.
std::vector<double> runWith(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs,
                            const std::string& output, jit::Backend backend, FloatingPointMode mode) {
  Program program = Program::fromText(dsl, "test.tc");
  CompileOptions options;
  options.backend = backend;
  options.floatingPoint = mode;
  options.useKernelCache = false;
  Kernel kernel = compile(program, options);
  std::map<std::string, Tensor> bound;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    bound.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
  }
  return rt::toDense(kernel.run(bound).at(output));
}

TEST(FloatingPointMode, StrictIsBitIdenticalAcrossBackends) {
  for (jit::Backend backend : {jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler})
    if (!jit::isAvailable(backend)) GTEST_SKIP() << jit::backendName(backend) << " is not built";
  rt::Coo A = realMatrix("bcsstk13.mtx");
  std::map<std::string, rt::Coo> spmv = {{"A", A}, {"x", randomDense({A.dims[1]}, 40)}};
  std::map<std::string, rt::Coo> spmm = {{"A", A}, {"B", randomDense({A.dims[1], 16}, 41)}};
  std::map<std::string, rt::Coo> mttkrp = {
      {"B", randomSparse({30, 25, 20}, 0.05, 42)}, {"C", randomDense({25, 16}, 43)}, {"D", randomDense({20, 16}, 44)}};
  for (const auto& [dsl, inputs, output] : {std::tuple(kSpmv, spmv, "y"), std::tuple(kSpmm, spmm, "C"),
                                            std::tuple(kMttkrp, mttkrp, "A")}) {
    SCOPED_TRACE(dsl);
    std::vector<double> clang = runWith(dsl, inputs, output, jit::Backend::ClangInterpreter, FloatingPointMode::Strict);
    std::vector<double> system = runWith(dsl, inputs, output, jit::Backend::SystemCompiler, FloatingPointMode::Strict);
    ASSERT_EQ(clang.size(), system.size());
    size_t differing = 0;
    for (size_t k = 0; k < clang.size(); ++k) differing += std::memcmp(&clang[k], &system[k], sizeof(double)) != 0;
    EXPECT_EQ(differing, 0u);
  }
}

// Strict SpMV's row sum runs two entries a trip (unrolled by the compiler,
// which may not reorder the adds); through GCC its first two entries run
// without a loop, the second's add by a select. Only sums through a loaded
// index get either, and a schedule's own unroll factor wins.
TEST(FloatingPointMode, StrictGatherSumsRunTwoEntriesATrip) {
  LoopFormsScope twoATrip({.strictLongRowsFourATrip = false});  // Clang's long rows: the test below
  const std::string unroll = "#pragma GCC unroll 2  // the same adds in the same order\n";
  std::string spmv = lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp;
  const size_t pragma = spmv.find(unroll);
  ASSERT_NE(pragma, std::string::npos) << spmv;
  EXPECT_EQ(spmv.find("for (int64_t pA2 = A2_pos[pA1]; pA2 < pA2_end; pA2++)"),
            spmv.find_first_not_of(' ', pragma + unroll.size()))
      << spmv;
  EXPECT_EQ(count(spmv, "#pragma GCC unroll"), 2u) << spmv;
  EXPECT_TRUE(contains(spmv, "#if defined(__GNUC__) && !defined(__clang__)\n")) << spmv;
  EXPECT_TRUE(contains(spmv, "ty += pA2 + 1 < pA2_end ? pA2_term1 : -0.0;\n        #pragma GCC unroll 2\n"
                             "        for (pA2 += 2; pA2 < pA2_end; pA2++) {\n"))
      << spmv;
  std::string before;
  {
    LoopFormsScope loopOnly({.strictFirstTwoBySelect = false, .strictLongRowsFourATrip = false});
    before = lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp;
  }
  EXPECT_EQ(count(before, "#pragma GCC unroll"), 1u) << before;
  EXPECT_FALSE(contains(before, "pA2_term1")) << before;
  for (const char* dsl : {kSpmm, kMttkrp})  // their rows are register tiles, not scalar sums
    EXPECT_FALSE(contains(lowerProgram(Program::fromText(dsl, "test.tc")).cpp, unroll)) << dsl;
  std::string dot = "tensor a\ntensor b(I) : dense\ntensor c(I) : dense\na = b(i) * c(i)\n";
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(dot, "test.tc")).cpp, unroll));  // no loaded index
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp, unroll));
  std::string scheduled =
      lowerProgram(Program::fromText(std::string(kSpmv) + "schedule {\n  unroll(j, 4)\n}\n", "test.tc")).cpp;
  EXPECT_TRUE(contains(scheduled, "#pragma GCC unroll 4\n")) << scheduled;
  EXPECT_FALSE(contains(scheduled, unroll)) << scheduled;
}

// The sequential left-to-right row sums of CSR `A` times `x`, each product
// rounded before it is added: what strict mode must reproduce bit for bit.
std::vector<double> sequentialRowSums(const Tensor& A, const Tensor& x) {
  const tcc_tensor a = A.abiView(), v = x.abiView();
  const auto* pos = reinterpret_cast<const int64_t*>(a.levels[1].pos);
  const int32_t* crd = a.levels[1].crd;
  const auto* vals = static_cast<const double*>(a.vals);
  const auto* xs = static_cast<const double*>(v.vals);
  std::vector<double> sums(a.dims[0]);
  for (int32_t i = 0; i < a.dims[0]; ++i) {
    double sum = 0.0;
    for (int64_t p = pos[i]; p < pos[i + 1]; ++p) {
      volatile double product = vals[p] * xs[crd[p]];  // never contracted into an FMA
      sum += product;
    }
    sums[i] = sum;
  }
  return sums;
}

size_t bitsDiffering(const std::vector<double>& a, const std::vector<double>& b) {
  size_t differing = a.size() == b.size() ? 0 : std::max(a.size(), b.size());
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) differing += std::memcmp(&a[k], &b[k], sizeof(double)) != 0;
  return differing;
}

// Strict SpMV on real matrices (rows of 1-3 entries in Pd, 1-14 in bcspwr10,
// about 42 in bcsstk13), on rows of every length 0-40, single rows, short
// rows with empty ones and a random matrix, through each backend (GCC's
// first two entries by a select, Clang's loop): the sequential sums, bit
// for bit, also where x holds infinities, NaNs and negative zeros. Fast mode's partial sums differ
// from them on bcsstk13, so the comparison sees a reordered sum.
TEST(FloatingPointMode, StrictSpmvIsTheSequentialSumBitForBit) {
  std::vector<std::pair<std::string, rt::Coo>> matrices = {{"bcsstk13", realMatrix("bcsstk13.mtx")},
                                                           {"Pd", realMatrix("Pd.mtx")},
                                                           {"bcspwr10", realMatrix("bcspwr10.mtx")},
                                                           {"rows of every length", rowsOfEveryLength()},
                                                           {"one row of 1", rowsOfLengths(1, 40, {1})},
                                                           {"one row of 2", rowsOfLengths(1, 40, {2})},
                                                           {"one row of 40", rowsOfLengths(1, 40, {40})},
                                                           {"lengths 0-3", rowsOfLengths(300, 40, {0, 1, 2, 3})},
                                                           {"random", randomSparse({61, 47}, 0.04, 46)}};
  const Program program = Program::fromText(kSpmv, "test.tc");
  for (jit::Backend backend : {jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler}) {
    if (!jit::isAvailable(backend)) continue;
    for (const auto& [name, coo] : matrices) {
      SCOPED_TRACE(name + " through " + jit::backendName(backend));
      std::map<std::string, Tensor> bound;
      bound.emplace("A", rt::pack(coo, toRuntimeFormat(program.syntax().findTensor("A")->format())));
      bound.emplace("x", rt::pack(randomDense({coo.dims[1]}, 45), toRuntimeFormat(Format::denseOfOrder(1))));
      const std::vector<double> expected = sequentialRowSums(bound.at("A"), bound.at("x"));
      CompileOptions options;
      options.backend = backend;
      options.useKernelCache = false;
      EXPECT_EQ(bitsDiffering(rt::toDense(compile(program, options).run(bound).at("y")), expected), 0u);
      rt::Coo special = randomDense({coo.dims[1]}, 47);
      for (size_t k = 0; k < special.values.size(); k += 5)
        special.values[k] = k % 15 == 0 ? -0.0 : k % 15 == 5 ? std::numeric_limits<double>::infinity()
                                                              : std::numeric_limits<double>::quiet_NaN();
      std::map<std::string, Tensor> withSpecials;
      withSpecials.emplace("A", bound.at("A"));
      withSpecials.emplace("x", rt::pack(special, toRuntimeFormat(Format::denseOfOrder(1))));
      // (A NaN's payload depends on which operand an add takes it from, so
      // NaNs count as equal to NaNs; every other value is compared bit for bit.)
      const std::vector<double> got = rt::toDense(compile(program, options).run(withSpecials).at("y"));
      const std::vector<double> want = sequentialRowSums(withSpecials.at("A"), withSpecials.at("x"));
      ASSERT_EQ(got.size(), want.size());
      size_t differing = 0, nans = 0;
      for (size_t k = 0; k < got.size(); ++k) {
        if (std::isnan(want[k])) ++nans;
        differing += std::isnan(got[k]) && std::isnan(want[k]) ? 0 : std::memcmp(&got[k], &want[k], sizeof(double)) != 0;
      }
      EXPECT_EQ(differing, 0u) << nans << " NaN sums";
      if (name == "bcsstk13") {
        options.floatingPoint = FloatingPointMode::Fast;
        EXPECT_GT(bitsDiffering(rt::toDense(compile(program, options).run(bound).at("y")), expected), 0u);
      }
    }
  }
}

// Strict mode through Clang: a row sum of 8 or more entries runs four a
// trip after its (length mod 4) first entries, a shorter one two a trip;
// GCC's build, fast mode, register tiles and scheduled unrolls keep their
// forms.
TEST(FloatingPointMode, StrictLongRowsRunFourATripThroughClang) {
  const std::string marker = "// strict, Clang: a row of 8 or more entries four a trip";
  const std::string spmv = lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp;
  EXPECT_EQ(count(spmv, marker), 1u) << spmv;
  EXPECT_TRUE(contains(spmv, "#else\n    // iterate j over A's level 2\n    " + marker)) << spmv;
  EXPECT_TRUE(contains(spmv, "if (pA2_end - pA2 >= 8) {\n")) << spmv;
  EXPECT_TRUE(contains(spmv, "for (; pA2 < pA2_end; pA2 += 4) {\n")) << spmv;
  EXPECT_EQ(count(spmv, "#pragma GCC unroll"), 2u) << spmv;  // GCC's and Clang's short rows
  {
    LoopFormsScope before({.strictLongRowsFourATrip = false});
    EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc")).cpp, marker));
  }
  CompileOptions fast;
  fast.floatingPoint = FloatingPointMode::Fast;
  EXPECT_FALSE(contains(lowerProgram(Program::fromText(kSpmv, "test.tc"), fast).cpp, marker));
  for (const char* dsl : {kSpmm, kMttkrp}) EXPECT_FALSE(contains(lowerProgram(Program::fromText(dsl, "test.tc")).cpp, marker)) << dsl;
  const std::string scheduled =
      lowerProgram(Program::fromText(std::string(kSpmv) + "schedule {\n  unroll(j, 4)\n}\n", "test.tc")).cpp;
  EXPECT_FALSE(contains(scheduled, marker)) << scheduled;
}

// Strict row sums four a trip give the bits of the loop two a trip (the
// form before, itself the sequential sum: StrictSpmvIsTheSequentialSumBitForBit),
// through each backend: CSR, DCSR and COO SpMV and CSF TTV, on rows of 0-3
// entries among long ones, rows of every length 7-11, real matrices and
// short rows, with x random and with infinities, NaNs and negative zeros.
TEST(FloatingPointMode, StrictLongRowsKeepTheBitsOfTheLoopTwoATrip) {
  const std::vector<std::pair<std::string, rt::Coo>> matrices = {
      {"lengths 0-3 and 40 (9.2 a row)", rowsOfLengths(300, 40, {0, 1, 2, 3, 40})},
      {"lengths 8-11", rowsOfLengths(200, 40, {8, 9, 10, 11})},
      {"lengths 7-9", rowsOfLengths(300, 40, {7, 8, 9})},
      {"rows of every length", rowsOfEveryLength()},
      {"one row of 13", rowsOfLengths(1, 40, {13})},
      {"lengths 0-3", rowsOfLengths(300, 40, {0, 1, 2, 3})},
      {"G51", realMatrix("G51.mtx")},
      {"dwt_992", realMatrix("dwt_992.mtx")},
      {"bcsstk13", realMatrix("bcsstk13.mtx")}};
  auto run = [](const std::string& dsl, const std::map<std::string, rt::Coo>& inputs, const std::string& output,
                jit::Backend backend, bool longRows) {
    LoopFormsScope forms({.strictLongRowsFourATrip = longRows});
    return runWith(dsl, inputs, output, backend, FloatingPointMode::Strict);
  };
  auto differing = [](const std::vector<double>& got, const std::vector<double>& want) {
    size_t count = got.size() == want.size() ? 0 : std::max(got.size(), want.size());
    for (size_t k = 0; k < std::min(got.size(), want.size()); ++k)
      count += std::isnan(got[k]) && std::isnan(want[k]) ? 0 : std::memcmp(&got[k], &want[k], sizeof(double)) != 0;
    return count;
  };
  for (jit::Backend backend : {jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler}) {
    if (!jit::isAvailable(backend)) continue;
    for (const auto& [name, coo] : matrices)
      for (const char* format : {"csr", "dcsr", "coo"}) {
        SCOPED_TRACE(name + ", " + format + ", " + jit::backendName(backend));
        const std::string dsl = std::string("tensor y(I) : dense\ntensor A(I, J) : ") + format +
                                "\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";
        rt::Coo special = randomDense({coo.dims[1]}, 81);
        for (size_t k = 0; k < special.values.size(); k += 5)
          special.values[k] = k % 15 == 0 ? -0.0 : k % 15 == 5 ? std::numeric_limits<double>::infinity()
                                                                : std::numeric_limits<double>::quiet_NaN();
        for (const rt::Coo& x : {randomDense({coo.dims[1]}, 80), special}) {
          const std::map<std::string, rt::Coo> inputs = {{"A", coo}, {"x", x}};
          const std::vector<double> after = run(dsl, inputs, "y", backend, true);
          EXPECT_EQ(differing(after, run(dsl, inputs, "y", backend, false)), 0u);
          EXPECT_FALSE(std::all_of(after.begin(), after.end(), [](double v) { return v == 0.0; }));
        }
      }
    SCOPED_TRACE(std::string("TTV, ") + jit::backendName(backend));
    const std::string ttv = "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n";
    for (double density : {0.03, 0.3}) {  // fibres of about 1.2 entries, and of about 12
      const std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({20, 30, 40}, density, 82)},
                                                     {"c", randomDense({40}, 83)}};
      EXPECT_EQ(differing(run(ttv, inputs, "A", backend, true), run(ttv, inputs, "A", backend, false)), 0u) << density;
    }
  }
}

TEST(FloatingPointMode, FastModeStillPropagatesInfinityAndNaN) {
  // Rows 0 and 1 of A hold inf and NaN among finite values; row 2 is finite.
  rt::Coo A = randomSparse({3, 64}, 1.0, 50);
  std::map<std::string, rt::Coo> inputs = {{"A", A}, {"x", randomDense({64}, 51)}};
  for (size_t k = 0; k < A.values.size(); ++k) {
    if (A.coords[0][k] == 0 && A.coords[1][k] == 17) A.values[k] = std::numeric_limits<double>::infinity();
    if (A.coords[0][k] == 1 && A.coords[1][k] == 40) A.values[k] = std::numeric_limits<double>::quiet_NaN();
  }
  inputs["A"] = A;
  inputs["x"].values.assign(inputs["x"].values.size(), 0.5);  // positive: inf * x stays +inf
  for (jit::Backend backend : {jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler}) {
    if (!jit::isAvailable(backend)) continue;
    std::vector<double> y = runWith(kSpmv, inputs, "y", backend, FloatingPointMode::Fast);
    ASSERT_EQ(y.size(), 3u);
    EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0) << y[0];
    EXPECT_TRUE(std::isnan(y[1])) << y[1];
    EXPECT_TRUE(std::isfinite(y[2])) << y[2];
  }
}

}  // namespace
}  // namespace tcc::test
