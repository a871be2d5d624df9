// Times the permanent kernel that p = perm(A) calls (tcc_permanent:
// SparsePerman over a degree-sorted CSC with zero tracking, OpenMP chunks)
// at each thread count asked for, against a dense Gray-code Ryser on one
// thread, on Erdos-Renyi matrices and Matrix Market files. Every result is
// checked against the peer's where the peer runs. Prints a Markdown table.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dense_ryser.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/permanent.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Input {
  std::string name;
  int n = 0;
  std::vector<double> dense;  // row-major
};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) if (!item.empty()) items.push_back(item);
  return items;
}

bool hasPerfectMatching(const Input& input) {
  const int n = input.n;
  std::vector<int> matchOfColumn(n, -1);
  std::vector<char> seen(n);
  std::function<bool(int)> augment = [&](int row) {
    for (int column = 0; column < n; ++column) {
      if (input.dense[static_cast<size_t>(row) * n + column] == 0 || seen[column]) continue;
      seen[column] = 1;
      if (matchOfColumn[column] < 0 || augment(matchOfColumn[column])) {
        matchOfColumn[column] = row;
        return true;
      }
    }
    return false;
  };
  for (int row = 0; row < n; ++row) {
    std::fill(seen.begin(), seen.end(), 0);
    if (!augment(row)) return false;
  }
  return true;
}

// Each entry nonzero with probability p, uniform in (0, 1]; matrices
// without a perfect matching (permanent 0) are drawn again, as Elbek and
// Kaya do.
Input erdosRenyi(int n, double p, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  char name[64];
  std::snprintf(name, sizeof name, "ER n=%d p=%.2f", n, p);
  Input input{name, n, {}};
  do {
    input.dense.assign(static_cast<size_t>(n) * n, 0.0);
    for (double& entry : input.dense)
      if (unit(random) < p) entry = 1.0 - unit(random);
  } while (!hasPerfectMatching(input));
  return input;
}

Input fromFile(const std::string& path) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(path);
  std::vector<int32_t> dims = coo.dims;
  if (dims.size() != 2 || dims[0] != dims[1]) {
    std::fprintf(stderr, "%s: not a square matrix\n", path.c_str());
    std::exit(2);
  }
  tcc::rt::Tensor tensor = tcc::rt::pack(coo, tcc::rt::TensorFormat::dense(2));
  std::string name = path.substr(path.find_last_of('/') + 1);
  return Input{name, dims[0], tcc::rt::toDense(tensor)};
}

double seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU time of the whole process: on a shared machine, the one-thread
// comparison is made on it, since other processes stretch wall time.
double cpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

double permanent(const tcc::rt::Tensor& matrix, int threads) {
  tcc::rt::PermanentOptions options;
  options.threads = threads;
  options.progress = tcc::rt::ProgressMode::Off;
  tcc::rt::PermanentOptionsScope scope(options);
  tcc::rt::Tensor result({}, tcc::rt::TensorFormat::dense(0));
  tcc_tensor resultView = result.abiView(), matrixView = matrix.abiView();
  if (tcc_permanent(&resultView, &matrixView) != 0) {
    std::fprintf(stderr, "tcc_permanent: %s\n", tcc_permanent_last_error());
    std::exit(1);
  }
  return *static_cast<const double*>(resultView.vals);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sizes = {"24", "26", "28"}, densities = {"0.2", "0.4"}, threads = {"1", "2"}, files;
  int peerMaxN = 28, repeat = 1;
  for (int k = 1; k + 1 < argc; k += 2) {
    std::string flag = argv[k], value = argv[k + 1];
    if (flag == "--sizes") sizes = splitList(value);
    else if (flag == "--densities") densities = splitList(value);
    else if (flag == "--threads") threads = splitList(value);
    else if (flag == "--matrices") files = splitList(value);
    else if (flag == "--peer-max-n") peerMaxN = std::atoi(value.c_str());
    else if (flag == "--repeat") repeat = std::atoi(value.c_str());
    else {
      std::fprintf(stderr,
                   "usage: %s [--sizes 24,26,28] [--densities 0.2,0.4] [--threads 1,2] [--matrices a.mtx,...] "
                   "[--peer-max-n 28] [--repeat 1]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<Input> inputs;
  for (const auto& size : sizes)
    for (const auto& density : densities)
      inputs.push_back(erdosRenyi(std::atoi(size.c_str()), std::atof(density.c_str()), 2026 + std::atoi(size.c_str())));
  for (const auto& file : files) inputs.push_back(fromFile(file));

  std::printf("| matrix | n | nnz | dense Ryser, 1 thr.: CPU s | tcc, 1 thr.: CPU s | dense / tcc (CPU) |");
  for (const auto& t : threads) std::printf(" tcc, %s thr.: wall s |", t.c_str());
  for (size_t k = 1; k < threads.size(); ++k) std::printf(" tcc speedup %s thr. (wall) |", threads[k].c_str());
  std::printf(" rel. diff. |\n|---|---:|---:|---:|---:|---:|");
  for (size_t k = 0; k < 2 * threads.size(); ++k) std::printf("---:|");
  std::printf("\n");

  for (const Input& input : inputs) {
    tcc::rt::Tensor csc = tcc::rt::fromDense(input.dense, {input.n, input.n}, tcc::rt::TensorFormat::csc());
    long long nnz = 0;
    for (double v : input.dense) nnz += v != 0;
    double peer = std::nan(""), peerCpu = std::nan("");
    if (input.n <= peerMaxN) {
      double start = cpuSeconds();
      peer = tcc::bench::denseGrayCodeRyser(input.dense, input.n);
      peerCpu = cpuSeconds() - start;
    }
    std::vector<double> times;
    double result = 0, oneThreadCpu = 1e300;
    for (const auto& t : threads) {
      double best = 1e300;
      for (int r = 0; r < repeat; ++r) {
        auto start = Clock::now();
        double cpuStart = cpuSeconds();
        result = permanent(csc, std::atoi(t.c_str()));
        best = std::min(best, seconds(start));
        if (t == "1") oneThreadCpu = std::min(oneThreadCpu, cpuSeconds() - cpuStart);
      }
      times.push_back(best);
    }
    bool haveOneThread = oneThreadCpu < 1e300;
    std::printf("| %s | %d | %lld |", input.name.c_str(), input.n, nnz);
    if (std::isnan(peerCpu)) std::printf(" — |");
    else std::printf(" %.3f |", peerCpu);
    if (haveOneThread) std::printf(" %.3f |", oneThreadCpu);
    else std::printf(" — |");
    if (std::isnan(peerCpu) || !haveOneThread) std::printf(" — |");
    else std::printf(" %.2f |", peerCpu / oneThreadCpu);
    for (double time : times) std::printf(" %.3f |", time);
    for (size_t k = 1; k < times.size(); ++k) std::printf(" %.2f |", times[0] / times[k]);
    if (std::isnan(peer)) std::printf(" — |\n");
    else std::printf(" %.1e |\n", std::abs(result - peer) / std::abs(peer));
    std::fflush(stdout);
  }
  return 0;
}
