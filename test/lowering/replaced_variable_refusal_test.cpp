// A command naming a variable that an earlier split, divide, fuse, pos or
// bound replaced (or a derived variable where the statement's own is
// needed) is refused at that command, saying which earlier command did what
// and which loops stand now.
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "tcc/schedule.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

// Lines 1-4; the schedule's commands start at line 6.
const char* kSpmm = R"(tensor C(I, J) : dense
tensor A(I, K) : csr
tensor B(K, J) : dense
C(i, j) = A(i, k) * B(k, j)
)";

// pos over A's second level, then a split of the positions (lines 6 and 7).
const char* kPosThenSplit = "  pos(k, kp, A(i,k))\n  split(kp, kp0, kp1, 4)\n";

std::string spmmWith(const std::string& third) { return withSchedule(kSpmm, kPosThenSplit + ("  " + third)); }

TEST(ReplacedVariableRefusal, TheSplitPositionLoopNamesTheSplit) {
  std::string dsl = spmmWith("parallelize(kp, CPUThread, NoRaces)");
  frontend::Diagnostic refusal = refusalOf(dsl);
  EXPECT_EQ(refusal.location.line, 8);
  EXPECT_EQ(refusal.location.column, 3);
  EXPECT_EQ(refusal.message,
            "parallelize(kp, CPUThread, NoRaces): no loop over kp is left: kp was split into kp0 and kp1 by "
            "`split(kp, kp0, kp1, 4)` at line 7; the statement's loops are now i, kp0, kp1, j");
  std::string error = errorOf(dsl);
  EXPECT_TRUE(contains(error, "test.tc:8:3: error: parallelize(kp, CPUThread, NoRaces): no loop over kp is left"))
    << error;
  EXPECT_TRUE(contains(error, "\n  parallelize(kp, CPUThread, NoRaces)\n  ^")) << error;
}

// The statement's k went through two commands; both are told, in order.
TEST(ReplacedVariableRefusal, AVariableReplacedTwiceTellsBothCommands) {
  for (const std::string& command : {"reorder(i, k, j)", "split(k, k0, k1, 2)", "bound(k, kb, 4, MaxExact)"}) {
    SCOPED_TRACE(command);
    frontend::Diagnostic refusal = refusalOf(spmmWith(command));
    EXPECT_EQ(refusal.location.line, 8);
    EXPECT_EQ(refusal.message,
              command + ": no loop over k is left: k was replaced by kp, the positions of A(i,k), by "
              "`pos(k, kp, A(i,k))` at line 6, and kp was split into kp0 and kp1 by `split(kp, kp0, kp1, 4)` at "
              "line 7; the statement's loops are now i, kp0, kp1, j");
  }
}

TEST(ReplacedVariableRefusal, FusedLoopsNameTheFuse) {
  frontend::Diagnostic refusal = refusalOf(
    withSchedule(kSpmm, "  split(i, i0, i1, 2)\n  fuse(i0, i1, f)\n  unroll(i1, 2)"));
  EXPECT_EQ(refusal.location.line, 8);
  EXPECT_EQ(refusal.message,
            "unroll(i1, 2): no loop over i1 is left: i0 and i1 were fused into f by `fuse(i0, i1, f)` at line 7; "
            "the statement's loops are now f, k, j");
  refusal = refusalOf(withSchedule(kSpmm, "  divide(j, j0, j1, 3)\n  reorder(i, j, k)"));
  EXPECT_EQ(refusal.message,
            "reorder(i, j, k): no loop over j is left: j was divided into j0 and j1 by `divide(j, j0, j1, 3)` at "
            "line 6; the statement's loops are now i, k, j0, j1");
}

// precompute, bound and pos take a variable of the statement (or, for
// pos, a fused pair); a derived one is named with the commands behind it.
TEST(ReplacedVariableRefusal, ADerivedVariableWhereTheStatementsOwnIsNeeded) {
  frontend::Diagnostic refusal = refusalOf(spmmWith("precompute(A(i,k) * B(k,j), kp0, w)"));
  EXPECT_EQ(refusal.location.line, 8);
  EXPECT_EQ(refusal.message,
            "precompute(A(i,k) * B(k,j), kp0, w): kp0 is no variable of the statement but derived from k by "
            "`pos(k, kp, A(i,k))` at line 6 and `split(kp, kp0, kp1, 4)` at line 7; precompute takes one of the "
            "statement's own variables: i, j or k");
  refusal = refusalOf(spmmWith("dense_workspace(kp0)"));
  EXPECT_EQ(refusal.message,
            "dense_workspace(kp0): kp0 is no variable of the statement but derived from k by `pos(k, kp, A(i,k))` at "
            "line 6 and `split(kp, kp0, kp1, 4)` at line 7; dense_workspace takes one of the statement's own "
            "variables: i, j or k");
  refusal = refusalOf(withSchedule("tensor y(I) : dense\ntensor x(I) : sparse\ny(i) = x(i)\n",
                                   "  pos(i, ip, x(i))\n  precompute(x(i), ip, w)"));
  EXPECT_EQ(refusal.message,
            "precompute(x(i), ip, w): ip is no variable of the statement but derived from i by `pos(i, ip, x(i))` "
            "at line 5; precompute takes the statement's own variable i");
  refusal = refusalOf(spmmWith("bound(kp1, b, 4, MaxExact)"));
  EXPECT_EQ(refusal.message,
            "bound(kp1, b, 4, MaxExact): kp1 is no variable of the statement but derived from k by "
            "`pos(k, kp, A(i,k))` at line 6 and `split(kp, kp0, kp1, 4)` at line 7; bound takes one of the "
            "statement's own variables: i, j or k");
  refusal = refusalOf(spmmWith("pos(kp0, q, A(i,k))"));
  EXPECT_EQ(refusal.message,
            "pos(kp0, q, A(i,k)): kp0 is derived from k by `pos(k, kp, A(i,k))` at line 6 and "
            "`split(kp, kp0, kp1, 4)` at line 7; pos applies to a variable of the statement, or to the fusion of "
            "the access's first two levels");
}

// Terms summing over different variables are scheduled loop nest by loop
// nest (schedule_nested_sums.cpp); the refusals read the same.
TEST(ReplacedVariableRefusal, InAStatementWithSumsBelowItsTop) {
  const char* nested = R"(tensor Y(I) : dense
tensor A(I, L) : csr
tensor B(I) : sparse
Y(i) = A(i, l) - B(i)
)";
  frontend::Diagnostic refusal =
    refusalOf(withSchedule(nested, "  pos(l, lp, A(i,l))\n  split(lp, lp0, lp1, 2)\n  parallelize(lp, CPUThread, NoRaces)"));
  EXPECT_EQ(refusal.location.line, 8);
  EXPECT_EQ(refusal.message,
            "parallelize(lp, CPUThread, NoRaces): no loop over lp is left: lp was split into lp0 and lp1 by "
            "`split(lp, lp0, lp1, 2)` at line 7; the statement's loops are now i, lp0, lp1");
  refusal = refusalOf(withSchedule(nested, "  pos(l, lp, A(i,l))\n  precompute(A(i,l), lp, w)"));
  EXPECT_EQ(refusal.location.line, 7);
  EXPECT_EQ(refusal.message,
            "precompute(A(i,l), lp, w): lp is no variable of the statement but derived from l by "
            "`pos(l, lp, A(i,l))` at line 6; precompute takes one of the statement's own variables: i or l");
}

// A schedule from the C++ builder has no lines: the command alone.
TEST(ReplacedVariableRefusal, ABuilderScheduleNamesTheCommandWithoutALine) {
  ir::IndexVar i("i"), j("j"), i0("i0"), i1("i1");
  TensorVar y("y", {"I"}, Format::denseOfOrder(1)), A("A", {"I", "J"}, Format::csr()),
      x("x", {"J"}, Format::denseOfOrder(1));
  Schedule schedule;
  schedule.split(i, i0, i1, 8).parallelize(i, ParallelUnit::CPUThread, OutputRaceStrategy::NoRaces);
  std::string message;
  try {
    compile(Program::fromStatements({y(i) = A(i, j) * x(j)}, {y, A, x}, schedule));
  } catch (const std::exception& error) {
    message = error.what();
  }
  EXPECT_TRUE(contains(message, "parallelize(i, CPUThread, NoRaces): no loop over i is left: i was split into i0 "
                                "and i1 by `split(i, i0, i1, 8)`; the statement's loops are now i0, i1, j"))
    << message;
}

}  // namespace
}  // namespace tcc::test
