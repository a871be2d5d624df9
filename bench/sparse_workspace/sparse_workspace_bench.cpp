// Outer-product SpGEMM A = B * B (loops k, i, j; B read by columns as DCSC
// and by rows as DCSR) on real matrices, one thread, in the style of §7.3 of
// the sparse-workspace paper:
//   sparse    tcc's generated kernel through the automatically inserted
//             sparse (ISM) workspace, compressed into CSR
//   direct    the same policy driven directly through the C++ ism/ templates
//             on the same component stream (the overhead of generated code)
//   dense     tcc's generated kernel into a dense I x J result (a dense
//             second-order workspace), then compressed into CSR
//   eigen     Eigen 3's sparse product (CSR x CSR), the library peer
// Workspace memory: the ISM's own peak bytes (its allocation counter, in the
// direct run, which inserts the same stream with the same policy) against
// the dense workspace's I x J values. Every variant runs in a child process
// of its own; results are checked against Eigen's. MATRIX is a name from
// the shared data folder, or NAME1,NAME2 for their Kronecker product.
//
//   tcc_sparse_workspace_bench [--repeat N] [--policy bucket|hash] [MATRIX ...]
#include <Eigen/Sparse>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tcc/ism/ism.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

using SparseRow = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
using Clock = std::chrono::steady_clock;

double timeMedian(int repeat, const std::function<void()>& body) {
  body();  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    body();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(seconds);
}

// The product as sorted (row, column, value) triples, for comparisons.
struct Triples {
  std::vector<int64_t> keys;
  std::vector<double> values;
};

Triples triplesOf(const tcc::Tensor& tensor) {
  tcc::rt::Coo coo = tcc::rt::unpack(tensor);
  std::vector<size_t> order(coo.nnz());
  for (size_t e = 0; e < order.size(); ++e) order[e] = e;
  int64_t cols = coo.dims[1];
  auto key = [&](size_t e) { return int64_t{coo.coords[0][e]} * cols + coo.coords[1][e]; };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  Triples t;
  for (size_t e : order) {
    if (coo.values[e] == 0.0) continue;  // a dense result does not store zeros
    t.keys.push_back(key(e));
    t.values.push_back(coo.values[e]);
  }
  return t;
}

Triples triplesOf(const SparseRow& m) {
  Triples t;
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseRow::InnerIterator it(m, r); it; ++it) {
      if (it.value() == 0.0) continue;
      t.keys.push_back(int64_t{r} * m.cols() + it.col());
      t.values.push_back(it.value());
    }
  return t;
}

// Max difference relative to the largest entry, an entry missing on one
// side counting as zero (summation order may cancel one to an exact zero).
double difference(const Triples& a, const Triples& b) {
  double scale = 0, worst = 0;
  for (double v : b.values) scale = std::max(scale, std::abs(v));
  size_t p = 0, q = 0;
  while (p < a.keys.size() || q < b.keys.size()) {
    if (q == b.keys.size() || (p < a.keys.size() && a.keys[p] < b.keys[q])) {
      worst = std::max(worst, std::abs(a.values[p++]));
    } else if (p == a.keys.size() || b.keys[q] < a.keys[p]) {
      worst = std::max(worst, std::abs(b.values[q++]));
    } else {
      worst = std::max(worst, std::abs(a.values[p++] - b.values[q++]));
    }
  }
  return worst / std::max(scale, 1e-300);
}

const char* kSparseProgram = R"(
tensor A(I, J) : csr
tensor B(I, K) : dcsc
tensor C(K, J) : dcsr
A(i, j) = B(i, k) * C(k, j)
schedule {
  sparse_workspace(policy = POLICY)
}
)";
const char* kDenseProgram = R"(
tensor A(I, J) : dense
tensor B(I, K) : dcsc
tensor C(K, J) : dcsr
A(i, j) = B(i, k) * C(k, j)
)";

struct Measurement {
  double seconds = NAN;
  double difference = NAN;
  double workspaceBytes = NAN;  // the ISM's own peak (direct runs only)
  bool failed = false;
};

// Runs `body` in a child process of its own (a fresh ISM byte counter, and
// a crash or an allocation failure ends the child, not the benchmark);
// (seconds, difference) come back through a pipe.
Measurement inChild(const std::function<std::pair<double, double>()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {NAN, NAN, NAN, true};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double result[3] = {NAN, NAN, NAN};
    try {
      auto [seconds, diff] = body();
      result[0] = seconds;
      result[1] = diff;
      result[2] = static_cast<double>(tcc::ism::memoryCounter().peakBytes());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "  failed: %s\n", error.what());
    }
    if (write(fds[1], result, sizeof result) != static_cast<ssize_t>(sizeof result)) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  double result[3] = {NAN, NAN, NAN};
  ssize_t got = read(fds[0], result, sizeof result);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Measurement m;
  m.failed = got != static_cast<ssize_t>(sizeof result) || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
             std::isnan(result[0]);
  m.seconds = result[0];
  m.difference = result[1];
  m.workspaceBytes = result[2];
  return m;
}


// A dense I x J workspace this large is not attempted (the machine has 24 GiB).
constexpr double kLargestDenseWorkspace = 8.0 * (1 << 30);

template <template <int> class Policy>
tcc::ism::CompressedTensor directProduct(const tcc::rt::Coo& b) {
  // B by columns (i of column k) and by rows (j of row k), as DCSC and DCSR give them.
  int32_t n = b.dims[0];
  std::vector<int64_t> colPos(n + 1, 0), rowPos(n + 1, 0);
  for (size_t e = 0; e < b.nnz(); ++e) {
    ++colPos[b.coords[1][e] + 1];
    ++rowPos[b.coords[0][e] + 1];
  }
  for (int32_t k = 0; k < n; ++k) {
    colPos[k + 1] += colPos[k];
    rowPos[k + 1] += rowPos[k];
  }
  std::vector<int32_t> colRows(b.nnz()), rowCols(b.nnz());
  std::vector<double> colVals(b.nnz()), rowVals(b.nnz());
  std::vector<int64_t> colNext(colPos.begin(), colPos.end() - 1), rowNext(rowPos.begin(), rowPos.end() - 1);
  std::vector<size_t> sorted(b.nnz());
  for (size_t e = 0; e < sorted.size(); ++e) sorted[e] = e;
  std::sort(sorted.begin(), sorted.end(), [&](size_t x, size_t y) {
    return std::make_pair(b.coords[0][x], b.coords[1][x]) < std::make_pair(b.coords[0][y], b.coords[1][y]);
  });
  for (size_t e : sorted) {
    int64_t c = colNext[b.coords[1][e]]++;
    colRows[c] = b.coords[0][e];
    colVals[c] = b.values[e];
    int64_t r = rowNext[b.coords[0][e]]++;
    rowCols[r] = b.coords[1][e];
    rowVals[r] = b.values[e];
  }
  tcc::ism::Shape<2> shape = tcc::ism::Shape<2>::rowMajor({n, n});
  tcc::ism::Workspace<Policy, 2> workspace(shape);
  for (int32_t k = 0; k < n; ++k)
    for (int64_t p = colPos[k]; p < colPos[k + 1]; ++p)
      for (int64_t q = rowPos[k]; q < rowPos[k + 1]; ++q)
        workspace.insert({colRows[p], rowCols[q]}, colVals[p] * rowVals[q]);
  return tcc::ism::compress(workspace.finish(), shape, tcc::ism::chains::csr());
}

Triples triplesOf(const tcc::ism::CompressedTensor& t, int32_t cols) {
  Triples out;
  const auto& level = t.levels[1];
  for (size_t r = 0; r + 1 < level.pos.size(); ++r)
    for (int64_t p = level.pos[r]; p < level.pos[r + 1]; ++p) {
      if (t.vals[p] == 0.0) continue;
      out.keys.push_back(int64_t(r) * cols + level.crd[p]);
      out.values.push_back(t.vals[p]);
    }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  std::string policy = "bucket";
  std::vector<std::string> names;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--repeat" && a + 1 < argc) {
      repeat = std::stoi(argv[++a]);
    } else if (arg == "--policy" && a + 1 < argc) {
      policy = argv[++a];
    } else {
      names.push_back(arg);
    }
  }
  if (names.empty())
    names = {"bcsstk01", "bcspwr06", "dwt_992",  "494_bus", "west0497", "gent113",
             "impcol_a", "lp_e226",  "fs_183_1", "ash219",  "mbeacxc",  "jagmesh7"};
  std::string sparseProgram = kSparseProgram;
  sparseProgram.replace(sparseProgram.find("POLICY"), 6, policy);

  std::printf("| matrix | n | nnz(B) | nnz(A) | sparse ms | direct ISM ms | dense ms | Eigen ms | sparse/direct | "
              "dense/sparse | Eigen/sparse | workspace MB sparse | workspace MB dense | max rel diff |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<double> overhead, denseRatio, eigenRatio, memoryRatio;
  for (const auto& name : names) {
    auto comma = name.find(',');
    auto read = [](const std::string& matrix) {
      return tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + matrix + ".mtx");
    };
    tcc::rt::Coo b = comma == std::string::npos ? read(name)
                                                : tcc::rt::kroneckerProduct(read(name.substr(0, comma)), read(name.substr(comma + 1)));
    std::string label = comma == std::string::npos ? name : "kron(" + name.substr(0, comma) + ", " +
                                                              name.substr(comma + 1) + ") scale-up";
    if (b.dims[0] != b.dims[1]) continue;
    int32_t n = b.dims[0];
    SparseRow eigenB(n, n);
    std::vector<Eigen::Triplet<double>> triplets;
    for (size_t e = 0; e < b.nnz(); ++e) triplets.emplace_back(b.coords[0][e], b.coords[1][e], b.values[e]);
    eigenB.setFromTriplets(triplets.begin(), triplets.end());
    SparseRow expected = (eigenB * eigenB).pruned(0.0);
    Triples reference = triplesOf(expected);

    auto runTcc = [&](const std::string& program) {
      tcc::Kernel kernel = tcc::compile(tcc::Program::fromText(program, "bench.tc"));
      tcc::Tensor tensor = tcc::rt::pack(b, tcc::rt::TensorFormat::csr());
      std::map<std::string, tcc::Tensor> inputs = {{"B", tensor}, {"C", tensor}};
      kernel.run(inputs);  // warm-up and conversion into DCSC / DCSR outside the timing
      tcc::RunResult result = kernel.run(inputs, tcc::RunOptions{repeat});
      const tcc::Tensor& a = result.tensors.at("A");
      double seconds = median(result.seconds);
      Triples got;
      if (a.format() == tcc::rt::TensorFormat::csr()) {
        got = triplesOf(a);
      } else {
        // The dense workspace's result is compressed into CSR, inside the time.
        auto start = Clock::now();
        tcc::Tensor csr = tcc::rt::convert(a, tcc::rt::TensorFormat::csr());
        seconds += std::chrono::duration<double>(Clock::now() - start).count();
        got = triplesOf(csr);
      }
      return std::make_pair(seconds, difference(got, reference));
    };
    Measurement sparse = inChild([&] { return runTcc(sparseProgram); });
    double denseBytes = 8.0 * n * n;
    Measurement dense;
    dense.seconds = NAN;
    if (denseBytes <= kLargestDenseWorkspace) dense = inChild([&] { return runTcc(kDenseProgram); });
    Measurement direct = inChild([&] {
      tcc::ism::CompressedTensor result;
      double seconds = timeMedian(repeat, [&] {
        result = policy == "hash" ? directProduct<tcc::ism::HashPolicy>(b) : directProduct<tcc::ism::BucketPolicy>(b);
      });
      return std::make_pair(seconds, difference(triplesOf(result, n), reference));
    });
    Measurement eigen = inChild([&] {
      SparseRow product;
      double seconds = timeMedian(repeat, [&] { product = eigenB * eigenB; });
      return std::make_pair(seconds, 0.0);
    });
    bool denseRan = !std::isnan(dense.seconds);
    double worst = std::max({sparse.difference, direct.difference, denseRan ? dense.difference : 0.0});
    char denseMs[64] = "not allocated", denseRatioText[64] = "-";
    if (denseRan) {
      std::snprintf(denseMs, sizeof denseMs, "%.3f", dense.seconds * 1e3);
      std::snprintf(denseRatioText, sizeof denseRatioText, "%.2f", dense.seconds / sparse.seconds);
    }
    std::printf("| %s | %d | %zu | %lld | %.3f | %.3f | %s | %.3f | %.2f | %s | %.2f | %.2f | %.1f | %.1e |\n",
                label.c_str(), n, b.nnz(), static_cast<long long>(expected.nonZeros()), sparse.seconds * 1e3,
                direct.seconds * 1e3, denseMs, eigen.seconds * 1e3, sparse.seconds / direct.seconds,
                denseRatioText, eigen.seconds / sparse.seconds, direct.workspaceBytes / (1 << 20),
                denseBytes / (1 << 20), worst);
    std::fflush(stdout);
    if (sparse.failed || direct.failed || (denseRan && dense.failed) || eigen.failed || !(worst <= 1e-12)) {
      std::fprintf(stderr, "%s: a variant failed or disagreed with Eigen\n", label.c_str());
      return 1;
    }
    overhead.push_back(sparse.seconds / direct.seconds);
    if (denseRan) denseRatio.push_back(dense.seconds / sparse.seconds);
    eigenRatio.push_back(eigen.seconds / sparse.seconds);
    memoryRatio.push_back(direct.workspaceBytes / denseBytes);
  }
  auto geomean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += std::log(x);
    return std::exp(sum / std::max<size_t>(v.size(), 1));
  };
  std::printf("\ngeomean over %zu matrices: generated/direct ISM time %.2f; dense-workspace/sparse time %.2f; "
              "Eigen/sparse time %.2f; sparse/dense workspace memory %.3f\n",
              overhead.size(), geomean(overhead), geomean(denseRatio), geomean(eigenRatio), geomean(memoryRatio));
  return 0;
}
