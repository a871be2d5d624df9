// Refusals that involve a workspace tcc inserted (named w_Y or ws_Y inside,
// names the user never wrote) say what it is for: "the sparse workspace tcc
// inserted for Y", or the command that asked for it; a workspace the user
// declared keeps its name. Each refusal stays located at its command.
// (Inside, a workspace is w_Y_2 or ws_Y_2 where the program has a w_Y or
// ws_Y of its own.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_check.h"

namespace tcc::test {
namespace {

const char* kRowWiseSpgemm = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n";

TEST(WorkspaceRefusals, NameTheWorkspaceByWhatItIsFor) {
  struct Case {
    std::string program, schedule, message;
  };
  const std::vector<Case> cases = {
      // The terms fill one sparse workspace, whose inserts are calls.
      {std::string(kRowWiseSpgemm) + "tensor D(I, J) : csr\nA(i,j) = B(i,k) * C(k,j) + D(i,j)\n",
       "parallelize(i, CPUVector, NoRaces)",
       "inserting into the sparse workspace tcc inserted for A is a call, which vector lanes cannot share; run "
       "this loop on CPUThread instead"},
      {std::string(kRowWiseSpgemm) + "tensor D(I, J) : csr\nA(i,j) = B(i,k) * C(k,j) + D(i,j)\n",
       "sparse_workspace(policy = hash)\nparallelize(i, CPUVector, NoRaces)",
       "inserting into the sparse workspace that sparse_workspace(policy = hash) asks for is a call"},
      // Gustavson's dense row with its list of touched coordinates.
      {std::string(kRowWiseSpgemm) + "A(i,j) = B(i,k) * C(k,j)\n", "parallelize(k, CPUThread, NoRaces)",
       "the dense workspace tcc inserted for A keeps one list of the coordinates written so far, which this "
       "loop's iterations would all append to; parallelize a loop around both the loops that fill it and those "
       "that copy it into the output"},
      {"tensor A(I, J) : dense\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n",
       "dense_workspace(j)\nparallelize(k, CPUThread, NoRaces)",
       "k is summed into the dense workspace that dense_workspace(j) asks for, so iterations race on its entries"},
      // The user's own workspace keeps its name.
      {std::string(kRowWiseSpgemm) + "tensor W(I, J) : sparse_workspace(policy = coord)\nA(i,j) = B(i,k) * C(k,j)\n",
       "precompute(B(i,k) * C(k,j), {i, j}, {i, j}, W)\nparallelize(i, CPUVector, NoRaces)",
       "inserting into workspace W is a call"},
  };
  for (const auto& each : cases) {
    expectRefusedAtLastCommand(each.program, each.schedule, each.message);
    frontend::Diagnostic refusal = refusalOf(withSchedule(each.program, each.schedule));
    EXPECT_FALSE(contains(refusal.message, "w_") || contains(refusal.message, "ws_")) << refusal.format();
  }
  // The terms where C has no entry run after the thread loop; refused at
  // the pos that leaves them there, the schedule's first command.
  frontend::Diagnostic refusal =
      refusalOf(withSchedule("tensor Y(8, 4) : {compressed, dense}\ntensor B(4, 8) : csr\ntensor C(4, 8) : csr\n"
                             "Y(k,i) = B(i,k) + C(i,k)\n",
                             "pos(k, kp, C(i,k))\ndivide(kp, kp0, kp1, 7)\nparallelize(kp0, CPUThread, NoRaces)"));
  EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", 6, 1})) << refusal.format();
  EXPECT_EQ(refusal.message.rfind("pos(k, kp, C(i,k)): the expression has terms where C has no entry (a sum), which "
                                  "a second loop after the thread loop computes; outside the thread loop no thread's "
                                  "copy of the sparse workspace tcc inserted for Y is there to insert into", 0), 0u)
      << refusal.message;
  EXPECT_FALSE(contains(refusal.message, "ws_")) << refusal.message;
}

}  // namespace
}  // namespace tcc::test
