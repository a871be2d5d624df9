// Programs of several statements where a later one reads an earlier one's
// output, each statement with its own index variables: a schedule command
// applies to the statement that has the variables it names.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

rt::Coo matrixOf(std::vector<int32_t> dims, std::initializer_list<std::pair<int32_t, int32_t>> coordinates) {
  rt::Coo coo = rt::Coo::ofShape(dims);
  double value = 0.5;
  for (auto [row, column] : coordinates) {
    int32_t c[2] = {row, column};
    coo.push(c, value += 0.75);
  }
  return coo;
}

const char* const kProductThenSum =
    "tensor Y(I, J) : csr\n"
    "tensor T(I, J) : csr\n"
    "tensor A(I, K) : csr\n"
    "tensor B(K, J) : csr\n"
    "tensor C(I, J) : dcsr\n"
    "T(i,j) = A(i,k) * B(k,j)\n"
    "Y(a,b) = T(a,b) + C(a,b)\n";

std::map<std::string, rt::Coo> productThenSumInputs() {
  return {{"A", matrixOf({4, 3}, {{0, 0}, {0, 2}, {2, 1}, {3, 2}})},
          {"B", matrixOf({3, 5}, {{0, 1}, {0, 4}, {1, 0}, {2, 1}, {2, 3}})},
          {"C", matrixOf({4, 5}, {{0, 1}, {1, 2}, {3, 0}})}};
}

// sparse_workspace(j) names the first statement's variable: the second
// statement was refused as if it should have had j.
TEST(ChainedStatements, ASparseWorkspaceOverOneStatementsVariableAppliesToThatStatement) {
  expectProgramMatchesReference(withSchedule(kProductThenSum, "sparse_workspace(j)"), productThenSumInputs());
  expectProgramMatchesReference(withSchedule(kProductThenSum, "sparse_workspace(b, policy = hash)"),
                                productThenSumInputs());
}

TEST(ChainedStatements, ASparseWorkspaceOverAVariableOfNoStatementIsStillRefused) {
  EXPECT_NE(errorOf(withSchedule(kProductThenSum, "sparse_workspace(z)")).find("unknown index variable 'z'"),
            std::string::npos)
      << errorOf(withSchedule(kProductThenSum, "sparse_workspace(z)"));
}

// dense_workspace() applies to the statements with indices; a scalar one
// among them refused the whole program ("a scalar result needs no
// workspace"), so did dense_workspace(j) naming a variable it sums over.
const char* const kProductThenNorm =
    "tensor T(I, J) : csr\n"
    "tensor A(I, K) : csr\n"
    "tensor B(K, J) : csr\n"
    "tensor s : dense\n"
    "T(i,j) = A(i,k) * B(k,j)\n"
    "s = T(a,j) * T(a,j)\n";

TEST(ChainedStatements, ADenseWorkspaceAppliesToTheStatementsWithIndices) {
  auto inputs = productThenSumInputs();
  inputs.erase("C");
  for (const char* command : {"dense_workspace()", "dense_workspace(j)"})
    expectProgramMatchesReference(withSchedule(kProductThenNorm, command), inputs);
}

TEST(ChainedStatements, ADenseWorkspaceForScalarsOnlyIsStillRefused) {
  const std::string program = "tensor A(I, K) : csr\ntensor s : dense\ntensor t : dense\n"
                              "s = A(i,k) * A(i,k)\nt = A(i,k) * 2\n";
  EXPECT_NE(errorOf(withSchedule(program, "dense_workspace()")).find("a scalar result needs no workspace"),
            std::string::npos)
      << errorOf(withSchedule(program, "dense_workspace()"));
}

}  // namespace
}  // namespace tcc::test
