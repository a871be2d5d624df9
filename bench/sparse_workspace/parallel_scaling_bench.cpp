// Parallel sparse workspaces: the scattering kernels, each compiled without
// a schedule (the sequential sparse workspace: the baseline) and with a
// thread loop over its producer (a sparse workspace per thread, merged in
// parallel), at each thread count.
//
//   outer_spgemm       A = B * B, B read by columns (CSC) and rows (CSR), loops k, i, j
//   transposed_spgemm  A^T = B * B, every operand CSR, A(j, i) scattered by i
//   sp_mttkrp          A(i, j) = B(k, l, i) C(k, j) D(l, j), B in CSF, A in DCSR
//   sp_ttm             A(i, j, l) = B(k, i, j) C(k, l), B in CSF, C in CSR, A in COO
//
// The SpGEMMs run on each matrix named (a name of the shared data folder or
// NAME1,NAME2 for their Kronecker product, a scale-up); the tensor kernels
// on a seeded random tensor. Every configuration runs in a child process of
// its own (so each starts with OpenMP's thread count set and its own peak
// memory): it checks the parallel result against the sequential kernel's,
// then reports the median kernel time and how far its peak resident memory
// rose while the kernel ran (the workspaces and the result).
//
//   tcc_parallel_workspace_bench [--threads 1,2,4,8,16] [--repeat N] [--kernels K1,K2] [--no-fork] [MATRIX ...]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace {

struct Benchmark {
  std::string kernel, input;
  std::string program, schedule;  // schedule: the parallel one
  // Made only in the process that measures (a child makes one benchmark's).
  std::function<std::map<std::string, tcc::rt::Coo>()> inputs;
};

struct Measurement {
  double seconds = 0;
  double peakMiB = 0;       // growth of the peak resident set while the kernel ran
  double difference = 0;    // largest |parallel - sequential| over the largest |sequential|
  bool ok = false;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// A line of /proc/self/status ("VmRSS", "VmHWM") in MiB.
double statusMiB(const char* field) {
  FILE* status = std::fopen("/proc/self/status", "r");
  if (!status) return 0;
  char line[256];
  double kib = 0;
  size_t length = std::strlen(field);
  while (std::fgets(line, sizeof line, status))
    if (std::strncmp(line, field, length) == 0 && line[length] == ':') kib = std::atof(line + length + 1);
  std::fclose(status);
  return kib / 1024;
}

// Resets the peak resident set to the current one (Linux 4.0 and later), so
// that a later peak is the kernel's own and not the inputs' construction.
void resetPeakResident() {
  if (FILE* refs = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", refs);
    std::fclose(refs);
  }
}

std::vector<double> denseOf(const tcc::Tensor& tensor) { return tcc::rt::toDense(tcc::rt::unpack(tensor)); }

// In a process of its own: threads == 0 times the sequential kernel.
Measurement measure(const Benchmark& b, int threads, int repeat) {
  std::map<std::string, tcc::Tensor> inputs;
  tcc::Program sequential = tcc::Program::fromText(b.program, "sequential.tc");
  for (const auto& [name, coo] : b.inputs())
    inputs.emplace(name, tcc::rt::pack(coo, tcc::toRuntimeFormat(sequential.syntax().findTensor(name)->format())));
  tcc::Kernel baseline = tcc::compile(sequential);
  tcc::Kernel timed = tcc::compile(threads == 0 ? sequential
                                                : tcc::Program::fromText(
                                                      b.program + "schedule {\n  " + b.schedule + "\n}\n", "parallel.tc"));
  Measurement m;
  resetPeakResident();
  double before = statusMiB("VmRSS");
  timed.run(inputs);  // warm-up
  tcc::RunOptions options;
  options.repeat = repeat;
  tcc::RunResult result = timed.run(inputs, options);
  m.peakMiB = statusMiB("VmHWM") - before;
  m.seconds = median(result.seconds);
  std::vector<double> actual = denseOf(result.tensors.at("A"));
  std::vector<double> expected = denseOf(baseline.run(inputs).at("A"));
  double scale = 1e-300, worst = 0;
  for (size_t k = 0; k < expected.size(); ++k) {
    scale = std::max(scale, std::abs(expected[k]));
    worst = std::max(worst, std::abs(actual[k] - expected[k]));
  }
  m.difference = worst / scale;
  m.ok = actual.size() == expected.size() && m.difference <= 1e-12;
  return m;
}

// Each measurement runs in a fresh process (this program, re-executed with
// --child), so that OMP_NUM_THREADS is read by whichever OpenMP runtime the
// kernels use, and the peak memory is the measurement's own. --no-fork
// measures in this process instead (for a debugger; threads then follow
// the environment).
bool freshProcesses = true;
std::vector<std::string> childArguments;  // the matrices and --repeat, as given

Measurement inChild(size_t benchmark, int threads, int repeat, const std::vector<Benchmark>& all) {
  if (!freshProcesses) return measure(all[benchmark], threads, repeat);
  int channel[2];
  if (pipe(channel) != 0) return {};
  pid_t child = fork();
  if (child == 0) {
    dup2(channel[1], STDOUT_FILENO);
    close(channel[0]);
    close(channel[1]);
    if (threads > 0) setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
    std::vector<std::string> words = {"tcc_parallel_workspace_bench", "--child", std::to_string(benchmark),
                                      std::to_string(threads), std::to_string(repeat)};
    words.insert(words.end(), childArguments.begin(), childArguments.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(channel[1]);
  Measurement m;
  if (read(channel[0], &m, sizeof m) != sizeof m) m = {};
  close(channel[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return m;
}

// The child's side: measures one benchmark and writes the result to stdout.
int runChild(size_t benchmark, int threads, int repeat, const std::vector<Benchmark>& all) {
  Measurement m;
  try {
    m = measure(all.at(benchmark), threads, repeat);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s %s: %s\n", all.at(benchmark).kernel.c_str(), all.at(benchmark).input.c_str(),
                 error.what());
  }
  std::fflush(stdout);
  return write(STDOUT_FILENO, &m, sizeof m) == sizeof m ? 0 : 1;
}

tcc::rt::Coo matrixNamed(const std::string& name) {
  auto read = [](const std::string& n) {
    return tcc::rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + n + ".mtx");
  };
  size_t comma = name.find(',');
  return comma == std::string::npos ? read(name)
                                    : tcc::rt::kroneckerProduct(read(name.substr(0, comma)), read(name.substr(comma + 1)));
}

std::string label(const std::string& name) {
  return name.find(',') == std::string::npos ? name : "kron(" + name + ")";
}

std::vector<Benchmark> benchmarks(const std::vector<std::string>& matrices) {
  std::vector<Benchmark> all;
  for (const auto& name : matrices) {
    auto operands = [name] {
      tcc::rt::Coo m = matrixNamed(name);
      return std::map<std::string, tcc::rt::Coo>{{"B", m}, {"C", m}};
    };
    all.push_back({"outer_spgemm", label(name),
                   "tensor A(I, J) : csr\ntensor B(I, K) : csc\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n",
                   "parallelize(k, CPUThread, NoRaces)", operands});
    all.push_back({"transposed_spgemm", label(name),
                   "tensor A(J, I) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(j, i) = B(i, k) * C(k, j)\n",
                   "parallelize(i, CPUThread, NoRaces)", operands});
  }
  all.push_back({"sp_mttkrp", "random 300x300x3000, 2.2 M nnz, rank 16",
                 "tensor A(I, J) : dcsr\ntensor B(K, L, I) : csf\ntensor C(K, J) : dense\ntensor D(L, J) : dense\n"
                 "A(i, j) = B(k, l, i) * C(k, j) * D(l, j)\n",
                 "parallelize(k, CPUThread, NoRaces)", [] {
                   return std::map<std::string, tcc::rt::Coo>{
                     {"B", tcc::rt::randomUniform({300, 300, 3000}, 0.008, 2026)},  // 2.2 M nonzeros
                     {"C", tcc::rt::randomUniform({300, 16}, 1.0, 1)},
                     {"D", tcc::rt::randomUniform({300, 16}, 1.0, 2)}};
                 }});
  all.push_back({"sp_ttm", "random 300x300x300 at 2%, 0.54 M nnz; C 300x64 at 10%",
                 "tensor A(I, J, L) : coo\ntensor B(K, I, J) : csf\ntensor C(K, L) : csr\n"
                 "A(i, j, l) = B(k, i, j) * C(k, l)\n",
                 "parallelize(k, CPUThread, NoRaces)", [] {
                   return std::map<std::string, tcc::rt::Coo>{
                     {"B", tcc::rt::randomUniform({300, 300, 300}, 0.02, 2027)},
                     {"C", tcc::rt::randomUniform({300, 64}, 0.1, 3)}};
                 }});
  return all;
}

std::vector<int> parseThreads(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) counts.push_back(std::stoi(item));
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads = {1, 2, 4, 8, 16};
  int repeat = 5;
  std::string kernels;  // comma-separated names; empty: all
  std::vector<std::string> matrices;
  bool child = argc > 4 && std::strcmp(argv[1], "--child") == 0;
  for (int a = child ? 5 : 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--threads" && a + 1 < argc) threads = parseThreads(argv[++a]);
    else if (arg == "--no-fork") freshProcesses = false;
    else if (arg == "--repeat" && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--kernels" && a + 1 < argc) kernels = argv[++a];
    else matrices.push_back(arg);
  }
  if (matrices.empty()) matrices = {"bcsstk13", "494_bus,bcspwr06"};
  childArguments = matrices;
  if (!kernels.empty()) childArguments.insert(childArguments.begin(), {"--kernels", kernels});
  std::vector<Benchmark> all = benchmarks(matrices);
  if (!kernels.empty())
    std::erase_if(all, [&](const Benchmark& b) { return ("," + kernels + ",").find("," + b.kernel + ",") == std::string::npos; });
  if (child) return runChild(std::stoul(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), all);

  std::printf("| kernel | input | sequential ms | seq. peak MiB |");
  for (int t : threads) std::printf(" %d thr ms |", t);
  std::printf(" speedup at %d | peak MiB at %d (x seq.) |\n|---|---|---:|---:|", threads.back(), threads.back());
  for (size_t t = 0; t < threads.size(); ++t) std::printf("---:|");
  std::printf("---:|---:|\n");
  bool allOk = true;
  for (size_t k = 0; k < all.size(); ++k) {
    const Benchmark& b = all[k];
    Measurement sequential = inChild(k, 0, repeat, all);
    std::printf("| %s | %s | %.2f | %.1f |", b.kernel.c_str(), b.input.c_str(), sequential.seconds * 1e3,
                sequential.peakMiB);
    Measurement last;
    for (int t : threads) {
      last = inChild(k, t, repeat, all);
      allOk = allOk && last.ok;
      if (last.ok)
        std::printf(" %.2f |", last.seconds * 1e3);
      else
        std::printf(" WRONG (%.1e) |", last.difference);
    }
    std::printf(" %.1fx | %.1f (%.2fx) |\n", sequential.seconds / last.seconds, last.peakMiB,
                last.peakMiB / std::max(sequential.peakMiB, 1e-9));
    std::fflush(stdout);
  }
  if (!allOk) std::printf("\nsome parallel results differ from the sequential kernel's (see WRONG)\n");
  return allOk ? 0 : 1;
}
