// Dense output rows held in register tiles across sparse loops (SpMM,
// MTTKRP, TTM): widths that use the 64-, 32-, 16- and 8-wide tiles and the
// untiled rest, against the dense reference, and which nests are tiled.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel_check.h"
#include "tcc/lowering/codegen.h"

namespace tcc::test {
namespace {

const char* const kSpmm = "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\n"
                          "C(i,k) = A(i,j) * B(j,k)\n";

class RegisterTiles : public ::testing::TestWithParam<int> {};

TEST_P(RegisterTiles, SpMMMatchesReference) {
  int columns = GetParam();
  std::string source = expectProgramMatchesReference(
      kSpmm, {{"A", realMatrix("494_bus.mtx")}, {"B", randomDense({494, columns}, 60 + columns)}});
  EXPECT_TRUE(contains(source, "in register tiles")) << source;
}

TEST_P(RegisterTiles, MTTKRPMatchesReference) {
  int rank = GetParam();
  std::string source = expectProgramMatchesReference(
      "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
      "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)\n",
      {{"B", randomSparse({14, 12, 10}, 0.15, 70)},
       {"C", randomDense({12, rank}, 71)},
       {"D", randomDense({10, rank}, 72)}});
  EXPECT_TRUE(contains(source, "in register tiles")) << source;
}

TEST_P(RegisterTiles, TTMMatchesReference) {
  int columns = GetParam();
  expectProgramMatchesReference(
      "tensor A(I, J, K) : dense\ntensor B(I, J, L) : csf\ntensor C(K, L) : dense\nA(i,j,k) = B(i,j,l) * C(k,l)\n",
      {{"B", randomSparse({9, 8, 30}, 0.2, 73)}, {"C", randomDense({columns, 30}, 74)}});
}

TEST_P(RegisterTiles, ParallelSpMMMatchesReference) {
  expectProgramMatchesReference(std::string(kSpmm) + "schedule { parallelize(i, CPUThread, NoRaces) }\n",
                                {{"A", randomSparse({70, 50}, 0.1, 75)}, {"B", randomDense({50, GetParam()}, 76)}});
}

// 1..7: no tile; 8: one 8-wide tile; 16: one 16-wide; 43 = 32 + 8 + 3; 77 = 64 + 8 + 5;
// 107 = 64 + 32 + 8 + 3.
INSTANTIATE_TEST_SUITE_P(Widths, RegisterTiles, ::testing::Values(1, 5, 8, 16, 32, 43, 64, 77, 107));

// Tiles held in vector variables (an update of unit-stride loads and values
// invariant in the column): SpMM on rows of every length from 0 to 40
// entries, float64 and float32, and MTTKRP, in both floating-point modes and
// through both backends, for column counts that are and are not multiples of
// a vector's lanes.
using frontend::FloatingPointMode;

// Row i holds i % 41 entries, rows without entries included (`columns`, a
// prime above 40, keeps a row's columns 7k + i apart).
rt::Coo rowsOfEveryLength(int32_t columns) {
  rt::Coo coo = rt::Coo::ofShape({90, columns});
  for (int32_t i = 0; i < 90; ++i)
    for (int32_t k = 0; k < i % 41; ++k) {
      int32_t c[2] = {i, (7 * k + i) % columns};
      coo.push(c, 0.3 + 0.5 * k - 0.125 * i);
    }
  coo.sort();
  return coo;
}

class VectorTiles : public ::testing::TestWithParam<std::tuple<FloatingPointMode, jit::Backend, int>> {
 protected:
  void SetUp() override {
    if (!jit::isAvailable(std::get<1>(GetParam()))) GTEST_SKIP() << jit::backendName(std::get<1>(GetParam()));
  }
  CompileOptions options() const {
    CompileOptions options;
    options.floatingPoint = std::get<0>(GetParam());
    options.backend = std::get<1>(GetParam());
    return options;
  }
  // Fast mode contracts to FMA: equal to the reference within rounding.
  double tolerance(double strict) const { return std::get<0>(GetParam()) == FloatingPointMode::Fast ? 1e-9 : strict; }
  int columns() const { return std::get<2>(GetParam()); }
};

TEST_P(VectorTiles, SpMMOnRowsOfEveryLengthMatchesReference) {
  std::string source = expectProgramMatchesReference(
      kSpmm, {{"A", rowsOfEveryLength(61)}, {"B", randomDense({61, columns()}, 80 + columns())}}, options(),
      tolerance(1e-10));
  EXPECT_TRUE(contains(source, "vector_size(")) << source;  // column counts are bound at run time
}

TEST_P(VectorTiles, Float32SpMMMatchesReference) {
  std::string source = expectProgramMatchesReference(
      "tensor C(I, K) : dense of float32\ntensor A(I, J) : csr of float32\ntensor B(J, K) : dense of float32\n"
      "C(i,k) = A(i,j) * B(j,k)\n",
      {{"A", rowsOfEveryLength(47)}, {"B", randomDense({47, columns()}, 90 + columns())}}, options(), 1e-5);
  EXPECT_TRUE(contains(source, "tcc_f32x16")) << source;
}

TEST_P(VectorTiles, MTTKRPMatchesReference) {
  std::string source = expectProgramMatchesReference(
      "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
      "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)\n",
      {{"B", randomSparse({14, 12, 10}, 0.2, 100)},
       {"C", randomDense({12, columns()}, 101)},
       {"D", randomDense({10, columns()}, 102)}},
      options(), tolerance(1e-10));
  EXPECT_TRUE(contains(source, "vector_size(")) << source;  // column counts are bound at run time
}

// Strict mode: each entry of C gets its terms in order, one multiply and one
// add each, so the result equals the plain loop's bit for bit (fast mode
// contracts, so it is not instantiated there).
class StrictVectorTiles : public VectorTiles {};

TEST_P(StrictVectorTiles, SpMMEqualsTheInOrderLoopBitForBit) {
  rt::Coo a = rowsOfEveryLength(61);
  rt::Coo b = randomDense({61, columns()}, 110 + columns());
  CompileOptions compileOptions = options();
  compileOptions.useKernelCache = false;
  Kernel kernel = compile(Program::fromText(kSpmm, "test.tc"), compileOptions);
  std::vector<double> c = rt::toDense(
      kernel.run({{"A", rt::pack(a, toRuntimeFormat(Format::csr()))}, {"B", rt::pack(b, toRuntimeFormat(Format::denseOfOrder(2)))}})
          .at("C"));
  std::vector<double> dense = rt::toDense(rt::pack(b, toRuntimeFormat(Format::denseOfOrder(2))));
  std::vector<double> expected(static_cast<size_t>(a.dims[0]) * columns(), 0.0);
  for (size_t e = 0; e < a.nnz(); ++e)  // a is sorted by row, then column
    for (int k = 0; k < columns(); ++k) {
      volatile double product = a.values[e] * dense[static_cast<size_t>(a.coords[1][e]) * columns() + k];
      expected[static_cast<size_t>(a.coords[0][e]) * columns() + k] += product;
    }
  ASSERT_EQ(c.size(), expected.size());
  size_t differing = 0;
  for (size_t e = 0; e < c.size(); ++e) differing += std::memcmp(&c[e], &expected[e], sizeof(double)) != 0;
  EXPECT_EQ(differing, 0u);
}

// 3: no tile; 13 = 8 + 5; 24 = 16 + 8; 37 = 32 + 5; 67 = 64 + 3; 100 = 64 + 32 + 4; 131 = 2 * 64 + 3.
const auto kTileColumns = ::testing::Values(3, 8, 13, 16, 24, 37, 64, 67, 100, 131);
const auto kBackends = ::testing::Values(jit::Backend::ClangInterpreter, jit::Backend::SystemCompiler);

std::string vectorTilesName(const ::testing::TestParamInfo<VectorTiles::ParamType>& info) {
  return std::string(frontend::toString(std::get<0>(info.param))) + "_" +
         (std::get<1>(info.param) == jit::Backend::SystemCompiler ? "system" : "clang") + "_" +
         std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(ModesBackendsColumns, VectorTiles,
                         ::testing::Combine(::testing::Values(FloatingPointMode::Strict, FloatingPointMode::Fast),
                                            kBackends, kTileColumns),
                         vectorTilesName);
INSTANTIATE_TEST_SUITE_P(BackendsColumns, StrictVectorTiles,
                         ::testing::Combine(::testing::Values(FloatingPointMode::Strict), kBackends, kTileColumns),
                         vectorTilesName);

TEST(RegisterTilesShape, TTMsStridedUpdateKeepsTheScalarTile) {
  std::string cpp = lowerProgram(Program::fromText("tensor A(I, J, K) : dense\ntensor B(I, J, L) : csf\n"
                                                   "tensor C(K, L) : dense\nA(i,j,k) = B(i,j,l) * C(k,l)\n",
                                                   "test.tc"))
                        .cpp;
  EXPECT_TRUE(contains(cpp, "in register tiles")) << cpp;
  // (In the kernel: the prelude has vector types of its own.)
  const std::string& prelude = lowering::cppPrelude();
  ASSERT_NE(cpp.find(prelude), std::string::npos);
  EXPECT_FALSE(contains(cpp.substr(cpp.find(prelude) + prelude.size()), "vector_size(")) << cpp;
}

TEST(RegisterTilesShape, TheSparseValueIsLoadedOncePerEntry) {
  std::string cpp = lowerProgram(Program::fromText(kSpmm, "test.tc")).cpp;
  EXPECT_TRUE(contains(cpp, "const double k_invariant0 = A_vals[pA2];")) << cpp;
  EXPECT_TRUE(contains(cpp, "C_vals_tile7 += (k_invariant0 * *(const tcc_f64x8*)(k_row0 + 56));")) << cpp;
}

TEST(RegisterTilesShape, OnlyAccumulatingNestsWithAnInvariantRowAreTiled) {
  auto source = [](const std::string& dsl) { return lowerProgram(Program::fromText(dsl, "test.tc")).cpp; };
  // SpMV sums into a scalar; sparse add writes a sparse output; SDDMM's
  // innermost loop is a dot product: none has a dense row to hold.
  EXPECT_FALSE(contains(source("tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n"),
                        "register tiles"));
  EXPECT_FALSE(contains(source("tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\n"
                               "A(i,j) = B(i,j) + C(i,j)\n"),
                        "register tiles"));
  EXPECT_FALSE(contains(source("tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, K) : dense\n"
                               "tensor D(K, J) : dense\nA(i,j) = B(i,j) * C(i,k) * D(k,j)\n"),
                        "register tiles"));
  EXPECT_TRUE(contains(source(kSpmm), "in register tiles"));
}

}  // namespace
}  // namespace tcc::test
