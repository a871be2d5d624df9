// Sparse add, C = A + B with all three CSR: what tcc stores (the union of
// the two patterns, a coordinate in both once, an entry whose values
// cancel kept as an explicit zero) checked bit for bit against an
// obviously right merge, in strict and fast mode, through both JIT
// backends, serial and row-parallel; the printed merge (one capacity test
// per row, each case moving its operands on); the copy of the kernel with
// streaming stores; other lattices through the same lowering; and the
// output's arrays grown where their first capacity is too small.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "kernel_check.h"
#include "tcc/jit/jit.h"
#include "tcc/lowering/codegen.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

const char* const kAdd = "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nC(i,j) = A(i,j) + B(i,j)\n";
const char* const kRowsOnThreads = "schedule { parallelize(i, CPUThread, NoRaces) }\n";

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The stored arrays of a CSR result.
struct Csr {
  std::vector<int64_t> pos;
  std::vector<int32_t> crd;
  std::vector<double> vals;
};

// The obviously right sum: per row, the union of both rows' coordinates in
// order; a coordinate in both holds a + b, one in A alone a, one in B alone
// b (the value itself, not b + 0, so -0.0 stays -0.0).
Csr expectedSum(const rt::Coo& a, const rt::Coo& b) {
  const int32_t rows = a.dims[0];
  std::vector<std::map<int32_t, double>> inA(rows), inB(rows);
  for (size_t k = 0; k < a.nnz(); ++k) inA[a.coords[0][k]][a.coords[1][k]] = a.values[k];
  for (size_t k = 0; k < b.nnz(); ++k) inB[b.coords[0][k]][b.coords[1][k]] = b.values[k];
  Csr sum;
  sum.pos.push_back(0);
  for (int32_t i = 0; i < rows; ++i) {
    std::map<int32_t, double> row = inA[i];
    for (const auto& [j, v] : inB[i]) {
      auto found = row.find(j);
      if (found == row.end()) row[j] = v;
      else found->second = found->second + v;
    }
    for (const auto& [j, v] : row) sum.crd.push_back(j), sum.vals.push_back(v);
    sum.pos.push_back(static_cast<int64_t>(sum.crd.size()));
  }
  return sum;
}

Csr stored(const Tensor& c) {
  auto values = c.values<double>();
  return {std::vector<int64_t>(c.pos(1).begin(), c.pos(1).end()), std::vector<int32_t>(c.crd(1).begin(), c.crd(1).end()),
          std::vector<double>(values.begin(), values.end())};
}

// Same pattern and the same bits in every value.
void expectSameBits(const Csr& actual, const Csr& expected, const std::string& what) {
  ASSERT_EQ(actual.pos, expected.pos) << what;
  ASSERT_EQ(actual.crd, expected.crd) << what;
  ASSERT_EQ(actual.vals.size(), expected.vals.size()) << what;
  for (size_t k = 0; k < expected.vals.size(); ++k)
    ASSERT_EQ(std::memcmp(&actual.vals[k], &expected.vals[k], sizeof(double)), 0)
        << what << ": value " << k << " is " << actual.vals[k] << ", expected " << expected.vals[k];
}

// Compiles the add kernel `cpp` (C = A + B, all CSR) with `defines`, runs it
// on each pair and checks C against the obviously right sum, bit for bit.
void expectAddsMatchBitForBit(const std::string& cpp, jit::Backend backend, bool openmp, FloatingPointMode mode,
                              const std::string& defines, const std::vector<std::pair<rt::Coo, rt::Coo>>& pairs) {
  jit::CompileOptions flags{backend, 3, openmp, lowering::cppFloatingPointFlags(
      mode == FloatingPointMode::Fast ? lowering::FloatingPointMode::Fast : lowering::FloatingPointMode::Strict)};
  std::istringstream words(defines);
  for (std::string word; words >> word;) flags.extraFlags.push_back(word);
  auto module = jit::compile(cpp, flags);
  auto entryPoint = module->function<int32_t (*)(tcc_tensor**)>("tcc_kernel_0");
  for (const auto& [x, y] : pairs) {
    Tensor A = rt::pack(x, toRuntimeFormat(Format::csr())), B = rt::pack(y, toRuntimeFormat(Format::csr()));
    tcc_tensor out = rt::Tensor::emptyAssembledOutput({x.dims[0], x.dims[1]}, toRuntimeFormat(Format::csr()),
                                                      rt::ValueType::Float64);
    tcc_tensor aView = A.abiView(), bView = B.abiView();
    tcc_tensor* pointers[3] = {&out, &aView, &bView};
    ASSERT_EQ(entryPoint(pointers), 0);
    Tensor C = rt::Tensor::adopt(std::move(out));
    expectSameBits(stored(C), expectedSum(x, y), "A + B");
  }
}

// Rows that cover the merge's cases: both rows empty; a row only in A; only
// in B; disjoint coordinates interleaved; the same coordinates in both;
// values that cancel (an explicit zero in C); signed zeros; one row in A
// far longer than B's; the last column; and a long row that alternates.
std::pair<rt::Coo, rt::Coo> mergeCases() {
  const int32_t columns = 70;
  rt::Coo a = rt::Coo::ofShape({12, columns}), b = rt::Coo::ofShape({12, columns});
  auto put = [](rt::Coo& m, int32_t i, int32_t j, double v) {
    int32_t c[2] = {i, j};
    m.push(c, v);
  };
  // row 0: empty in both
  put(a, 1, 3, 1.5), put(a, 1, 9, -2.25);                    // row 1: only in A
  put(b, 2, 0, 4.0), put(b, 2, 69, 0.5);                     // row 2: only in B, first and last columns
  for (int32_t j = 0; j < 20; ++j) put(j % 2 ? a : b, 3, j, 1.0 + j);  // row 3: interleaved, disjoint
  for (int32_t j = 5; j < 15; ++j) put(a, 4, j, 0.1 * j), put(b, 4, j, 1.0 / (j + 1));  // row 4: same coordinates
  put(a, 5, 7, 0.75), put(b, 5, 7, -0.75);                   // row 5: cancels to an explicit zero
  put(a, 5, 8, 1e-300), put(b, 5, 8, -1e-300);               // and one more, next to it
  put(a, 6, 1, -0.0), put(b, 6, 2, -0.0);                    // row 6: signed zeros, alone
  put(a, 6, 4, -0.0), put(b, 6, 4, -0.0);                    // and in both (-0 + -0 = -0)
  put(a, 6, 5, 0.0), put(b, 6, 5, -0.0);                     // (+0 + -0 = +0)
  for (int32_t j = 0; j < 60; ++j) put(a, 7, j, 0.5 - j);    // row 7: long A, one entry of B in the middle
  put(b, 7, 30, 100.0);
  put(b, 8, 10, 3.0);                                         // row 8: B before, inside and after A
  put(a, 8, 20, 1.0), put(a, 8, 21, 2.0), put(b, 8, 21, 5.0), put(b, 8, 69, 6.0);
  for (int32_t j = 0; j < 64; ++j) {                          // row 9: a long row, every pattern of presence
    if (j % 3 != 0) put(a, 9, j, 0.25 * j - 3.0);
    if (j % 4 != 1) put(b, 9, j, 1.0 - 0.5 * j);
  }
  put(a, 10, 0, 1e308), put(b, 10, 0, 1e308);                // row 10: overflow to inf in both modes
  // row 11: empty in both (the last row)
  a.sort(), b.sort();
  return {a, b};
}

Csr runAdd(const std::map<std::string, rt::Coo>& inputs, FloatingPointMode mode, jit::Backend backend, bool rowsOnThreads,
           std::string* cpp = nullptr, bool rowsInOnePass = true) {
  CompileOptions options;
  options.floatingPoint = mode;
  options.backend = backend;
  options.rowsInOnePass = rowsInOnePass;
  Program program = Program::fromText(std::string(kAdd) + (rowsOnThreads ? kRowsOnThreads : ""), "add.tc");
  if (cpp) *cpp = lowerProgram(program, options).cpp;
  Kernel kernel = compile(program, options);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, coo] : inputs) tensors.emplace(name, rt::pack(coo, toRuntimeFormat(Format::csr())));
  return stored(kernel.run(tensors).at("C"));
}

using Config = std::tuple<FloatingPointMode, jit::Backend, bool>;

class SparseAdd : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    if (!jit::isAvailable(std::get<1>(GetParam())))
      GTEST_SKIP() << jit::backendName(std::get<1>(GetParam())) << " is not built";
  }
  Csr run(const rt::Coo& a, const rt::Coo& b) {
    auto [mode, backend, threads] = GetParam();
    return runAdd({{"A", a}, {"B", b}}, mode, backend, threads);
  }
};

// Adding two numbers is exact in both modes (fast mode changes no single
// addition), so strict and fast store the same bits.
TEST_P(SparseAdd, StoresTheUnionOfBothPatternsWithExplicitZerosBitForBit) {
  auto [a, b] = mergeCases();
  Csr c = run(a, b);
  expectSameBits(c, expectedSum(a, b), "A + B");
  // What tcc stores where values cancel: the coordinate, with +0.
  EXPECT_EQ(c.pos[6] - c.pos[5], 2);
  EXPECT_EQ(c.vals[c.pos[5]], 0.0);
  EXPECT_FALSE(std::signbit(c.vals[c.pos[5]]));
  EXPECT_TRUE(std::isinf(c.vals[c.pos[10]]));
  // And the other way round, B + A's operands swapped.
  expectSameBits(run(b, a), expectedSum(b, a), "B + A");
}

TEST_P(SparseAdd, MatchesTheMergeOnRandomAndRealInputs) {
  for (double density : {0.01, 0.1, 0.5}) {
    rt::Coo a = randomSparse({97, 131}, density, 21), b = randomSparse({97, 131}, density, 22);
    a.sort(), b.sort();
    expectSameBits(run(a, b), expectedSum(a, b), "random, density " + std::to_string(density));
  }
  // A real matrix and its transpose with every other row's values negated:
  // different patterns, and symmetric entries that cancel.
  rt::Coo a = realMatrix("494_bus.mtx");
  rt::Coo t = rt::Coo::ofShape({a.dims[1], a.dims[0]});
  for (size_t k = 0; k < a.nnz(); ++k) {
    int32_t c[2] = {a.coords[1][k], (a.coords[0][k] + 1) % a.dims[0]};
    t.push(c, c[0] % 2 ? -a.values[k] : a.values[k]);
  }
  t.sort();
  a.sort();
  expectSameBits(run(a, t), expectedSum(a, t), "494_bus + its shifted transpose");
  rt::Coo big = realMatrix("bcsstk13.mtx");
  big.sort();
  rt::Coo shifted = rt::Coo::ofShape(big.dims);
  for (size_t k = 0; k < big.nnz(); ++k) {
    int32_t c[2] = {big.coords[0][k], (big.coords[1][k] + 3) % big.dims[1]};
    shifted.push(c, -big.values[k]);
  }
  shifted.sort();
  expectSameBits(run(big, shifted), expectedSum(big, shifted), "bcsstk13 + its columns shifted by 3, negated");
}

INSTANTIATE_TEST_SUITE_P(
    ModesBackendsAndThreads, SparseAdd,
    ::testing::Combine(::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast),
                       ::testing::Values(jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<Config>& info) {
      return std::string(std::get<0>(info.param) == FloatingPointMode::Strict ? "Strict" : "Fast") +
             (std::get<1>(info.param) == jit::Backend::ClangInterpreter ? "Jit" : "SystemCompiler") +
             (std::get<2>(info.param) ? "RowsOnThreads" : "Serial");
    });

// The printed kernel: one capacity test per row before the merge (none per
// entry), the first capacity from the inputs, and each case moving on the
// operands it consumed (the last, B alone, untested).
TEST(SparseAddKernel, TestsCapacityOncePerRowAndEachCaseMovesItsOperandsOn) {
  auto [a, b] = mergeCases();
  std::string cpp;
  runAdd({{"A", a}, {"B", b}}, FloatingPointMode::Strict, jit::Backend::SystemCompiler, false, &cpp);
  std::string kernel = cpp.substr(cpp.find("int32_t tcc_kernel_0"));
  EXPECT_EQ(count(kernel, "C2_crd = (int32_t*)tcc_realloc"), 1u) << kernel;
  EXPECT_TRUE(contains(kernel, "C2_crd_capacity = tcc_max<int64_t>((A->vals_size + B->vals_size), 1024LL)")) << kernel;
  EXPECT_TRUE(contains(kernel, "pC2 += 1LL;\n        pA2 = (pA2 + 1LL);\n        pB2 = (pB2 + 1LL);\n      } else if")) << kernel;
  EXPECT_FALSE(contains(kernel, "if ((jB == j))")) << kernel;
  // Row-parallel in one pass: the same merge into the thread's arrays,
  // their capacity tested once a row; no counting pass.
  runAdd({{"A", a}, {"B", b}}, FloatingPointMode::Strict, jit::Backend::SystemCompiler, true, &cpp);
  kernel = cpp.substr(cpp.find("int32_t tcc_kernel_0"));
  EXPECT_FALSE(contains(kernel, "prefix sum")) << kernel;
  EXPECT_EQ(count(kernel, "C2_crd_of_thread = (int32_t*)tcc_realloc"), 1u) << kernel;
  EXPECT_TRUE(contains(kernel, "C2_crd_of_thread[pC2_thread] = j;\n            C_vals_of_thread[pC2_thread] = "
                               "(A_vals[pA2] + B_vals[pB2]);\n            pC2_thread += 1LL;\n            "
                               "pA2 = (pA2 + 1LL);\n            pB2 = (pB2 + 1LL);"))
      << kernel;
  EXPECT_FALSE(contains(kernel, "if ((jB == j))")) << kernel;
  // In two passes: the counting pass the same way.
  runAdd({{"A", a}, {"B", b}}, FloatingPointMode::Strict, jit::Backend::SystemCompiler, true, &cpp, false);
  kernel = cpp.substr(cpp.find("int32_t tcc_kernel_0"));
  std::string counting = kernel.substr(0, kernel.find("prefix sum"));
  ASSERT_NE(counting.size(), kernel.size()) << kernel;
  EXPECT_TRUE(contains(counting, "pC2_row += 1LL;\n        pA2 = (pA2 + 1LL);\n        pB2 = (pB2 + 1LL);")) << kernel;
  EXPECT_FALSE(contains(counting, "if ((jB == j))")) << kernel;
}

// Row-parallel in one pass: rows in chunks claimed in order, each thread
// appending a chunk to its own arrays, then copying it to the offset the
// chunks before it leave (tcc_chunk_offset), its rows' ends moved by it;
// the output allocated once at the bound, pos carried forward by no pass.
// Run a chunk a row (-DTCC_CHUNK_ENTRIES=1: a thread's arrays start at two
// entries and grow, every chunk looks back) or a few, with and without
// streaming stores, strict and fast, through both compilers: the same bits
// as the merge. The two-pass form
// (CompileOptions::rowsInOnePass = false) too.
TEST(SparseAddKernel, RowsInOnePassStoreTheSameBits) {
  auto [a, b] = mergeCases();
  rt::Coo ra = randomSparse({397, 131}, 0.05, 25), rb = randomSparse({397, 131}, 0.05, 26);
  ra.sort(), rb.sort();
  for (bool onePass : {true, false})
    for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
      CompileOptions options;
      options.floatingPoint = mode;
      options.rowsInOnePass = onePass;
      const std::string cpp =
          lowerProgram(Program::fromText(std::string(kAdd) + kRowsOnThreads, "add.tc"), options).cpp;
      const std::string kernel = cpp.substr(cpp.find("int32_t tcc_kernel_0("));
      EXPECT_EQ(contains(kernel, "prefix sum"), !onePass) << kernel;
      EXPECT_EQ(contains(kernel, "segments of rows without entries"), !onePass) << kernel;
      if (onePass) {
        EXPECT_TRUE(contains(kernel, "int64_t C_rows_per_chunk = tcc_rows_per_chunk((int64_t)(C1_dimension), "
                                     "(A->vals_size + B->vals_size), thread_count);"))
            << kernel;
        EXPECT_TRUE(contains(kernel, "#pragma omp parallel for schedule(dynamic, 1)\n")) << kernel;
        EXPECT_TRUE(contains(kernel, "int64_t C_chunk = tcc_claim_chunk((C_chunk_state + C_chunks));")) << kernel;
        EXPECT_TRUE(contains(kernel, "int64_t pC2_chunk = tcc_chunk_offset(C_chunk_state, C_chunk, pC2_thread);"))
            << kernel;
        EXPECT_TRUE(contains(kernel, "C2_crd[(pC2_chunk + pC2_copy)] = C2_crd_of_thread[pC2_copy];")) << kernel;
        EXPECT_TRUE(contains(kernel, "C2_pos[pC1_end] += pC2_chunk;")) << kernel;
        EXPECT_TRUE(contains(kernel, "pC2 = tcc_chunk_total(C_chunk_state, C_chunks);")) << kernel;
        EXPECT_FALSE(contains(kernel, "tcc_realloc(C2_crd,")) << kernel;
      }
      for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
        if (!jit::isAvailable(backend)) continue;
        for (const char* defines : {"-DTCC_CHUNK_ENTRIES=1", "-DTCC_CHUNK_ENTRIES=1 -DTCC_STREAMING_STORE_VALUES=0",
                                    "-DTCC_CHUNK_ENTRIES=1 -DTCC_STREAMING_STORE_VALUES=0 "
                                    "-DTCC_STREAMING_STORES_ON_FRESH_PAGES=1",
                                    "-DTCC_CHUNK_ENTRIES=64"}) {
            SCOPED_TRACE(std::string(jit::backendName(backend)) + (onePass ? ", one pass" : ", two passes") +
                         (mode == FloatingPointMode::Fast ? ", fast, " : ", strict, ") + defines);
            expectAddsMatchBitForBit(cpp, backend, true, mode, defines, {{a, b}, {b, a}, {ra, rb}});
          }
      }
    }
}

// The copy of the kernel whose appends go past the caches (tcc_store with
// its array's flag; a row-parallel output's chunks copied out in whole
// vectors), which the entry point calls for inputs of more than
// TCC_STREAMING_STORE_VALUES stored values (TCC_STREAMING_COPY_VALUES for
// the chunks, which a build setting the first sets too): forced here on
// every input (a threshold set to 0, on this machine whatever its vendor),
// streaming into every array (TCC_STREAMING_STORES_ON_FRESH_PAGES=1) or
// where the pages are resident, it stores the same bits as the merge,
// serial and row-parallel, strict and fast, through both compilers. Where
// streaming stores are off (-1) the entry point runs the body it always
// had, as a serial kernel does with only the chunks' threshold at 0.
TEST(SparseAddKernel, StreamingStoresStoreTheSameBits) {
#if defined(__x86_64__)
  auto [a, b] = mergeCases();
  rt::Coo ra = randomSparse({97, 131}, 0.1, 23), rb = randomSparse({97, 131}, 0.1, 24);
  ra.sort(), rb.sort();
  for (bool rowsOnThreads : {false, true})
    for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
      CompileOptions options;
      options.floatingPoint = mode;
      const std::string cpp =
          lowerProgram(Program::fromText(std::string(kAdd) + (rowsOnThreads ? kRowsOnThreads : ""), "add.tc"), options)
              .cpp;
      // The copy before the entry point, its appends streaming, fenced; the
      // entry point's switch.
      const size_t copy = cpp.find("int32_t streaming_stores_tcc_kernel_0("), entry = cpp.find("int32_t tcc_kernel_0(");
      ASSERT_NE(copy, std::string::npos) << cpp;
      ASSERT_LT(copy, entry) << cpp;
      const std::string streamed = cpp.substr(copy, entry - copy), kernel = cpp.substr(entry);
      // Serial: three cases, two tails, each store testing its array's
      // flag; row-parallel in one pass: the copy of each chunk to its
      // offset, in whole vectors where both arrays stream (their flags
      // tested once, before it), else the plain loop.
      if (rowsOnThreads) {
        EXPECT_EQ(count(streamed, "if (tcc_streams_C2_crd && tcc_streams_C_vals) {\n"
                                  "          tcc_stream_bytes(C2_crd + pC2_chunk, C2_crd_of_thread, sizeof(*C2_crd) * "
                                  "(pC2_thread));\n"
                                  "          tcc_stream_bytes(C_vals + pC2_chunk, C_vals_of_thread, sizeof(*C_vals) * "
                                  "(pC2_thread));\n"
                                  "        } else {\n"),
                  1u)
            << streamed;
        EXPECT_EQ(count(streamed, "C2_crd[(pC2_chunk + pC2_copy)] = C2_crd_of_thread[pC2_copy];"), 1u) << streamed;
        EXPECT_FALSE(contains(streamed, "tcc_store(")) << streamed;
      } else {
        EXPECT_EQ(count(streamed, "tcc_store(C2_crd, "), 3u + 2u) << streamed;
        EXPECT_EQ(count(streamed, "tcc_store(C_vals, "), 3u + 2u) << streamed;
        EXPECT_EQ(count(streamed, ", tcc_streams_C_vals);"), 3u + 2u) << streamed;
        EXPECT_FALSE(contains(streamed, "C_vals[")) << streamed;
      }
      EXPECT_FALSE(contains(kernel, "tcc_stream")) << kernel;
      // Each allocation of a streamed array asks whether its pages are resident.
      EXPECT_EQ(count(streamed, "tcc_streams_C_vals = tcc_pages_resident(C_vals, "),
                count(streamed, "C_vals = (double*)")) << streamed;
      EXPECT_EQ(count(streamed, "tcc_streams_C2_crd = tcc_pages_resident(C2_crd, "),
                count(streamed, "C2_crd = (int32_t*)")) << streamed;
      // The threshold: whole-vector chunk copies follow
      // TCC_STREAMING_COPY_VALUES (AMD cores take them too), stores of
      // single entries TCC_STREAMING_STORE_VALUES.
      const std::string threshold = rowsOnThreads ? "TCC_STREAMING_COPY_VALUES" : "TCC_STREAMING_STORE_VALUES";
      EXPECT_TRUE(contains(cpp, "#if " + threshold + " >= 0\nstatic __attribute__((noinline)) int32_t "
                                "streaming_stores_tcc_kernel_0(")) << cpp;
      EXPECT_TRUE(contains(kernel, "if ((int64_t)A->vals_size + (int64_t)B->vals_size > " + threshold +
                                   ") return streaming_stores_tcc_kernel_0(tcc_tensors);"))
          << kernel;
      if (rowsOnThreads) {
        // Each thread fences its own stores: the thread loop in a region of its own.
        EXPECT_TRUE(contains(streamed, "#pragma omp for schedule(dynamic, 1) nowait")) << streamed;
        EXPECT_EQ(count(streamed, "tcc_stream_fence();"), 2u) << streamed;
        EXPECT_TRUE(contains(kernel, "#pragma omp parallel for schedule(dynamic, 1)\n")) << kernel;
      } else {
        EXPECT_EQ(count(streamed, "tcc_stream_fence();"), 1u) << streamed;
      }
      for (jit::Backend backend : {jit::Backend::SystemCompiler, jit::Backend::ClangInterpreter}) {
        if (!jit::isAvailable(backend)) continue;
        for (const char* threshold : {"STORE_VALUES=0 -DTCC_STREAMING_STORES_ON_FRESH_PAGES=1", "STORE_VALUES=0",
                                      "STORE_VALUES=-1", "COPY_VALUES=0 -DTCC_STREAMING_STORES_ON_FRESH_PAGES=1",
                                      "COPY_VALUES=0"}) {
          SCOPED_TRACE(std::string(jit::backendName(backend)) + (rowsOnThreads ? ", rows on threads" : ", serial") +
                       (mode == FloatingPointMode::Fast ? ", fast" : ", strict") + ", threshold " + threshold);
          expectAddsMatchBitForBit(cpp, backend, rowsOnThreads, mode, std::string("-DTCC_STREAMING_") + threshold,
                                   {{a, b}, {b, a}, {ra, rb}});
        }
      }
    }
#else
  GTEST_SKIP() << "streaming stores are printed for x86-64";
#endif
}

// Other kernels with sparse outputs get the copy too: forced on every input
// and into every array (through the system compiler, whose command then
// carries the switches), each matches the dense reference: SpGEMM through a
// dense workspace, serial and row-parallel, an intersection, a union with a
// product, a sparse vector, a DCSR output (only its last level streams) and
// a CSF sum of three-dimensional tensors.
TEST(SparseOutputs, StreamingCopiesMatchTheReference) {
#if defined(__x86_64__) && defined(__linux__)
  const char* before = std::getenv("CXX");
  const std::string saved = before ? before : "";
  const std::string compiler = before && *before ? before : "c++";
  setenv("CXX", (compiler + " -DTCC_STREAMING_STORE_VALUES=0 -DTCC_STREAMING_STORES_ON_FRESH_PAGES=1").c_str(), 1);
  struct Restore {
    std::string saved;
    bool had;
    ~Restore() { had ? setenv("CXX", saved.c_str(), 1) : unsetenv("CXX"); }
  } restore{saved, before != nullptr};
  CompileOptions options;
  options.backend = jit::Backend::SystemCompiler;
  options.useKernelCache = false;
  const std::map<std::string, rt::Coo> matrices = {{"B", randomSparse({41, 37}, 0.15, 51)},
                                                   {"C", randomSparse({37, 43}, 0.15, 52)},
                                                   {"D", randomSparse({41, 37}, 0.2, 53)},
                                                   {"E", randomSparse({41, 37}, 0.2, 54)}};
  const std::string spgemm = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                             "A(i, j) = B(i, k) * C(k, j)\n";
  struct Case {
    std::string dsl;
    std::map<std::string, rt::Coo> inputs;
  };
  const std::vector<Case> cases = {
      {spgemm, {{"B", matrices.at("B")}, {"C", matrices.at("C")}}},
      {withSchedule(spgemm, "parallelize(i, CPUThread, NoRaces)"), {{"B", matrices.at("B")}, {"C", matrices.at("C")}}},
      {"tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor D(I, J) : csr\nA(i, j) = B(i, j) * D(i, j)\n",
       {{"B", matrices.at("B")}, {"D", matrices.at("D")}}},
      {"tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor D(I, J) : csr\ntensor E(I, J) : csr\n"
       "A(i, j) = B(i, j) + D(i, j) * E(i, j)\n",
       {{"B", matrices.at("B")}, {"D", matrices.at("D")}, {"E", matrices.at("E")}}},
      {"tensor c(I) : sparse\ntensor a(I) : sparse\ntensor b(I) : sparse\nc(i) = a(i) + b(i)\n",
       {{"a", randomSparse({300}, 0.1, 55)}, {"b", randomSparse({300}, 0.1, 56)}}},
      {"tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor D(I, J) : dcsr\nA(i, j) = B(i, j) + D(i, j)\n",
       {{"B", randomSparse({60, 50}, 0.02, 57)}, {"D", randomSparse({60, 50}, 0.02, 58)}}},
      {"tensor A(I, J, K) : csf\ntensor B(I, J, K) : csf\ntensor D(I, J, K) : csf\n"
       "A(i, j, k) = B(i, j, k) + D(i, j, k)\n",
       {{"B", randomSparse({9, 8, 7}, 0.1, 59)}, {"D", randomSparse({9, 8, 7}, 0.1, 60)}}},
  };
  for (const auto& [dsl, inputs] : cases) {
    SCOPED_TRACE(dsl);
    std::string cpp = expectProgramMatchesReference(dsl, inputs, options, 1e-12);
    EXPECT_TRUE(contains(cpp, "int32_t streaming_stores_tcc_kernel_0(")) << cpp;
    EXPECT_TRUE(contains(cpp, "tcc_store(")) << cpp;
  }
#else
  GTEST_SKIP() << "streaming stores are printed for x86-64; the test forces them through a Linux system compiler";
#endif
}

// Every sparse output the row-parallel path assembles, in one pass where
// the inputs bound the output's entries (the form chosen from the
// statement, before it is lowered) and in two passes elsewhere (a vector
// added to every row stores more than its operands; SpGEMM appends out of
// a workspace; a dense operand in a sum visits every coordinate; the rows'
// loop iterates a sparse level (DCSR) or is split) and when asked: against the
// dense reference, strict
// and fast, through the JIT (inputs large enough for several chunks) and
// through the system compiler with a chunk a row, plain and streaming.
TEST(SparseOutputs, RowParallelFormsMatchTheReference) {
  const std::string rows = "\nschedule { parallelize(i, CPUThread, NoRaces) }\n";
  const std::string csr3 = "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor D(I, J) : csr\ntensor E(I, J) : csr\n";
  struct Case {
    std::string dsl;
    bool onePass;  // whether the inputs bound the output's entries
  };
  const std::vector<Case> cases = {
      {csr3 + "A(i, j) = B(i, j) + D(i, j)" + rows, true},
      {csr3 + "A(i, j) = B(i, j) * D(i, j)" + rows, true},
      {csr3 + "A(i, j) = B(i, j) + D(i, j) * E(i, j)" + rows, true},
      {csr3 + "A(i, j) = B(i, j) + D(i, j) + E(i, j)" + rows, true},
      {csr3 + "A(i, j) = B(i, j) - D(i, j) - E(i, j)" + rows, true},
      {csr3 + "A(i, j) = B(i, j) * 2.5" + rows, true},
      {"tensor A(I, J) : csr of float32\ntensor B(I, J) : csr of float32\ntensor D(I, J) : csr of float32\n"
       "A(i, j) = B(i, j) + D(i, j)" + rows, true},
      {"tensor A(I, J) : csc\ntensor B(I, J) : csc\ntensor D(I, J) : csc\nA(i, j) = B(i, j) + D(i, j)\n"
       "schedule { parallelize(j, CPUThread, NoRaces) }\n", true},
      // Dense operands located: a product bounded by B, a dense vector in every row too.
      {"tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor F(I, J) : dense\nA(i, j) = B(i, j) * F(i, j)" + rows, true},
      {"tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor c(J) : dense\nA(i, j) = B(i, j) * c(j)" + rows, true},
      {"tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor b(J) : sparse\nA(i, j) = B(i, j) + b(j)" + rows, false},
      {"tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)" + rows, false},
      // Every coordinate of a row visited (a dense operand in a sum); the
      // rows' loop over a sparse level (DCSR operands); the rows' loop split.
      {"tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor F(I, J) : dense\nA(i, j) = B(i, j) + F(i, j)" + rows, false},
      {"tensor A(I, J) : csr\ntensor B(I, J) : dcsr\nA(i, j) = 2.5 * B(i, j)" + rows, false},
      {csr3 + "A(i, j) = B(i, j) + D(i, j)\n"
              "schedule {\n  split(i, i0, i1, 16)\n  parallelize(i0, CPUThread, NoRaces)\n}\n",
       false},
  };
  auto inputsOf = [](const std::string& dsl, int32_t m, int32_t n, double density) {
    std::map<std::string, rt::Coo> inputs;
    uint64_t seed = 61;
    for (const char* name : {"B", "D", "E"})
      if (contains(dsl, std::string("tensor ") + name + "(")) inputs.emplace(name, randomSparse({m, n}, density, seed++));
    if (contains(dsl, "tensor b(")) inputs.emplace("b", randomSparse({n}, 0.3, seed++));
    if (contains(dsl, "tensor F(")) inputs.emplace("F", randomDense({m, n}, seed++));
    if (contains(dsl, "tensor c(")) inputs.emplace("c", randomDense({n}, seed++));
    if (contains(dsl, "tensor C(K")) inputs.emplace("B", randomSparse({m, n}, density, seed++)),
        inputs.emplace("C", randomSparse({n, n}, density, seed++));
    return inputs;
  };
  for (const auto& [dsl, onePass] : cases)
    for (bool asked : {true, false})
      for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
        SCOPED_TRACE(dsl + (asked ? "one pass where it applies, " : "two passes, ") +
                     (mode == FloatingPointMode::Fast ? "fast" : "strict"));
        CompileOptions options;
        options.floatingPoint = mode;
        options.rowsInOnePass = asked;
        options.useKernelCache = false;
        const double tolerance = contains(dsl, "float32") ? 1e-5 : 1e-12;
        const std::string cpp = lowerProgram(Program::fromText(dsl, "test.tc"), options).cpp;
        const std::string kernel = cpp.substr(cpp.find("int32_t tcc_kernel_0("));
        EXPECT_EQ(contains(kernel, "tcc_chunk_offset(A_chunk_state"), asked && onePass) << kernel;
        EXPECT_EQ(contains(kernel, "prefix sum"), !(asked && onePass)) << kernel;
        // Several chunks a thread through the JIT: about 8192 entries a chunk.
        options.backend = jit::Backend::ClangInterpreter;
        if (jit::isAvailable(options.backend))
          expectProgramMatchesReference(dsl, inputsOf(dsl, 3000, 40, 0.2), options, tolerance);
#if defined(__linux__)
        // A chunk a row through the system compiler, its command carrying
        // the switches (for the one-pass form: the two passes stream as
        // StreamingCopiesMatchTheReference checks).
        if (!(asked && onePass)) continue;
        const char* before = std::getenv("CXX");
        const std::string saved = before ? before : "";
        const std::string compiler = before && *before ? before : "c++";
        struct Restore {
          std::string saved;
          bool had;
          ~Restore() { had ? setenv("CXX", saved.c_str(), 1) : unsetenv("CXX"); }
        } restore{saved, before != nullptr};
        options.backend = jit::Backend::SystemCompiler;
        for (const char* defines : {" -DTCC_CHUNK_ENTRIES=1",
                                    " -DTCC_CHUNK_ENTRIES=1 -DTCC_STREAMING_STORE_VALUES=0 "
                                    "-DTCC_STREAMING_STORES_ON_FRESH_PAGES=1"}) {
          SCOPED_TRACE(defines);
          setenv("CXX", (compiler + defines).c_str(), 1);
          expectProgramMatchesReference(dsl, inputsOf(dsl, 67, 45, 0.15), options, tolerance);
        }
#endif
      }
}

// Other lattices through the same lowering, against the dense reference:
// a union of three (seven cases, each moving its operands on), an
// intersection (one case; nothing stored where an operand is missing), a
// union of a product and a tensor (B alone has no case: the operands move
// on after the cases), and a difference.
TEST(SparseAddKernel, OtherLatticesMatchTheReference) {
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({53, 61}, 0.2, 31)},
                                           {"B", randomSparse({53, 61}, 0.2, 32)},
                                           {"D", randomSparse({53, 61}, 0.2, 33)}};
  const std::string declarations = "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n"
                                   "tensor D(I, J) : csr\n";
  for (const char* statement : {"C(i,j) = A(i,j) + B(i,j) + D(i,j)\n", "C(i,j) = A(i,j) * B(i,j)\n",
                                "C(i,j) = A(i,j) + B(i,j) * D(i,j)\n", "C(i,j) = A(i,j) - B(i,j) - D(i,j)\n"}) {
    SCOPED_TRACE(statement);
    std::string cpp = expectProgramMatchesReference(declarations + statement, inputs);
    std::string kernel = cpp.substr(cpp.find("int32_t tcc_kernel_0"));
    bool everyCombination = std::string(statement).find('*') == std::string::npos;
    // (The operands' own advance after the cases.)
    EXPECT_EQ(contains(kernel, "if ((jA == j)) {\n        pA2 = (pA2 + 1LL);\n      }"), !everyCombination) << kernel;
    EXPECT_EQ(count(kernel, "C2_crd = (int32_t*)tcc_realloc"), 1u) << kernel;
  }
}

// A first capacity that is too small: a sparse vector added to every row
// stores far more entries than the operands do; the arrays grow.
TEST(SparseAddKernel, OutputGrowsPastItsFirstCapacity) {
  rt::Coo b = randomSparse({300}, 0.5, 41);
  std::string cpp = expectProgramMatchesReference(
      "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor b(J) : sparse\nC(i,j) = A(i,j) + b(j)\n",
      {{"A", randomSparse({200, 300}, 0.01, 42)}, {"b", b}});
  EXPECT_TRUE(contains(cpp, "tcc_realloc")) << cpp;
}

// A DCSR result with more nonempty rows than the first capacity: the row
// coordinates (crd of level 1) and the row offsets (pos of level 2, one
// entry more) grow as rows are appended, twice over here.
TEST(SparseAddKernel, DcsrOutputGrowsItsRowArrays) {
  std::string cpp = expectProgramMatchesReference(
      "tensor C(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nC(i,j) = A(i,j) + B(i,j)\n",
      {{"A", randomSparse({3000, 4}, 0.3, 43)}, {"B", randomSparse({3000, 4}, 0.3, 44)}});
  EXPECT_TRUE(contains(cpp, "C1_crd = (int32_t*)tcc_realloc")) << cpp;
  EXPECT_TRUE(contains(cpp, "C2_pos = (int64_t*)tcc_realloc")) << cpp;
}

}  // namespace
}  // namespace tcc::test
