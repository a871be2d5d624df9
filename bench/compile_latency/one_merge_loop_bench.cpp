// Run time of kernels whose co-iterations of sparse operands hold loops in
// their lattice cases, compiled as one merge loop per such co-iteration (the
// default, CompileOptions::oneMergeLoop) and as TACO's loop per lattice
// point (oneMergeLoop = false), both in the same process on the same
// inputs: real matrices paired with their transpose (or another matrix's
// rows) so that the unions merge. Rounds alternate which form runs first;
// each round runs each kernel --runs times; the table gives the medians of
// all runs. The two forms' outputs are compared: bit for bit, storage and
// values, in strict mode; within 1e-12 relative in fast mode.
//
//   tcc_one_merge_loop_bench [--rounds N] [--runs N] [--fast] [--before] [--only NAME] [--print-code] [--lines]
//
// --only runs the cases whose kernel name contains NAME; --print-code prints
// each kernel's C++ in each form instead of timing it. --before adds a
// third form, the merged loop as before its switch (cases tested in turn,
// CompileOptions::mergeLoopSwitch = false), timed in the same rounds.
// --lines prints the lines of each form's C++ (lowered, not compiled).
//
// Run it pinned to one core (taskset -c 1): the kernels are serial.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

using tcc::rt::Coo;

Coo matrix(const std::string& name) {
  return tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
}

Coo transposed(const Coo& m) {
  Coo t = Coo::ofShape({m.dims[1], m.dims[0]});
  t.reserve(m.nnz());
  for (size_t k = 0; k < m.nnz(); ++k) {
    int32_t c[2] = {m.coords[1][k], m.coords[0][k]};
    t.push(c, m.values[k]);
  }
  t.sort();
  return t;
}

// Row r moves to row (r + shift) mod rows: the same rows, other neighbours.
Coo rowsRotated(const Coo& m, int32_t shift) {
  Coo t = Coo::ofShape(m.dims);
  t.reserve(m.nnz());
  for (size_t k = 0; k < m.nnz(); ++k) {
    int32_t c[2] = {(m.coords[0][k] + shift) % m.dims[0], m.coords[1][k]};
    t.push(c, m.values[k]);
  }
  t.sort();
  return t;
}

// Only the rows whose index is a multiple of `every`: empty rows, so a
// DCSR operand runs out of rows before the other and the row loop merges.
Coo everyNthRow(const Coo& m, int32_t every, int32_t offset) {
  Coo t = Coo::ofShape(m.dims);
  for (size_t k = 0; k < m.nnz(); ++k)
    if (m.coords[0][k] % every == offset) {
      int32_t c[2] = {m.coords[0][k], m.coords[1][k]};
      t.push(c, m.values[k]);
    }
  return t;
}

// A sparse vector with every `every`-th of its n entries, from the
// matrix's values (real magnitudes).
Coo sparseVector(const Coo& m, int32_t n, int32_t every, int32_t offset) {
  Coo v = Coo::ofShape({n});
  for (int32_t i = offset, k = 0; i < n; i += every, ++k) v.push(&i, m.values[k % m.nnz()]);
  return v;
}

Coo denseVector(int32_t n, uint64_t seed) { return tcc::rt::randomUniform({n}, 1.0, seed); }

struct Case {
  std::string name, program, inputsDescribed;
  std::map<std::string, Coo> inputs;
};

const char* kAdd = "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nY(i,j) = A(i,j) + B(i,j)\n";
const char* kAddCsrOut =
    "tensor Y(I, J) : csr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nY(i,j) = A(i,j) + B(i,j)\n";
const char* kAddProduct =
    "tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n"
    "Y(i,j) = A(i,j) + B(i,j) * C(i,j)\n";
const char* kAddMatmul =
    "tensor Y(I, J) : csr\ntensor A(I, J) : dcsr\ntensor B(I, K) : dcsr\ntensor C(K, J) : csr\n"
    "Y(i,j) = A(i,j) + B(i,k) * C(k,j)\n";
const char* kTwoSpmv =
    "tensor y(I) : dense\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor x(J) : dense\ntensor z(J) : dense\n"
    "y(i) = A(i,j) * x(j) + B(i,j) * z(j)\n";
const char* kVectorUnionOfSums =
    "tensor y(I) : dense\ntensor a(I) : sparse\ntensor b(I) : sparse\ntensor A(I, J) : csr\n"
    "tensor B(I, J) : csr\ntensor x(J) : dense\n"
    "y(i) = a(i) * sum(j, A(i,j) * x(j)) + b(i) * sum(j, B(i,j) * x(j))\n";
// one_merge_loop_test's, into a sparse output (a dense one's allocation and
// page faults would be most of the time).
const char* kUnionSumInASumOfProducts =
    "tensor Y(I, J) : csr\ntensor A(I, J, L) : csf\ntensor D(I, J, L) : csf\ntensor E(I, J) : dcsr\n"
    "tensor F(I, J) : dcsr\ntensor G(I, J) : dcsr\ntensor x(L) : dense\n"
    "Y(i,j) = E(i,j) * F(i,j) + G(i,j) * sum(l, (A(i,j,l) + D(i,j,l)) * x(l))\n";

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* name : {"bayer10", "bcsstk16"}) {
    Coo m = matrix(name), t = transposed(m), r = rowsRotated(m, m.dims[0] / 2);
    Coo even = everyNthRow(m, 2, 0), thirds = everyNthRow(t, 3, 0);
    std::string n = name;
    all.push_back({"add " + n, kAdd, "M + M^T", {{"A", m}, {"B", t}}});
    all.push_back({"add " + n, kAdd, "M + rows rotated", {{"A", m}, {"B", r}}});
    all.push_back({"add " + n, kAdd, "M even rows + M^T rows 3k", {{"A", even}, {"B", thirds}}});
    all.push_back({"add, csr out " + n, kAddCsrOut, "M even rows + M^T rows 3k", {{"A", even}, {"B", thirds}}});
    all.push_back({"A + B.*C " + n, kAddProduct, "M, M^T, rows rotated", {{"A", m}, {"B", t}, {"C", r}}});
    all.push_back({"A + B.*C " + n, kAddProduct, "M even, M^T 3k, rows rotated", {{"A", even}, {"B", thirds}, {"C", r}}});
    all.push_back({"A*x + B*z " + n, kTwoSpmv, "M, M^T", {{"A", m}, {"B", t}, {"x", denseVector(m.dims[1], 11)},
                                                           {"z", denseVector(m.dims[1], 12)}}});
    all.push_back({"A*x + B*z " + n, kTwoSpmv, "M even, M^T 3k",
                   {{"A", even}, {"B", thirds}, {"x", denseVector(m.dims[1], 11)}, {"z", denseVector(m.dims[1], 12)}}});
    all.push_back({"a.*(A*x) + b.*(B*x) " + n, kVectorUnionOfSums, "a every 2nd, b every 3rd; M, M^T",
                   {{"a", sparseVector(m, m.dims[0], 2, 0)}, {"b", sparseVector(t, m.dims[0], 3, 1)}, {"A", m},
                    {"B", t}, {"x", denseVector(m.dims[1], 13)}}});
  }
  // Squares of smaller matrices (the matmul's rows are long).
  for (const char* name : {"cryg2500", "adder_dcop_05"}) {
    Coo m = matrix(name), t = transposed(m);
    std::string n = name;
    all.push_back({"A + B*C " + n, kAddMatmul, "M + M^T*M", {{"A", m}, {"B", t}, {"C", m}}});
    all.push_back({"A + B*C " + n, kAddMatmul, "M even + M^T 3k * M",
                   {{"A", everyNthRow(m, 2, 0)}, {"B", everyNthRow(t, 3, 0)}, {"C", m}}});
    // one_merge_loop_test's union sum in a sum of products: E, F, G real
    // (M, M^T, rows rotated), A and D random n x n x 4.
    const int32_t rows = m.dims[0], cols = m.dims[1];
    all.push_back({"E.*F + G.*sum(l,(A+D)*x) " + n, kUnionSumInASumOfProducts, "M, M^T, rows rotated; A, D random",
                   {{"E", m}, {"F", t}, {"G", rowsRotated(m, rows / 2)},
                    {"A", tcc::rt::randomUniform({rows, cols, 4}, 0.002, 21)},
                    {"D", tcc::rt::randomUniform({rows, cols, 4}, 0.002, 22)}, {"x", denseVector(4, 23)}}});
  }
  return all;
}

// Storage and values alike (strict), or values within `tolerance` (fast).
std::string differenceOf(const std::map<std::string, tcc::Tensor>& a, const std::map<std::string, tcc::Tensor>& b,
                         bool bits) {
  for (const auto& [name, x] : a) {
    const tcc::Tensor& y = b.at(name);
    if (x.dims() != y.dims() || x.nnz() != y.nnz()) return name + ": shapes or entry counts differ";
    for (int level = 0; level < x.order(); ++level) {
      auto px = x.levelStorage(level).pos.span(), py = y.levelStorage(level).pos.span();
      auto cx = x.levelStorage(level).crd.span(), cy = y.levelStorage(level).crd.span();
      if (!std::equal(px.begin(), px.end(), py.begin(), py.end()) ||
          !std::equal(cx.begin(), cx.end(), cy.begin(), cy.end()))
        return name + ": level " + std::to_string(level) + " differs";
    }
    auto vx = x.values<double>(), vy = y.values<double>();
    if (!std::any_of(vx.begin(), vx.end(), [](double v) { return v != 0; })) return name + ": all zeros";
    for (size_t k = 0; k < vx.size(); ++k) {
      bool same = bits ? std::memcmp(&vx[k], &vy[k], sizeof(double)) == 0
                       : std::abs(vx[k] - vy[k]) <= 1e-12 * std::max(1.0, std::abs(vy[k]));
      if (!same) return name + ": value " + std::to_string(k) + " differs";
    }
  }
  return "";
}

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, runs = 5;
  bool fast = false, printCode = false, before = false, lines = false;
  std::string only;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--runs") && a + 1 < argc) runs = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--fast")) fast = true;
    else if (!std::strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
    else if (!std::strcmp(argv[a], "--print-code")) printCode = true;
    else if (!std::strcmp(argv[a], "--before")) before = true;
    else if (!std::strcmp(argv[a], "--lines")) lines = true;
  }
  if (lines) {
    std::printf("| kernel | lines, merged | lines, merged as before | lines, per point |\n|---|---|---|---|\n");
    std::string previous;
    for (const Case& c : cases()) {
      if ((!only.empty() && c.name.find(only) == std::string::npos) || c.name == previous) continue;
      previous = c.name;
      tcc::Program program = tcc::Program::fromText(c.program, "bench.tc");
      size_t counted[3];
      for (int form = 0; form < 3; ++form) {
        tcc::CompileOptions options;
        options.oneMergeLoop = form != 1;
        options.mergeLoopSwitch = form == 0;
        options.floatingPoint = fast ? tcc::frontend::FloatingPointMode::Fast : tcc::frontend::FloatingPointMode::Strict;
        std::string cpp = tcc::lowerProgram(program, options).cpp;
        counted[form] = static_cast<size_t>(std::count(cpp.begin(), cpp.end(), '\n'));
      }
      std::printf("| %s | %zu | %zu | %zu |\n", c.name.c_str(), counted[0], counted[2], counted[1]);
    }
    return 0;
  }
  std::printf("load average at start: %s; %s mode, %d rounds x %d runs per form\n\n", loadAverage().c_str(),
              fast ? "fast" : "strict", rounds, runs);
  const int forms = before ? 3 : 2;
  if (before) {
    std::printf("| kernel | inputs | stored | merged ms | merged before ms | per point ms | ratio (before/merged) | "
                "ratio (per point/merged) | outputs |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
  } else {
    std::printf("| kernel | inputs | stored | merged ms | per point ms | ratio (per point/merged) | outputs |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
  }
  std::vector<double> ratios, beforeRatios;
  for (const Case& c : cases()) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    tcc::Program program = tcc::Program::fromText(c.program, "bench.tc");
    std::map<std::string, tcc::Tensor> inputs;
    size_t stored = 0;
    for (const auto& [name, coo] : c.inputs) {
      const tcc::TensorVar* declared = program.syntax().findTensor(name);
      inputs.emplace(name, tcc::rt::pack(coo, tcc::toRuntimeFormat(declared->format())));
      if (coo.order() > 1) stored += coo.nnz();
    }
    tcc::Kernel kernels[3];  // [0] merged, [1] per lattice point, [2] merged as before (cases in turn)
    const char* formNames[3] = {"one merge loop", "loops per lattice point", "one merge loop, cases in turn"};
    for (int form = 0; form < forms; ++form) {
      tcc::CompileOptions options;
      options.useKernelCache = false;
      options.oneMergeLoop = form != 1;
      options.mergeLoopSwitch = form == 0;
      options.floatingPoint = fast ? tcc::frontend::FloatingPointMode::Fast : tcc::frontend::FloatingPointMode::Strict;
      kernels[form] = tcc::compile(program, options);
    }
    if (printCode) {
      for (int form = 0; form < forms; ++form)
        std::printf("// %s, %s\n%s\n", c.name.c_str(), formNames[form], kernels[form].source().c_str());
      continue;
    }
    std::vector<double> samples[3];
    std::map<std::string, tcc::Tensor> outputs[3];
    for (int round = 0; round < rounds; ++round)
      for (int k = 0; k < forms; ++k) {
        int form = (round + k) % forms;
        tcc::RunResult result = kernels[form].run(inputs, tcc::RunOptions{runs});
        samples[form].insert(samples[form].end(), result.seconds.begin(), result.seconds.end());
        outputs[form] = std::move(result.tensors);
      }
    std::string difference = differenceOf(outputs[0], outputs[1], !fast);
    if (difference.empty() && before) difference = differenceOf(outputs[0], outputs[2], !fast);
    double merged = median(samples[0]) * 1e3, perPoint = median(samples[1]) * 1e3;
    ratios.push_back(perPoint / merged);
    const char* verdict = difference.empty() ? (fast ? "equal (1e-12)" : "bit-equal") : difference.c_str();
    if (before) {
      double old = median(samples[2]) * 1e3;
      beforeRatios.push_back(old / merged);
      std::printf("| %s | %s | %zu | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", c.name.c_str(),
                  c.inputsDescribed.c_str(), stored, merged, old, perPoint, old / merged, perPoint / merged, verdict);
    } else {
      std::printf("| %s | %s | %zu | %.3f | %.3f | %.3f | %s |\n", c.name.c_str(), c.inputsDescribed.c_str(), stored,
                  merged, perPoint, perPoint / merged, verdict);
    }
    std::fflush(stdout);
    if (!difference.empty()) return 1;
  }
  if (before) std::printf("\ngeomean ratio (before/merged): %.3f", geomean(beforeRatios));
  std::printf("\ngeomean ratio (per point/merged): %.3f; load average at end: %s\n", geomean(ratios),
              loadAverage().c_str());
  return 0;
}
