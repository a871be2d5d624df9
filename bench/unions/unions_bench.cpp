// Y = A1 + A2 + ... + An over CSR matrices, n = 2 ... 8, one statement: an
// innermost union of five operands or more is one merge loop of 2^n - 1
// cases, where TACO's loops per lattice point print 3^n (past what is
// compiled from eight on). Same run, same inputs:
// - tcc, the one statement (strict mode);
// - tcc, the sum split into statements of four operands at most and a sum
//   of their results (what the refusal told a user to write);
// - Eigen 3 (where the build has it): `Y = A1 + ... + An` on row-major
//   SparseMatrix, one expression evaluated in one pass.
// Each also prints the kernel's lines of C++ in one loop and per lattice
// point (CompileOptions::oneMergeLoop = false), or that it was refused.
// Every result is checked against the first (relative 1e-12).
//
// With --format dcsr every matrix is DCSR: the loop over rows co-iterates
// them too, its cases one body from five operands on (an operand without
// the row iterating an empty one below).
//
//   tcc_unions_bench [--format csr|dcsr] [--rows R] [--per-row K] [--most N] [--repeat N]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../common/stats.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

#ifdef TCC_BENCH_WITH_EIGEN
#include <Eigen/Sparse>
using SparseRow = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
#endif

namespace {

std::string format = "csr";  // of every matrix, the output's too

std::string nameOf(int operand) { return "A" + std::to_string(operand + 1); }

std::string declarations(int operands, int temporaries) {
  std::string text = "tensor Y(I, J) : " + format + "\n";
  for (int t = 0; t < temporaries; ++t) text += "tensor T" + std::to_string(t + 1) + "(I, J) : " + format + "\n";
  for (int k = 0; k < operands; ++k) text += "tensor " + nameOf(k) + "(I, J) : " + format + "\n";
  return text;
}

std::string sumOf(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " + ") + name + "(i,j)";
  return text;
}

std::string oneStatement(int operands) {
  std::vector<std::string> names;
  for (int k = 0; k < operands; ++k) names.push_back(nameOf(k));
  return declarations(operands, 0) + "Y(i,j) = " + sumOf(names) + "\n";
}

// Groups of four into temporaries, then Y their sum.
std::string splitInFours(int operands) {
  if (operands <= 4) return oneStatement(operands);
  std::string statements;
  std::vector<std::string> temporaries;
  for (int first = 0; first < operands; first += 4) {
    std::vector<std::string> group;
    for (int k = first; k < std::min(operands, first + 4); ++k) group.push_back(nameOf(k));
    temporaries.push_back("T" + std::to_string(temporaries.size() + 1));
    statements += temporaries.back() + "(i,j) = " + sumOf(group) + "\n";
  }
  return declarations(operands, static_cast<int>(temporaries.size())) + statements + "Y(i,j) = " +
         sumOf(temporaries) + "\n";
}

size_t linesOf(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// (Not tried where its lowering alone would take minutes: 4^n cases.)
std::string perPointLines(const std::string& text, int operands) {
  if (format == "dcsr" && operands > 6) return "not tried";
  tcc::CompileOptions perPoint;
  perPoint.oneMergeLoop = false;
  try {
    return std::to_string(linesOf(tcc::lowerProgram(tcc::Program::fromText(text, "bench.tc"), perPoint).cpp));
  } catch (const std::exception&) {
    return "refused";
  }
}

struct Timed {
  double seconds = 0;
  tcc::rt::Coo entries;  // sorted, for the check
};

tcc::rt::Coo sortedEntries(const tcc::Tensor& tensor) {
  tcc::rt::Coo coo = tcc::rt::unpack(tensor);
  coo.sort();
  return coo;
}

Timed timeTcc(const std::string& text, const std::map<std::string, tcc::Tensor>& inputs, int repeat) {
  tcc::Kernel kernel = tcc::compile(tcc::Program::fromText(text, "bench.tc"));
  kernel.run(inputs);  // warm-up
  tcc::RunOptions options;
  options.repeat = repeat;
  tcc::RunResult result = kernel.run(inputs, options);
  return {median(result.seconds), sortedEntries(result.tensors.at("Y"))};
}

#ifdef TCC_BENCH_WITH_EIGEN
SparseRow toEigen(const tcc::rt::Coo& coo) {
  std::vector<Eigen::Triplet<double>> triplets;
  for (size_t k = 0; k < coo.nnz(); ++k) triplets.emplace_back(coo.coords[0][k], coo.coords[1][k], coo.values[k]);
  SparseRow matrix(coo.dims[0], coo.dims[1]);
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  return matrix;
}

template <size_t... I>
Timed timeEigen(const std::vector<SparseRow>& m, int repeat, std::index_sequence<I...>) {
  SparseRow y;
  y = (m[I] + ...);  // warm-up
  std::vector<double> samples;
  for (int r = 0; r < repeat; ++r) samples.push_back(seconds([&] { y = (m[I] + ...); }));
  Timed timed{median(samples), tcc::rt::Coo::ofShape({int32_t(y.rows()), int32_t(y.cols())})};
  for (int i = 0; i < y.outerSize(); ++i)
    for (SparseRow::InnerIterator it(y, i); it; ++it) {
      const int32_t at[2] = {i, static_cast<int32_t>(it.col())};
      timed.entries.push(at, it.value());
    }
  timed.entries.sort();
  return timed;
}

Timed timeEigen(const std::vector<SparseRow>& m, int operands, int repeat) {
  switch (operands) {
    case 2: return timeEigen(m, repeat, std::make_index_sequence<2>());
    case 3: return timeEigen(m, repeat, std::make_index_sequence<3>());
    case 4: return timeEigen(m, repeat, std::make_index_sequence<4>());
    case 5: return timeEigen(m, repeat, std::make_index_sequence<5>());
    case 6: return timeEigen(m, repeat, std::make_index_sequence<6>());
    case 7: return timeEigen(m, repeat, std::make_index_sequence<7>());
    default: return timeEigen(m, repeat, std::make_index_sequence<8>());
  }
}
#endif

// The largest difference relative to the largest value; infinite where the
// two store different coordinates.
double relativeError(const tcc::rt::Coo& actual, const tcc::rt::Coo& expected) {
  if (actual.coords != expected.coords) return INFINITY;
  double largest = 1, worst = 0;
  for (double v : expected.values) largest = std::max(largest, std::abs(v));
  for (size_t k = 0; k < expected.nnz(); ++k) worst = std::max(worst, std::abs(actual.values[k] - expected.values[k]));
  return worst / largest;
}

}  // namespace

int main(int argc, char** argv) {
  int rows = 4000, most = 8, repeat = 15;
  double perRow = 8;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string flag = argv[a];
    const int value = std::atoi(argv[a + 1]);
    if (flag == "--format" && (std::string(argv[a + 1]) == "csr" || std::string(argv[a + 1]) == "dcsr"))
      format = argv[a + 1];
    else if (flag == "--rows") rows = value;
    else if (flag == "--per-row") perRow = std::atof(argv[a + 1]);
    else if (flag == "--most") most = std::min(value, 8);
    else if (flag == "--repeat") repeat = value;
    else {
      std::fprintf(stderr, "usage: tcc_unions_bench [--format csr|dcsr] [--rows R] [--per-row K] [--most N<=8] [--repeat N]\n");
      return 2;
    }
  }
  std::printf("Y = A1 + ... + An, %s %d x %d, %g random entries a row each (independent patterns), median of %d\n",
              format.c_str(), rows, rows, perRow, repeat);
  std::vector<tcc::rt::Coo> coos;
  std::map<std::string, tcc::Tensor> inputs;
  for (int k = 0; k < most; ++k) {
    coos.push_back(tcc::rt::randomUniform({rows, rows}, double(perRow) / rows, 900 + k));
    inputs.emplace(nameOf(k), tcc::rt::pack(coos.back(),
                                            format == "csr" ? tcc::rt::TensorFormat::csr() : tcc::rt::TensorFormat::dcsr(),
                                            tcc::rt::ValueType::Float64));
  }
#ifdef TCC_BENCH_WITH_EIGEN
  std::vector<SparseRow> eigen;
  for (const auto& coo : coos) eigen.push_back(toEigen(coo));
#endif
  std::printf("| n | C++ lines, one loop | per lattice point | tcc ms | split in fours ms | split / tcc | Eigen ms | "
              "Eigen / tcc | worst error |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool failed = false;
  for (int n = 2; n <= most; ++n) {
    const std::string text = oneStatement(n);
    const size_t lines = linesOf(tcc::lowerProgram(tcc::Program::fromText(text, "bench.tc")).cpp);
    std::map<std::string, tcc::Tensor> operands;
    for (int k = 0; k < n; ++k) operands.emplace(nameOf(k), inputs.at(nameOf(k)));
    Timed one = timeTcc(text, operands, repeat);
    Timed split = timeTcc(splitInFours(n), operands, repeat);
    double worst = relativeError(split.entries, one.entries);
    std::string eigenCells = "| - | - ";
#ifdef TCC_BENCH_WITH_EIGEN
    Timed peer = timeEigen(eigen, n, repeat);
    worst = std::max(worst, relativeError(peer.entries, one.entries));
    char cells[64];
    std::snprintf(cells, sizeof cells, "| %.2f | %.2f ", peer.seconds * 1e3, peer.seconds / one.seconds);
    eigenCells = cells;
#endif
    failed |= !(worst <= 1e-12);
    std::printf("| %d | %zu | %s | %.2f | %.2f | %.2f %s| %.1e |\n", n, lines, perPointLines(text, n).c_str(),
                one.seconds * 1e3, split.seconds * 1e3, split.seconds / one.seconds, eigenCells.c_str(), worst);
  }
  if (failed) std::printf("RESULTS DISAGREE\n");
  return failed ? 1 : 0;
}
