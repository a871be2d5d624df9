// Schedules of statements whose sums sit below their top: terms that sum
// over different variables (Y(i,j) = C(i,j,m) - B(i)), sums under products
// (y(i) = A(i,j) * sum(k, B(j,k) * x(k))), sums inside sums, scalar results.
// Each such sum is computed into a scalar temporary by loops of its own; a
// command acts on every loop over the variable it names, and what cannot
// apply is refused at the command with the reason.
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "tcc/ir/index_printer.h"

namespace tcc::test {
namespace {

struct Scheduled {
  std::string program;                 // declarations and the statement
  std::vector<std::string> schedules;  // each compiles and matches the reference
};

std::vector<Scheduled> scheduledStatements() {
  return {
      // A sum under a product (SpMV of a product of matrices, the inner one
      // summed per j), two formats of A.
      {"tensor y(I) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : csr\ntensor x(K) : dense\n"
       "y(i) = A(i,j) * sum(k, B(j,k) * x(k))\n",
       {"split(i, i0, i1, 4)", "pos(k, kp, B(j,k))\nsplit(kp, kp0, kp1, 2)", "pos(j, jp, A(i,j))",
        "parallelize(i, CPUThread, NoRaces)\npos(k, kp, B(j,k))",
        "fuse(i, j, f)\npos(f, fp, A(i,j))\nsplit(fp, fp0, fp1, 3)\nparallelize(fp0, CPUThread, Atomics)",
        "pos(k, kp, B(j,k))\nparallelize(kp, CPUThread, ParallelReduction)", "split(i, i0, i1, 2)\nunroll(i1, 2)"}},
      {"tensor y(I) : dense\ntensor A(I, J) : dcsr\ntensor B(J, K) : csr\ntensor x(K) : dense\n"
       "y(i) = A(i,j) * sum(k, B(j,k) * x(k))\n",
       {"pos(i, ip, A(i,j))\nsplit(ip, ip0, ip1, 2)\nparallelize(ip0, CPUThread, NoRaces)",
        "pos(k, kp, B(j,k))\nsplit(kp, kp0, kp1, 3)\nparallelize(kp1, CPUVector, ParallelReduction)"}},
      // Terms summing over different variables, a dense and a sparse output.
      {"tensor Y(I, J) : dense\ntensor C(I, J, M) : {dense, dense, compressed}\ntensor b(I) : dense\n"
       "Y(i,j) = C(i,j,m) - b(i)\n",
       {"split(i, i0, i1, 3)\nsplit(j, j0, j1, 2)", "pos(m, mp, C(i,j,m))\nsplit(mp, mp0, mp1, 2)",
        "fuse(i, j, f)\nparallelize(f, CPUThread, NoRaces)", "bound(i, ib, 40, MaxConstraint)",
        "fuse(i, j, f)\nsplit(f, f0, f1, 4)\nparallelize(f0, CPUThread, NoRaces)",
        "parallelize(j, CPUVector, NoRaces)", "split(j, j0, j1, 2)\nreorder(i, j0, j1)",
        "pos(m, mp, C(i,j,m))\nparallelize(mp, CPUThread, Temporary)"}},
      {"tensor Y(I, J) : csr\ntensor C(I, J, M) : {dense, compressed, compressed}\ntensor D(I, J) : csr\n"
       "Y(i,j) = D(i,j) + C(i,j,m) * 2\n",
       {"parallelize(i, CPUThread, NoRaces)", "pos(m, mp, C(i,j,m))\nsplit(mp, mp0, mp1, 2)",
        "split(i, i0, i1, 3)\nparallelize(i0, CPUThread, NoRaces)"}},
      // A dense workspace among a sum's loops.
      {"tensor Y(I, J) : dense\ntensor C(I, J, M) : {dense, dense, compressed}\ntensor e(M) : dense\n"
       "tensor b(I) : dense\nY(i,j) = C(i,j,m) * e(m) * C(i,j,m) - b(i)\n",
       {"precompute(C(i,j,m) * e(m), m, mw)", "precompute(C(i,j,m), m, mw)",
        "split(i, i0, i1, 2)\nprecompute(C(i,j,m) * e(m), m, mw)\n"
        "parallelize(i0, CPUThread, NoRaces)", "precompute(C(i,j,m) * e(m), m, m)\nparallelize(j, CPUThread, NoRaces)"}},
      {"tensor y(I) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : csr\ntensor x(K) : dense\n"
       "y(i) = A(i,j) * sum(k, B(j,k) * x(k))\n",
       {"precompute(B(j,k) * x(k), k, kw)", "pos(j, jp, A(i,j))\nprecompute(B(j,k) * x(k), k, kw)"}},
      // A sum under a product with a dense operand: any order of i and j.
      {"tensor Y(I, J) : dense\ntensor B(I, M) : csr\ntensor x(M) : dense\ntensor D(I, J) : dense\n"
       "Y(i,j) = D(i,j) * sum(m, B(i,m) * x(m))\n",
       {"reorder(j, i)", "reorder(j, i)\npos(m, mp, B(i,m))\nsplit(mp, mp0, mp1, 2)",
        "split(i, i0, i1, 4)\nreorder(i1, j, i0)\nparallelize(i1, CPUThread, NoRaces)"}},
      // Two terms summing over the same variable: one loop over k each; pos
      // replaces the loop whose sum reads A, a split the other one.
      {"tensor y(I) : dense\ntensor A(I, K) : csr\ntensor E(I, K) : dense\ntensor x(K) : dense\n"
       "y(i) = A(i,k) - E(i,k) * x(k)\n",
       {"pos(k, kp, A(i,k))", "pos(k, kp, A(i,k))\nsplit(k, k0, k1, 4)\nsplit(kp, kp0, kp1, 3)",
        "parallelize(i, CPUThread, NoRaces)\npos(k, kp, A(i,k))", "split(i, i0, i1, 5)\nreorder(i1, i0)"}},
      // A residual.
      {"tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       {"split(i, i0, i1, 8)\nparallelize(i0, CPUThread, NoRaces)", "pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 4)",
        "divide(i, i0, i1, 3)", "split(i, i0, i1, 2)\nsparse_workspace(policy = hash)"}},
      {"tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : sparse\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       {"pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 4)\nparallelize(jp1, CPUVector, ParallelReduction)"}},
      // Over the rows A stores, then the others (b's alone).
      {"tensor r(I) : dense\ntensor A(I, J) : dcsr\ntensor x(J) : dense\ntensor b(I) : dense\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       {"pos(i, ip, A(i,j))", "pos(i, ip, A(i,j))\nsplit(ip, ip0, ip1, 2)\nparallelize(ip0, CPUThread, NoRaces)"}},
      // A scalar result: two sums over i, each split, and threads reducing.
      {"tensor s : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor z(I) : dense\n"
       "s = A(i,j) * x(j) + z(i)\n",
       {"split(i, i0, i1, 4)", "parallelize(i, CPUThread, ParallelReduction)", "pos(j, jp, A(i,j))"}},
      // Terms that no one loop order fits (B(i,k) * C(k,j) sums k between A's
      // indices): each fills the output's sparse workspace by loops of its own,
      // which the commands schedule (threads fill one workspace each).
      {"tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\ntensor D(I, J) : csr\n"
       "A(i,j) = B(i,k) * C(k,j) + D(i,j)\n",
       {"parallelize(i, CPUThread, NoRaces)", "split(i, i0, i1, 4)\nparallelize(i0, CPUThread, NoRaces)",
        "pos(k, kp, B(i,k))\nsplit(kp, kp0, kp1, 2)", "reorder(i, k)\nsparse_workspace(policy = coord)",
        "fuse(i, k, f)\npos(f, fp, B(i,k))\nsplit(fp, fp0, fp1, 5)\nparallelize(fp0, CPUThread, NoRaces)"}},
      // pos over an access a term would otherwise read from a copy in its
      // loops' order (E stores k above i): the term reads E, B is copied.
      {"tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor E(K, I) : csr\ntensor C(K, J) : csr\n"
       "tensor D(I, J) : csr\nA(i,j) = B(i,k) * E(k,i) * C(k,j) + D(i,j)\n",
       {"pos(i, ip, E(k,i))", "pos(i, ip, E(k,i))\nsplit(ip, ip0, ip1, 2)\nparallelize(k, CPUThread, NoRaces)",
        "pos(k, kp, B(i,k))"}},
      {"tensor Y(I, J) : dense\ntensor A(I, J, K) : {dense, dense, compressed}\ntensor D(L, J) : csr\n"
       "tensor c(L) : dense\nY(i,j) = A(i,j,k) - c(l) * D(l,j)\n",
       {"pos(k, kp, A(i,j,k))\nsplit(kp, kp0, kp1, 2)", "split(l, l0, l1, 3)\nparallelize(l0, CPUThread, NoRaces)",
        "bound(i, ib, 11, MaxExact)"}},
      // A sum inside a sum inside a product.
      {"tensor y(I) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : csr\ntensor C(K, L) : csr\ntensor x(L) : dense\n"
       "y(i) = A(i,j) * sum(k, B(j,k) * sum(l, C(k,l) * x(l)))\n",
       {"pos(l, lp, C(k,l))", "split(i, i0, i1, 2)\nparallelize(i0, CPUThread, NoRaces)\npos(k, kp, B(j,k))",
        "pos(l, lp, C(k,l))\nsplit(lp, lp0, lp1, 2)\nparallelize(lp0, CPUThread, Temporary)"}},
  };
}

// Random operands for the tensors a program declares, from its text: sizes
// 11 (I), 7 (J), 9 (K), 6 (L), 5 (M); 40% of the entries stored.
std::map<std::string, rt::Coo> inputsOf(const std::string& program, uint64_t seed) {
  const std::map<char, int32_t> sizes = {{'I', 11}, {'J', 7}, {'K', 9}, {'L', 6}, {'M', 5}};
  std::map<std::string, rt::Coo> inputs;
  size_t at = 0;
  bool first = true;
  while ((at = program.find("tensor ", at)) != std::string::npos) {
    size_t nameEnd = program.find_first_of("( :", at + 7);
    std::string name = program.substr(at + 7, nameEnd - at - 7);
    std::vector<int32_t> dims;
    if (program[nameEnd] == '(')
      for (size_t c = nameEnd; program[c] != ')'; ++c)
        if (sizes.count(program[c])) dims.push_back(sizes.at(program[c]));
    at = nameEnd;
    if (first) {  // the output
      first = false;
      continue;
    }
    inputs[name] = randomSparse(dims, 0.4, seed++);
  }
  return inputs;
}

// Every schedule of every statement, in each floating-point mode, compiles and matches the dense reference.
void expectEachScheduleMatches(const std::vector<Scheduled>& statements, std::initializer_list<const char*> modes,
                               std::initializer_list<uint64_t> seeds) {
  for (const auto& statement : statements)
    for (const auto& schedule : statement.schedules)
      for (const char* mode : modes) {
        std::string dsl = withSchedule(statement.program + mode, schedule);
        SCOPED_TRACE(dsl);
        EXPECT_EQ(errorOf(dsl), "");
        for (uint64_t seed : seeds) expectProgramMatchesReference(dsl, inputsOf(statement.program, seed * 100));
      }
}

// Each schedule of `program`, in each mode, against the reference on `inputs`.
void expectSchedulesMatch(const std::string& program, std::initializer_list<const char*> schedules,
                          std::initializer_list<const char*> modes, const std::map<std::string, rt::Coo>& inputs) {
  for (const char* mode : modes)
    for (const char* schedule : schedules) {
      std::string dsl = withSchedule(program + mode, schedule);
      SCOPED_TRACE(dsl);
      expectProgramMatchesReference(dsl, inputs);
    }
}

TEST(NestedSumSchedules, MatchReference) { expectEachScheduleMatches(scheduledStatements(), {""}, {11u, 12u}); }

TEST(NestedSumSchedules, MatchReferenceOnARealMatrix) {
  rt::Coo a = realMatrix("bcsstk01.mtx");
  int32_t n = a.dims[0];
  std::string program = "tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
                        "r(i) = b(i) - A(i,j) * x(j)\n";
  expectSchedulesMatch(program,
                       {"pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 4)\nparallelize(jp0, CPUThread, ParallelReduction)",
                        "parallelize(i, CPUThread, NoRaces)"},
                       {""}, {{"A", a}, {"x", randomDense({n}, 960)}, {"b", randomDense({n}, 961)}});
}

// The concrete index notation shows where each command went: the sum that
// reads A iterates A's positions, the other one keeps its loop over k.
TEST(NestedSumSchedules, EachCommandActsOnTheLoopsOverItsVariable) {
  std::string dsl = withSchedule("tensor y(I) : dense\ntensor A(I, K) : csr\ntensor E(I, K) : dense\n"
                                 "tensor x(K) : dense\ny(i) = A(i,k) - E(i,k) * x(k)\n",
                                 "pos(k, kp, A(i,k))\nsplit(k, k0, k1, 4)\nparallelize(i, CPUThread, NoRaces)");
  std::string concrete = ir::toString(lowerProgram(Program::fromText(dsl, "test.tc")).statements.at(0).concrete);
  EXPECT_TRUE(contains(concrete, "forall(kp, tk += A(i,k))")) << concrete;
  EXPECT_TRUE(contains(concrete, "forall(k0, forall(k1, tk1 += E(i,k) * x(k)))")) << concrete;
  EXPECT_TRUE(contains(concrete, "pos(k, kp, A(i,k)), split(k, k0, k1, 4)")) << concrete;
}

// A scalar result summed by threads or vector lanes whose loop holds a
// sum computed into a temporary: each iteration's temporary is its own, and
// the loop's share of the result is a partial sum per thread (or lane),
// added together after the loop. In strict and in fast floating point.
std::vector<Scheduled> scalarResultsReducedAcrossASum() {
  return {
      // A sum under a product, the product's operand sparse.
      {"tensor Y : dense\ntensor B(K) : dense\ntensor A(I) : sparse\nY = sum(k, B(k)) * A(i)\n",
       {"parallelize(i, CPUThread, ParallelReduction)", "parallelize(i, CPUThread, Temporary)",
        "pos(i, ip, A(i))\nsplit(ip, ip0, ip1, 2)\nparallelize(ip0, CPUThread, ParallelReduction)",
        "pos(i, ip, A(i))\nsplit(ip, ip0, ip1, 4)\nparallelize(ip1, CPUThread, ParallelReduction)"}},
      // The sum's operand sparse, the product's dense.
      {"tensor y : dense\ntensor A(I) : dense\ntensor B(I, K) : csr\ntensor x(K) : dense\n"
       "y = A(i) * sum(k, B(i,k) * x(k))\n",
       {"parallelize(i, CPUThread, ParallelReduction)", "parallelize(i, CPUVector, ParallelReduction)",
        "split(i, i0, i1, 3)\nparallelize(i0, CPUThread, ParallelReduction)",
        "split(i, i0, i1, 3)\nparallelize(i1, CPUThread, ParallelReduction)",
        "split(i, i0, i1, 2)\nparallelize(i0, CPUThread, ParallelReduction)\npos(k, kp, B(i,k))\n"
        "split(kp, kp0, kp1, 2)",
        "parallelize(i, CPUThread, Atomics)"}},
      // A difference of sums: each term's loop over i sums into a temporary
      // of its own, which its threads reduce.
      {"tensor y : dense\ntensor A(I) : dense\ntensor B(I, K) : csr\ntensor x(K) : dense\n"
       "tensor c(I) : dense\ntensor E(I, K) : csr\n"
       "y = A(i) * sum(k, B(i,k) * x(k)) - c(i) * sum(k, E(i,k) * x(k))\n",
       {"parallelize(i, CPUThread, ParallelReduction)", "split(i, i0, i1, 3)\nparallelize(i0, CPUThread, Temporary)",
        "parallelize(i, CPUVector, ParallelReduction)", "split(i, i0, i1, 3)\nparallelize(i0, CPUThread, Atomics)",
        "parallelize(i, CPUThread, Atomics)\npos(k, kp, B(i,k))"}},
      // A sum under a product of a matrix, summed over both its indices.
      {"tensor y : dense\ntensor A(I, J) : csr\ntensor B(J, K) : csr\ntensor x(K) : dense\n"
       "y = A(i,j) * sum(k, B(j,k) * x(k))\n",
       {"parallelize(i, CPUThread, ParallelReduction)",
        "pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 2)\nparallelize(jp0, CPUThread, ParallelReduction)"}},
  };
}

// Atomics into the scalar temporary of a term (a sum below the statement's
// top): the loop's threads keep partial sums, added once after it, as under
// ParallelReduction; no atomic update of a temporary the kernel declares.
std::vector<Scheduled> atomicsIntoATermsTemporary() {
  return {
      {"tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       {"pos(j, jp, A(i,j))\nparallelize(jp, CPUThread, Atomics)",
        "pos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 2)\nparallelize(jp0, CPUThread, Atomics)"}},
      {"tensor y : dense\ntensor A(I) : dense\ntensor B(I, K) : csr\ntensor x(K) : dense\n"
       "tensor c(I) : dense\ntensor E(I, K) : csr\n"
       "y = A(i) * sum(k, B(i,k) * x(k)) - c(i) * sum(k, E(i,k) * x(k))\n",
       {"split(i, i0, i1, 3)\nparallelize(i0, CPUThread, Atomics)", "parallelize(i, CPUThread, Atomics)"}},
      {"tensor Y(I, J) : dense\ntensor C(I, J, M) : {dense, dense, compressed}\ntensor b(I) : dense\n"
       "Y(i,j) = C(i,j,m) - b(i)\n",
       {"pos(m, mp, C(i,j,m))\nparallelize(mp, CPUThread, Atomics)"}},
  };
}

TEST(NestedSumSchedules, AtomicsIntoATermsTemporaryReduceAndMatchReference) {
  expectEachScheduleMatches(atomicsIntoATermsTemporary(), {"", "fp fast\n"}, {15u, 16u});
  for (const auto& statement : atomicsIntoATermsTemporary())
    for (const auto& schedule : statement.schedules) {
      std::string code =
          expectProgramMatchesReference(withSchedule(statement.program, schedule), inputsOf(statement.program, 1500));
      EXPECT_TRUE(contains(code, "reduction(+:")) << code;
      EXPECT_FALSE(contains(code, "omp atomic")) << code;
    }
}

TEST(NestedSumSchedules, ScalarResultsReducedAcrossASumMatchReference) {
  expectEachScheduleMatches(scalarResultsReducedAcrossASum(), {"", "fp fast\n"}, {13u, 14u});
}

// Enough rows for several threads' chunks: a real matrix's.
TEST(NestedSumSchedules, ScalarResultsReducedAcrossASumOnARealMatrix) {
  rt::Coo b = realMatrix("bcsstk01.mtx");
  int32_t n = b.dims[0];
  std::string program = "tensor y : dense\ntensor A(I) : dense\ntensor B(I, K) : csr\ntensor x(K) : dense\n"
                        "y = A(i) * sum(k, B(i,k) * x(k))\n";
  expectSchedulesMatch(program,
                       {"parallelize(i, CPUThread, ParallelReduction)",
                        "split(i, i0, i1, 2)\nparallelize(i0, CPUThread, ParallelReduction)",
                        "split(i, i0, i1, 4)\nparallelize(i1, CPUThread, Temporary)",
                        "pos(k, kp, B(i,k))\nparallelize(kp, CPUThread, Atomics)"},
                       {"", "fp fast\n"}, {{"B", b}, {"x", randomDense({n}, 970)}, {"A", randomDense({n}, 971)}});
}

// dense_workspace([j]) (or a precompute of the whole right-hand side): the
// loops from j's on fill a dense workspace over j, each sum below the top
// still in its scalar temporary, and a loop over j copies it out.
std::vector<Scheduled> wholeRightHandSidesInADenseWorkspace() {
  return {
      {"tensor Y(I, J) : dense\ntensor C(I, J, M) : {dense, dense, compressed}\ntensor b(I) : dense\n"
       "Y(i,j) = C(i,j,m) - b(i)\n",
       {"dense_workspace()", "dense_workspace(j)\nparallelize(i, CPUThread, NoRaces)",
        "split(i, i0, i1, 3)\ndense_workspace(j)", "pos(m, mp, C(i,j,m))\ndense_workspace()\nsplit(mp, mp0, mp1, 2)",
        "precompute(C(i,j,m) - b(i), j, jw)", "dense_workspace()\nparallelize(j, CPUThread, NoRaces)"}},
      {"tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       {"dense_workspace()", "dense_workspace(i)\npos(j, jp, A(i,j))\nparallelize(jp, CPUThread, ParallelReduction)",
        "parallelize(i, CPUThread, NoRaces)\nprecompute(b(i) - A(i,j) * x(j), i, iw)"}},
      // A sum over j around a sum under a product: the workspace sums over j.
      {"tensor y(I) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : csr\ntensor x(K) : dense\n"
       "y(i) = A(i,j) * sum(k, B(j,k) * x(k))\n",
       {"dense_workspace()", "dense_workspace(i)\npos(j, jp, A(i,j))\nsplit(jp, jp0, jp1, 2)", "dense_workspace(j)",
        "precompute(A(i,j) * sum(k, B(j,k) * x(k)), j, jw)\nparallelize(i, CPUThread, NoRaces)"}},
      // A summed loop outside the workspace's: each where's workspace adds.
      {"tensor y(I) : dense\ntensor A(J, I) : dense\ntensor B(J, K) : csr\ntensor x(K) : dense\n"
       "y(i) = A(j,i) * sum(k, B(j,k) * x(k))\n",
       {"dense_workspace(i)", "reorder(j, i)\ndense_workspace(i)", "reorder(i, j)\ndense_workspace(j)"}},
      {"tensor Y(I, J) : dense\ntensor B(I, M) : csr\ntensor x(M) : dense\ntensor D(I, J) : dense\n"
       "Y(i,j) = D(i,j) * sum(m, B(i,m) * x(m))\n",
       {"reorder(j, i)\ndense_workspace(i)", "dense_workspace(j)"}},
      // A sparse output.
      {"tensor Y(I, J) : csr\ntensor C(I, J, M) : {dense, compressed, compressed}\ntensor D(I, J) : csr\n"
       "Y(i,j) = D(i,j) + C(i,j,m) * 2\n",
       {"dense_workspace()", "dense_workspace(j)\nparallelize(i, CPUThread, NoRaces)"}},
  };
}

TEST(NestedSumSchedules, WholeRightHandSidesInADenseWorkspaceMatchReference) {
  expectEachScheduleMatches(wholeRightHandSidesInADenseWorkspace(), {"", "fp fast\n"}, {17u, 18u});
  std::string dsl = withSchedule("tensor Y(I, J) : dense\ntensor C(I, J, M) : {dense, dense, compressed}\n"
                                 "tensor b(I) : dense\nY(i,j) = C(i,j,m) - b(i)\n",
                                 "dense_workspace()");
  std::string concrete = ir::toString(lowerProgram(Program::fromText(dsl, "test.tc")).statements.at(0).concrete);
  EXPECT_TRUE(contains(concrete, "forall(i, where(forall(j, Y(i,j) = w_Y(j)), forall(j, where(w_Y(j) = ")) << concrete;
}

TEST(NestedSumSchedules, WholeRightHandSidesInADenseWorkspaceOnARealMatrix) {
  rt::Coo a = realMatrix("bcsstk01.mtx");
  int32_t n = a.dims[0];
  std::string program = "tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor b(I) : dense\n"
                        "r(i) = b(i) - A(i,j) * x(j)\n";
  expectSchedulesMatch(program,
                       {"dense_workspace()\nparallelize(i, CPUThread, NoRaces)",
                        "dense_workspace()\npos(j, jp, A(i,j))\nparallelize(jp, CPUThread, Atomics)"},
                       {"", "fp fast\n"}, {{"A", a}, {"x", randomDense({n}, 980)}, {"b", randomDense({n}, 981)}});
}

struct Refused {
  std::string program;
  std::string schedule;  // its last command is the one refused
  std::string message;   // how the refusal's text after the command starts
};

// What stays unsupported is refused at the command, saying why.
TEST(NestedSumSchedules, RefusedAtTheCommandWithTheReason) {
  const std::string differentSums = "tensor Y(I, J) : dense\ntensor C(I, J, M) : {dense, dense, compressed}\n"
                                    "tensor b(I) : dense\nY(i,j) = C(i,j,m) - b(i)\n";
  const std::string residual = "tensor r(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
                               "tensor b(I) : dense\nr(i) = b(i) - A(i,j) * x(j)\n";
  const std::string twoSums = "tensor y(I) : dense\ntensor A(I, K) : csr\ntensor E(I, L) : dense\n"
                              "tensor x(L) : dense\ny(i) = A(i,k) - E(i,l) * x(l)\n";
  const std::string scalarOfSum = "tensor y : dense\ntensor A(I) : dense\ntensor B(I, K) : csr\n"
                                  "tensor x(K) : dense\ny = A(i) * sum(k, B(i,k) * x(k))\n";
  const std::string scalarOfDifference = "tensor y : dense\ntensor A(I) : dense\ntensor B(I, K) : csr\n"
                                         "tensor x(K) : dense\ntensor c(I) : dense\ntensor E(I, K) : csr\n"
                                         "y = A(i) * sum(k, B(i,k) * x(k)) - c(i) * sum(k, E(i,k) * x(k))\n";
  const std::vector<Refused> refused = {
      {differentSums, "reorder(m, j)",
       "m is a loop of a sum computed into a temporary inside the loop over j; it cannot move outside it"},
      {twoSums, "reorder(k, l)", "k and l are loops of different sums"},
      {residual, "fuse(i, j, f)", "j is a loop of a sum computed into a temporary inside the loop over i"},
      {residual, "precompute(b(i), i, iw)", "i is not a loop of the nest that computes b(i)"},
      {residual, "precompute(A(i,j) * x(j) + b(i), j, jw)", "not a part of one assignment"},
      {differentSums, "dense_workspace(i)",
       "the workspace holds one entry per i, but the loop over j, which runs inside it, picks the entries of Y"},
      {residual, "dense_workspace(j)", "j is not a loop around the whole statement (its loops: i)"},

      // (A split over A's compressed level searches its blocks:
      // CoordinateBlocks.*; a singleton level cannot be searched.)
      {"tensor r(I) : dense\ntensor A(I, J) : coo\ntensor x(J) : dense\ntensor b(I) : dense\n"
       "r(i) = b(i) - A(i,j) * x(j)\n",
       "split(j, j0, j1, 2)", "j is iterated by a singleton level of A"},
      {residual, "pos(j, jp, A(i,j))\nparallelize(jp, CPUThread, NoRaces)", "jp is summed into tj"},
      {residual, "pos(j, jp, A(i,j))\nparallelize(jp, CPUVector, Atomics)", "jp is summed into tj"},
      {twoSums, "pos(l, lp, A(i,k))", "A(i,k) is not indexed by l"},
      {scalarOfSum, "parallelize(i, CPUThread, NoRaces)", "i is summed into y, so iterations race on its entries"},
      // NoRaces into a term's scalar temporary says which strategies serve.
      {scalarOfDifference, "split(i, i0, i1, 3)\nparallelize(i0, CPUThread, NoRaces)",
       "i0 is summed into ti1, so iterations race on its entries (the scalar temporary of a sum below the "
       "statement's top); choose ParallelReduction or Temporary (or Atomics on CPU threads)"},
  };
  for (const auto& each : refused) expectRefusedAtLastCommand(each.program, each.schedule, each.message);
  // (The terms' sparse workspace takes a precompute among the loops of the
  // term that holds its expression: precompute_in_sparse_workspace_fill_test.cpp.)
  expectProgramMatchesReference(withSchedule("tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                                             "tensor D(I, J) : csr\nA(i,j) = B(i,k) * C(k,j) + D(i,j)\n",
                                             "split(i, i0, i1, 2)\nprecompute(D(i,j), j, jw)"),
                                {{"B", randomSparse({13, 11}, 0.2, 60)},
                                 {"C", randomSparse({11, 17}, 0.2, 61)},
                                 {"D", randomSparse({13, 17}, 0.2, 62)}});
}

}  // namespace
}  // namespace tcc::test
