// Kernel::entryPoint: a statement's compiled function called on ABI views
// the caller binds gives what Kernel::run gives; bad requests are errors.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_check.h"
#include "tcc/runtime/pack.h"

namespace tcc::test {
namespace {

TEST(KernelEntryPoint, CalledOnBoundViewsItComputesWhatRunComputes) {
  Kernel kernel = compile(Program::fromText(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n", "spmv.tc"));
  rt::Coo a = realMatrix("bcsstk01.mtx");
  Tensor A = rt::pack(a, rt::TensorFormat::csr());
  Tensor x = rt::pack(rt::randomUniform({a.dims[1]}, 1.0, 31), rt::TensorFormat::dense(1));
  std::vector<double> expected = rt::toDense(kernel.run({{"A", A}, {"x", x}}).at("y"));

  Tensor y({a.dims[0]}, rt::TensorFormat::dense(1));
  tcc_tensor views[3] = {y.abiView(), A.abiView(), x.abiView()};
  tcc_tensor* pointers[3] = {&views[0], &views[1], &views[2]};
  const auto& parameters = kernel.lowered().statements.at(0).parameters;
  ASSERT_EQ(parameters.size(), 3u);
  ASSERT_EQ(parameters[0].name() + parameters[1].name() + parameters[2].name(), "yAx");
  ASSERT_EQ(kernel.entryPoint(0)(pointers), 0);
  EXPECT_EQ(rt::toDense(y), expected);

  EXPECT_THROW(kernel.entryPoint(1), Error);
}

// Kernel::run reads inputs that already have their declared format where
// they are, converts the others, and gives back only the outputs.
TEST(KernelRun, ReadsInputsInPlaceOrConvertedAndReturnsOnlyOutputs) {
  Kernel kernel = compile(Program::fromText(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n", "spmv.tc"));
  rt::Coo a = realMatrix("bcsstk01.mtx");
  std::vector<double> dense = rt::toDense(rt::pack(a, rt::TensorFormat::dense(2)));
  Tensor x = rt::pack(rt::randomUniform({a.dims[1]}, 1.0, 37), rt::TensorFormat::dense(1));
  std::vector<double> xs = rt::toDense(x), expected(a.dims[0], 0.0);
  for (int32_t i = 0; i < a.dims[0]; ++i)
    for (int32_t j = 0; j < a.dims[1]; ++j) expected[i] += dense[size_t(i) * a.dims[1] + j] * xs[j];

  for (const rt::TensorFormat& format : {rt::TensorFormat::csr(), rt::TensorFormat::csc()}) {
    SCOPED_TRACE(format.toString());
    Tensor A = rt::pack(a, format);
    RunResult result = kernel.run({{"A", A}, {"x", x}}, RunOptions{});
    ASSERT_EQ(result.tensors.size(), 1u);
    std::vector<double> y = rt::toDense(result.tensors.at("y"));
    ASSERT_EQ(y.size(), expected.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-9 * (1 + std::abs(expected[i])));
    EXPECT_EQ(rt::toDense(A), dense);  // inputs are left as they were
  }
}

}  // namespace
}  // namespace tcc::test
