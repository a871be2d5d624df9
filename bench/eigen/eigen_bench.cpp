// Single-threaded run time of tcc-generated kernels against Eigen 3 sparse
// products on real matrices, with each tcc result checked against Eigen's.
//
//   tcc_eigen_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,spgemm,add,mttkrp] [--fp strict|fast]
//                   [--backend clang|system] [MATRIX ...]
//
// Prints one Markdown table row per kernel and matrix, then the geometric
// mean of Eigen time / tcc time per kernel (> 1: tcc faster), and the load
// average before and after.
//
// Each kernel is timed in R rounds (default 5); a round runs tcc's kernel
// `repeat` times and then Eigen's `repeat` times, so that both sides see
// the same moments of a shared machine. A side's time is the median of its
// round medians. tcc's time is `Kernel::run` (binding and checks, the
// output allocated, zeroed and filled). For kernels with a dense output
// (SpMV, SpMM, MTTKRP) the "call" column also times the compiled entry
// point alone on an output allocated once, zeroed inside the timed region:
// the same work as Eigen's `C.noalias() = A * B` (setZero, then the product).
#include <Eigen/Dense>
#include <Eigen/Sparse>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

// tcc's floating-point mode for the whole run (--fp); strict by default.
tcc::frontend::FloatingPointMode floatingPoint = tcc::frontend::FloatingPointMode::Strict;

tcc::jit::Backend backend = tcc::CompileOptions{}.backend;
int rounds = 5;

tcc::CompileOptions compileOptions() {
  tcc::CompileOptions options;
  options.floatingPoint = floatingPoint;
  options.backend = backend;
  return options;
}

std::string loadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

using SparseRow = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
using DenseRow = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kSpmmColumns = 64;
constexpr int kMttkrpRank = 16;
constexpr int kMttkrpModeThree = 16;  // B(i, k, l) from the matrix's (i, k) with l = k mod 16

double secondsOf(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct TccTiming {
  double seconds;      // Kernel::run
  double callSeconds;  // zeroing a dense output and the entry point alone; NAN for sparse outputs
  double eigenSeconds;
  std::map<std::string, tcc::Tensor> outputs;
};

// Compiles `dsl`, checks it once, then times it and `eigen` in interleaved
// rounds (see the top of the file). `eigen` is called once before timing.
TccTiming timeAgainstEigen(const std::string& dsl, const std::map<std::string, tcc::Tensor>& inputs, int repeat,
                           const std::function<void()>& eigen) {
  tcc::Kernel kernel = tcc::compile(tcc::Program::fromText(dsl, "bench.tc"), compileOptions());
  TccTiming timing{NAN, NAN, NAN, kernel.run(inputs)};  // warm-up, and the result checked
  eigen();
  // The entry point on an output allocated once, for a dense output of a
  // one-statement kernel whose parameters are all bound by name.
  const auto& statements = kernel.lowered().statements;
  tcc::Tensor output;
  std::vector<tcc_tensor> views;
  size_t outputView = 0;
  bool direct = statements.size() == 1 && statements[0].convertedInputs.empty();
  if (direct) {
    const tcc::TensorVar& declared = statements[0].output;
    const tcc::Tensor& result = timing.outputs.at(declared.name());
    direct = result.format().isAllDense() && statements[0].computedOutput.name() == declared.name();
    if (direct) output = result;
    for (const auto& parameter : statements[0].parameters) {
      if (!direct) break;
      if (parameter.name() == declared.name()) outputView = views.size(), views.push_back(output.abiView());
      else if (auto input = inputs.find(parameter.name()); input != inputs.end()) views.push_back(input->second.abiView());
      else direct = false;
    }
  }
  std::vector<tcc_tensor*> pointers;
  for (auto& view : views) pointers.push_back(&view);
  auto entry = direct ? kernel.entryPoint(0) : nullptr;
  const size_t outputBytes =
      direct ? static_cast<size_t>(views[outputView].vals_size) * tcc::rt::byteWidth(output.valueType()) : 0;
  auto call = [&] {
    std::memset(views[outputView].vals, 0, outputBytes);
    if (entry(pointers.data()) != 0) throw std::runtime_error("the kernel failed");
  };
  if (direct) call();
  std::vector<double> runMedians, callMedians, eigenMedians;
  for (int round = 0; round < rounds; ++round) {
    runMedians.push_back(median(kernel.run(inputs, tcc::RunOptions{repeat}).seconds));
    if (direct) {
      std::vector<double> samples;
      for (int r = 0; r < repeat; ++r) samples.push_back(secondsOf(call));
      callMedians.push_back(median(samples));
    }
    std::vector<double> samples;
    for (int r = 0; r < repeat; ++r) samples.push_back(secondsOf(eigen));
    eigenMedians.push_back(median(samples));
  }
  timing.seconds = median(runMedians);
  if (direct) timing.callSeconds = median(callMedians);
  timing.eigenSeconds = median(eigenMedians);
  return timing;
}

tcc::Tensor pack(const tcc::rt::Coo& coo, const char* format) {
  tcc::Format f = format == std::string("csr")   ? tcc::Format::csr()
                  : format == std::string("csf") ? tcc::Format::csf(coo.order())
                                                 : tcc::Format::denseOfOrder(coo.order());
  return tcc::rt::pack(coo, tcc::toRuntimeFormat(f));
}

SparseRow toEigen(const tcc::rt::Coo& coo) {
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(coo.nnz());
  for (size_t k = 0; k < coo.nnz(); ++k) triplets.emplace_back(coo.coords[0][k], coo.coords[1][k], coo.values[k]);
  SparseRow matrix(coo.dims[0], coo.dims[1]);
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  return matrix;
}

tcc::rt::Coo fromEigen(const SparseRow& matrix) {
  tcc::rt::Coo coo = tcc::rt::Coo::ofShape({static_cast<int32_t>(matrix.rows()), static_cast<int32_t>(matrix.cols())});
  for (int i = 0; i < matrix.outerSize(); ++i)
    for (SparseRow::InnerIterator it(matrix, i); it; ++it) {
      int32_t coordinate[2] = {i, static_cast<int32_t>(it.col())};
      coo.push(coordinate, it.value());
    }
  return coo;
}

tcc::rt::Coo denseCoo(std::vector<int32_t> dims, const double* values) {
  tcc::rt::Coo coo = tcc::rt::Coo::ofShape(dims);
  int64_t size = 1;
  for (int32_t d : dims) size *= d;
  std::vector<int32_t> coordinate(dims.size());
  for (int64_t p = 0; p < size; ++p) {
    int64_t rest = p;
    for (int m = static_cast<int>(dims.size()) - 1; m >= 0; --m) {
      coordinate[m] = static_cast<int32_t>(rest % dims[m]);
      rest /= dims[m];
    }
    coo.push(coordinate.data(), values[p]);
  }
  return coo;
}

// max |tcc - eigen| / max |eigen|, over dense row-major values.
double relativeDifference(const std::vector<double>& actual, const double* expected, size_t size) {
  if (actual.size() != size) return INFINITY;
  double difference = 0, scale = 0;
  for (size_t k = 0; k < size; ++k) {
    difference = std::max(difference, std::abs(actual[k] - expected[k]));
    scale = std::max(scale, std::abs(expected[k]));
  }
  return difference / std::max(scale, 1e-300);
}

double relativeDifference(const tcc::Tensor& actual, const SparseRow& expected) {
  SparseRow tccResult = toEigen(tcc::rt::unpack(actual));
  if (tccResult.rows() != expected.rows() || tccResult.cols() != expected.cols()) return INFINITY;
  SparseRow difference = tccResult - expected;
  double worst = 0, scale = 0;
  for (int k = 0; k < difference.nonZeros(); ++k) worst = std::max(worst, std::abs(difference.valuePtr()[k]));
  for (int k = 0; k < expected.nonZeros(); ++k) scale = std::max(scale, std::abs(expected.valuePtr()[k]));
  return worst / std::max(scale, 1e-300);
}

struct Row {
  std::string kernel, matrix;
  double tccSeconds, callSeconds, eigenSeconds, difference;
};

std::vector<double> randomValues(size_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& v : values) v = value(random);
  return values;
}

// The matrix with every pattern value set to a seeded nonzero, so pattern
// matrices are not all ones (and integer ones stay as read).
tcc::rt::Coo readMatrix(const std::string& name) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  bool allOnes = std::all_of(coo.values.begin(), coo.values.end(), [](double v) { return v == 1; });
  if (allOnes) {
    auto values = randomValues(coo.nnz(), 7);
    for (size_t k = 0; k < coo.nnz(); ++k) coo.values[k] = values[k] >= 0 ? values[k] + 0.1 : values[k] - 0.1;
  }
  coo.sort();
  return coo;
}

Row spmv(const std::string& name, const tcc::rt::Coo& a, const SparseRow& A, int repeat) {
  auto xValues = randomValues(a.dims[1], 1);
  Eigen::VectorXd x = Eigen::Map<Eigen::VectorXd>(xValues.data(), a.dims[1]);
  Eigen::VectorXd y(a.dims[0]);
  auto timing = timeAgainstEigen(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n",
      {{"A", pack(a, "csr")}, {"x", pack(denseCoo({a.dims[1]}, xValues.data()), "dense")}}, repeat,
      [&] { y.noalias() = A * x; });
  return {"SpMV", name, timing.seconds, timing.callSeconds, timing.eigenSeconds,
          relativeDifference(tcc::rt::toDense(timing.outputs.at("y")), y.data(), y.size())};
}

Row spmm(const std::string& name, const tcc::rt::Coo& a, const SparseRow& A, int repeat) {
  auto bValues = randomValues(static_cast<size_t>(a.dims[1]) * kSpmmColumns, 2);
  DenseRow B = Eigen::Map<DenseRow>(bValues.data(), a.dims[1], kSpmmColumns);
  DenseRow C(a.dims[0], kSpmmColumns);
  auto timing = timeAgainstEigen(
      "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\nC(i, k) = A(i, j) * B(j, k)\n",
      {{"A", pack(a, "csr")}, {"B", pack(denseCoo({a.dims[1], kSpmmColumns}, bValues.data()), "dense")}}, repeat,
      [&] { C.noalias() = A * B; });
  return {"SpMM", name, timing.seconds, timing.callSeconds, timing.eigenSeconds,
          relativeDifference(tcc::rt::toDense(timing.outputs.at("C")), C.data(), C.size())};
}

tcc::rt::Coo transposed(const tcc::rt::Coo& a) {
  tcc::rt::Coo t = tcc::rt::Coo::ofShape({a.dims[1], a.dims[0]});
  for (size_t k = 0; k < a.nnz(); ++k) {
    int32_t coordinate[2] = {a.coords[1][k], a.coords[0][k]};
    t.push(coordinate, a.values[k]);
  }
  t.sort();
  return t;
}

Row spgemm(const std::string& name, const tcc::rt::Coo& a, const SparseRow& A, int repeat) {
  // A A for square matrices, A A^T otherwise.
  tcc::rt::Coo b = a.dims[0] == a.dims[1] ? a : transposed(a);
  SparseRow B = toEigen(b);
  SparseRow C;
  auto timing = timeAgainstEigen(
      "tensor C(I, J) : csr\ntensor A(I, K) : csr\ntensor B(K, J) : csr\nC(i, j) = A(i, k) * B(k, j)\n",
      {{"A", pack(a, "csr")}, {"B", pack(b, "csr")}}, repeat, [&] { C = A * B; });
  return {"SpGEMM", name, timing.seconds, timing.callSeconds, timing.eigenSeconds,
          relativeDifference(timing.outputs.at("C"), C)};
}

Row add(const std::string& name, const tcc::rt::Coo& a, const SparseRow& A, int repeat) {
  // Second operand: A^T (scaled) for square matrices; for others A with its
  // rows rotated by one. Either way its pattern differs from A's.
  tcc::rt::Coo b = tcc::rt::Coo::ofShape(a.dims);
  for (size_t k = 0; k < a.nnz(); ++k) {
    int32_t coordinate[2] = {a.coords[1][k], a.coords[0][k]};
    if (a.dims[0] != a.dims[1]) coordinate[0] = (a.coords[0][k] + 1) % a.dims[0], coordinate[1] = a.coords[1][k];
    b.push(coordinate, -0.5 * a.values[k]);
  }
  b.sort();
  SparseRow B = toEigen(b);
  SparseRow C;
  auto timing = timeAgainstEigen(
      "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nC(i, j) = A(i, j) + B(i, j)\n",
      {{"A", pack(a, "csr")}, {"B", pack(b, "csr")}}, repeat, [&] { C = A + B; });
  return {"Add", name, timing.seconds, timing.callSeconds, timing.eigenSeconds,
          relativeDifference(timing.outputs.at("C"), C)};
}

Row mttkrp(const std::string& name, const tcc::rt::Coo& a, int repeat) {
  // B(i, k, l) = a(i, k) with l = k mod 16; A(i, j) = B(i, k, l) C(k, j) D(l, j).
  int32_t I = a.dims[0], K = a.dims[1], L = kMttkrpModeThree, R = kMttkrpRank;
  tcc::rt::Coo b = tcc::rt::Coo::ofShape({I, K, L});
  std::vector<Eigen::Triplet<double>> matricized;
  for (size_t e = 0; e < a.nnz(); ++e) {
    int32_t coordinate[3] = {a.coords[0][e], a.coords[1][e], a.coords[1][e] % L};
    b.push(coordinate, a.values[e]);
    matricized.emplace_back(coordinate[0], coordinate[1] * L + coordinate[2], a.values[e]);
  }
  b.sort();
  auto cValues = randomValues(static_cast<size_t>(K) * R, 3), dValues = randomValues(static_cast<size_t>(L) * R, 4);
  // Eigen: the mode-1 matricization B_(1) (I x K*L, column k*L + l) times
  // the Khatri-Rao product of C and D (row k*L + l = C(k, :) .* D(l, :)).
  SparseRow B1(I, static_cast<Eigen::Index>(K) * L);
  B1.setFromTriplets(matricized.begin(), matricized.end());
  DenseRow C = Eigen::Map<DenseRow>(cValues.data(), K, R), D = Eigen::Map<DenseRow>(dValues.data(), L, R);
  DenseRow khatriRao(static_cast<Eigen::Index>(K) * L, R);
  DenseRow A(I, R);
  auto timing = timeAgainstEigen(
      "tensor A(I, J) : dense\ntensor B(I, K, L) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
      "A(i, j) = B(i, k, l) * C(k, j) * D(l, j)\n",
      {{"B", pack(b, "csf")}, {"C", pack(denseCoo({K, R}, cValues.data()), "dense")},
       {"D", pack(denseCoo({L, R}, dValues.data()), "dense")}},
      repeat, [&] {
        for (int k = 0; k < K; ++k)
          for (int l = 0; l < L; ++l)
            khatriRao.row(static_cast<Eigen::Index>(k) * L + l) = C.row(k).cwiseProduct(D.row(l));
        A.noalias() = B1 * khatriRao;
      });
  return {"MTTKRP", name, timing.seconds, timing.callSeconds, timing.eigenSeconds,
          relativeDifference(tcc::rt::toDense(timing.outputs.at("A")), A.data(), A.size())};
}

// `value` in `format`, or "-" for NaN.
std::string orDash(const char* format, double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) parts.push_back(part);
  return parts;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10;
  std::vector<std::string> kernels = {"spmv", "spmm", "spgemm", "add", "mttkrp"};
  std::vector<std::string> matrices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--backend" && i + 1 < argc && (argv[i + 1] == std::string("clang") || argv[i + 1] == std::string("system")))
      backend = argv[++i] == std::string("system") ? tcc::jit::Backend::SystemCompiler : tcc::jit::Backend::ClangInterpreter;
    else if (arg == "--kernels" && i + 1 < argc) kernels = split(argv[++i]);
    else if (arg == "--fp" && i + 1 < argc && tcc::frontend::parseFloatingPointMode(argv[i + 1]))
      floatingPoint = *tcc::frontend::parseFloatingPointMode(argv[++i]);
    else if (arg.rfind("--", 0) == 0) {
      std::cerr << "usage: tcc_eigen_bench [--repeat N] [--rounds R] [--kernels spmv,spmm,spgemm,add,mttkrp]\n"
                   "                       [--fp strict|fast] [--backend clang|system] [MATRIX ...]\n";
      return 2;
    } else matrices.push_back(arg);
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bayer10", "bcsstk13", "dnn_n1024_l1", "Franz6_id1959_aug", "mbeacxc", "cryg2500",
                "watt_2", "adder_dcop_05", "bcspwr10", "Pd", "G51", "dwt_992", "jagmesh7"};
  Eigen::setNbThreads(1);

  if (!tcc::jit::isAvailable(backend)) {
    std::cerr << tcc::jit::backendName(backend) << " is not built\n";
    return 2;
  }
  std::printf("tcc fp %s, %s backend, repeat %d, %d interleaved rounds; load average before: %s\n\n",
              floatingPoint == tcc::frontend::FloatingPointMode::Fast ? "fast" : "strict", tcc::jit::backendName(backend),
              repeat, rounds, loadAverage().c_str());
  std::vector<Row> rows;
  std::printf("| kernel | matrix | tcc ms | tcc call ms | Eigen ms | Eigen/tcc | Eigen/call | max rel diff |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& name : matrices) {
    try {
      tcc::rt::Coo a = readMatrix(name);
      SparseRow A = toEigen(a);
      for (const auto& kernel : kernels) {
        Row row = kernel == "spmv"     ? spmv(name, a, A, repeat)
                  : kernel == "spmm"   ? spmm(name, a, A, repeat)
                  : kernel == "spgemm" ? spgemm(name, a, A, repeat)
                  : kernel == "add"    ? add(name, a, A, repeat)
                                       : mttkrp(name, a, repeat);
        // "-": no call column for kernels with sparse outputs.
        std::printf("| %s | %s | %.4f | %s | %.4f | %.2f | %s | %.1e |\n", row.kernel.c_str(), name.c_str(),
                    1e3 * row.tccSeconds, orDash("%.4f", 1e3 * row.callSeconds).c_str(), 1e3 * row.eigenSeconds,
                    row.eigenSeconds / row.tccSeconds, orDash("%.2f", row.eigenSeconds / row.callSeconds).c_str(),
                    row.difference);
        std::fflush(stdout);
        rows.push_back(row);
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), error.what());
    }
  }
  std::printf("\n| kernel | matrices | geomean Eigen/tcc | geomean Eigen/call | worst rel diff |\n"
              "|---|---:|---:|---:|---:|\n");
  int status = 0;
  for (const char* kernel : {"SpMV", "SpMM", "SpGEMM", "Add", "MTTKRP"}) {
    std::vector<double> ratios, callRatios;
    double worst = 0;
    for (const auto& row : rows) {
      if (row.kernel != kernel) continue;
      ratios.push_back(row.eigenSeconds / row.tccSeconds);
      if (!std::isnan(row.callSeconds)) callRatios.push_back(row.eigenSeconds / row.callSeconds);
      worst = std::max(worst, row.difference);
    }
    if (ratios.empty()) continue;
    std::printf("| %s | %zu | %.2f | %s | %.1e |\n", kernel, ratios.size(), geomean(ratios),
                orDash("%.2f", geomean(callRatios)).c_str(), worst);
    if (!(worst <= 1e-9)) status = 1;
  }
  std::printf("\nload average after: %s\n", loadAverage().c_str());
  return status;  // non-zero when some tcc result disagrees with Eigen's
}
