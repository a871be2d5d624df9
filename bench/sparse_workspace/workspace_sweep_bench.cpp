// Sparse against dense workspaces on synthetic inputs, one thread, in the
// style of §7.2 and §7.4 of the sparse-workspace paper:
//
//   (a) row-wise SpGEMM A(i, j) = B(i, k) * C(k, j), every operand CSR:
//       dense    tcc's default kernel (Gustavson: a dense first-order
//                workspace over j, one row of A at a time)
//       sparse   the same program under `sparse_workspace(j)` (hoisted common
//                iteration: a first-order ISM workspace drained per row of A)
//       B has a fixed number of nonzeros per row, C a fixed number per row;
//       the sweep widens A (the columns of C), so that the distinct output
//       coordinates per row go from few (many products land on the same
//       column: high deduplication) to as many as the products (low
//       deduplication), as in the paper's Fig. 16.
//   (b) outer-product SpGEMM A(i, j) = B(i, k) * C(k, j), B in DCSC, C in
//       DCSR, A in CSR, loops k, i, j (a second-order scattering):
//       dense    A computed into a dense I x J result (a dense second-order
//                workspace), then compressed into CSR inside the time
//       sparse   tcc's default kernel for the statement (the second-order
//                sparse workspace it inserts)
//       I = K = J = 10000; s of the K columns of B (rows of C) hold 1000
//       random entries each, the rest none; the sweep over s raises the
//       products (s * 10^6), as in the paper's §7.3 (its Fig. 16 for outer
//       products); a second sweep concentrates the entries on the first w
//       rows and columns, which raises deduplication.
//   (c) SpMTTKRP A(i, j) = B(k, l, i) C(k, j) D(l, j) (B in CSF, A in DCSR,
//       loops k, l, i, j) and SpTTM A(i, j, l) = B(k, i, j) C(k, l) (B in CSF,
//       C in CSR, A in COO) on a seeded 3-tensor whose coordinates follow a
//       Zipf-like skew in every mode, under every workspace policy, as in the
//       paper's Table 3.
//
// Times are medians of Kernel::run with RunOptions.repeat after a warm-up.
// Every result is checked: sparse against dense in (a), every policy against
// the first in (c).
//
//   tcc_workspace_sweep_bench [--quick] [--repeat N] [--svg FILE] [--sections abc]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "../common/bench_inputs.h"
#include "../common/stats.h"
#include "../common/timed_program.h"

namespace {

// Sorted (coordinates, value) entries of a result, for comparisons.
std::vector<std::pair<std::vector<int32_t>, double>> entriesOf(const tcc::Tensor& tensor) {
  tcc::rt::Coo coo = tcc::rt::unpack(tensor);
  std::vector<std::pair<std::vector<int32_t>, double>> entries(coo.nnz());
  for (size_t k = 0; k < coo.nnz(); ++k) {
    for (int m = 0; m < coo.order(); ++m) entries[k].first.push_back(coo.coords[m][k]);
    entries[k].second = coo.values[k];
  }
  std::sort(entries.begin(), entries.end());
  // Explicit zeros are not results: drop them so that formats may differ.
  std::erase_if(entries, [](const auto& e) { return e.second == 0; });
  return entries;
}

// Largest |a - b| over the largest |b|, or infinity when the patterns differ.
double difference(const tcc::Tensor& a, const tcc::Tensor& b) {
  auto x = entriesOf(a), y = entriesOf(b);
  if (x.size() != y.size()) return INFINITY;
  double scale = 1e-300, worst = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    if (x[k].first != y[k].first) return INFINITY;
    scale = std::max(scale, std::abs(y[k].second));
    worst = std::max(worst, std::abs(x[k].second - y[k].second));
  }
  return worst / scale;
}


// ---- (a) row-wise SpGEMM sweep ------------------------------------------------

const char* kRowwise =
    "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n";

struct SweepPoint {
  int32_t width = 0;
  double products = 0, distinct = 0;  // per row of A
  double dense = 0, sparse = 0;
  bool ok = false;
};

SweepPoint sweepPoint(int32_t rows, int32_t inner, int32_t width, int32_t bPerRow, int32_t cPerRow, int repeat,
                      uint64_t seed) {
  std::map<std::string, tcc::rt::Coo> coos = {{"B", tcc::rt::randomPerRow(rows, inner, bPerRow, seed)},
                                               {"C", tcc::rt::randomPerRow(inner, width, cPerRow, seed + 1)}};
  auto inputs = packedFor(kRowwise, coos);
  SweepPoint p;
  p.width = width;
  TimedProgram dense = timeProgram(kRowwise, inputs, "A", repeat);
  TimedProgram sparse = timeProgram(std::string(kRowwise) + "schedule {\n  sparse_workspace(j)\n}\n", inputs, "A", repeat);
  p.dense = dense.seconds;
  p.sparse = sparse.seconds;
  p.ok = difference(sparse.result, dense.result) <= 1e-12;
  p.products = double(std::min(bPerRow, inner)) * std::min(cPerRow, width);
  p.distinct = double(tcc::rt::unpack(dense.result).nnz()) / rows;
  return p;
}

// A log-log line plot of both times against the output width.
void writeSvg(const std::string& path, const std::vector<SweepPoint>& points, const std::string& caption) {
  const double W = 640, H = 420, left = 70, right = 20, top = 40, bottom = 60;
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  for (const auto& p : points) {
    xmin = std::min(xmin, double(p.width));
    xmax = std::max(xmax, double(p.width));
    ymin = std::min({ymin, p.dense, p.sparse});
    ymax = std::max({ymax, p.dense, p.sparse});
  }
  double lx0 = std::floor(std::log10(xmin)), lx1 = std::ceil(std::log10(xmax));
  double ly0 = std::floor(std::log10(ymin * 1e3)), ly1 = std::ceil(std::log10(ymax * 1e3));
  if (ly1 == ly0) ly1 += 1;
  auto X = [&](double w) { return left + (std::log10(w) - lx0) / (lx1 - lx0) * (W - left - right); };
  auto Y = [&](double s) { return H - bottom - (std::log10(s * 1e3) - ly0) / (ly1 - ly0) * (H - top - bottom); };
  std::ofstream out(path);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << caption << "</text>\n";
  for (double e = lx0; e <= lx1; ++e) {
    double x = X(std::pow(10, e));
    out << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << H - bottom
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << x << "\" y=\"" << H - bottom + 18
        << "\" text-anchor=\"middle\">1e" << int(e) << "</text>\n";
  }
  for (double e = ly0; e <= ly1; ++e) {
    double y = Y(std::pow(10, e) / 1e3);
    out << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << W - right << "\" y2=\"" << y
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">1e"
        << int(e) << "</text>\n";
  }
  out << "<text x=\"" << (left + W - right) / 2 << "\" y=\"" << H - 18
      << "\" text-anchor=\"middle\">output width (columns of A and C), log scale</text>\n";
  out << "<text x=\"18\" y=\"" << (top + H - bottom) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
      << (top + H - bottom) / 2 << ")\">median kernel time (ms), log scale</text>\n";
  auto series = [&](double SweepPoint::*field, const char* color, const char* name, int row) {
    out << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const auto& p : points) out << X(p.width) << "," << Y(p.*field) << " ";
    out << "\"/>\n";
    for (const auto& p : points)
      out << "<circle cx=\"" << X(p.width) << "\" cy=\"" << Y(p.*field) << "\" r=\"3\" fill=\"" << color << "\"/>\n";
    out << "<line x1=\"" << left + 15 << "\" y1=\"" << top + 12 + 18 * row << "\" x2=\"" << left + 40 << "\" y2=\""
        << top + 12 + 18 * row << "\" stroke=\"" << color << "\" stroke-width=\"2\"/><text x=\"" << left + 46
        << "\" y=\"" << top + 16 + 18 * row << "\">" << name << "</text>\n";
  };
  series(&SweepPoint::dense, "#d62728", "dense workspace (default)", 0);
  series(&SweepPoint::sparse, "#1f77b4", "sparse workspace: sparse_workspace(j)", 1);
  out << "</svg>\n";
}

// ---- (b) outer-product SpGEMM sweep ----------------------------------------------

const char* kOuterSparse =
    "tensor A(I, J) : csr\ntensor B(I, K) : dcsc\ntensor C(K, J) : dcsr\nA(i, j) = B(i, k) * C(k, j)\n";
const char* kOuterDense =
    "tensor A(I, J) : dense\ntensor B(I, K) : dcsc\ntensor C(K, J) : dcsr\nA(i, j) = B(i, k) * C(k, j)\n";

struct OuterPoint {
  int32_t used = 0;  // nonempty columns of B (rows of C)
  double products = 0, distinct = 0;
  double dense = 0, sparse = 0;
  bool ok = false;
};

// B's columns draw their rows, and C's rows their columns, from the first
// `window` of the n indices: a narrower window concentrates the products on
// fewer output coordinates (more deduplication).
OuterPoint outerPoint(int32_t n, int32_t used, int32_t perColumn, int32_t window, int repeat, uint64_t seed) {
  // The `used` inner indices, spread over K; B's columns and C's rows there.
  std::mt19937_64 random(seed);
  std::vector<int32_t> inner(n);
  std::iota(inner.begin(), inner.end(), 0);
  std::shuffle(inner.begin(), inner.end(), random);
  inner.resize(used);
  std::sort(inner.begin(), inner.end());
  tcc::rt::Coo b = tcc::rt::randomPerColumn(window, used, perColumn, seed + 1);
  tcc::rt::Coo c = tcc::rt::randomPerRow(used, window, perColumn, seed + 2);
  for (auto& k : b.coords[1]) k = inner[k];
  for (auto& k : c.coords[0]) k = inner[k];
  b.dims = {n, n};
  c.dims = {n, n};
  auto inputs = packedFor(kOuterSparse, {{"B", b}, {"C", c}});

  OuterPoint p;
  p.used = used;
  p.products = double(used) * perColumn * perColumn;
  TimedProgram sparse = timeProgram(kOuterSparse, inputs, "A", repeat);
  TimedProgram dense = timeProgram(kOuterDense, inputs, "A", repeat);
  // The dense workspace's result is compressed into CSR, inside the time.
  std::vector<double> compress;
  tcc::Tensor csr;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    csr = tcc::rt::convert(dense.result, tcc::rt::TensorFormat::csr());
    compress.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  p.sparse = sparse.seconds;
  p.dense = dense.seconds + median(compress);
  p.ok = difference(sparse.result, csr) <= 1e-12;
  p.distinct = double(tcc::rt::unpack(sparse.result).nnz());
  return p;
}

// ---- (c) tensor kernels under every policy ---------------------------------------

// A 3-tensor of `draws` coordinates, each mode drawn independently from a
// Zipf-like law (rank r has weight (r + 1)^-exponent, ranks shuffled over the
// indices), duplicates dropped; values in [0.5, 2) with a random sign.
tcc::rt::Coo zipfTensor(const std::vector<int32_t>& dims, size_t draws, double exponent, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::vector<double>> cumulative(dims.size());
  std::vector<std::vector<int32_t>> rankToIndex(dims.size());
  for (size_t m = 0; m < dims.size(); ++m) {
    double total = 0;
    for (int32_t r = 0; r < dims[m]; ++r) cumulative[m].push_back(total += std::pow(r + 1.0, -exponent));
    rankToIndex[m].resize(dims[m]);
    std::iota(rankToIndex[m].begin(), rankToIndex[m].end(), 0);
    std::shuffle(rankToIndex[m].begin(), rankToIndex[m].end(), random);
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::array<int32_t, 3>> coords(draws);
  for (auto& c : coords)
    for (size_t m = 0; m < 3; ++m) {
      double u = unit(random) * cumulative[m].back();
      size_t rank = std::lower_bound(cumulative[m].begin(), cumulative[m].end(), u) - cumulative[m].begin();
      c[m] = rankToIndex[m][std::min(rank, cumulative[m].size() - 1)];
    }
  std::sort(coords.begin(), coords.end());
  coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
  tcc::rt::Coo coo = tcc::rt::Coo::ofShape(dims);
  coo.reserve(coords.size());
  for (const auto& c : coords) {
    double value = (0.5 + 1.5 * unit(random)) * (unit(random) < 0.5 ? -1 : 1);
    coo.push(c.data(), value);
  }
  return coo;
}

const char* kPolicies[] = {"bucket", "hash", "coord", "map", "vector"};

struct PolicyRow {
  std::string kernel, input;
  std::vector<double> seconds;  // per policy
  std::vector<double> differences;
  double automatic = 0;  // no schedule: the automatically chosen policy
};

PolicyRow policyRow(const std::string& kernel, const std::string& input, const std::string& program,
                    const std::map<std::string, tcc::rt::Coo>& coos, int repeat) {
  auto inputs = packedFor(program, coos);
  PolicyRow row{kernel, input, {}, {}, 0};
  tcc::Tensor first;
  for (const char* policy : kPolicies) {
    TimedProgram t = timeProgram(program + "schedule {\n  sparse_workspace(policy = " + policy + ")\n}\n", inputs, "A", repeat);
    row.seconds.push_back(t.seconds);
    if (row.differences.empty()) first = t.result;
    row.differences.push_back(difference(t.result, first));
  }
  row.automatic = timeProgram(program, inputs, "A", repeat).seconds;
  return row;
}

// (a): B rows x inner with bPerRow per row, C inner x width with cPerRow per row.
bool rowwiseSweep(bool quick, int repeat, const std::string& svg) {
  bool allOk = true;
  const int32_t rows = quick ? 2000 : 10000, inner = 10000, bPerRow = 8, cPerRow = 8;
  std::vector<int32_t> widths = {4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 10000000};
  std::printf("## (a) row-wise SpGEMM, dense vs sparse first-order workspace\n\n"
              "B %d x %d with %d nonzeros per row, C %d x width with %d per row (%d products per row of A)\n\n",
              rows, inner, bPerRow, inner, cPerRow, bPerRow * cPerRow);
  std::printf("| output width | distinct per row | dedup (products/distinct) | dense ms | sparse ms | "
              "dense/sparse |\n"
              "|---:|---:|---:|---:|---:|---:|\n");
  std::vector<SweepPoint> points;
  for (int32_t width : widths) {
    SweepPoint p = sweepPoint(rows, inner, width, bPerRow, cPerRow, repeat, 100 + width);
    allOk = allOk && p.ok;
    std::printf("| %d | %.1f | %.2f | %.3f | %.3f | %.2fx%s |\n", width, p.distinct, p.products / p.distinct,
                p.dense * 1e3, p.sparse * 1e3, p.dense / p.sparse, p.ok ? "" : " WRONG");
    std::fflush(stdout);
    points.push_back(p);
  }
  // The dense workspace's cost that grows with the width is paid once per
  // kernel call, the sparse one's per-row cost once per row: at the widest
  // point, more rows move the crossover.
  const int32_t wide = widths.back();
  std::printf("\nAt output width %d, more rows (B rows x %d, %d per row; C as above):\n\n"
              "| rows | dense ms | sparse ms | dense/sparse |\n|---:|---:|---:|---:|\n",
              wide, inner, bPerRow);
  const std::vector<int32_t> rowCounts =
      quick ? std::vector<int32_t>{1000, 4000, 16000} : std::vector<int32_t>{1000, 4000, 16000, 64000, 256000};
  for (int32_t r : rowCounts) {
    SweepPoint p = sweepPoint(r, inner, wide, bPerRow, cPerRow, repeat, 7 + r);
    allOk = allOk && p.ok;
    std::printf("| %d | %.3f | %.3f | %.2fx%s |\n", r, p.dense * 1e3, p.sparse * 1e3, p.dense / p.sparse,
                p.ok ? "" : " WRONG");
    std::fflush(stdout);
  }
  if (!svg.empty())
    writeSvg(svg, points,
             "Row-wise SpGEMM, " + std::to_string(rows) + " rows, " + std::to_string(bPerRow * cPerRow) +
                 " products per row");
  return allOk;
}

// (b): outer products with a growing number of nonempty inner indices.
bool outerSweep(bool quick, int repeat) {
  bool allOk = true;
  const int32_t n = 10000, perColumn = quick ? 300 : 1000;
  std::printf("\n## (b) outer-product SpGEMM, dense vs sparse second-order workspace\n\n"
              "I = K = J = %d; s columns of B (rows of C) with %d random entries each; A in CSR\n\n"
              "| s | products | distinct | dedup (products/distinct) | dense ms | sparse ms | dense/sparse |\n"
              "|---:|---:|---:|---:|---:|---:|---:|\n",
              n, perColumn);
  for (int32_t used : quick ? std::vector<int32_t>{1, 4, 16} : std::vector<int32_t>{1, 2, 4, 8, 16, 32}) {
    OuterPoint p = outerPoint(n, used, perColumn, n, repeat, 300 + used);
    allOk = allOk && p.ok;
    std::printf("| %d | %.0f | %.0f | %.2f | %.1f | %.1f | %.2fx%s |\n", used, p.products, p.distinct,
                p.products / p.distinct, p.dense * 1e3, p.sparse * 1e3, p.dense / p.sparse, p.ok ? "" : " WRONG");
    std::fflush(stdout);
  }
  // Random coordinates over the whole output rarely collide; concentrating
  // the same products on a window of rows and columns raises deduplication.
  const int32_t used = quick ? 4 : 8;
  std::printf("\ns = %d, entries drawn from the first w rows of B and columns of C:\n\n"
              "| w | distinct | dedup (products/distinct) | dense ms | sparse ms | dense/sparse |\n"
              "|---:|---:|---:|---:|---:|---:|\n",
              used);
  for (int32_t window : {1000, 2000, 4000, n}) {
    OuterPoint p = outerPoint(n, used, perColumn, std::max(window, perColumn), repeat, 500 + window);
    allOk = allOk && p.ok;
    std::printf("| %d | %.0f | %.2f | %.1f | %.1f | %.2fx%s |\n", std::max(window, perColumn), p.distinct,
                p.products / p.distinct, p.dense * 1e3, p.sparse * 1e3, p.dense / p.sparse, p.ok ? "" : " WRONG");
    std::fflush(stdout);
  }
  return allOk;
}

// (c): SpMTTKRP and SpTTM on a Zipf-skewed 3-tensor under every policy.
bool policyTable(bool quick, int repeat) {
  bool allOk = true;
  const int32_t n = quick ? 1000 : 2000;
  const size_t draws = quick ? 300000 : 1000000;
  tcc::rt::Coo tensor = zipfTensor({n, n, n}, draws, 1.0, 2024);
  std::string input = std::to_string(n) + "^3, Zipf s=1 per mode, " + std::to_string(tensor.nnz()) + " nnz";
  std::printf("\n## (c) SpMTTKRP and SpTTM under every workspace policy\n\n| kernel | input |");
  for (const char* policy : kPolicies) std::printf(" %s ms |", policy);
  std::printf(" no schedule ms |\n|---|---|");
  for (size_t p = 0; p < std::size(kPolicies); ++p) std::printf("---:|");
  std::printf("---:|\n");
  std::vector<PolicyRow> rowsC;
  rowsC.push_back(policyRow("SpMTTKRP (rank 16)", input,
                            "tensor A(I, J) : dcsr\ntensor B(K, L, I) : csf\ntensor C(K, J) : dense\n"
                            "tensor D(L, J) : dense\nA(i, j) = B(k, l, i) * C(k, j) * D(l, j)\n",
                            {{"B", tensor},
                             {"C", tcc::rt::randomUniform({n, 16}, 1.0, 11)},
                             {"D", tcc::rt::randomUniform({n, 16}, 1.0, 12)}},
                            repeat));
  rowsC.push_back(policyRow("SpTTM (C " + std::to_string(n) + " x 32 at 10%)", input,
                            "tensor A(I, J, L) : coo\ntensor B(K, I, J) : csf\ntensor C(K, L) : csr\n"
                            "A(i, j, l) = B(k, i, j) * C(k, l)\n",
                            {{"B", tensor}, {"C", tcc::rt::randomUniform({n, 32}, 0.1, 13)}}, repeat));
  for (const auto& row : rowsC) {
    size_t best = std::min_element(row.seconds.begin(), row.seconds.end()) - row.seconds.begin();
    std::printf("| %s | %s |", row.kernel.c_str(), row.input.c_str());
    for (size_t p = 0; p < row.seconds.size(); ++p) {
      bool ok = row.differences[p] <= 1e-12;
      allOk = allOk && ok;
      std::printf(p == best ? " **%.2f** |" : " %.2f |", row.seconds[p] * 1e3);
      if (!ok) std::printf(" WRONG |");
    }
    std::printf(" %.2f |\n", row.automatic * 1e3);
  }
  return allOk;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int repeat = 5;
  std::string svg, sections = "abc";
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--quick") quick = true;
    else if (arg == "--repeat" && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--svg" && a + 1 < argc) svg = argv[++a];
    else if (arg == "--sections" && a + 1 < argc) sections = argv[++a];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--repeat N] [--svg FILE] [--sections abc]\n", argv[0]);
      return 2;
    }
  }
  auto wanted = [&](char section) { return sections.find(section) != std::string::npos; };
  bool allOk = true;
  if (wanted('a')) allOk &= rowwiseSweep(quick, repeat, svg);
  if (wanted('b')) allOk &= outerSweep(quick, repeat);
  if (wanted('c')) allOk &= policyTable(quick, repeat);
  if (!allOk) std::printf("\nsome results differ (see WRONG)\n");
  return allOk ? 0 : 1;
}
