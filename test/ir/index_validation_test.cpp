// make(...) rejects malformed index notation with a clear message.
#include <gtest/gtest.h>

#include "tcc/ir/builder.h"

namespace tcc::ir {
namespace {

template <typename F>
std::string errorOf(F&& build) {
  try {
    build();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(IndexValidation, AccessNeedsOneVariablePerMode) {
  IndexVar i("i"), j("j");
  TensorVar A("A", {3, 3});
  EXPECT_NE(errorOf([&] { A(i); }).find("order 2"), std::string::npos);
  EXPECT_THROW(A(i, j, i), std::invalid_argument);
  TensorVar a("a");
  EXPECT_NO_THROW(a());
  EXPECT_THROW(a(i), std::invalid_argument);
}

TEST(IndexValidation, TensorFormatMustMatchItsOrder) {
  EXPECT_THROW(TensorVar("A", {3}, Format::csr()), std::invalid_argument);
  EXPECT_THROW(TensorVar("", {3}), std::invalid_argument);
  EXPECT_THROW(Dimension(-1), std::invalid_argument);
  EXPECT_THROW(Dimension{std::string()}, std::invalid_argument);  // braces: Clang reads the parenthesized form as a declaration
}

TEST(IndexValidation, SumMayNotRunOverAnOutputVariable) {
  IndexVar i("i");
  TensorVar x("x", {3}), y("y", {3});
  EXPECT_NE(errorOf([&] { x(i) = sum(i, y(i)); }).find("sum over i"), std::string::npos);
}

TEST(IndexValidation, UndefinedOperandsAreRejected) {
  IndexVar i("i");
  TensorVar x("x", {3});
  EXPECT_THROW(x(i) + IndexExpr(), std::invalid_argument);
  EXPECT_THROW(x(i) = IndexExpr(), std::invalid_argument);
  EXPECT_THROW(forall(i, IndexStmt()), std::invalid_argument);
  EXPECT_THROW(where(x(i) = 1, IndexStmt()), std::invalid_argument);
}

TEST(IndexValidation, BuiltinsCheckTheirArguments) {
  IndexVar i("i");
  TensorVar M("M", {3, 4}), S("S", {"N", "N"}), v("v", {3});
  EXPECT_NE(errorOf([&] { perm(M); }).find("square"), std::string::npos);
  EXPECT_NO_THROW(perm(S));
  EXPECT_THROW(perm(v), std::invalid_argument);
  EXPECT_THROW(call("perm", {v(i)}), std::invalid_argument);
  EXPECT_THROW(call("frobnicate", {v(i)}), std::invalid_argument);
  EXPECT_THROW(call("max", {v(i)}), std::invalid_argument);
  EXPECT_NO_THROW(call("max", {v(i), IndexExpr(0)}));
}

TEST(IndexValidation, RelationsNeedPositiveFactorsAndNewVariables) {
  IndexVar i("i"), i0("i0"), i1("i1");
  TensorVar x("x", {8});
  IndexStmt body = forall(i0, forall(i1, x(i) = 1));
  EXPECT_THROW(suchThat(body, {SplitRelation{i, i0, i1, 0}}), std::invalid_argument);
  EXPECT_THROW(suchThat(body, {SplitRelation{i, i, i1, 4}}), std::invalid_argument);
  EXPECT_THROW(forall(i, x(i) = 1, {ParallelUnit::NotParallel, OutputRaceStrategy::IgnoreRaces, -1}),
               std::invalid_argument);
}

TEST(IndexValidation, ExpressionTypesWiden) {
  IndexVar i("i");
  TensorVar f("f", {3}, Datatype::Float32), n("n", {3}, Datatype::Int32);
  EXPECT_EQ((n(i) * n(i)).type(), Datatype::Int32);
  EXPECT_EQ((n(i) * f(i)).type(), Datatype::Float32);
  EXPECT_EQ((f(i) * 2.0).type(), Datatype::Float64);
  EXPECT_EQ(call("sqrt", {n(i)}).type(), Datatype::Float64);
}

}  // namespace
}  // namespace tcc::ir
