// Terms that reduce over different variables into a dense output, on the
// cpu target, on real matrices (see RESULTS.md, "Term sums into a dense
// output"):
//
//   spmv   y(j) = A(i, j) * x(i) + B(j, k) * z(k)
//   spmm   Y(j, l) = A(i, j) * C(i, l) - B(j, k) * D(k, l)   (C, D: 8 columns)
//
// A is the matrix (CSR), B its transpose (CSR), so both terms read real
// structure; no one loop order reads both in storage order with j
// outermost. Per matrix and statement, in one process:
//
//   direct     tcc's default kernel: each term's loop nest adds into the
//              dense output (zeroed once), one nest after another
//   workspace  the same program under `sparse_workspace(policy = hash)`,
//              the hash policy the default picked before: each term
//              inserts into one ISM workspace, compressed into the output
//   roomy      the workspace with a capacity of the whole output, so that
//              it never sorts and merges a batch before the end: each
//              entry's sum then runs in insertion order, the direct form's
//              (its bits are compared, not its time)
//
// Times are medians of Kernel::run with RunOptions.repeat after a warm-up
// (the output's zeroed allocation inside the time, for both). Every result
// is checked against the other: the largest difference relative to the
// largest magnitude, and whether the bits agree.
//
//   tcc_term_sums_bench [--repeat N] MATRIX...
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tcc/runtime/pack.h"
#include "tcc/tcc.h"
#include "../common/bench_inputs.h"
#include "../common/stats.h"
#include "../common/timed_program.h"

namespace {

const char* kSpmv = "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ntensor B(J, K) : csr\n"
                    "tensor z(K) : dense\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n";
const char* kSpmm = "tensor Y(J, L) : dense\ntensor A(I, J) : csr\ntensor C(I, L) : dense\ntensor B(J, K) : csr\n"
                    "tensor D(K, L) : dense\nY(j, l) = A(i, j) * C(i, l) - B(j, k) * D(k, l)\n";
const char* kWorkspace = "schedule {\n  sparse_workspace(policy = hash)\n}\n";

struct Compared {
  double relative = 0;  // largest |a - b| over the largest |b|
  bool sameBits = true;
  bool allZero = true;
};

Compared compare(const tcc::Tensor& a, const tcc::Tensor& b) {
  std::vector<double> x = tcc::rt::toDense(a), y = tcc::rt::toDense(b);
  Compared c;
  if (x.size() != y.size()) return {INFINITY, false, false};
  double scale = 1e-300, worst = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    scale = std::max(scale, std::abs(y[k]));
    worst = std::max(worst, std::abs(x[k] - y[k]));
    c.sameBits = c.sameBits && std::memcmp(&x[k], &y[k], sizeof(double)) == 0;
    c.allZero = c.allZero && y[k] == 0;
  }
  c.relative = worst / scale;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 11;
  std::vector<std::string> matrices;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc)
      repeat = std::atoi(argv[++a]);
    else
      matrices.push_back(argv[a]);
  }
  if (matrices.empty()) matrices = {"bcsstk13", "bcspwr10", "dwt_992", "jagmesh7", "west0497"};
  std::printf("| statement | matrix | rows | cols | nnz | direct ms | workspace ms | workspace/direct | max rel diff | "
              "same bits | same bits as roomy |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
  std::vector<double> ratios;
  bool ok = true;
  for (const auto& name : matrices) {
    tcc::rt::Coo a = readMatrix(name);
    const int32_t rows = a.dims[0], cols = a.dims[1];
    for (const char* statement : {"spmv", "spmm"}) {
      const bool spmv = !std::strcmp(statement, "spmv");
      std::map<std::string, tcc::rt::Coo> coos = {{"A", a}, {"B", transposed(a)}};
      if (spmv) {
        coos.emplace("x", denseCoo({rows}, 11));
        coos.emplace("z", denseCoo({rows}, 12));
      } else {
        coos.emplace("C", denseCoo({rows, 8}, 13));
        coos.emplace("D", denseCoo({rows, 8}, 14));
      }
      const std::string program = spmv ? kSpmv : kSpmm;
      const std::string output = spmv ? "y" : "Y";
      auto inputs = packedFor(program, coos);
      TimedProgram direct = timeProgram(program, inputs, output, repeat);
      TimedProgram workspace = timeProgram(program + kWorkspace, inputs, output, repeat);
      Compared c = compare(direct.result, workspace.result);
      const int64_t entries = int64_t(cols) * (spmv ? 1 : 8);
      TimedProgram roomy = timeProgram(program + "schedule {\n  sparse_workspace(policy = hash, capacity = " +
                                   std::to_string(entries) + ")\n}\n",
                               inputs, output, 1);
      Compared r = compare(direct.result, roomy.result);
      ok = ok && c.relative <= 1e-12 && !c.allZero;
      ratios.push_back(workspace.seconds / direct.seconds);
      ok = ok && r.relative <= 1e-12;
      std::printf("| %s | %s | %d | %d | %zu | %.3f | %.3f | %.2f | %.1e | %s | %s |\n", statement, name.c_str(), rows,
                  cols, a.nnz(), direct.seconds * 1e3, workspace.seconds * 1e3, ratios.back(), c.relative,
                  c.sameBits ? "yes" : "no", r.sameBits ? "yes" : "no");
    }
  }
  std::printf("\ngeomean workspace/direct time over %zu runs: %.2f\n", ratios.size(), geomean(ratios));
  if (!ok) std::printf("MISMATCH: a result differs beyond 1e-12 or is all zero\n");
  return ok ? 0 : 1;
}
