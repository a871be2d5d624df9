// Every scheduling command alone and in compositions, against the dense
// reference; and the refusals of illegal schedules, naming the command.
#include <gtest/gtest.h>

#include <optional>

#include "kernel_check.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/concretize_for_lowering.h"
#include "tcc/lowering/lower.h"

namespace tcc::test {
namespace {

const char* kSpmv = R"(
tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
y(i) = A(i, j) * x(j)
)";

const char* kSpmm = R"(
tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense
C(i,k) = A(i,j) * B(j,k)
)";

const char* kGemm = R"(
tensor C(I, J) : dense
tensor A(I, K) : dense
tensor B(K, J) : dense
C(i,j) = A(i,k) * B(k,j)
)";

const char* kSpgemm = R"(
tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
A(i,j) = B(i,k) * C(k,j)
)";


std::map<std::string, rt::Coo> spmvInputs(uint64_t seed) {
  return {{"A", randomSparse({97, 61}, 0.12, seed)}, {"x", randomDense({61}, seed + 1)}};
}
std::map<std::string, rt::Coo> spmmInputs(uint64_t seed) {
  return {{"A", randomSparse({45, 38}, 0.15, seed)}, {"B", randomDense({38, 13}, seed + 1)}};
}
std::map<std::string, rt::Coo> gemmInputs(uint64_t seed) {
  return {{"A", randomDense({11, 7}, seed)}, {"B", randomDense({7, 9}, seed + 1)}};
}
std::map<std::string, rt::Coo> spgemmInputs(uint64_t seed) {
  return {{"B", randomSparse({40, 33}, 0.1, seed)}, {"C", randomSparse({33, 37}, 0.1, seed + 1)}};
}

// ---- divide ----------------------------------------------------------------

TEST(Divide, RowsInEqualPartsMatchReference) {
  std::string code = expectProgramMatchesReference(
      withSchedule(kSpmv, "divide(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)"), spmvInputs(1));
  EXPECT_TRUE(contains(code, "#pragma omp parallel for")) << code;
}

TEST(Divide, MorePartsThanRowsMatchReference) {
  expectProgramMatchesReference(withSchedule(kGemm, "divide(i, i0, i1, 32)"), gemmInputs(3));
}

TEST(Divide, OfADenseReductionComposesWithReorder) {
  expectProgramMatchesReference(withSchedule(kGemm, "divide(k, k0, k1, 3)\nreorder(k0, i, j, k1)"), gemmInputs(5));
}

// The inner part of a divide of a split's inner loop, reordered outside the
// split's outer loop: it runs to the part of a full block, and in the last
// block (here 2 of 7 columns, parts of 1) a larger inner coordinate would
// visit the next part's columns again.
TEST(Divide, InnerPartOutsideTheSplitThatBoundsItsExtent) {
  expectProgramMatchesReference(withSchedule(kGemm, "split(k, k0, k1, 5)\ndivide(k1, k1o, k1i, 3)\nreorder(k1i, k0, k1o)"),
                                gemmInputs(6));
  // Over the positions of a row of A (its entries, of any number).
  expectProgramMatchesReference(
      withSchedule(kSpmm, "pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 7)\ndivide(jp1, jp1o, jp1i, 3)\nreorder(jp1i, jp0, jp1o)"),
      spmmInputs(7));
}

// ---- fuse -----------------------------------------------------------------

TEST(Fuse, DenseLoopsIntoOneParallelLoop) {
  std::string code = expectProgramMatchesReference(
      withSchedule(kGemm, "fuse(i, j, f)\nparallelize(f, CPUThread, NoRaces)"), gemmInputs(7));
  EXPECT_TRUE(contains(code, "#pragma omp parallel for")) << code;
}

TEST(Fuse, ThenSplitRecoversBothCoordinates) {
  expectProgramMatchesReference(withSchedule(kGemm, "fuse(i, j, f)\nsplit(f, f0, f1, 8)"), gemmInputs(9));
}

TEST(Fuse, AboveASparseLevel) {
  // i and k fused over a dense output, then A's row iterated inside.
  expectProgramMatchesReference(
      withSchedule(kSpmm, "reorder(i, k, j)\nfuse(i, k, f)\nparallelize(f, CPUThread, NoRaces)"), spmmInputs(11));
}

TEST(Fuse, OfSparseLevelsWithoutPosIsRefused) {
  std::string message = errorOf(withSchedule(kSpmv, "fuse(i, j, f)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: fuse(i, j, f): j is iterated by a compressed level of A")) << message;
}

TEST(Fuse, LoopsThatAreNotNestedAreRefused) {
  std::string message = errorOf(withSchedule(kGemm, "fuse(j, i, f)"));
  EXPECT_TRUE(contains(message, "fuse(j, i, f): i must be the loop directly inside j")) << message;
}

// A sparse output level at the outer part of a fused loop sees each of its
// coordinates on consecutive fused iterations (once per coordinate of the
// inner part): the append opens a position only when the coordinate (or
// its parent position) changes. Below the fused variables, or at a dense
// level, the output is assembled as in the loops it replaces.
const char* kCopy = R"(
tensor Y(I, J) : {FORMAT}
tensor A(I, J) : dense
Y(i,j) = A(i,j)
)";

std::string copyProgram(const std::string& format, const std::string& schedule) {
  std::string text = kCopy;
  text.replace(text.find("FORMAT"), 6, format);
  return withSchedule(text, schedule);
}

// Every sparse output format a fused loop can revisit, under every
// schedule that revisits, in every assembly mode.
TEST(Fuse, SparseOutputLevelAtTheOuterFusedVariableMatchesReference) {
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({7, 5}, 0.4, 67)}};
  for (const char* format :
       {"compressed, dense", "compressed, compressed", "compressed(nonunique), singleton", "dense, compressed"}) {
    for (const char* schedule : {"fuse(i, j, f)", "bound(i, ib, 9, MaxConstraint)\nfuse(ib, j, f)",
                                 "split(i, i0, i1, 2)\nfuse(i1, j, f)", "fuse(i, j, f)\nsplit(f, f0, f1, 3)",
                                 "fuse(i, j, f)\nassemble(Y, Append, true)",
                                 "split(i, i0, i1, 2)\nfuse(i1, j, f)\nsplit(f, f0, f1, 4)\nassemble(Y, Append, true)"}) {
      SCOPED_TRACE(std::string(format) + " / " + schedule);
      expectProgramMatchesReference(copyProgram(format, schedule), inputs);
    }
  }
}

// The revisited level is the last one, summed into: the visits after the
// first add to the position it opened.
TEST(Fuse, SumsIntoARevisitedLastLevelMatchReference) {
  const char* vector = R"(
tensor Y(I) : {compressed}
tensor A(I, J) : dense
Y(i) = A(i,j)
)";
  std::map<std::string, rt::Coo> matrix = {{"A", randomSparse({9, 4}, 0.3, 71)}};
  expectProgramMatchesReference(withSchedule(vector, "fuse(i, j, f)"), matrix);
  expectProgramMatchesReference(withSchedule(vector, "fuse(i, j, f)\nsplit(f, f0, f1, 3)"), matrix);
  expectProgramMatchesReference(withSchedule(vector, "fuse(i, j, f)\nassemble(Y, Append, true)"), matrix);
  const char* rows = R"(
tensor Y(I, J) : {dense, compressed}
tensor A(I, J, K) : dense
Y(i,j) = A(i,j,k)
)";
  std::map<std::string, rt::Coo> tensor = {{"A", randomSparse({6, 5, 3}, 0.2, 73)}};
  expectProgramMatchesReference(withSchedule(rows, "fuse(j, k, f)"), tensor);
  expectProgramMatchesReference(withSchedule(rows, "fuse(j, k, f)\nassemble(Y, Append, true)"), tensor);
  // Rows in parallel: each row counted, then filled, with its own cursor.
  std::string code = expectProgramMatchesReference(
      withSchedule(rows, "fuse(j, k, f)\nparallelize(i, CPUThread, NoRaces)"), tensor);
  EXPECT_TRUE(contains(code, "#pragma omp parallel for")) << code;
  // Two compressed levels revisited, one under the other.
  const char* doubly = R"(
tensor Y(I, J) : {compressed, compressed}
tensor A(I, J, K) : dense
Y(i,j) = A(i,j,k)
)";
  expectProgramMatchesReference(withSchedule(doubly, "fuse(i, j, f)\nfuse(f, k, g)"), tensor);
  expectProgramMatchesReference(withSchedule(doubly, "fuse(i, j, f)\nfuse(f, k, g)\nassemble(Y, Append, true)"),
                                tensor);
  // One column: consecutive rows revisit the same coordinate of level 2
  // under different parents, which must not merge.
  std::map<std::string, rt::Coo> column = {{"A", randomSparse({6, 1, 3}, 0.6, 75)}};
  expectProgramMatchesReference(withSchedule(doubly, "fuse(i, j, f)\nfuse(f, k, g)"), column);
  expectProgramMatchesReference(withSchedule(rows, "fuse(i, j, f)\nfuse(f, k, g)"), column);
}

TEST(Fuse, CsfOutputLevelsRevisitedMatchReference) {
  const char* csf = R"(
tensor Y(I, J, K) : csf
tensor A(I, J, K) : dense
Y(i,j,k) = A(i,j,k)
)";
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({4, 5, 3}, 0.3, 79)}};
  for (const char* schedule : {"fuse(j, k, f)", "fuse(i, j, f)\nfuse(f, k, g)", "fuse(i, j, f)",
                               "fuse(i, j, f)\nfuse(f, k, g)\nsplit(g, g0, g1, 4)\nassemble(Y, Append, true)"}) {
    SCOPED_TRACE(schedule);
    expectProgramMatchesReference(withSchedule(csf, schedule), inputs);
  }
}

// pos over the fused levels of a sparse operand: rows of A without entries
// leave no row in Y, and each row of Y is opened once.
TEST(Fuse, FusedPositionsIntoSparseOutputsMatchReference) {
  const char* product = R"(
tensor Y(I, J) : {FORMAT}
tensor A(I, J) : dcsr
tensor B(I, J) : dense
Y(i,j) = A(i,j) * B(i,j)
)";
  const char* sums = R"(
tensor Y(I) : {compressed}
tensor A(I, J) : dcsr
Y(i) = A(i,j)
)";
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({9, 6}, 0.25, 83)}, {"B", randomDense({9, 6}, 84)}};
  for (const char* format : {"compressed, compressed", "dense, compressed"}) {
    std::string text = product;
    text.replace(text.find("FORMAT"), 6, format);
    expectProgramMatchesReference(withSchedule(text, "fuse(i, j, f)\npos(f, fp, A(i,j))"), inputs);
    expectProgramMatchesReference(withSchedule(text, "fuse(i, j, f)\npos(f, fp, A(i,j))\nassemble(Y, Append, true)"),
                                  inputs);
  }
  expectProgramMatchesReference(withSchedule(sums, "fuse(i, j, f)\npos(f, fp, A(i,j))\nsplit(fp, fp0, fp1, 4)"),
                                {{"A", inputs.at("A")}});
}

// Loops that visit a sparse output level's coordinates out of order, or
// come back to one after others, cannot append it: refused, naming the
// command that made them.
TEST(Fuse, SparseOutputLevelsVisitedOutOfOrderAreRefused) {
  struct Case {
    const char* format;
    const char* schedule;
    const char* command;
  };
  for (const Case& refused : {
           Case{"compressed, compressed", "split(i, i0, i1, 2)\nreorder(i1, i0, j)", "split(i, i0, i1, 2)"},
           Case{"dense, compressed", "split(i, i0, i1, 2)\nreorder(i1, i0, j)", "split(i, i0, i1, 2)"},
           Case{"compressed, dense", "reorder(j, i)\nfuse(j, i, f)", "fuse(j, i, f)"},
           Case{"compressed, compressed", "fuse(i, j, f)\nsplit(f, f0, f1, 3)\nreorder(f1, f0)", "fuse(i, j, f)"},
       }) {
    SCOPED_TRACE(std::string(refused.format) + " / " + refused.schedule);
    std::string message = errorOf(copyProgram(refused.format, refused.schedule));
    EXPECT_TRUE(contains(message, "test.tc:")) << message;
    EXPECT_TRUE(contains(message, std::string("error: ") + refused.command + ": the loops (")) << message;
    EXPECT_TRUE(contains(message, "out of order, or return to one after visiting others")) << message;
  }
  // A loop of one iteration is in order wherever it is.
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({7, 5}, 0.4, 89)}};
  for (const char* schedule : {"split(i, i0, i1, 1)\nreorder(i1, i0, j)", "divide(i, i0, i1, 1)\nreorder(i1, i0, j)",
                               "split(i, i0, i1, 1)\nreorder(i1, i0, j)\nfuse(i0, j, f)"}) {
    SCOPED_TRACE(schedule);
    expectProgramMatchesReference(copyProgram("compressed, compressed", schedule), inputs);
  }
  // Rows assembled in parallel need each row visited once.
  std::string message = errorOf(
      copyProgram("dense, compressed", "split(i, i0, i1, 2)\nfuse(i1, j, f)\nparallelize(i0, CPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:")) << message;
  EXPECT_TRUE(contains(message, "parallelize(i0, CPUThread, NoRaces): the loops from f on visit each row of Y on "
                                "several iterations")) << message;
}

// A precompute of one operand where the loops sum between a sparse
// output's coordinates (A is CSC: the loops run j, i) takes the place of
// the workspace that would take them out of order: refused at the
// precompute, file:line:col and a caret, with advice that compiles
// (dropping it; a precompute of the whole right-hand side is that
// workspace, and compiles too).
const char* kPrecomputeUnderASum = R"(tensor Y(I) : {compressed}
tensor A(I, J) : csc
tensor B(I) : dense
tensor C(J) : dense
Y(i) = 0.5 * B(i) * C(j) * A(i,j)
schedule {
  PRECOMPUTE
}
)";

std::string precomputeUnderASum(const std::string& command) {
  std::string text = kPrecomputeUnderASum;
  return text.replace(text.find("PRECOMPUTE"), 10, command);
}

TEST(Precompute, ThatLeavesASparseOutputOutOfOrderIsRefusedAtTheCommand) {
  try {
    compile(Program::fromText(precomputeUnderASum("precompute(A(i,j), i, iw)"), "test.tc"));
    FAIL() << "the precompute compiled";
  } catch (const frontend::DiagnosticError& error) {
    ASSERT_EQ(error.diagnostics().size(), 1u);
    const frontend::Diagnostic& refusal = error.diagnostics()[0];
    EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", 7, 3}));
    EXPECT_EQ(refusal.message.rfind("precompute(A(i,j), i, iw): the loops (j, i) visit the coordinates of Y's level 1 "
                                    "(compressed, indexed by i)", 0), 0u) << refusal.message;
    EXPECT_TRUE(contains(refusal.message, "drop it (tcc then inserts the workspace)")) << refusal.message;
    EXPECT_EQ(refusal.format().rfind("test.tc:7:3: error: precompute(A(i,j), i, iw): ", 0), 0u) << refusal.format();
    EXPECT_TRUE(contains(refusal.format(), "\n  precompute(A(i,j), i, iw)\n  ^\n")) << refusal.format();
  }
  // What the message offers instead compiles and matches.
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({9, 7}, 0.3, 91)},
                                           {"B", randomDense({9}, 92)},
                                           {"C", randomDense({7}, 93)}};
  expectProgramMatchesReference(precomputeUnderASum(""), inputs);
  expectProgramMatchesReference(precomputeUnderASum("precompute(0.5 * B(i) * C(j) * A(i,j), i, iw)"), inputs);
}

// A precompute whose workspace sums its expression over a variable only it
// has (k) is the statement's sum only where each term is a multiple of the
// expression: A(i,k) * A(i,k) summed first would be (sum A)^2. Elsewhere
// it is refused at the command; where the term is a multiple, or the whole
// term is precomputed, the kernel matches the reference.
TEST(Precompute, SummedInItsWorkspaceOnlyWhereItsTermIsAMultipleOfIt) {
  auto statement = [](const std::string& rhs) {
    return "tensor Y(I) : dense\ntensor A(I, K) : {dense, compressed}\ntensor B(I) : dense\nY(i) = " + rhs + "\n";
  };
  auto program = [&](const std::string& rhs, const std::string& expr) {
    return withSchedule(statement(rhs), "precompute(" + expr + ", i, iw)");
  };
  for (const char* rhs : {"A(i,k) * A(i,k)", "B(i) / A(i,k)", "(A(i,k) + 2) * B(i)", "(A(i,k) - B(i)) / 2",
                          "max(A(i,k), B(i))", "-(A(i,k) * A(i,k)) * 3"})
    expectRefusedAtLastCommand(statement(rhs), "precompute(A(i,k), i, iw)",
                               "the workspace would sum A(i,k) over k, but the statement sums the term ");
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({9, 7}, 0.5, 94)}, {"B", randomDense({9}, 95)}};
  for (const char* rhs : {"A(i,k) * A(i,k)", "(A(i,k) + 2) * B(i)"}) {
    SCOPED_TRACE(rhs);
    expectProgramMatchesReference(program(rhs, rhs), inputs);
  }
  for (const char* rhs : {"B(i) * A(i,k) * 3", "A(i,k) / B(i)", "-A(i,k)", "(A(i,k) + A(i,k)) * B(i)"}) {
    SCOPED_TRACE(rhs);
    expectProgramMatchesReference(program(rhs, "A(i,k)"), inputs);
  }
}

// A statement refused as a whole (no command made the refusal) is located
// at the statement; the C++ builder's programs have no source to point at.
TEST(Refusals, OfAStatementAreLocatedAtIt) {
  const std::string halves = "tensor y(I) : dense of float16\ntensor A(I, I) : csr\n\n  y(i) = A(i,j) * 2\n";
  try {
    compile(Program::fromText(halves, "test.tc"));
    FAIL() << "a float16 output compiled";
  } catch (const frontend::DiagnosticError& error) {
    ASSERT_EQ(error.diagnostics().size(), 1u);
    EXPECT_EQ(error.diagnostics()[0].location, (frontend::SourceLocation{"test.tc", 4, 3}));
    EXPECT_EQ(std::string(error.what()),
              "test.tc:4:3: error: cannot compile `y(i) = A(i,j) * 2`: output y is float16, which tcc reads but does "
              "not compute into: declare it float32 (float16 inputs are read as float32, exactly)\n"
              "  y(i) = A(i,j) * 2\n  ^\n");
  }
  IndexVar i("i"), j("j");
  TensorVar y("y", {"I"}, Format::denseOfOrder(1), ir::Datatype::Float16), A("A", {"I", "I"}, Format::csr());
  try {
    compile(Program::fromStatements({y(i) = A(i, j) * 2}, {y, A}));
    FAIL() << "a float16 output compiled";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("cannot compile `y(i) = A(i,j) * 2`: output y is float16", 0), 0u)
        << error.what();
  }
}

// Lowering names a command as it prints it and carries its index; the
// refusal is located at the command as written: spaced otherwise, a pos's
// position variable, a parallelize whose loop a later split replaced.
TEST(Refusals, FindTheCommandAsWritten) {
  frontend::Diagnostic split = refusalOf(copyProgram("compressed, compressed", "split(i,i0,i1,2)\nreorder(i1, i0, j)"));
  EXPECT_EQ(split.location, (frontend::SourceLocation{"test.tc", 6, 1})) << split.format();
  EXPECT_EQ(split.message.rfind("split(i, i0, i1, 2): the loops (", 0), 0u) << split.message;

  const std::string product = "tensor Y(I) : dense\ntensor A(I, K) : csr\n"
                              "tensor B(I, K) : {dense, compressed(unordered)}\nY(i) = A(i,k) * B(i,k)\n";
  frontend::Diagnostic pos = refusalOf(withSchedule(product, "pos(k, kp, A(i, k))"));
  EXPECT_EQ(pos.location, (frontend::SourceLocation{"test.tc", 6, 1})) << pos.format();
  EXPECT_EQ(pos.message, "pos(k, kp, A(i,k)): B also stores k sparsely in an unordered level, which cannot be "
                         "searched for A's coordinates; store it ordered");

  const std::string rowSums = "tensor Y(I) : dense\ntensor A(I, K) : {compressed, dense}\nY(i) = A(i,k)\n";
  frontend::Diagnostic parallel =
      refusalOf(withSchedule(rowSums, "parallelize(k, CPUThread, NoRaces)\ndense_workspace()\nsplit(k, ko, ki, 3)"));
  EXPECT_EQ(parallel.location, (frontend::SourceLocation{"test.tc", 5, 1})) << parallel.format();
  EXPECT_EQ(parallel.message.rfind("parallelize(ko, CPUThread, NoRaces): ko is summed into", 0), 0u)
      << parallel.message;
  // Of two parallelize commands, the one whose variable the loop came from.
  frontend::Diagnostic outer = refusalOf(withSchedule(
      "tensor Y : dense\ntensor A(I, K) : {dense, compressed}\nY = A(i,k)\n",
      "parallelize(k, CPUThread, NoRaces)\nparallelize(i, CPUThread, NoRaces)\nsplit(i, io, ii, 2)"));
  EXPECT_EQ(outer.location, (frontend::SourceLocation{"test.tc", 6, 1})) << outer.format();
  EXPECT_EQ(outer.message.rfind("parallelize(io, CPUThread, NoRaces): io is summed into Y", 0), 0u) << outer.message;
}

// Refusals a schedule command causes, each at that command (file:line:col
// and a caret under it), not at the statement: a split or divide of a
// variable that a workspace's list or a copy in another order iterates
// sparsely, a fuse of a precompute's index (after it or before it), the
// same parallelize written twice, the Workspace race strategy on a scalar,
// a pos whose access keeps its storage order where the other inputs then
// cannot agree on one.
TEST(Refusals, ThatACommandCausesAreLocatedAtIt) {
  const std::string denseRows = "tensor Y(I) : dense\ntensor a : dense\ntensor B(I, J) : {dense, dense}\nY(i) = B(i,j) * a\n";
  // Refused at the schedule's last command.
  struct Case {
    std::string program, schedule, message;
  };
  const std::vector<Case> atTheLastCommand = {
      {denseRows, "dense_workspace(i)\nfuse(i, j, f)",
       "i indexes the workspace of the precompute before this command, which needs loops over i alone"},
      {denseRows, "fuse(i, j, f)\ndense_workspace(i)", "i is fused with another variable by an earlier command"},
      {denseRows, "fuse(i, j, f)\nprecompute(B(i,j) * a, i, i)", "i is fused with another variable by an earlier command"},
      {"tensor y : dense\ntensor A(I, J) : csr\ny = A(i,j)\n", "parallelize(i, CPUThread, Workspace)",
       "the Workspace race strategy needs an output with indices"},
      {"tensor Y(I, J) : dense\ntensor A(I, J) : csr\ntensor B(J, I) : csr\ntensor C(I, J) : csr\n"
       "Y(i,j) = A(i,j) * B(j,i) * C(i,j)\n",
       "pos(i, ip, B(j,i))",
       "the sparse inputs disagree on the loop order: no order of (i, j) visits every sparse input's levels in "
       "storage order (the positions of B are iterated in its own order"},
  };
  for (const auto& each : atTheLastCommand) expectRefusedAtLastCommand(each.program, each.schedule, each.message);
  // Refused at an earlier command (the message names it as the loops stand).
  struct EarlierCase {
    std::string program, schedule, command, message;
  };
  const std::vector<EarlierCase> atAnEarlierCommand = {
      {"tensor Y(I) : {compressed}\ntensor A(I, K) : {dense, dense}\ntensor B(K) : sparse\nY(i) = B(k) * A(i,k)\n",
       "divide(i, io, ii, 3)\ndense_workspace()", "divide(i, io, ii, 3)",
       "divide(i, io, ii, 3): i is iterated by a list of the coordinates in the dense workspace that "
       "dense_workspace() asks for, not by a range"},
      {"tensor Y(I, J) : {dense, compressed}\ntensor A(I, J) : {compressed, compressed}\nY(i,j) = A(i,j)\n",
       "pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 7)\nparallelize(jp0, CPUThread, NoRaces)\n"
       "parallelize(jp0, CPUThread, NoRaces)\nsplit(jp0, jp0o, jp0i, 2)",
       "parallelize(jp0, CPUThread, NoRaces)", "parallelize(jp0o, CPUThread, NoRaces): output Y is assembled in order"},
  };
  for (const auto& each : atAnEarlierCommand) {
    std::string dsl = withSchedule(each.program, each.schedule);
    SCOPED_TRACE(dsl);
    frontend::Diagnostic refusal = refusalOf(dsl);
    size_t at = dsl.find("\n" + each.command + "\n");
    ASSERT_NE(at, std::string::npos);
    int line = static_cast<int>(std::count(dsl.begin(), dsl.begin() + static_cast<long>(at) + 1, '\n')) + 1;
    EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", line, 1})) << refusal.format();
    EXPECT_EQ(refusal.message.rfind(each.message, 0), 0u) << refusal.message;
    EXPECT_TRUE(contains(refusal.format(), "\n" + each.command + "\n^\n")) << refusal.format();
  }
}

// A loop order the statement alone makes (terms whose sparse inputs
// disagree on it) was refused at the statement ("loop order visits i
// before the outer levels of B"); B is now read from a copy in the loops'
// order (NestedSumInputCopies.*), checked against the reference. No
// schedule command reaches that refusal: a reorder against a sparse input's
// storage order, a fuse of a variable a sparse level iterates, and a split
// whose parts are out of order, are refused at the command first.
TEST(Refusals, OfALoopOrderTheStatementMakesAreAtTheStatement) {
  const std::string terms = "tensor Y : dense\ntensor A(I, K) : csr\ntensor B(I, K) : csc\ntensor C(K) : dense\n"
                            "Y = A(i,k) - B(i,k) + C(k)\n";
  EXPECT_EQ(refusalOf(terms).message, "");
  expectProgramMatchesReference(terms, {{"A", randomSparse({8, 6}, 0.4, 111)},
                                        {"B", randomSparse({8, 6}, 0.4, 112)},
                                        {"C", randomDense({6}, 113)}});
  EXPECT_TRUE(contains(decisionsOf(terms), "read from a copy B_by_i_k")) << decisionsOf(terms);
  const std::string product = "tensor Y(I, J) : dense\ntensor B(I, J) : csr\nY(i,j) = B(i,j)\n";
  for (const char* schedule : {"reorder(j, i)", "split(i, i0, i1, 2)\nreorder(i1, j, i0)", "fuse(i, j, f)",
                               "split(j, j0, j1, 2)\nreorder(j1, j0)"}) {
    frontend::Diagnostic command = refusalOf(withSchedule(product, schedule));
    EXPECT_GT(command.location.line, 4) << command.format();
  }
  // (A bound of j iterates B's level, its promise checked when the kernel
  // starts: CoordinateBlocks.*.)
  EXPECT_EQ(refusalOf(withSchedule(product, "bound(j, jb, 4, MaxConstraint)")).message, "");
}

// What tcc did with these before they were refused at a command, or
// instead of refusing them: a pos's access is never the one read from a
// copy (another operand is copied), a variable only a workspace reads
// takes the workspace's size, and an output with dense levels below
// compressed ones is compressed whole by its workspace (none of its loops
// hoisted), each against the reference.
TEST(Refusals, OnceAtTheStatementNowCompile) {
  std::map<std::string, rt::Coo> matrices = {{"A", randomSparse({7, 6}, 0.4, 101)},
                                             {"B", randomSparse({7, 6}, 0.4, 102)}};
  expectProgramMatchesReference(
      withSchedule("tensor Y(I, J) : dense\ntensor A(I, J) : {compressed, dense}\ntensor B(I, J) : {dense, compressed} "
                   "order (1,0)\nY(i,j) = A(i,j) * B(i,j)\n",
                   "pos(i, ip, B(i,j))"),
      matrices);
  std::map<std::string, rt::Coo> three = {{"A", randomSparse({5, 4, 6}, 0.4, 103)},
                                          {"B", randomSparse({5}, 0.6, 104)}};
  expectProgramMatchesReference(
      withSchedule("tensor Y(I) : dense\ntensor A(I, J, L) : {dense, compressed, compressed}\ntensor B(I) : sparse\n"
                   "Y(i) = B(i) * A(i,j,l)\n",
                   "precompute(A(i,j,l), l, lw)"),
      three);
  expectProgramMatchesReference(withSchedule("tensor y : dense\ntensor A(I, J) : coo\ny = A(i,j) * 0.5\n",
                                             "precompute(A(i,j), i, iw)"),
                                {{"A", matrices.at("A")}});
  std::map<std::string, rt::Coo> outer = {{"A", randomDense({5}, 105)}, {"B", randomSparse({4, 6}, 0.4, 106)}};
  std::string scattered = withSchedule("tensor Y(J, I, K) : {compressed, compressed, dense}\ntensor A(I) : dense\n"
                                       "tensor B(J, K) : {compressed, compressed}\nY(j,i,k) = B(j,k) * A(i)\n",
                                       "reorder(j, k, i)");
  expectProgramMatchesReference(scattered, outer);
  EXPECT_TRUE(contains(decisionsOf(scattered), "compressed into {compressed, compressed, dense} after the loops"))
      << decisionsOf(scattered);
}

// What lowering carries: the index of the command in the request (the
// split that made the order, the parallelize a later split took the loop
// of), and none without the request's commands.
TEST(Refusals, CarryTheIndexOfTheCommandBehindThem) {
  auto refusal = [](const std::string& dsl, const std::vector<std::string>& order,
                    auto commandsOf) -> std::optional<lowering::LoweringError> {
    Program program = Program::fromText(dsl, "test.tc");
    const ir::IndexStmt& statement = program.statements()[0];
    std::map<std::string, IndexVar> vars;
    for (const auto& var : ir::indexVarsOf(statement)) vars.emplace(var.name(), var);
    for (const auto& name : order) vars.emplace(name, IndexVar(name));
    lowering::ScheduleRequest request;
    request.commands = commandsOf(vars);
    lowering::ConcretizedStatement concrete = lowering::concretizeForLowering(statement, request);
    lowering::LowerOptions options;
    options.commands = lowering::loopCommandsOf(request, concrete.outputOrderCommand);
    for (bool withCommands : {true, false}) {
      if (!withCommands) options.commands = {};
      try {
        lowering::lower(concrete.stmt, program.tensors(), options);
      } catch (const lowering::LoweringError& error) {
        if (!withCommands) {
          EXPECT_FALSE(error.command()) << error.what();
          continue;
        }
        EXPECT_FALSE(error.atTensorCore());
        return error;
      }
    }
    return std::nullopt;
  };
  auto split = refusal("tensor Y(I, J) : {compressed, compressed}\ntensor A(I, J) : dense\n"
                       "Y(i,j) = A(i,j)\n",
                       {"i0", "i1"}, [](auto& v) {
                         return std::vector<lowering::ScheduleCommand>{
                             {ir::SplitRelation{v["i"], v["i0"], v["i1"], 2}, "split(i, i0, i1, 2)"},
                             {lowering::ReorderCommand{{v["i1"], v["i0"], v["j"]}}, "reorder(i1, i0, j)"}};
                       });
  ASSERT_TRUE(split);
  EXPECT_EQ(split->command(), std::optional<size_t>(0)) << split->what();
  EXPECT_EQ(std::string(split->what()).rfind("split(i, i0, i1, 2): the loops (", 0), 0u) << split->what();

  auto parallel = refusal("tensor Y : dense\ntensor A(I, K) : {dense, compressed}\nY = A(i,k)\n", {"io", "ii"},
                          [](auto& v) {
                            using lowering::ParallelizeCommand;
                            const auto threads = ir::ParallelUnit::CPUThread;
                            const auto noRaces = ir::OutputRaceStrategy::NoRaces;
                            return std::vector<lowering::ScheduleCommand>{
                                {ParallelizeCommand{v["k"], threads, noRaces}, "parallelize(k, CPUThread, NoRaces)"},
                                {ParallelizeCommand{v["i"], threads, noRaces}, "parallelize(i, CPUThread, NoRaces)"},
                                {ir::SplitRelation{v["i"], v["io"], v["ii"], 2}, "split(i, io, ii, 2)"}};
                          });
  ASSERT_TRUE(parallel);
  EXPECT_EQ(parallel->command(), std::optional<size_t>(1)) << parallel->what();
  EXPECT_EQ(std::string(parallel->what()).rfind("parallelize(io, CPUThread, NoRaces): io is summed into Y", 0), 0u)
      << parallel->what();
}

// Rows on threads whose appending loop visits an operand's inner level
// before its outer one (j outside k for B): the one-pass analysis finds that
// it does not apply (it asks iterationRefusal) and the loops refuse the
// nest at the statement, with the same message whether or not one pass is
// asked.
TEST(Refusals, OfLoopsTheOnePassAnalysisLeavesComeFromTheLoops) {
  IndexVar i("i"), j("j"), k("k");
  TensorVar Y("Y", {"I", "J"}, Format::csr()), A("A", {"I", "K"}, Format::csr()), B("B", {"K", "J"}, Format::csr());
  ir::ForallAttributes threads;
  threads.parallelUnit = ir::ParallelUnit::CPUThread;
  threads.outputRaceStrategy = ir::OutputRaceStrategy::NoRaces;
  ir::IndexStmt nest = ir::forall(i, ir::forall(j, ir::forall(k, Y(i, j) += A(i, k) * B(k, j))), threads);
  for (bool onePass : {true, false}) {
    lowering::LowerOptions options;
    options.rowsInOnePass = onePass;
    try {
      lowering::lower(nest, {Y, A, B}, options);
      ADD_FAILURE() << "lowered";
    } catch (const lowering::LoweringError& error) {
      EXPECT_EQ(std::string(error.what()), "loop order visits j before the outer levels of B, which is stored {dense, compressed}");
      EXPECT_FALSE(error.command());
    }
  }
}

// The split's inner part is recovered from a fused loop that runs it to the
// factor in the last block too: its rows past the end stay guarded.
TEST(Fuse, SplitPartsFusedAroundAnotherVariableKeepTheLastBlocksGuard) {
  const char* schedule = "split(i, i0, i1, 3)\nfuse(i1, j, f)\nfuse(i0, f, g)";
  for (int rows : {1, 4, 7}) {
    std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({rows, 3}, 0.5, 87)}};
    for (const char* format : {"dense, dense", "compressed, compressed", "dense, compressed"}) {
      SCOPED_TRACE(std::string(format) + " / " + std::to_string(rows) + " rows");
      expectProgramMatchesReference(copyProgram(format, schedule), inputs);
    }
  }
}

TEST(Fuse, SparseOutputLevelAtTheInnerFusedVariableMatchesReference) {
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({7, 5}, 0.4, 61)}};
  expectProgramMatchesReference(copyProgram("dense, compressed", "fuse(i, j, f)"), inputs);
  expectProgramMatchesReference(copyProgram("dense, compressed", "bound(i, ib, 9, MaxConstraint)\nfuse(ib, j, f)"),
                                inputs);
  expectProgramMatchesReference(copyProgram("compressed, dense", "split(i, i0, i1, 2)\nfuse(i0, i1, f)"), inputs);
}

// ---- pos ------------------------------------------------------------------

TEST(Pos, PositionLoopOverARow) {
  expectProgramMatchesReference(withSchedule(kSpmv, "pos(j, jpos, A(i,j))"), spmvInputs(13));
}

TEST(Pos, SplitOverNonzerosOfARow) {
  std::string code =
      expectProgramMatchesReference(withSchedule(kSpmv, "pos(j, jpos, A(i,j))\nsplit(jpos, jpos0, jpos1, 4)"),
                                    spmvInputs(15));
  EXPECT_TRUE(contains(code, "jpos_begin")) << code;
}

TEST(Pos, FusedPositionsOfADoublyCompressedMatrix) {
  std::string code = expectProgramMatchesReference(R"(
tensor y(I) : dense
tensor A(I, J) : dcsr
tensor x(J) : dense
y(i) = A(i, j) * x(j)
schedule {
  fuse(i, j, f)
  pos(f, fpos, A(i,j))
  split(fpos, f0, f1, 8)
  parallelize(f0, CPUThread, Atomics)
}
)",
                                                   {{"A", randomSparse({90, 50}, 0.04, 53)}, {"x", randomDense({50}, 54)}});
  EXPECT_TRUE(contains(code, "#pragma omp atomic")) << code;
}

TEST(Pos, FusedPositionsOfAColumnMajorMatrix) {
  expectProgramMatchesReference(withSchedule(R"(
tensor y(I) : dense
tensor A(I, J) : csc
tensor x(J) : dense
y(i) = A(i, j) * x(j)
)",
                                             "fuse(j, i, f)\npos(f, fpos, A(i,j))\nsplit(fpos, f0, f1, 4)\n"
                                             "parallelize(f0, CPUThread, Atomics)"),
                                {{"A", randomSparse({40, 70}, 0.05, 55)}, {"x", randomDense({70}, 56)}});
}

TEST(Pos, FusedPositionsOfOtherLevelsAreRefused) {
  std::string message = errorOf(withSchedule(R"(
tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense
C(i,k) = A(i,j) * B(j,k)
)",
                                             "pos(j, jpos, A(i,j))\nfuse(jpos, k, f)\npos(f, fpos, A(i,j))"));
  EXPECT_TRUE(contains(message, "pos(f, fpos, A(i,j)): f is derived from j and k by `pos(j, jpos, A(i,j))` at line 7 "
                                "and `fuse(jpos, k, f)` at line 8; pos applies to a variable of the statement"))
    << message;
}

TEST(Pos, OverADenseLevelIsRefused) {
  std::string message = errorOf(withSchedule(kSpmv, "pos(i, ipos, A(i,j))"));
  EXPECT_TRUE(contains(message, "pos(i, ipos, A(i,j)): A stores i in a dense level")) << message;
}

TEST(Pos, OfAnAccessTheStatementDoesNotReadIsRefused) {
  std::string message = errorOf(withSchedule(kSpmv + std::string("tensor Z(I, J) : csr\n"), "pos(j, jpos, Z(i,j))"));
  EXPECT_TRUE(contains(message, "Z(i,j) is not read by")) << message;
}

TEST(Pos, LoopsOutsideTheParentLevelAreRefused) {
  std::string message = errorOf(withSchedule(kSpmv, "pos(j, jpos, A(i,j))\nreorder(jpos, i)"));
  EXPECT_TRUE(contains(message, "reorder(jpos, i): visits j before i, but A stores i above j")) << message;
}

// The terms without A run after the loop over A's positions, at the
// coordinates A does not store (pos_union_test.cpp has more).
TEST(Pos, OfAUnionMatchesReference) {
  std::string code = expectProgramMatchesReference(withSchedule(R"(
tensor Y(I, J) : dense
tensor A(I, J) : csr
tensor B(I, J) : dense
Y(i,j) = A(i, j) + B(i, j)
)",
                                                                "pos(j, jpos, A(i,j))"),
                                                   {{"A", randomSparse({8, 6}, 0.3, 41)}, {"B", randomDense({8, 6}, 42)}});
  EXPECT_TRUE(contains(code, "tcc_lower_bound(")) << code;
}

// ---- bound ----------------------------------------------------------------

TEST(Bound, ExactBoundMatchesReference) {
  std::string code = expectProgramMatchesReference(withSchedule(kGemm, "bound(j, jb, 9, MaxExact)"), gemmInputs(17));
  EXPECT_TRUE(contains(code, "jb < 9")) << code;
}

TEST(Bound, ALargerConstraintIsGuarded) {
  expectProgramMatchesReference(withSchedule(kGemm, "bound(i, ib, 64, MaxConstraint)"), gemmInputs(19));
}

TEST(Bound, LowerBoundsAreRefused) {
  std::string message = errorOf(withSchedule(kGemm, "bound(i, ib, 4, MinExact)"));
  EXPECT_TRUE(contains(message, "bound(i, ib, 4, MinExact): lower bounds")) << message;
}

// ---- precompute -------------------------------------------------------------

TEST(Precompute, RowWiseSpgemmWorkspace) {
  expectProgramMatchesReference(withSchedule(kSpgemm, "precompute(B(i,k) * C(k,j), j, j)"), spgemmInputs(21));
}

TEST(Precompute, WithARenamedWorkspaceIndex) {
  expectProgramMatchesReference(withSchedule(kSpgemm, "precompute(B(i,k) * C(k,j), j, jw)"), spgemmInputs(23));
}

TEST(Precompute, PartOfAProductIntoADenseOutput) {
  expectProgramMatchesReference(R"(
tensor A(I, J) : dense
tensor B(I, K, L) : csf
tensor C(K, J) : dense
tensor D(L, J) : dense
A(i,j) = B(i,k,l) * D(l,j) * C(k,j)
schedule { precompute(B(i,k,l) * D(l,j), j, j) }
)",
                                {{"B", randomSparse({9, 8, 7}, 0.1, 25)},
                                 {"C", randomDense({8, 6}, 26)},
                                 {"D", randomDense({7, 6}, 27)}});
}

TEST(Precompute, NotASubexpressionIsRefused) {
  std::string message = errorOf(R"(
tensor A(I, J) : dense
tensor B(I, K, L) : csf
tensor C(K, J) : dense
tensor D(L, J) : dense
A(i,j) = B(i,k,l) * D(l,j) * C(k,j)
schedule { precompute(B(i,k,l) * C(k,j), j, j) }
)");
  EXPECT_TRUE(contains(message, "not a subexpression")) << message;
}

// The precomputed product B*C depends on l, which D also reads: the
// workspace must be filled inside the loop over l. Where the loop order puts
// l inside the producer's own loop over k (B stored i, k, l), that is
// refused at the command, never summed over l twice; where l can enclose
// the where (B stored i, l, k), the precompute is placed and right.
const char* kSharedVariableProgram = R"(
tensor A(I, J) : dense
tensor B(I, K, L) : FORMAT
tensor C(K, J) : dense
tensor D(L, J) : dense
A(i,j) = B(i,k,l) * C(k,j) * D(l,j)
schedule {
  SCHEDULE
}
)";

std::string sharedVariableProgram(const std::string& format, const std::string& schedule) {
  std::string text = kSharedVariableProgram;
  text.replace(text.find("FORMAT"), 6, format);
  text.replace(text.find("SCHEDULE"), 8, schedule);
  return text;
}

TEST(Precompute, OutsideAVariableItDependsOnIsRefusedAtTheCommand) {
  for (const char* schedule : {"precompute(B(i,k,l) * C(k,j), j, j)",
                               "reorder(i, k, l, j)\n  precompute(B(i,k,l) * C(k,j), j, j)"}) {
    SCOPED_TRACE(schedule);
    std::string message = errorOf(sharedVariableProgram("csf", schedule));
    EXPECT_TRUE(contains(message, "depends on l")) << message;
    EXPECT_TRUE(contains(message, "test.tc:")) << message;
    EXPECT_TRUE(contains(message, "precompute(B(i,k,l) * C(k,j), j, j)")) << message;
  }
}

TEST(Precompute, InsideAVariableItDependsOnMatchesReference) {
  std::map<std::string, rt::Coo> inputs = {{"B", randomSparse({9, 8, 7}, 0.15, 28)},
                                           {"C", randomDense({8, 6}, 29)},
                                           {"D", randomDense({7, 6}, 30)}};
  expectProgramMatchesReference(
    sharedVariableProgram("{dense, compressed, compressed} order (0, 2, 1)",
                          "reorder(i, l, k, j)\n  precompute(B(i,k,l) * C(k,j), j, j)"),
    inputs);
  expectProgramMatchesReference(
    sharedVariableProgram("{dense, dense, compressed} order (0, 2, 1)", "precompute(B(i,k,l) * C(k,j), j, j)"), inputs);
}

// ---- parallelize: race strategies and vector lanes ----------------------------

const char* kTransposedSpmv = R"(
tensor y(J) : dense
tensor A(I, J) : csr
tensor x(I) : dense
y(j) = A(i, j) * x(i)
)";

std::map<std::string, rt::Coo> transposedInputs(uint64_t seed) {
  return {{"A", randomSparse({97, 61}, 0.12, seed)}, {"x", randomDense({97}, seed + 1)}};
}

TEST(Parallelize, AtomicsOnARacingOutput) {
  std::string code =
      expectProgramMatchesReference(withSchedule(kTransposedSpmv, "parallelize(i, CPUThread, Atomics)"), transposedInputs(29));
  EXPECT_TRUE(contains(code, "#pragma omp atomic")) << code;
}

TEST(Parallelize, TemporaryCopiesOfARacingOutput) {
  std::string code = expectProgramMatchesReference(
      withSchedule(kTransposedSpmv, "parallelize(i, CPUThread, Temporary)"), transposedInputs(31));
  EXPECT_TRUE(contains(code, "reduction(+: y_vals[0:")) << code;
}

TEST(Parallelize, ParallelReductionOfAScalar) {
  std::string code = expectProgramMatchesReference(R"(
tensor a : dense
tensor x(I) : dense
tensor z(I) : dense
a = x(i) * z(i)
schedule { parallelize(i, CPUThread, ParallelReduction) }
)",
                                                   {{"x", randomDense({1000}, 33)}, {"z", randomDense({1000}, 34)}});
  EXPECT_TRUE(contains(code, "reduction(+: ta)")) << code;
}

TEST(Parallelize, ParallelReductionOverARowOfASparseMatrix) {
  std::string code =
      expectProgramMatchesReference(withSchedule(kSpmv, "parallelize(j, CPUThread, ParallelReduction)"), spmvInputs(35));
  EXPECT_TRUE(contains(code, "reduction(+:")) << code;
}

TEST(Parallelize, VectorLanesOverADenseInnerLoop) {
  std::string code = expectProgramMatchesReference(
      withSchedule(kSpmm, "reorder(i, j, k)\nparallelize(i, CPUThread, NoRaces)\nparallelize(k, CPUVector, IgnoreRaces)"),
      spmmInputs(37));
  EXPECT_TRUE(contains(code, "#pragma omp simd")) << code;
}

TEST(Parallelize, NestedThreadLoopsAreRefused) {
  std::string message =
      errorOf(withSchedule(kGemm, "parallelize(i, CPUThread, NoRaces)\nparallelize(j, CPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "loops nested in a parallel loop run serially")) << message;
}

TEST(Parallelize, GpuUnitsNeedTheCudaTarget) {
  std::string message = errorOf(withSchedule(kGemm, "parallelize(i, GPUBlock, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(i, GPUBlock, NoRaces): GPU parallel units")) << message;
}

// ---- parallel assembly of sparse outputs --------------------------------------

TEST(ParallelAssembly, SpgemmRowsInParallel) {
  std::string code =
      expectProgramMatchesReference(withSchedule(kSpgemm, "parallelize(i, CPUThread, NoRaces)"), spgemmInputs(41));
  EXPECT_TRUE(contains(code, "prefix sum")) << code;
  EXPECT_TRUE(contains(code, "omp_get_thread_num")) << code;
}

TEST(ParallelAssembly, SpgemmRowBlocksInParallel) {
  expectProgramMatchesReference(withSchedule(kSpgemm, "split(i, i0, i1, 8)\nparallelize(i0, CPUThread, NoRaces)"),
                                spgemmInputs(43));
}

TEST(ParallelAssembly, SparseAddRowsInParallel) {
  expectProgramMatchesReference(R"(
tensor A(I, J) : csr
tensor B(I, J) : csr
tensor C(I, J) : csr
A(i,j) = B(i,j) + C(i,j)
schedule { parallelize(i, CPUThread, NoRaces) }
)",
                                {{"B", randomSparse({50, 40}, 0.1, 45)}, {"C", randomSparse({50, 40}, 0.1, 46)}});
}

TEST(ParallelAssembly, RowsOfAnInputWithEmptyRows) {
  // Rows with no entries keep their offsets through the prefix sum.
  expectProgramMatchesReference(R"(
tensor A(I, J) : csr
tensor B(I, J) : csr
tensor C(I, J) : dense
A(i,j) = B(i,j) * C(i,j)
schedule { parallelize(i, CPUThread, NoRaces) }
)",
                                {{"B", randomSparse({60, 30}, 0.02, 47)}, {"C", randomDense({60, 30}, 48)}});
}

// (Ranges of the plain row loop append it in place: no operand stores the
// rows sparsely.)
TEST(ParallelAssembly, ADoublyCompressedOutputOfCsrOperandsIsAppendedByRanges) {
  std::string program = R"(
tensor A(I, J) : dcsr
tensor B(I, J) : csr
tensor C(I, J) : csr
A(i,j) = B(i,j) + C(i,j)
schedule { parallelize(i, CPUThread, NoRaces) }
)";
  EXPECT_TRUE(contains(decisionsOf(program), "A ({compressed, compressed}) is appended in place by the ranges of i"))
      << decisionsOf(program);
  expectProgramMatchesReference(program, {{"B", randomSparse({90, 70}, 0.05, 41)}, {"C", randomSparse({90, 70}, 0.05, 42)}});
}

// Gustavson's SpGEMM into a DCSR output on threads: each thread fills its
// own copy of the dense workspace, and the ranges of i append the output
// (the where below the loop fills only the workspace).
TEST(ParallelAssembly, ADenseWorkspaceUnderThreadsOverADoublyCompressedOutputIsAppendedByRanges) {
  std::string program = R"(
tensor A(I, J) : dcsr
tensor B(I, K) : csr
tensor C(K, J) : csr
A(i,j) = B(i,k) * C(k,j)
schedule {
  reorder(i, k, j)
  precompute(B(i,k) * C(k,j), j, j)
  parallelize(i, CPUThread, NoRaces)
}
)";
  EXPECT_TRUE(contains(decisionsOf(program), "each thread fills its own copy of the workspace")) << decisionsOf(program);
  std::string code = expectProgramMatchesReference(
      program, {{"B", randomSparse({90, 40}, 0.05, 43)}, {"C", randomSparse({40, 70}, 0.05, 44)}});
  EXPECT_TRUE(contains(code, "append each range of i to A from its offsets")) << code;
}

// ---- checks common to every command -------------------------------------------

TEST(ScheduleChecks, AnUnknownLoopIsNamed) {
  std::string message = errorOf(withSchedule(kSpmv, "split(i, i0, i1, 4)\nsplit(i, a, b, 2)"));
  EXPECT_TRUE(contains(message, "split(i, a, b, 2): no loop over i is left: i was split into i0 and i1 by "
                                "`split(i, i0, i1, 4)` at line 7; the statement's loops are now i0, i1, j"))
      << message;
}

TEST(ScheduleChecks, ANonPositiveFactorIsRefusedByTheChecker) {
  std::string message = errorOf(withSchedule(kSpmv, "split(i, i0, i1, 0)"));
  EXPECT_TRUE(contains(message, "test.tc:7:")) << message;
}

TEST(ScheduleChecks, CompositionOfEveryDenseCommand) {
  expectProgramMatchesReference(withSchedule(kGemm, R"(
bound(k, kb, 7, MaxExact)
split(i, i0, i1, 4)
divide(j, j0, j1, 2)
reorder(i0, j0, kb, i1, j1)
fuse(i1, j1, f)
unroll(f, 2)
parallelize(i0, CPUThread, NoRaces)
)"),
                                gemmInputs(51));
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

// ---- the same commands from the C++ API ---------------------------------------

TEST(ScheduleBuilder, TacoSpmmScheduleMatchesReference) {
  IndexVar i("i"), j("j"), k("k"), i0("i0"), i1("i1"), jpos("jpos"), jpos0("jpos0"), jpos1("jpos1");
  TensorVar C("C", {"I", "K"}, Format::denseOfOrder(2)), A("A", {"I", "J"}, Format::csr()),
      B("B", {"J", "K"}, Format::denseOfOrder(2));
  Schedule schedule;
  schedule.split(i, i0, i1, 16)
      .pos(j, jpos, A(i, j))
      .split(jpos, jpos0, jpos1, 4)
      .reorder({i0, i1, jpos0, k, jpos1})
      .parallelize(i0, ParallelUnit::CPUThread, OutputRaceStrategy::NoRaces)
      .parallelize(k, ParallelUnit::CPUVector, OutputRaceStrategy::IgnoreRaces);
  KernelCheck check;
  check.statements = {C(i, k) = A(i, j) * B(j, k)};
  check.tensors = {C, A, B};
  check.schedule = schedule;
  check.inputs = {{"A", randomSparse({50, 40}, 0.1, 61)}, {"B", randomDense({40, 9}, 62)}};
  std::string code = expectMatchesReference(check);
  EXPECT_TRUE(contains(code, "#pragma omp simd")) << code;
}

TEST(ScheduleBuilder, PrecomputeAndRowParallelSpgemm) {
  IndexVar i("i"), j("j"), k("k");
  TensorVar A("A", {"I", "J"}, Format::csr()), B("B", {"I", "K"}, Format::csr()), C("C", {"K", "J"}, Format::csr());
  Schedule schedule;
  schedule.precompute(B(i, k) * C(k, j), j, j).parallelize(i, ParallelUnit::CPUThread, OutputRaceStrategy::NoRaces);
  KernelCheck check;
  check.statements = {A(i, j) = B(i, k) * C(k, j)};
  check.tensors = {A, B, C};
  check.schedule = schedule;
  check.inputs = spgemmInputs(63);
  expectMatchesReference(check);
}

TEST(ScheduleBuilder, AnUnknownVariableIsAnError) {
  IndexVar i("i"), j("j"), q("q"), q0("q0"), q1("q1");
  TensorVar y("y", {"I"}, Format::denseOfOrder(1)), A("A", {"I", "J"}, Format::csr()),
      x("x", {"J"}, Format::denseOfOrder(1));
  Schedule schedule;
  schedule.split(q, q0, q1, 4);
  try {
    Program::fromStatements({y(i) = A(i, j) * x(j)}, {y, A, x}, schedule);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "split(q, q0, q1, 4): q is not an index variable")) << error.what();
  }
}

TEST(ScheduleBuilder, AnIllegalCommandNamesItself) {
  IndexVar i("i"), j("j"), jb("jb");
  TensorVar y("y", {"I"}, Format::denseOfOrder(1)), A("A", {"I", "J"}, Format::coo(2)),
      x("x", {"J"}, Format::denseOfOrder(1));
  Schedule schedule;
  schedule.bound(j, jb, 8, BoundKind::MaxExact);
  std::string message;
  try {
    compile(Program::fromStatements({y(i) = A(i, j) * x(j)}, {y, A, x}, schedule));
  } catch (const std::exception& error) {
    message = error.what();
  }
  EXPECT_TRUE(contains(message, "bound(j, jb, 8, MaxExact): j is iterated by a singleton level of A")) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Parallelize, InsideTheLoopsThatFillASharedWorkspaceIsRefused) {
  std::string message = errorOf(withSchedule(kSpgemm, "parallelize(k, CPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "the dense workspace tcc inserted for A keeps one list of the coordinates")) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(DenseWorkspace, OverTheOutputsLastIndexIsGustavson) {
  std::string code = expectProgramMatchesReference(withSchedule(kSpgemm, "dense_workspace()"), spgemmInputs(71));
  EXPECT_TRUE(contains(code, "w_A")) << code;
}

TEST(DenseWorkspace, OverANamedIndexOfADenseResult) {
  expectProgramMatchesReference(withSchedule(kSpmm, "dense_workspace(k)"), spmmInputs(73));
}

// An input read from a copy in the loops' order: the workspace's expression
// reads the copy too, and a refusal names the user's tensors.
TEST(DenseWorkspace, OfAnExpressionThatReadsAConvertedInput) {
  const std::string program = "tensor Y(I, K) : dense\ntensor A(I, K) : csr\ntensor B(K, I) : csr\n"
                              "Y(i,k) = A(i,k) * B(k,i)\n";
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({9, 7}, 0.5, 74)}, {"B", randomSparse({7, 9}, 0.5, 75)}};
  for (const char* mode : {"", "fp fast\n"})
    for (const char* schedule : {"dense_workspace(k)", "precompute(A(i,k) * B(k,i), k, kw)"}) {
      std::string dsl = withSchedule(program + mode, schedule);
      SCOPED_TRACE(dsl);
      std::string code = expectProgramMatchesReference(dsl, inputs);
      EXPECT_TRUE(contains(code, "w_Y")) << code;
    }
  std::string message = errorOf(withSchedule(program, "dense_workspace(i)"));
  EXPECT_TRUE(contains(message, "the rest of A(i,k) * B(k,i) also uses")) << message;
  EXPECT_FALSE(contains(message, "_by_")) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Pos, FusedPositionsWithTheInnerBlockLoopOnThreads) {
  // The segment cursor is declared outside the parallel loop: each thread
  // gets its own.
  expectProgramMatchesReference(R"(
tensor A(I, J) : dense
tensor B(I, J) : csr
tensor C(I, J) : dense
A(i,j) = B(i,j) * C(i,j)
schedule {
  fuse(i, j, f)
  pos(f, fpos, B(i,j))
  split(fpos, f0, f1, 64)
  parallelize(f1, CPUThread, NoRaces)
}
)",
                                {{"B", randomSparse({300, 200}, 0.05, 81)}, {"C", randomDense({300, 200}, 82)}});
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

// A reorder against a sparse output's storage order scatters its results:
// they go through a sparse workspace, and explain says so.
TEST(Reorder, AgainstASparseOutputsStorageGoesThroughASparseWorkspace) {
  std::string program = withSchedule(R"(
tensor A(I, J) : csr
tensor B(I, J) : dense
A(i,j) = B(i,j) * 2
)",
                                     "reorder(j, i)");
  expectProgramMatchesReference(program, {{"B", randomSparse({13, 17}, 0.3, 77)}});
  std::string decisions = decisionsOf(program);
  EXPECT_TRUE(contains(decisions, "the loops visit j outside i, but A stores i above j")) << decisions;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Bound, AnExactBoundThatDoesNotHoldStopsTheKernel) {
  std::string message = runError(withSchedule(kGemm, "bound(j, jb, 8, MaxExact)"), gemmInputs(91));
  EXPECT_TRUE(contains(message, "a bound(...) of the schedule does not hold for these inputs")) << message;
}

TEST(Bound, AConstraintBelowTheDimensionStopsTheKernel) {
  std::string message = runError(withSchedule(kGemm, "bound(i, ib, 4, MaxConstraint)"), gemmInputs(93));
  EXPECT_TRUE(contains(message, "a bound(...) of the schedule does not hold for these inputs")) << message;
}

}  // namespace
}  // namespace tcc::test

namespace tcc::test {
namespace {

TEST(Split, FullBlocksOfAnInnermostSplitAreUnrolledAndTheLastIsBounded) {
  std::string code =
      expectProgramMatchesReference(withSchedule(kSpmv, "pos(j, jpos, A(i,j))\nsplit(jpos, jpos0, jpos1, 4)"),
                                    spmvInputs(95));
  EXPECT_TRUE(contains(code, "#pragma GCC unroll 4")) << code;
  EXPECT_TRUE(contains(code, "tcc_min<int64_t>(4LL")) << code;
}

}  // namespace
}  // namespace tcc::test
