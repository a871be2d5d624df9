// pos over A where another operand also stores the pos variable sparsely:
// the loop iterates A's positions and, at each, searches the other
// operand's level for A's coordinate (a binary search of its sorted
// segment), running a term that needs it only where it has the entry.
// Products of two and three operands, a dense factor, terms without the
// other operand, CSR / DCSR / COO other operands, split and parallelize
// after the pos, dense and sparse outputs; against the dense reference.
// What the search cannot serve stays refused at the pos command.
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "tcc/ir/imperative_printer.h"

namespace tcc::test {
namespace {

struct Statement {
  std::string declarations;  // besides A(I, K) and B(I, K)
  std::string text;
  bool denseOutput;
};

const std::vector<Statement> kStatements = {
    {"tensor y(I) : dense\n", "y(i) = A(i,k) * B(i,k)", true},
    {"tensor y(I) : dense\ntensor C(I, K) : csr\n", "y(i) = A(i,k) * B(i,k) * C(i,k)", true},
    {"tensor y(I) : dense\ntensor x(K) : dense\n", "y(i) = A(i,k) * x(k) * B(i,k)", true},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) * B(i,k)", true},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) * B(i,k) - 2 * A(i,k)", true},
    {"tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) * B(i,k)", false},
    {"tensor Y(I, K) : dcsr\ntensor D(I, K) : dense\n", "Y(i,k) = 3 * B(i,k) * A(i,k) * D(i,k)", false},
    {"tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) * B(i,k) + A(i,k)", false},
};

// Schedules with pos over A's second level (A any sparse format) and over
// its first (A dcsr).
const std::vector<std::string> kInner = {
    "pos(k, kp, A(i,k))",
    "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 3)",
    "fuse(i, k, f)\npos(f, fp, A(i,k))",
    "fuse(i, k, f)\npos(f, fp, A(i,k))\nsplit(fp, fp0, fp1, 4)",
};
const std::vector<std::string> kInnerParallel = {
    "fuse(i, k, f)\npos(f, fp, A(i,k))\nsplit(fp, fp0, fp1, 4)\nparallelize(fp0, CPUThread, Atomics)",
};
const std::vector<std::string> kOuter = {
    "pos(i, ip, A(i,k))",
    "pos(i, ip, A(i,k))\nsplit(ip, ip0, ip1, 2)",
};
const std::vector<std::string> kOuterParallel = {
    "pos(i, ip, A(i,k))\nsplit(ip, ip0, ip1, 2)\nparallelize(ip0, CPUThread, NoRaces)",
};

std::string program(const std::string& formatA, const std::string& formatB, const Statement& statement,
                    const std::string& schedule) {
  return programOverAB(formatA, formatB, statement.declarations, statement.text, schedule);
}

TEST(PosWithASearchedOperand, MatchesReference) {
  struct Inputs {
    std::string name;
    std::map<std::string, rt::Coo> tensors;
  };
  std::vector<Inputs> all;
  // B overlapping A in part; one with empty rows; one on a real matrix
  // with B its own pattern (every entry found) scaled by a dense factor.
  {
    rt::Coo a = randomSparse({9, 7}, 0.4, 5);
    all.push_back({"random 9x7",
                   {{"A", a}, {"B", randomSparse({9, 7}, 0.5, 6)}, {"C", randomSparse({9, 7}, 0.6, 7)},
                    {"x", randomDense({7}, 8)}, {"D", randomDense({9, 7}, 9)}}});
    rt::Coo sparse = randomSparse({12, 12}, 0.08, 10);
    all.push_back({"random 12x12, empty rows",
                   {{"A", sparse}, {"B", randomSparse({12, 12}, 0.2, 11)}, {"C", randomSparse({12, 12}, 0.3, 12)},
                    {"x", randomDense({12}, 13)}, {"D", randomDense({12, 12}, 14)}}});
    rt::Coo real = realMatrix("ibm32a.mtx");
    int32_t n = real.dims[0], m = real.dims[1];
    all.push_back({"ibm32a", {{"A", real}, {"B", real}, {"C", randomSparse({n, m}, 0.3, 15)},
                              {"x", randomDense({m}, 16)}, {"D", randomDense({n, m}, 17)}}});
  }
  int checked = 0;
  for (const auto& inputs : all)
    for (const auto& statement : kStatements)
      for (const char* formatB : {"csr", "dcsr", "coo"})
        for (const char* formatA : {"csr", "dcsr"}) {
          std::vector<std::string> schedules = kInner;
          if (statement.denseOutput) schedules.insert(schedules.end(), kInnerParallel.begin(), kInnerParallel.end());
          if (std::string(formatA) == "dcsr") {
            schedules.insert(schedules.end(), kOuter.begin(), kOuter.end());
            if (statement.denseOutput)
              schedules.insert(schedules.end(), kOuterParallel.begin(), kOuterParallel.end());
          }
          for (const auto& schedule : schedules) {
            std::string dsl = program(formatA, formatB, statement, schedule);
            SCOPED_TRACE(inputs.name + "\n" + dsl);
            std::string code = expectProgramMatchesReference(dsl, declaredInputs(dsl, inputs.tensors));
            ++checked;
            // B's level at the pos variable is sparse (all but CSR's first
            // level): it is searched, not co-iterated.
            bool bSparseHere = contains(schedule, "pos(k") || contains(schedule, "pos(f") ||
                               std::string(formatB) != "csr";
            if (bSparseHere) EXPECT_TRUE(contains(code, "tcc_lower_bound(")) << code;
          }
        }
  EXPECT_EQ(checked, 3 * 8 * 3 * (2 * 4 + 2) + 3 * 5 * 3 * (2 * 1 + 1));
}

// An unordered level cannot be searched: refused at the pos command, and
// the program without it matches. (A union with the other operand, which
// needs its entries where A has none, is pos_union_test.cpp's.)
TEST(PosWithASearchedOperand, IsRefusedAtTheCommandWhereTheSearchCannotServe) {
  struct Refused {
    std::string formatB, statement, message;
  };
  const std::vector<Refused> refused = {
      {"{dense, compressed(unordered)}", "Y(i,k) = A(i,k) * B(i,k)",
       "B also stores k sparsely in an unordered level, which cannot be searched for A's coordinates"},
  };
  rt::Coo a = randomSparse({10, 8}, 0.3, 21);
  std::map<std::string, rt::Coo> inputs = {{"A", a}, {"B", randomSparse({10, 8}, 0.4, 22)}};
  for (const auto& each : refused) {
    std::string text = "tensor A(I, K) : csr\ntensor B(I, K) : " + each.formatB + "\ntensor Y(I, K) : dense\n" +
                       each.statement + "\n";
    std::string dsl = withSchedule(text, "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 2)");
    SCOPED_TRACE(dsl);
    frontend::Diagnostic refusal = refusalOf(dsl);
    EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", 6, 1})) << refusal.format();
    EXPECT_EQ(refusal.message.rfind("pos(k, kp, A(i,k)): " + each.message, 0), 0u) << refusal.message;
    expectProgramMatchesReference(text, inputs);
  }
}

}  // namespace
}  // namespace tcc::test
