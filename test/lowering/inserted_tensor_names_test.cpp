// The tensors tcc inserts into a program (dense workspaces w_Y, sparse
// workspaces ws_Y, copies of inputs in the loops' order X_by_...) take
// names no tensor of the program has: a user's tensor named exactly like
// one, read beside it or written by another statement, keeps its name and
// its values, and explain tells the two apart (the inserted one becomes
// w_Y_2, ws_Y_2). Dense copies of N:M operands (X_dense) are checked in
// test/nm_spmm.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct Case {
  std::string name, dsl;
  std::string decision;  // a decision that names the inserted tensor
  std::map<std::string, rt::Coo> inputs;
};

void expectComputedAsWritten(const Case& each) {
  SCOPED_TRACE(each.name + "\n" + each.dsl);
  std::string decisions = decisionsOf(each.dsl);
  EXPECT_TRUE(contains(decisions, each.decision)) << decisions;
  expectProgramMatchesReference(each.dsl, each.inputs);
}

const char* kRowWise = "tensor A(I, J) : csr\ntensor B(I, K) : csr\n";

TEST(InsertedTensorNames, APrecomputesWorkspaceBesideAUserTensorNamedLikeIt) {
  const std::string mttkrp = "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\n"
                             "tensor w_A(L, J) : dense\nA(i, j) = B(i, k, l) * w_A(l, j) * C(k, j)\n";
  const std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({13, 11, 9}, 0.15, 9500)},
                                                 {"C", randomDense({11, 7}, 9501)},
                                                 {"w_A", randomDense({9, 7}, 9502)}};
  const std::string precompute = "precompute(B(i, k, l) * w_A(l, j), j, j)";
  for (const auto& each : std::vector<Case>{
           {"precompute", withSchedule(mttkrp, precompute),
            "precompute B(i,k,l) * w_A(l,j) into dense workspace w_A_2(j) inside the loops over i, k", inputs},
           {"precompute on threads", withSchedule(mttkrp, precompute + "\nparallelize(i, CPUThread, NoRaces)"),
            "each thread fills its own copy of the workspace w_A_2", inputs},
           // dense_workspace of a statement whose sum is nested.
           {"dense_workspace",
            withSchedule("tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor w_y(I) : dense\n"
                         "y(i) = A(i,j) * x(j) + 2 * w_y(i)\n",
                         "dense_workspace(i)"),
            "dense_workspace(i): the whole right-hand side into dense workspace w_y_2(i)",
            {{"A", randomSparse({23, 19}, 0.2, 9503)},
             {"x", randomDense({19}, 9504)},
             {"w_y", randomDense({23}, 9505)}}},
       })
    expectComputedAsWritten(each);
}

TEST(InsertedTensorNames, AGustavsonWorkspaceBesideAUserTensorNamedLikeIt) {
  const std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({29, 23}, 0.15, 9510)},
                                                 {"C", randomSparse({23, 31}, 0.15, 9511)},
                                                 {"w_A", randomSparse({23, 31}, 0.15, 9512)}};
  const std::string read = std::string(kRowWise) + "tensor w_A(K, J) : csr\nA(i,j) = B(i,k) * w_A(k,j)\n";
  // The user's w_A written by a statement of its own, then read.
  const std::string written = std::string(kRowWise) + "tensor C(K, J) : csr\ntensor w_A(K, J) : csr\n"
                              "w_A(k,j) = 2 * C(k,j)\nA(i,j) = B(i,k) * w_A(k,j)\n";
  for (const auto& each : std::vector<Case>{
           {"read", read, "inserted dense workspace w_A_2(j) with a list of touched coordinates", declaredInputs(read, inputs)},
           {"read, on threads", withSchedule(read, "parallelize(i, CPUThread, NoRaces)"),
            "inserted dense workspace w_A_2(j)", declaredInputs(read, inputs)},
           {"written", written, "inserted dense workspace w_A_2(j)", {{"B", inputs.at("B")}, {"C", inputs.at("C")}}},
       })
    expectComputedAsWritten(each);
}

TEST(InsertedTensorNames, SparseWorkspacesBesideAUserTensorNamedLikeThem) {
  const std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({29, 23}, 0.15, 9520)},
                                                 {"C", randomSparse({23, 31}, 0.15, 9521)},
                                                 {"D", randomSparse({29, 31}, 0.15, 9522)},
                                                 {"ws_A", randomSparse({23, 31}, 0.15, 9523)},
                                                 {"w_A", randomSparse({29, 31}, 0.15, 9524)},
                                                 {"ws_A_2", randomSparse({29, 31}, 0.15, 9525)}};
  const std::map<std::string, rt::Coo> vectorInputs = {{"B", randomSparse({29, 23}, 0.15, 9526)},
                                                       {"C", randomSparse({23, 31}, 0.15, 9527)},
                                                       {"ws_A", randomDense({31}, 9528)}};
  const std::string outer = "tensor A(I, J) : csr\ntensor B(I, K) : dcsc\ntensor ws_A(K, J) : dcsr\n"
                            "A(i,j) = B(i,k) * ws_A(k,j)\n";
  const std::string scaled = std::string(kRowWise) + "tensor C(K, J) : csr\ntensor ws_A(J) : dense\n"
                             "A(i,j) = B(i,k) * C(k,j) * ws_A(j)\n";
  const std::string dcsr = "tensor A(I, J) : dcsr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                           "tensor ws_A(J) : dense\nA(i,j) = B(i,k) * C(k,j) * ws_A(j)\n";
  // Terms that sum over different variables, and the user's tensors named
  // like the workspace and like its first other name.
  const std::string terms = "tensor A(I, J) : csr\ntensor B(I, K) : dcsc\ntensor ws_A(K, J) : dcsr\n"
                            "tensor w_A(I, J) : csr\ntensor ws_A_2(I, J) : csr\n"
                            "A(i,j) = B(i,k) * ws_A(k,j) + w_A(i,j) - ws_A_2(i,j)\n";
  // The user's ws_A written by a statement of its own.
  const std::string written = "tensor A(I, J) : csr\ntensor B(I, K) : dcsc\ntensor C(K, J) : dcsr\n"
                              "tensor D(I, J) : csr\ntensor ws_A(I, J) : csr\n"
                              "ws_A(i,j) = 2 * D(i,j)\nA(i,j) = B(i,k) * C(k,j) + ws_A(i,j)\n";
  for (const auto& each : std::vector<Case>{
           {"scattering", outer, "inserted sparse workspace ws_A_2 of order 2", declaredInputs(outer, inputs)},
           {"hoisted", withSchedule(scaled, "sparse_workspace(j)"), "inserted sparse workspace ws_A_2 of order 1 over j",
            vectorInputs},
           // (Under NoRaces the ranges of i append A through Gustavson's
           // dense workspace, no sparse one.)
           {"one per thread", withSchedule(dcsr, "parallelize(i, CPUThread, Workspace)"),
            "inserted sparse workspace ws_A_2 of order 2", vectorInputs},
           {"terms", terms, "inserted sparse workspace ws_A_3 of order 2", declaredInputs(terms, inputs)},
           {"written", written, "inserted sparse workspace ws_A_2 of order 2",
            {{"B", inputs.at("B")}, {"C", inputs.at("C")}, {"D", inputs.at("D")}}},
       })
    expectComputedAsWritten(each);
}

// Every tensor the kernels take has a name of its own, and a copy never
// takes the name of a tensor of the program (the cuda host looks tensors
// up by name, across statements).
TEST(InsertedTensorNames, NoParameterSharesANameWithAnotherTensor) {
  const std::string dsl = "tensor Y(I, J) : dense\ntensor Z(I, J) : dense\ntensor A(I, J) : csr\n"
                          "tensor B(I, J) : csc\ntensor B_by_i_j(I, J) : csr\n"
                          "Y(i,j) = A(i,j) * B(i,j)\nZ(i,j) = 2 * B_by_i_j(i,j)\n";
  Program program = Program::fromText(dsl, "test.tc");
  Lowered lowered = lowerProgram(program);
  std::set<std::string> declared;
  for (const auto& tensor : program.tensors()) declared.insert(tensor.name());
  for (const auto& statement : lowered.statements) {
    std::set<std::string> names;
    for (const auto& parameter : statement.parameters) EXPECT_TRUE(names.insert(parameter.name()).second) << parameter.name();
    for (const auto& [input, copy] : statement.convertedInputs) EXPECT_FALSE(declared.count(copy.name())) << copy.name();
  }
}

}  // namespace
}  // namespace tcc::test
