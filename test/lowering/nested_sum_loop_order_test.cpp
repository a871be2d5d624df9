// The loops over a dense output's indices around sums below the statement's
// top (each computed into a scalar temporary): the output may be filled in
// any order, so they take an order the sparse inputs' storage allows (the
// output's storage order where that fits), not the output's storage order
// alone, which a sparse input stored the other way round refused ("loop
// order visits j before the outer levels of B"). Every case is compared
// with the dense reference.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct Case {
  std::string name;
  std::string program;
  std::map<std::string, rt::Coo> inputs;
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

std::vector<Case> cases() {
  return {
      // Differential seed 7233001 (cuda target): a column-major output,
      // terms that each sum over k, B stored row by row.
      {"column_major_output_terms_summing_alike",
       "tensor Y(I, J) : {dense, dense} order (1,0)\ntensor A(I, J, K) : {dense, dense, dense}\n"
       "tensor B(I, J, K) : {dense, compressed, dense}\ntensor C(I, J, K) : {dense, dense, dense}\n"
       "tensor D(I, J, K) : {dense, dense, dense}\ntensor E(K) : {dense}\n"
       "Y(i,j) = B(i,j,k) * A(i,j,k) + (C(i,j,k) + D(i,j,k)) / E(k)\n",
       {{"A", randomDense({7, 9, 5}, 8101)},
        {"B", randomSparse({7, 9, 5}, 0.3, 8102)},
        {"C", randomDense({7, 9, 5}, 8103)},
        {"D", randomSparse({7, 9, 5}, 0.4, 8104)},
        {"E", randomDense({5}, 8105)}}},
      // Terms summing over different variables, column-major output.
      {"column_major_output_terms_summing_differently",
       "tensor Y(I, J) : {dense, dense} order (1,0)\ntensor A(I, J, M) : csf\ntensor B(I, J) : csr\n"
       "Y(i,j) = A(i,j,m) - B(i,j)\n",
       {{"A", randomSparse({8, 11, 6}, 0.12, 8111)}, {"B", randomSparse({8, 11}, 0.3, 8112)}}},
      // A sum under a product; D is read row by row around it.
      {"column_major_output_sum_under_a_product",
       "tensor Y(I, J) : {dense, dense} order (1,0)\ntensor D(I, J) : dcsr\ntensor B(I, M) : csr\n"
       "tensor x(M) : dense\nY(i,j) = D(i,j) * sum(m, B(i,m) * x(m))\n",
       {{"D", randomSparse({12, 10}, 0.25, 8121)},
        {"B", randomSparse({12, 9}, 0.3, 8122)},
        {"x", randomDense({9}, 8123)}}},
      // The output's indices written against its rows: Y(j,i) row-major
      // stores j above i, A stores i above j.
      {"permuted_output_sum_under_a_product",
       "tensor Y(J, I) : dense\ntensor A(I, J) : csr\ntensor C(I, M) : csr\n"
       "Y(j,i) = A(i,j) * sum(m, C(i,m)) + A(i,j)\n",
       {{"A", randomSparse({10, 13}, 0.2, 8131)}, {"C", randomSparse({10, 6}, 0.3, 8132)}}},
      // A sum at the top with another below it.
      {"column_major_output_sum_inside_a_sum",
       "tensor Y(I, J) : {dense, dense} order (1,0)\ntensor A(I, J, K) : csf\ntensor B(K, L) : csr\n"
       "Y(i,j) = sum(k, A(i,j,k) * sum(l, B(k,l)))\n",
       {{"A", randomSparse({6, 8, 7}, 0.15, 8141)}, {"B", randomSparse({7, 5}, 0.4, 8142)}}},
      // A CSF operand stores i above j above l, a CSC one l above i: no
      // order of the output's loops fits both, so each term fills the
      // workspace in a loop order of its own, as before.
      {"inputs_that_no_order_fits",
       "tensor Y(I, J, L) : {dense, dense, dense} order (2,1,0)\ntensor A(I, J, L, M) : csf\n"
       "tensor B(I, L) : csc\nY(i,j,l) = A(i,j,l,m) + B(i,l) * 2\n",
       {{"A", randomSparse({5, 6, 4, 3}, 0.1, 8151)}, {"B", randomSparse({5, 4}, 0.4, 8152)}}},
  };
}

class NestedSumLoopOrder : public ::testing::TestWithParam<Case> {};

TEST_P(NestedSumLoopOrder, MatchesReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.program);
  EXPECT_TRUE(codeMatchingReference(c.program, c.inputs).has_value());
}

INSTANTIATE_TEST_SUITE_P(Statements, NestedSumLoopOrder, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// The scheduled loops are the ones chosen: a reorder back to the output's
// storage order is refused at the command, naming the input that stands in
// the way, and a schedule over i outside j compiles.
TEST(NestedSumLoopOrderSchedules, CommandsSeeTheChosenOrder) {
  const std::string program = "tensor Y(I, J) : {dense, dense} order (1,0)\ntensor D(I, J) : csr\n"
                              "tensor B(I, M) : csr\ntensor x(M) : dense\n"
                              "Y(i,j) = D(i,j) * sum(m, B(i,m) * x(m))\n";
  std::map<std::string, rt::Coo> inputs = {{"D", randomSparse({12, 10}, 0.25, 8161)},
                                           {"B", randomSparse({12, 9}, 0.3, 8162)},
                                           {"x", randomDense({9}, 8163)}};
  std::string message = errorOf(withSchedule(program, "reorder(j, i)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: reorder(j, i): visits j outside i, but D stores i above j"))
      << message;
  for (const char* schedule : {"split(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)",
                               "pos(j, jp, D(i,j))\nsplit(jp, jp0, jp1, 2)"}) {
    SCOPED_TRACE(schedule);
    EXPECT_TRUE(codeMatchingReference(withSchedule(program, schedule), inputs).has_value());
  }
}

}  // namespace
}  // namespace tcc::test
