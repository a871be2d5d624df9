// An output is computed in a format tcc can assemble and then stored in
// the format it is declared with. A unique singleton level holds one
// coordinate per parent: a result that fits is stored and read by later
// statements; one that does not is refused for those inputs with a
// tcc::Error naming the tensor (it escaped as std::invalid_argument).
#include <gtest/gtest.h>

#include <array>

#include "kernel_check.h"
#include "tcc/runtime/pack.h"

namespace tcc::test {
namespace {

const char* const kCopyIntoSingleton =
    "tensor D(I, J) : {dense, singleton}\n"
    "tensor A(I, J) : csr\n"
    "D(i,j) = A(i,j)\n";

rt::Coo matrixOf(std::vector<std::array<int32_t, 2>> coordinates) {
  rt::Coo coo = rt::Coo::ofShape({3, 4});
  double value = 1.5;
  for (auto& c : coordinates) coo.push(c.data(), value++);
  return coo;
}

TEST(DeclaredOutputFormats, AResultThatFitsAUniqueSingletonIsStoredThere) {
  expectProgramMatchesReference(kCopyIntoSingleton, {{"A", matrixOf({{0, 1}, {2, 3}})}});
}

TEST(DeclaredOutputFormats, AResultThatAUniqueSingletonCannotHoldIsRefusedNamingTheTensor) {
  Kernel kernel = compile(Program::fromText(kCopyIntoSingleton, "test.tc"));
  Tensor a = rt::pack(matrixOf({{0, 0}, {0, 1}}), rt::TensorFormat::csr(), rt::ValueType::Float64);
  try {
    kernel.run({{"A", a}});
    FAIL() << "two coordinates under one parent of D's singleton level were stored";
  } catch (const Error& refused) {
    EXPECT_NE(std::string(refused.what()).find("the result D cannot be stored in its declared format"),
              std::string::npos)
        << refused.what();
  }
}

// The stored intermediate is what a later statement reads.
TEST(DeclaredOutputFormats, AnIntermediateInAUniqueSingletonIsReadByTheNextStatement) {
  expectProgramMatchesReference(
      "tensor Y(I, J) : csr\n"
      "tensor D(I, J) : {compressed, singleton}\n"
      "tensor A(I, J) : csr\n"
      "tensor B(I, J) : csr\n"
      "D(i1,j1) = A(i1,j1)\n"
      "Y(i,j) = D(i,j) * B(i,j) + D(i,j)\n",
      {{"A", matrixOf({{0, 1}, {2, 3}})}, {"B", matrixOf({{0, 1}, {1, 1}, {2, 2}})}});
}

}  // namespace
}  // namespace tcc::test
