// Sums whose terms reduce over different variables into outputs that no
// one loop order can fill in place (`A(i,j) = B(i,k)*C(k,j) + D(i,j)` all
// CSR: the loops over A's indices cannot enclose the sum over k, which C
// stores above j). Each term inserts its components into one sparse (ISM)
// workspace in a loop nest of its own, and one compress stores the sum in
// A. Every case is compared with the dense reference.
#include <gtest/gtest.h>

#include "kernel_check.h"

namespace tcc::test {
namespace {

std::string replaced(std::string text, const std::map<std::string, std::string>& substitutions) {
  for (const auto& [key, value] : substitutions)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

std::string safeName(std::string text) {
  for (char& ch : text)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return text;
}

using Case = ProgramCase;

const char* kDeclarations = "tensor A(I, J) : @A\ntensor B(I, K) : csr\ntensor C(K, J) : csr\ntensor D(I, J) : @D\n"
                            "tensor G(J, J) : csr\ntensor E(J, I) : csr\ntensor x(J) : dense\n";

std::map<std::string, rt::Coo> inputsFor(const std::string& statement, uint64_t seed) {
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({23, 19}, 0.12, seed)},
                                           {"C", randomSparse({19, 31}, 0.1, seed + 1)},
                                           {"D", randomSparse({23, 31}, 0.15, seed + 2)}};
  if (contains(statement, "G(")) inputs.emplace("G", randomSparse({31, 31}, 0.08, seed + 3));
  if (contains(statement, "E(")) inputs.emplace("E", randomSparse({31, 23}, 0.1, seed + 4));
  if (contains(statement, "x(")) inputs.emplace("x", randomDense({31}, seed + 5));
  return inputs;
}

// The statements over the formats of D and of the output.
std::vector<Case> cases() {
  const std::vector<std::pair<std::string, std::string>> statements = {
    {"plus", "A(i, j) = B(i, k) * C(k, j) + D(i, j)"},
    {"minus", "A(i, j) = D(i, j) - B(i, k) * C(k, j)"},
    {"negated_product", "A(i, j) = -(B(i, k) * C(k, j)) - 2 * D(i, j)"},
    {"three_terms", "A(i, j) = B(i, k) * C(k, j) - D(i, j) + D(i, l) * G(l, j)"},
    {"transposed_term", "A(i, j) = B(i, k) * C(k, j) + E(j, i) * D(i, j)"},
    {"broadcast_term", "A(i, j) = B(i, k) * C(k, j) + D(i, j) * x(j) - D(i, l) * x(l)"},
  };
  const std::vector<std::string> outputs = {"csr", "dcsr", "coo", "csc", "dense"};
  const std::vector<std::string> dFormats = {"csr", "dcsr", "coo", "csc", "dense"};
  std::vector<Case> result;
  uint64_t seed = 7000;
  for (const auto& [label, statement] : statements)
    for (const auto& a : outputs)
      for (const auto& d : dFormats) {
        // The first statement in every pair of formats; the others in a diagonal of them.
        if (label != "plus" && a != d && !(a == "csr" || d == "dcsr")) continue;
        std::string program = replaced(std::string(kDeclarations) + statement + "\n", {{"@A", a}, {"@D", d}});
        result.push_back({label + "_A_" + safeName(a) + "_D_" + safeName(d), program, inputsFor(statement, seed += 10)});
      }
  return result;
}

class SumsOverDifferentVariables : public ::testing::TestWithParam<Case> {};

TEST_P(SumsOverDifferentVariables, MatchReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.program);
  expectProgramMatchesReference(c.program, c.inputs);
}

INSTANTIATE_TEST_SUITE_P(Structures, SumsOverDifferentVariables, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

const char* kPlus = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\ntensor D(I, J) : csr\n"
                    "A(i, j) = B(i, k) * C(k, j) + D(i, j)\n";

// The refusal it replaces, and what explain says instead.
TEST(SumsOverDifferentVariablesExplain, SaysWhyAndHow) {
  std::string decisions = decisionsOf(kPlus);
  EXPECT_TRUE(contains(decisions, "the terms reduce over different variables (B(i,k) * C(k,j) sums k, D(i,j) sums "
                                  "nothing)"))
    << decisions;
  EXPECT_TRUE(contains(decisions, "B(i,k) * C(k,j) over loops i, k, j; D(i,j) over loops i, j")) << decisions;
  EXPECT_TRUE(contains(decisions, "one compress stores it in A's order i, j")) << decisions;
}

// Where one loop order fits every term, the scalar temporary stays (no workspace).
TEST(SumsOverDifferentVariablesExplain, InPlaceWhereOneOrderFits) {
  std::string decisions = decisionsOf("tensor A(I, J) : csr\ntensor B(I, J, K) : csf\ntensor c(K) : dense\n"
                                      "tensor D(I, J) : csr\nA(i, j) = B(i, j, k) * c(k) + D(i, j)\n");
  EXPECT_FALSE(contains(decisions, "sparse workspace")) << decisions;
}

// sparse_workspace(...) picks the policy and options; every policy,
// pipelining and double buffering give the reference's result.
TEST(SumsOverDifferentVariablesCommand, EveryPolicyAndOption) {
  std::map<std::string, rt::Coo> inputs = inputsFor("", 7900);
  for (const char* policy : {"bucket", "hash", "coord", "map", "vector"})
    for (const char* pipeline : {"on", "off"})
      for (const char* doubleBuffer : {"on", "off"}) {
        std::string command = std::string("sparse_workspace(policy = ") + policy + ", pipeline = " + pipeline +
                              ", double_buffer = " + doubleBuffer + ", capacity = 8)";
        SCOPED_TRACE(command);
        std::string program = withSchedule(kPlus, command);
        expectProgramMatchesReference(program, inputs);
        EXPECT_TRUE(contains(decisionsOf(program), std::string("policy ") + policy + ": as the schedule asks"));
      }
  // Asked for where the scalar temporary would do: the workspace is used anyway.
  std::string fits = withSchedule("tensor A(I, J) : dcsr\ntensor B(I, J, K) : csf\ntensor c(K) : dense\n"
                                  "tensor D(I, J) : csr\nA(i, j) = B(i, j, k) * c(k) - D(i, j)\n",
                                  "sparse_workspace(policy = coord)");
  expectProgramMatchesReference(fits, {{"B", randomSparse({13, 11, 7}, 0.15, 7950)},
                                       {"c", randomDense({7}, 7951)},
                                       {"D", randomSparse({13, 11}, 0.3, 7952)}});
  EXPECT_TRUE(contains(decisionsOf(fits), "inserted sparse workspace ws_A")) << decisionsOf(fits);
}

// Other commands are refused with the reason, never compiled wrongly.
// Other commands schedule each term's loops (nested_sum_schedules_test.cpp);
// an order the sparse inputs cannot take is refused at the command.
TEST(SumsOverDifferentVariablesCommand, OtherCommandsScheduleEachTerm) {
  std::string message = errorOf(withSchedule(kPlus, "reorder(k, i, j)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: reorder(k, i, j): visits k outside i, but B stores i above k"))
      << message;
  message = errorOf(withSchedule(kPlus, "sparse_workspace(policy = heap)"));
  EXPECT_TRUE(contains(message, "test.tc:")) << message;
}

// Terms that read one input against its storage order, each in a loop nest
// of its own, read one copy: the kernel declares it once, for every nest.
TEST(SumsOverDifferentVariablesCopies, TwoTermsReadOneInputFromTheSameCopy) {
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({9, 11}, 0.3, 7960)},
                                           {"B", randomSparse({11, 9}, 0.3, 7961)},
                                           {"c", randomDense({5}, 7962)},
                                           {"D", randomSparse({9, 11, 5, 4}, 0.05, 7963)}};
  for (const char* output : {"dense", "csr"}) {
    std::string program = std::string("tensor Y(I, J) : ") + output +
                          "\ntensor A(I, J) : dcsr\ntensor B(J, I) : {compressed, dense}\ntensor c(K) : dense\n"
                          "tensor D(I, J, K, M) : {compressed, compressed, compressed, compressed}\n"
                          "Y(i,j) = A(i,j) * B(j,i) + D(i,j,k,m) * c(k) * B(j,i)\n";
    SCOPED_TRACE(program);
    expectProgramMatchesReference(program, inputs);
    EXPECT_TRUE(contains(decisionsOf(program), "B(j,i) is read from a copy B_by_i_j")) << decisionsOf(program);
  }
}

// Refusals of schedules that a copy stands in the way of name the user's
// tensor: its copy's name is the compiler's, and a pos cannot take it.
TEST(SumsOverDifferentVariablesCopies, RefusalsNameTheCopiedInput) {
  const std::string program = "tensor Y(I) : dense\ntensor A(I, K) : csr\ntensor C(I, L) : csr\n"
                              "tensor D(I, L, M) : {compressed, compressed, compressed} order (2,1,0)\n"
                              "Y(i) = A(i,k) - C(i,l) * D(i,l,m)\n";
  // (A split of m alone searches the copy's blocks, CoordinateBlocks.*;
  // one whose inner part is unrolled cannot.)
  std::string message = errorOf(withSchedule(program, "split(m, m0, m1, 2)\nunroll(m1, 2)"));
  EXPECT_TRUE(contains(message, "m is iterated by a sparse level of the copy of D in the loops' order")) << message;
  expectProgramMatchesReference(withSchedule(program, "split(m, m0, m1, 2)"),
                                {{"A", randomSparse({9, 7}, 0.3, 7971)},
                                 {"C", randomSparse({9, 6}, 0.4, 7972)},
                                 {"D", randomSparse({9, 6, 5}, 0.3, 7973)}});
  EXPECT_FALSE(contains(message, "_by_")) << message;
  message = errorOf(withSchedule(program, "reorder(m, l)"));
  EXPECT_TRUE(contains(message, "the copy of D in the loops' order stores l above m")) << message;
  EXPECT_FALSE(contains(message, "_by_")) << message;
}

// Real matrices: A = B*B + B and A = B*B^T - 3B on SuiteSparse inputs.
TEST(SumsOverDifferentVariablesReal, RealMatrices) {
  for (const char* name : {"bcsstk01.mtx", "west0497.mtx", "ash219.mtx"}) {
    SCOPED_TRACE(name);
    rt::Coo real = realMatrix(name);
    bool square = real.dims[0] == real.dims[1];
    if (square)
      expectProgramMatchesReference("tensor A(I, I) : csr\ntensor B(I, I) : csr\ntensor D(I, I) : dcsr\n"
                                    "A(i, j) = B(i, k) * B(k, j) + D(i, j)\n",
                                    {{"B", real}, {"D", real}});
    if (real.dims[0] > 300) continue;  // the dense reference is cubic
    expectProgramMatchesReference("tensor A(I, I) : dcsr\ntensor B(I, K) : csr\ntensor Bt(K, I) : csc\n"
                                  "tensor D(I, I) : csr\nA(i, j) = B(i, k) * Bt(k, j) - 3 * D(i, j)\n",
                                  {{"B", real}, {"Bt", transposed(real)}, {"D", randomSparse({real.dims[0], real.dims[0]}, 0.01, 7990)}});
  }
}

}  // namespace
}  // namespace tcc::test
