// pos over an operand that the statement reads twice at the same indices
// (A(i,k) * A(i,k)): the loops around fix one parent position for both
// reads, so one position loop serves them; reads at other indices, and
// other sparse operands at the pos variable, are searched at each of A's
// positions; a term without A stays refused at the command. Without
// pos, such reads share one iterator at every level too. And pos over a
// first level, whose segment no loop fixes, and pos then fuse.
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "tcc/ir/imperative_printer.h"

namespace tcc::test {
namespace {

struct Statement {
  std::string declarations;  // besides A(I, K)
  std::string text;
};

// Statements reading A(i,k) twice, with dense and sparse outputs, sums of
// the two reads, a dense third operand and a dense vector between them.
const std::vector<Statement> kTwice = {
    {"tensor y(I) : dense\n", "y(i) = A(i,k) * A(i,k)"},
    {"tensor y(I) : dense\ntensor B(I, K) : dense\n", "y(i) = A(i,k) * A(i,k) * B(i,k)"},
    {"tensor y(I) : dense\ntensor x(K) : dense\n", "y(i) = A(i,k) * x(k) * A(i,k)"},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) * A(i,k)"},
    {"tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) * A(i,k)"},
    {"tensor Y(I, K) : dcsr\ntensor B(I, K) : dense\n", "Y(i,k) = 2 * A(i,k) * B(i,k) * A(i,k)"},
    {"tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) + A(i,k)"},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) * A(i,k) - 3 * A(i,k)"},
    {"tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) * A(i,k) - A(i,k)"},
};

const std::vector<std::string> kPosSchedules = {
    "pos(k, kp, A(i,k))",
    "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 3)",
    "fuse(i, k, f)\npos(f, fp, A(i,k))",
    "fuse(i, k, f)\npos(f, fp, A(i,k))\nsplit(fp, fp0, fp1, 4)\nparallelize(fp0, CPUThread, Atomics)",
};

std::string program(const std::string& format, const Statement& statement, const std::string& schedule,
                    const std::string& modes = "I, K") {
  return withSchedule("tensor A(" + modes + ") : " + format + "\n" + statement.declarations + statement.text + "\n",
                      schedule);
}

// A's matrix, and dense operands of its size for the others.
std::map<std::string, rt::Coo> inputsFor(const rt::Coo& A, uint64_t seed) {
  return {{"A", A}, {"B", randomDense({A.dims[0], A.dims[1]}, seed)}, {"x", randomDense({A.dims[1]}, seed + 1)}};
}

// The inputs the program declares.
std::map<std::string, rt::Coo> declared(const std::string& dsl, const std::map<std::string, rt::Coo>& inputs) {
  std::map<std::string, rt::Coo> used;
  for (const auto& [name, coo] : inputs)
    if (contains(dsl, "tensor " + name + "(")) used.emplace(name, coo);
  return used;
}

TEST(PosOverARepeatedOperand, MatchesReferenceOnRandomAndRealMatrices) {
  std::vector<std::pair<std::string, rt::Coo>> matrices = {
      {"random 9x7", randomSparse({9, 7}, 0.35, 5)},
      {"random 12x12, empty rows", randomSparse({12, 12}, 0.08, 6)},
      {"ibm32a", realMatrix("ibm32a.mtx")},
      {"lp_e226", realMatrix("lp_e226.mtx")},
  };
  for (const auto& [name, matrix] : matrices) {
    auto inputs = inputsFor(matrix, 17);
    for (const char* format : {"csr", "dcsr"})
      for (const auto& statement : kTwice)
        for (const auto& schedule : kPosSchedules) {
          std::string dsl = program(format, statement, schedule);
          SCOPED_TRACE(name + "\n" + dsl);
          expectProgramMatchesReference(dsl, declared(dsl, inputs));
          // One loop serves both reads: nothing is co-iterated.
          std::string loops = ir::imp::toString(lowerProgram(Program::fromText(dsl, "test.tc")).statements[0].function);
          EXPECT_FALSE(contains(loops, "co-iterate")) << loops;
        }
  }
}

// Rows split among threads around the position loop; the reads at the
// last level of a three-level tensor under pos over its middle level.
TEST(PosOverARepeatedOperand, UnderParallelRowsAndOverAMiddleLevel) {
  auto inputs = inputsFor(realMatrix("ibm32a.mtx"), 23);
  // (And a read at other indices of the pos variable's loop nest.)
  std::vector<Statement> statements = kTwice;
  statements.push_back({"tensor Y(I, K) : dense\n", "Y(i,j) = A(i,j) * A(i,k)"});
  for (const auto& statement : statements)
    for (const char* format : {"csr", "dcsr"}) {
      std::string dsl = program(format, statement, "pos(k, kp, A(i,k))\nparallelize(i, CPUThread, NoRaces)");
      SCOPED_TRACE(dsl);
      expectProgramMatchesReference(dsl, declared(dsl, inputs));
    }
  const std::string csf = "tensor T(I, J, K) : csf\ntensor B(I, J, K) : dense\n";
  std::map<std::string, rt::Coo> tensors = {{"T", randomSparse({6, 5, 7}, 0.2, 29)}, {"B", randomDense({6, 5, 7}, 30)}};
  for (const char* statement : {"tensor y(I) : dense\ny(i) = T(i,j,k) * T(i,j,k)\n",
                                "tensor Y(I, J) : dcsr\nY(i,j) = T(i,j,k) * B(i,j,k) * T(i,j,k)\n",
                                "tensor Y(I, J, K) : csf\nY(i,j,k) = T(i,j,k) - T(i,j,k) * T(i,j,k)\n"})
    for (const char* schedule : {"pos(j, jp, T(i,j,k))", "pos(k, kp, T(i,j,k))\nsplit(kp, kp0, kp1, 2)",
                                 "pos(j, jp, T(i,j,k))\npos(k, kp, T(i,j,k))"}) {
      std::string dsl = withSchedule(csf + statement, schedule);
      SCOPED_TRACE(dsl);
      expectProgramMatchesReference(dsl, declared(dsl, tensors));
    }
}

// Without pos too, reads of one tensor at the same indices share one
// iterator at every level where all its levels are unique (DCSR's rows
// are then one loop, which threads can split); a nonunique level (COO)
// keeps one iterator per read, as duplicates are summed before a product.
TEST(RepeatedReads, ShareOneIteratorWhereEveryLevelIsUnique) {
  const std::vector<Statement> statements = {
      {"tensor y(I) : dense\n", "y(i) = A(i,k) * A(i,k)"},
      {"tensor y(I) : dense\ntensor x(K) : dense\ntensor z(K) : dense\n", "y(i) = A(i,k) * x(k) - A(i,k) * z(k)"},
      {"tensor Y(I, K) : dcsr\n", "Y(i,k) = A(i,k) + 2 * A(i,k) * A(i,k)"},
      {"tensor Y(I, K) : csr\ntensor B(I, K) : csr\n", "Y(i,k) = A(i,k) * B(i,k) * A(i,k)"},
      {"tensor Y(I, K) : csr\ntensor B(I, K) : csr\n", "Y(i,k) = A(i,k) * A(i,k) + B(i,k)"},
      // (The rows shared, the columns not.)
      {"tensor Y(I, K) : dense\n", "Y(i,j) = A(i,j) * A(i,k)"},
  };
  std::map<std::string, rt::Coo> inputs = {{"A", realMatrix("ibm32a.mtx")},
                                           {"B", randomSparse({32, 31}, 0.1, 61)},
                                           {"x", randomDense({31}, 62)},
                                           {"z", randomDense({31}, 63)}};
  for (const auto& statement : statements)
    for (const char* format : {"csr", "dcsr", "{compressed, dense}", "coo"})
      for (const char* schedule : {"", "parallelize(i, CPUThread, NoRaces)", "dense_workspace()"}) {
        std::string dsl = program(format, statement, schedule);
        SCOPED_TRACE(dsl);
        std::string refusal = errorOf(dsl);
        if (!refusal.empty()) {
          // (Only what the schedule asks of another operand or the output.)
          EXPECT_NE(std::string(schedule), "") << refusal;
          EXPECT_TRUE(contains(refusal, "test.tc:")) << refusal;
          continue;
        }
        expectProgramMatchesReference(dsl, declared(dsl, inputs));
        std::string loops = ir::imp::toString(lowerProgram(Program::fromText(dsl, "test.tc")).statements[0].function);
        bool otherOperand = contains(statement.text, "B(i,k)") || contains(statement.text, "A(i,j)");
        if (std::string(format) != "coo" && !otherOperand) EXPECT_FALSE(contains(loops, "co-iterate")) << loops;
      }
  // Shared down to a nonunique level, two iterators below it.
  std::map<std::string, rt::Coo> tensor = {{"T", randomSparse({7, 6, 5}, 0.25, 64)}};
  for (const char* schedule : {"", "pos(i, ip, T(i,j,k))", "parallelize(i, CPUThread, NoRaces)"}) {
    std::string dsl = withSchedule("tensor y(I) : dense\ntensor T(I, J, K) : {compressed, compressed(nonunique), "
                                   "singleton}\ny(i) = T(i,j,k) * T(i,j,k)\n",
                                   schedule);
    SCOPED_TRACE(dsl);
    expectProgramMatchesReference(dsl, tensor);
    std::string loops = ir::imp::toString(lowerProgram(Program::fromText(dsl, "test.tc")).statements[0].function);
    EXPECT_FALSE(contains(loops, "co-iterate i")) << loops;
    EXPECT_TRUE(contains(loops, "co-iterate j")) << loops;
  }
  // DCSR's rows on threads: refused while the two reads were two iterators.
  for (size_t s : {size_t{0}, statements.size() - 1}) {
    std::string dcsr = program("dcsr", statements[s], "parallelize(i, CPUThread, NoRaces)");
    EXPECT_EQ(errorOf(dcsr), "") << dcsr;
    std::string loops = ir::imp::toString(lowerProgram(Program::fromText(dcsr, "test.tc")).statements[0].function);
    EXPECT_TRUE(contains(loops, "parallel for")) << loops;
    EXPECT_FALSE(contains(loops, "co-iterate i")) << loops;
  }
}

// pos over a tensor's first level (a sparse vector, DCSR's rows, CSF's
// first level), whose one segment is the whole level, read once or twice.
TEST(PosOverAFirstLevel, MatchesReference) {
  struct Program {
    std::string declarations, statement;
  };
  const std::vector<Program> vectors = {
      {"tensor y(I) : dense\ntensor x(I) : sparse\n", "y(i) = 2 * x(i)"},
      {"tensor y(I) : sparse\ntensor x(I) : sparse\ntensor z(I) : dense\n", "y(i) = x(i) * z(i) * x(i)"},
      {"tensor s : dense\ntensor x(I) : sparse\ntensor z(I) : dense\n", "s = x(i) * z(i)"},
  };
  std::map<std::string, rt::Coo> inputs = {{"x", randomSparse({40}, 0.2, 41)}, {"z", randomDense({40}, 42)}};
  for (const auto& program : vectors)
    for (const char* schedule : {"pos(i, ip, x(i))", "pos(i, ip, x(i))\nsplit(ip, ip0, ip1, 4)",
                                 "pos(i, ip, x(i))\nsplit(ip, ip0, ip1, 3)\nparallelize(ip0, CPUThread, Atomics)"}) {
      std::string dsl = withSchedule(program.declarations + program.statement + "\n", schedule);
      SCOPED_TRACE(dsl);
      expectProgramMatchesReference(dsl, declared(dsl, inputs));
    }
  const std::vector<Program> matrices = {
      {"tensor y(I) : dense\n", "y(i) = A(i,k)"},
      {"tensor y(I) : dense\ntensor x(K) : dense\n", "y(i) = A(i,k) * x(k) * A(i,k)"},
      {"tensor Y(I, K) : dcsr\n", "Y(i,k) = A(i,k) * A(i,k) - A(i,k)"},
  };
  for (const auto& [name, matrix] : std::vector<std::pair<std::string, rt::Coo>>{
           {"random 12x12, empty rows", randomSparse({12, 12}, 0.08, 43)}, {"lp_e226", realMatrix("lp_e226.mtx")}}) {
    auto operands = inputsFor(matrix, 44);
    for (const auto& program : matrices)
      for (const char* schedule : {"pos(i, ip, A(i,k))", "pos(i, ip, A(i,k))\npos(k, kp, A(i,k))",
                                   "pos(i, ip, A(i,k))\nsplit(ip, ip0, ip1, 2)\nparallelize(ip0, CPUThread, NoRaces)"}) {
        std::string dsl = withSchedule("tensor A(I, K) : dcsr\n" + program.declarations + program.statement + "\n",
                                       schedule);
        SCOPED_TRACE(name + "\n" + dsl);
        expectProgramMatchesReference(dsl, declared(dsl, operands));
      }
  }
}

// pos, then a fuse of the position loop (or a part of it) with a loop
// over a dense operand: the pinned variables stay in the loops' order, so
// a sparse output's levels are located outer first (i was pinned after j,
// and lowering stopped at "level 1 of Y has no located parent").
TEST(PosThenFuse, PinsTheVariablesInTheLoopsOrder) {
  std::map<std::string, rt::Coo> inputs = {{"x", randomSparse({9}, 0.4, 51)},
                                           {"A", randomSparse({6, 9}, 0.3, 52)},
                                           {"B", randomDense({4, 3}, 53)}};
  for (const char* output : {"{dense, dense, compressed}", "{dense, dense, dense}", "{compressed, compressed, dense}"})
    for (const char* schedule : {"pos(i, ip, x(i))\nfuse(ip, j, f)",
                                 "pos(i, ip, x(i))\nsplit(ip, ip0, ip1, 4)\ndivide(ip1, ip2, ip3, 2)\nfuse(ip3, j, f)",
                                 "pos(i, ip, x(i))\nsplit(ip, ip0, ip1, 2)\nfuse(ip1, j, f)\nfuse(ip0, f, g)"}) {
      std::string dsl = withSchedule(std::string("tensor Y(I, J, K) : ") + output +
                                         "\ntensor x(I) : sparse\ntensor B(J, K) : dense\nY(i,j,k) = x(i) * B(j,k)\n",
                                     schedule);
      SCOPED_TRACE(dsl);
      expectProgramMatchesReference(dsl, declared(dsl, inputs));
    }
  for (const char* schedule : {"pos(i, ip, A(l,i))\nfuse(ip, j, f)", "fuse(l, i, h)\npos(h, hp, A(l,i))\nfuse(hp, j, f)"}) {
    std::string dsl = withSchedule("tensor Y(L, I, J, K) : {dense, dense, dense, compressed}\ntensor A(L, I) : csr\n"
                                   "tensor B(J, K) : dense\nY(l,i,j,k) = A(l,i) * B(j,k)\n",
                                   schedule);
    SCOPED_TRACE(dsl);
    expectProgramMatchesReference(dsl, declared(dsl, inputs));
  }
}

// A read at other indices (through a copy in another storage order) or a
// second sparse operand at the pos variable: the loop over A's positions
// searches their level for A's coordinate (see
// pos_searched_operand_test.cpp), and matches.
TEST(PosOverARepeatedOperand, SearchesAReadAtOtherIndices) {
  const std::vector<Statement> searched = {
      {"tensor y(I) : dense\n", "y(i) = A(i,k) * A(k,i)"},
      {"tensor Y(I, I) : csr\n", "Y(i,k) = A(i,k) * A(k,i)"},
      {"tensor y(I) : dense\ntensor B(I, I) : csr\n", "y(i) = A(i,k) * A(i,k) * B(i,k)"},
  };
  auto inputs = inputsFor(realMatrix("west0497.mtx"), 31);
  inputs["B"] = randomSparse({497, 497}, 0.01, 32);
  for (const auto& statement : searched) {
    std::string dsl = program("csr", statement, "pos(k, kp, A(i,k))", "I, I");
    SCOPED_TRACE(dsl);
    std::string code = expectProgramMatchesReference(dsl, declared(dsl, inputs));
    EXPECT_TRUE(contains(code, "tcc_lower_bound(")) << code;
  }
}

// A term without A: the positions of A would not serve it. The refusal is
// at the pos command, and the program without it matches.
TEST(PosOverARepeatedOperand, IsRefusedAtTheCommandWhereTheReadsDiffer) {
  struct Refused {
    std::string declarations, statement, message;
  };
  const std::vector<Refused> refused = {
      {"tensor Y(I, I) : csr\ntensor B(I, I) : dense\n", "Y(i,k) = A(i,k) * A(i,k) + B(i,k)",
       "the expression has terms where A has no entry (a sum)"},
  };
  auto inputs = inputsFor(realMatrix("west0497.mtx"), 31);
  inputs["B"] = randomSparse({497, 497}, 0.01, 32);
  for (const auto& each : refused) {
    Statement statement{each.declarations, each.statement};
    std::string dsl = program("csr", statement, "pos(k, kp, A(i,k))", "I, I");
    SCOPED_TRACE(dsl);
    frontend::Diagnostic refusal = refusalOf(dsl);
    int line = static_cast<int>(std::count(dsl.begin(), dsl.end(), '\n')) - 1;
    EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", line, 1})) << refusal.format();
    EXPECT_EQ(refusal.message.rfind("pos(k, kp, A(i,k)): " + each.message, 0), 0u) << refusal.message;
    EXPECT_TRUE(contains(refusal.format(), "\npos(k, kp, A(i,k))\n^\n")) << refusal.format();
    std::string unscheduled = "tensor A(I, I) : csr\n" + each.declarations + each.statement + "\n";
    expectProgramMatchesReference(unscheduled, declared(unscheduled, inputs));
  }
}

}  // namespace
}  // namespace tcc::test
