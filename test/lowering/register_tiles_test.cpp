// Dense output rows held in register tiles across sparse loops (SpMM,
// MTTKRP, TTM): widths that use the 32-wide tiles, the 8-wide ones and the
// untiled rest, against the dense reference, and which nests are tiled.
#include <gtest/gtest.h>

#include "kernel_check.h"

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

// 1..7: no tile; 8, 16: 8-wide tiles; 43 = 32 + 8 + 3; 77 = 64 + 8 + 5; 107 = 64 + 32 + 8 + 3.
INSTANTIATE_TEST_SUITE_P(Widths, RegisterTiles, ::testing::Values(1, 5, 8, 16, 32, 43, 64, 77, 107));

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
