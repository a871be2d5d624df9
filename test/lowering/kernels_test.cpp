// Every kernel family of the CPU backend, in every listed format, against
// the dense reference evaluator on random inputs.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

using ir::Format;
using ir::IndexVar;
using ir::LevelFormat;
using ir::TensorVar;

struct Vars {
  IndexVar i{"i"}, j{"j"}, k{"k"}, l{"l"}, m{"m"};
};

class SpMV : public ::testing::TestWithParam<std::string> {};

TEST_P(SpMV, MatchesReference) {
  Vars v;
  TensorVar y("y", {"I"}, Format::denseOfOrder(1));
  TensorVar A("A", {"I", "J"}, *Format::named(GetParam(), 2));
  TensorVar x("x", {"J"}, Format::denseOfOrder(1));
  KernelCheck check;
  check.statements = {y(v.i) = A(v.i, v.j) * x(v.j)};
  check.tensors = {y, A, x};
  check.inputs = {{"A", randomSparse({37, 53}, 0.1, 1)}, {"x", randomDense({53}, 2)}};
  expectMatchesReference(check);
}
INSTANTIATE_TEST_SUITE_P(Formats, SpMV, ::testing::Values("csr", "csc", "coo", "dcsr", "dcsc", "dense"));

TEST(SpMV, SparseVectorInput) {
  Vars v;
  TensorVar y("y", {"I"}, Format::denseOfOrder(1));
  TensorVar A("A", {"I", "J"}, Format::csr());
  TensorVar x("x", {"J"}, Format::sparseVector());
  KernelCheck check;
  check.statements = {y(v.i) = A(v.i, v.j) * x(v.j)};
  check.tensors = {y, A, x};
  check.inputs = {{"A", randomSparse({40, 30}, 0.2, 3)}, {"x", randomSparse({30}, 0.3, 4)}};
  expectMatchesReference(check);
}

class SpMM : public ::testing::TestWithParam<std::string> {};
TEST_P(SpMM, MatchesReference) {
  Vars v;
  TensorVar C("C", {"I", "J"}, Format::denseOfOrder(2));
  TensorVar A("A", {"I", "K"}, *Format::named(GetParam(), 2));
  TensorVar B("B", {"K", "J"}, Format::denseOfOrder(2));
  KernelCheck check;
  check.statements = {C(v.i, v.j) = A(v.i, v.k) * B(v.k, v.j)};
  check.tensors = {C, A, B};
  check.inputs = {{"A", randomSparse({31, 23}, 0.15, 5)}, {"B", randomDense({23, 9}, 6)}};
  expectMatchesReference(check);
}
INSTANTIATE_TEST_SUITE_P(Formats, SpMM, ::testing::Values("csr", "csc", "dcsr", "coo"));

TEST(SDDMM, SampledProductIntoCsr) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::csr());
  TensorVar B("B", {"I", "J"}, Format::csr());
  TensorVar C("C", {"I", "K"}, Format::denseOfOrder(2));
  TensorVar D("D", {"K", "J"}, Format::denseOfOrder(2));
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.j) * C(v.i, v.k) * D(v.k, v.j)};
  check.tensors = {A, B, C, D};
  check.inputs = {{"B", randomSparse({29, 33}, 0.1, 7)}, {"C", randomDense({29, 8}, 8)}, {"D", randomDense({8, 33}, 9)}};
  expectMatchesReference(check);
}

class SpGEMM : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};
TEST_P(SpGEMM, RowWiseMatchesReference) {
  Vars v;
  auto [outputFormat, leftFormat, rightFormat] = GetParam();
  TensorVar A("A", {"I", "J"}, *Format::named(outputFormat, 2));
  TensorVar B("B", {"I", "K"}, *Format::named(leftFormat, 2));
  TensorVar C("C", {"K", "J"}, *Format::named(rightFormat, 2));
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.k) * C(v.k, v.j)};
  check.tensors = {A, B, C};
  check.inputs = {{"B", randomSparse({41, 37}, 0.08, 10)}, {"C", randomSparse({37, 45}, 0.08, 11)}};
  std::string code = expectMatchesReference(check);
  if (outputFormat == "csr" && leftFormat == "csr" && rightFormat == "csr") {
    // Gustavson: the workspace is reset through its list, not cleared per row.
    std::string kernel = code.substr(code.find("int32_t tcc_kernel_0"));
    EXPECT_NE(kernel.find("w_A_list"), std::string::npos);
    EXPECT_EQ(kernel.find("memset"), std::string::npos);
  }
}
INSTANTIATE_TEST_SUITE_P(Formats, SpGEMM,
                         ::testing::Values(std::make_tuple("csr", "csr", "csr"), std::make_tuple("dcsr", "dcsr", "csr"),
                                           std::make_tuple("csr", "dcsr", "dcsr"), std::make_tuple("dense", "csr", "csr"),
                                           std::make_tuple("coo", "csr", "csr")));

class ElementWise : public ::testing::TestWithParam<std::tuple<char, std::string, std::string, std::string>> {};
TEST_P(ElementWise, MatchesReference) {
  Vars v;
  auto [op, outputFormat, leftFormat, rightFormat] = GetParam();
  TensorVar A("A", {"I", "J"}, *Format::named(outputFormat, 2));
  TensorVar B("B", {"I", "J"}, *Format::named(leftFormat, 2));
  TensorVar C("C", {"I", "J"}, *Format::named(rightFormat, 2));
  ir::IndexExpr rhs = op == '+' ? B(v.i, v.j) + C(v.i, v.j)
                    : op == '-' ? B(v.i, v.j) - C(v.i, v.j)
                                : B(v.i, v.j) * C(v.i, v.j);
  KernelCheck check;
  check.statements = {A(v.i, v.j) = rhs};
  check.tensors = {A, B, C};
  check.inputs = {{"B", randomSparse({33, 27}, 0.2, 12)}, {"C", randomSparse({33, 27}, 0.2, 13)}};
  expectMatchesReference(check);
}
INSTANTIATE_TEST_SUITE_P(
    Formats, ElementWise,
    ::testing::Combine(::testing::Values('+', '-', '*'), ::testing::Values("csr", "dcsr", "dense"),
                       ::testing::Values("csr", "dcsr", "dense"), ::testing::Values("csr", "dcsr", "coo", "dense")));

TEST(ElementWise, ThreeWayUnionWithScaling) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::csr());
  TensorVar B("B", {"I", "J"}, Format::csr());
  TensorVar C("C", {"I", "J"}, Format::dcsr());
  TensorVar D("D", {"I", "J"}, Format::csr());
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.j) * (C(v.i, v.j) + D(v.i, v.j)) - 2.0 * D(v.i, v.j)};
  check.tensors = {A, B, C, D};
  check.inputs = {{"B", randomSparse({25, 25}, 0.3, 14)},
                  {"C", randomSparse({25, 25}, 0.3, 15)},
                  {"D", randomSparse({25, 25}, 0.3, 16)}};
  expectMatchesReference(check);
}

TEST(Scaling, ByScalarTensor) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::csr());
  TensorVar alpha("alpha");
  TensorVar B("B", {"I", "J"}, Format::csr());
  KernelCheck check;
  check.statements = {A(v.i, v.j) = alpha() * B(v.i, v.j)};
  check.tensors = {A, alpha, B};
  rt::Coo scalar;
  scalar.values = {2.5};
  check.inputs = {{"alpha", scalar}, {"B", randomSparse({20, 30}, 0.2, 17)}};
  expectMatchesReference(check);
}

TEST(Transpose, CopyCsrIntoCsc) {
  Vars v;
  TensorVar A("A", {"J", "I"}, Format::csc());
  TensorVar B("B", {"I", "J"}, Format::csr());
  KernelCheck check;
  check.statements = {A(v.j, v.i) = B(v.i, v.j)};
  check.tensors = {A, B};
  check.inputs = {{"B", randomSparse({23, 31}, 0.2, 18)}};
  expectMatchesReference(check);
}

TEST(Transpose, ScatteringIntoTheOuterLevelGoesThroughASparseWorkspace) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::csc());
  TensorVar B("B", {"I", "J"}, Format::csr());
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.j)};
  check.tensors = {A, B};
  check.inputs = {{"B", randomSparse({31, 27}, 0.15, 40)}};
  expectMatchesReference(check);
}

TEST(TensorTimes, TTVIntoDenseMatrix) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::denseOfOrder(2));
  TensorVar B("B", {"I", "J", "K"}, Format::csf(3));
  TensorVar c("c", {"K"}, Format::denseOfOrder(1));
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.j, v.k) * c(v.k)};
  check.tensors = {A, B, c};
  check.inputs = {{"B", randomSparse({9, 11, 13}, 0.1, 19)}, {"c", randomDense({13}, 20)}};
  expectMatchesReference(check);
}

TEST(TensorTimes, TTMIntoDenseTensor) {
  Vars v;
  TensorVar A("A", {"I", "J", "K"}, Format::denseOfOrder(3));
  TensorVar B("B", {"I", "J", "L"}, Format::csf(3));
  TensorVar C("C", {"K", "L"}, Format::denseOfOrder(2));
  KernelCheck check;
  check.statements = {A(v.i, v.j, v.k) = B(v.i, v.j, v.l) * C(v.k, v.l)};
  check.tensors = {A, B, C};
  check.inputs = {{"B", randomSparse({7, 8, 9}, 0.15, 21)}, {"C", randomDense({5, 9}, 22)}};
  expectMatchesReference(check);
}

class MTTKRP : public ::testing::TestWithParam<std::string> {};
TEST_P(MTTKRP, MatchesReference) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::denseOfOrder(2));
  TensorVar B("B", {"I", "K", "L"}, *Format::named(GetParam(), 3));
  TensorVar C("C", {"K", "J"}, Format::denseOfOrder(2));
  TensorVar D("D", {"L", "J"}, Format::denseOfOrder(2));
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.k, v.l) * C(v.k, v.j) * D(v.l, v.j)};
  check.tensors = {A, B, C, D};
  check.inputs = {{"B", randomSparse({10, 12, 14}, 0.1, 23)},
                  {"C", randomDense({12, 6}, 24)},
                  {"D", randomDense({14, 6}, 25)}};
  expectMatchesReference(check);
}
INSTANTIATE_TEST_SUITE_P(Formats, MTTKRP, ::testing::Values("csf", "coo"));

TEST(InnerProduct, TwoSparseMatricesToAScalar) {
  Vars v;
  TensorVar a("a");
  TensorVar B("B", {"I", "J"}, Format::csr());
  TensorVar C("C", {"I", "J"}, Format::dcsr());
  KernelCheck check;
  check.statements = {a() = B(v.i, v.j) * C(v.i, v.j)};
  check.tensors = {a, B, C};
  check.inputs = {{"B", randomSparse({30, 30}, 0.3, 26)}, {"C", randomSparse({30, 30}, 0.3, 27)}};
  expectMatchesReference(check);
}

TEST(Contraction, FourTensorContraction) {
  Vars v;
  TensorVar A("A", {"I", "J"}, Format::denseOfOrder(2));
  TensorVar B("B", {"I", "K", "L", "M"}, Format::csf(4));
  TensorVar C("C", {"K", "L", "M", "J"}, Format::denseOfOrder(4));
  KernelCheck check;
  check.statements = {A(v.i, v.j) = B(v.i, v.k, v.l, v.m) * C(v.k, v.l, v.m, v.j)};
  check.tensors = {A, B, C};
  check.inputs = {{"B", randomSparse({5, 6, 4, 5}, 0.1, 28)}, {"C", randomDense({6, 4, 5, 3}, 29)}};
  expectMatchesReference(check);
}

TEST(SparseOutput, SparseVectorAdd) {
  Vars v;
  TensorVar a("a", {"I"}, Format::sparseVector());
  TensorVar b("b", {"I"}, Format::sparseVector());
  TensorVar c("c", {"I"}, Format::denseOfOrder(1));
  KernelCheck check;
  check.statements = {a(v.i) = b(v.i) + c(v.i)};
  check.tensors = {a, b, c};
  check.inputs = {{"b", randomSparse({50}, 0.2, 30)}, {"c", randomDense({50}, 31)}};
  expectMatchesReference(check);
}

TEST(Statements, ALaterStatementReadsAnEarlierOutput) {
  Vars v;
  TensorVar T("T", {"I", "J"}, Format::csr());
  TensorVar y("y", {"I"}, Format::denseOfOrder(1));
  TensorVar B("B", {"I", "J"}, Format::csr());
  TensorVar C("C", {"I", "J"}, Format::csr());
  TensorVar x("x", {"J"}, Format::denseOfOrder(1));
  KernelCheck check;
  check.statements = {T(v.i, v.j) = B(v.i, v.j) + C(v.i, v.j), y(v.i) = T(v.i, v.j) * x(v.j)};
  check.tensors = {T, y, B, C, x};
  check.inputs = {{"B", randomSparse({20, 20}, 0.2, 32)}, {"C", randomSparse({20, 20}, 0.2, 33)},
                  {"x", randomDense({20}, 34)}};
  expectMatchesReference(check);
}

}  // namespace
}  // namespace tcc::test
