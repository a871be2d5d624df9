// pos over A in an expression with terms without A (a union): the loops
// over A's positions compute the cases with A, then loops over the
// coordinates the other operands store (A's skipped by binary search)
// compute the rest. Sums, a sum inside a product, three operands,
// subtraction, scalar multiples, a dense operand; the other operands CSR,
// DCSR or COO, A CSR or DCSR; pos over A's second level (plain, split,
// unrolled, after a fuse, on threads) and its first (A DCSR); dense
// outputs and a sparse one the second loops do not reorder. Against the
// dense reference on random matrices and real ones (ibm32a, ibm32b). What
// the second loops cannot serve is refused at the pos command.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct Statement {
  std::string declarations;  // besides A(I, K) and B(I, K)
  std::string text;
  bool sparseOutputOverI = false;  // stored sparse at i: no pos over A's first level
};

const std::vector<Statement> kStatements = {
    {"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) + B(i,k)"},
    {"tensor y(I) : dense\ntensor x(K) : dense\n", "y(i) = (A(i,k) + B(i,k)) * x(k)"},
    {"tensor y(I) : dense\ntensor x(K) : dense\ntensor z(K) : dense\n", "y(i) = sum(k, A(i,k) * x(k) + B(i,k) * z(k))"},
    {"tensor Y(I, K) : dense\ntensor C(I, K) : csr\n", "Y(i,k) = A(i,k) + B(i,k) + C(i,k)"},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) - B(i,k)"},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = 2 * A(i,k) - 3 * B(i,k)"},
    {"tensor Y(I, K) : dense\n", "Y(i,k) = B(i,k) - A(i,k) * B(i,k)"},
    {"tensor Y(I, K) : dense\ntensor C(I, K) : dcsr\n", "Y(i,k) = B(i,k) * (A(i,k) + C(i,k))"},
    {"tensor Y(I, K) : dense\ntensor C(I, K) : csr\n", "Y(i,k) = A(i,k) * C(i,k) - 0.5 * B(i,k)"},
    {"tensor Y(I, K) : dense\ntensor D(I, K) : dense\n", "Y(i,k) = A(i,k) + D(i,k)"},
    {"tensor y(I) : sparse\ntensor x(K) : dense\n", "y(i) = (A(i,k) + B(i,k)) * x(k)", true},
};

// pos over A's second level (A any sparse format), serial and on threads.
const std::vector<std::string> kInner = {
    "pos(k, kp, A(i,k))",
    "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 3)",
    "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 2)\nunroll(kp1, 2)",
};
const std::vector<std::string> kInnerParallel = {
    "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 2)\nparallelize(kp0, CPUThread, Atomics)",
};
// The rows on threads, where every operand locates its rows (a dense first
// level: threads cannot share the cursors of a merge over sparse rows).
const std::string kRowsParallel = "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 3)\nparallelize(i, CPUThread, NoRaces)";
// Over all of A's nonzeros (a fused pair of levels): the second loops run
// over i and k.
const std::vector<std::string> kFused = {
    "fuse(i, k, f)\npos(f, fp, A(i,k))",
    "fuse(i, k, f)\npos(f, fp, A(i,k))\nsplit(fp, fp0, fp1, 4)",
    "fuse(i, k, f)\npos(f, fp, A(i,k))\nsplit(fp, fp0, fp1, 4)\nparallelize(fp0, CPUThread, Atomics)",
    "fuse(i, k, f)\npos(f, fp, A(i,k))\nsplit(fp, fp0, fp1, 5)\nparallelize(fp0, CPUThread, ParallelReduction)",
};
// pos over A's first level (A dcsr): the second loops run over the rows A
// does not store.
const std::vector<std::string> kOuter = {
    "pos(i, ip, A(i,k))",
    "pos(i, ip, A(i,k))\nsplit(ip, ip0, ip1, 2)",
    "pos(i, ip, A(i,k))\nsplit(ip, ip0, ip1, 2)\nparallelize(ip0, CPUThread, NoRaces)",
};

std::string program(const std::string& formatA, const std::string& formatB, const Statement& statement,
                    const std::string& schedule) {
  return programOverAB(formatA, formatB, statement.declarations, statement.text, schedule);
}

std::vector<NamedInputs> allInputs() {
  // B overlapping A in part; sparse ones with empty rows (rows only B
  // stores, rows only A stores); two real matrices of the same shape.
  rt::Coo ibm32a = realMatrix("ibm32a.mtx");
  rt::Coo ibm32b = transposed(realMatrix("ibm32b.mtx"));
  return {inputsOverAB("random 9x7", randomSparse({9, 7}, 0.4, 5), randomSparse({9, 7}, 0.5, 6), 7),
          inputsOverAB("random 14x12, empty rows", randomSparse({14, 12}, 0.07, 10), randomSparse({14, 12}, 0.12, 11), 12),
          inputsOverAB("ibm32a + ibm32b^T", ibm32a, ibm32b, 20)};
}

TEST(PosOverAUnion, MatchesReference) {
  const std::vector<NamedInputs> all = allInputs();
  int checked = 0;
  for (const auto& statement : kStatements)
    for (const char* formatB : {"csr", "dcsr", "coo"})
      for (const char* formatA : {"csr", "dcsr"}) {
        // (A sparse output's one level is assembled in order, not on threads.)
        std::vector<std::string> schedules = kInner;
        if (!statement.sparseOutputOverI) {
          schedules.insert(schedules.end(), kInnerParallel.begin(), kInnerParallel.end());
          schedules.insert(schedules.end(), kFused.begin(), kFused.end());
          if (std::string(formatA) == "dcsr") schedules.insert(schedules.end(), kOuter.begin(), kOuter.end());
          if (!contains(program(formatA, formatB, statement, ""), "dcsr") &&
              !contains(program(formatA, formatB, statement, ""), "coo"))
            schedules.push_back(kRowsParallel);
        }
        for (const auto& schedule : schedules) {
          std::string dsl = program(formatA, formatB, statement, schedule);
          // The second loops skip A's coordinates by binary search.
          checked += forEachCodeMatchingReference(
              dsl, all, [](const std::string& code) { EXPECT_TRUE(contains(code, "tcc_lower_bound(")) << code; });
        }
      }
  // Statements x B formats x A formats x schedules x inputs: the dense
  // outputs' with every schedule (pos over A's first level where A is
  // dcsr, rows on threads where all operands are csr but the one that
  // reads a dcsr C), the sparse output's with the serial inner ones.
  const int dense = static_cast<int>(kStatements.size()) - 1;
  const int inner = static_cast<int>(kInner.size() + kInnerParallel.size());
  const int fused = static_cast<int>(kFused.size()), outer = static_cast<int>(kOuter.size());
  EXPECT_EQ(checked, 3 * (dense * (3 * 2 * (inner + fused) + 3 * outer) + (dense - 1) +
                          3 * 2 * static_cast<int>(kInner.size())));
}

// A union in one case of the loops around (a row both A and B store) and
// none in another (a row only B stores: the loops over A's positions give
// way to the coordinate loop over B's row), and a sparse output whose
// order the second loops keep: y(i) is appended once a row.
TEST(PosOverAUnion, RowsWithoutAUseTheCoordinateLoop) {
  const Statement rows{"tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) + B(i,k)"};
  rt::Coo a = rt::Coo::ofShape({6, 5}), b = rt::Coo::ofShape({6, 5});
  struct Entry {
    rt::Coo* matrix;
    int32_t i, k;
    double value;
  };
  // Row 0: both, overlapping; row 1: only A; row 2: only B; row 3: none;
  // row 5: both, disjoint.
  const std::vector<Entry> entries = {{&a, 0, 1, 1.5},  {&a, 0, 3, -2.0}, {&b, 0, 0, 0.25}, {&b, 0, 3, 4.0},
                                      {&b, 0, 4, -1.0}, {&a, 1, 2, 3.0},  {&b, 2, 0, 5.0},  {&b, 2, 4, -6.0},
                                      {&a, 5, 0, 7.0},  {&b, 5, 1, 8.0},  {&a, 5, 4, 9.0}};
  for (const auto& entry : entries) {
    int32_t at[2] = {entry.i, entry.k};
    entry.matrix->push(at, entry.value);
  }
  for (const char* formatA : {"csr", "dcsr"})
    for (const char* formatB : {"csr", "dcsr", "coo"})
      for (const char* schedule : {"pos(k, kp, A(i,k))", "fuse(i, k, f)\npos(f, fp, A(i,k))"}) {
        std::string dsl = program(formatA, formatB, rows, schedule);
        SCOPED_TRACE(dsl);
        expectProgramMatchesReference(dsl, {{"A", a}, {"B", b}});
      }
}

// A sum across the rows (a scalar result), with the rows on threads: the
// second loop adds to the row's temporary in the same thread iteration
// as the first, which the race strategy then adds to the result (an
// atomic update, or each thread's partial sum).
TEST(PosOverAUnion, SumsAcrossRowsOnThreads) {
  const std::vector<NamedInputs> all = allInputs();
  const Statement columns{"tensor x(K) : dense\ntensor s : dense\n", "s = (A(i,k) + 2 * B(i,k)) * x(k)"};
  for (const char* strategy : {"Atomics", "ParallelReduction"})
    for (const char* schedule : {"pos(k, kp, A(i,k))", "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 2)"}) {
      std::string dsl = program("csr", "csr", columns,
                                schedule + std::string("\nparallelize(i, CPUThread, ") + strategy + ")");
      for (const auto& inputs : all) {
        SCOPED_TRACE(inputs.name + "\n" + dsl);
        std::string code = expectProgramMatchesReference(dsl, declaredInputs(dsl, inputs.tensors));
        EXPECT_TRUE(contains(code, "tcc_lower_bound(")) << code;
      }
    }
}

// Refused at the pos command, with the reason: a sparse output in the
// order of a variable the second loops visit (two passes of appends would
// break it), an unordered level of A (no binary search), and the GPU.
TEST(PosOverAUnion, IsRefusedAtTheCommandWhereTheSecondLoopCannotServe) {
  struct Refused {
    std::string formatA, declarations, statement, schedule, message;
  };
  const std::string sum = "the expression has terms where A has no entry (a sum), ";
  const std::vector<Refused> refused = {
      {"csr", "tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) + B(i,k)", "pos(k, kp, A(i,k))",
       sum + "which a second loop over k computes after A's positions; output Y is stored"},
      {"dcsr", "tensor Y(I, K) : csr\n", "Y(i,k) = A(i,k) + B(i,k)", "pos(i, ip, A(i,k))",
       sum + "which a second loop over i computes after A's positions; output Y is stored"},
      {"csr", "tensor y(I) : sparse\ntensor x(K) : dense\n", "y(i) = (A(i,k) + B(i,k)) * x(k)",
       "fuse(i, k, f)\npos(f, fp, A(i,k))", sum + "which a second loop over i computes after A's positions"},
      {"{dense, compressed(unordered)}", "tensor Y(I, K) : dense\n", "Y(i,k) = A(i,k) + B(i,k)",
       "pos(k, kp, A(i,k))", sum + "which a second loop skips where A stores the coordinate"},
      // A loop over j between the position loops: the second loop over k
      // would have to stand between them too.
      {"csr", "tensor C(K, J) : dense\ntensor v(J) : dense\ntensor y(I) : dense\n",
       "y(i) = (A(i,k) + B(i,k)) * C(k,j) * v(j)", "pos(k, kp, A(i,k))\nsplit(kp, kp0, kp1, 2)\nreorder(kp0, j, kp1)",
       sum + "which loops over the variables the position loops replace compute after them; other loops between"},
  };
  std::map<std::string, rt::Coo> inputs = {{"A", randomSparse({10, 8}, 0.3, 21)},
                                           {"B", randomSparse({10, 8}, 0.4, 22)},
                                           {"x", randomDense({8}, 23)}, {"C", randomDense({8, 5}, 24)},
                                           {"v", randomDense({5}, 25)}};
  for (const auto& each : refused) {
    std::string text =
        "tensor A(I, K) : " + each.formatA + "\ntensor B(I, K) : csr\n" + each.declarations + each.statement + "\n";
    std::string dsl = withSchedule(text, each.schedule);
    SCOPED_TRACE(dsl);
    frontend::Diagnostic refusal = refusalOf(dsl);
    // At the pos command, the schedule's first line.
    std::string command = each.schedule.substr(0, each.schedule.find('\n'));
    int line = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 2;
    if (contains(each.schedule, "fuse")) {
      command = each.schedule.substr(each.schedule.find('\n') + 1);
      command = command.substr(0, command.find('\n'));
      ++line;
    }
    EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", line, 1})) << refusal.format();
    EXPECT_EQ(refusal.message.rfind(command + ": " + sum, 0), 0u) << refusal.message;
    EXPECT_TRUE(contains(refusal.message, each.message)) << refusal.message;
    EXPECT_TRUE(contains(refusal.format(), "\n" + command + "\n^\n")) << refusal.format();
    expectProgramMatchesReference(text, declaredInputs(text, inputs));
  }

  // The GPU: in a warp, the second loop runs in every lane after the
  // positions, one lane storing, which would race with the lanes' atomic
  // updates (test/cuda: what compiles on the GPU).
  std::string dsl = withSchedule(
      "tensor A(I, K) : csr\ntensor B(I, K) : csr\ntensor x(K) : dense\ntensor y(I) : dense\n"
      "y(i) = (A(i,k) + B(i,k)) * x(k)\n",
      "pos(k, kp, A(i,k))\nparallelize(i, GPUWarp, NoRaces)\nparallelize(kp, GPUThread, Atomics)");
  CompileOptions options;
  options.target = frontend::Target::Cuda;
  std::string message;
  try {
    lowerProgram(Program::fromText(dsl, "test.tc"), options);
  } catch (const std::exception& error) {
    message = error.what();
  }
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: pos(k, kp, A(i,k)): " + sum)) << message;
  EXPECT_TRUE(contains(message, "in every thread of the warp, one of them storing; its updates would race with "
                                "the threads' atomic updates of the positions")) << message;
}

}  // namespace
}  // namespace tcc::test
