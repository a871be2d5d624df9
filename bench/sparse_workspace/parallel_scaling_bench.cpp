// Parallel sparse workspaces: the scattering kernels, each compiled without
// a schedule (the sequential sparse workspace: the baseline) and with a
// thread loop over its producer (a sparse workspace per thread, merged and
// compressed into the output in parallel), at each thread count.
//
//   outer_spgemm       A = B * B, B read by columns (CSC) and rows (CSR), loops k, i, j
//   transposed_spgemm  A^T = B * B, every operand CSR, A(j, i) scattered by i
//   sp_mttkrp          A(i, j) = B(k, l, i) C(k, j) D(l, j), B in CSF, A in DCSR
//   sp_ttm             A(i, j, l) = B(k, i, j) C(k, l), B in CSF, C in CSR, A in COO
//   dcsr_add           A = B + C, every operand DCSR (rows stored sparsely), rows on threads
//   dcsr_add3          A = B + C + D, every operand DCSR, rows on threads
//   dcsr_scale         A = 2 B, B and A DCSR (B's level drives the row loop alone), rows on threads
//   dcsr_mul_csr       A = B .* C, B DCSR, C CSR, A DCSR (B's level drives alone), rows on threads
//   csr_add_to_dcsr    A = B + C, B and C CSR, A DCSR (a plain row loop), rows on threads
//   dcsr_add_ws, dcsr_add3_ws, dcsr_scale_ws, dcsr_mul_csr_ws, csr_add_to_dcsr_ws
//                      the same through per-thread sparse workspaces
//                      (parallelize(i, CPUThread, Workspace))
//
// The DCSR adds run on hypersparse scale-ups: kron(S, M) for a real matrix M
// and a seeded S with one entry in a sixteenth of its rows, so that most of
// the rows of the result are empty; each operand draws its own S, and the
// threads merge the operands' row coordinates in ranges. Each range appends
// its rows of the DCSR result in place (a counting pass, a prefix sum over
// the ranges, an appending pass); the _ws kernels ask for a sparse
// workspace a thread instead (what every DCSR result of a thread loop went
// through before), every entry hashed, sorted and merged.
//
// The SpGEMMs run on each matrix named (a name of the shared data folder,
// t:NAME for B^T B of a matrix that is not square, or NAME1,NAME2 for their
// Kronecker product, a scale-up); the tensor kernels
// on a seeded random tensor. Every configuration runs in a child process of
// its own (so each starts with OpenMP's thread count set and its own peak
// memory) and reports the median kernel time, how far its peak resident
// memory rose while the kernel ran (the workspaces and the result, and
// what threads add: stacks, allocator arenas) and the ISM's own peak bytes
// (its counting allocator: workspaces, runs, merged parts). The
// kernels are compiled once, here, into a kernel cache on disk that the
// children load them from; the sequential configuration's child saves its
// result, which every parallel one is checked against.
//
// --passes P measures the whole table P times, one pass after the other,
// and then summarizes each input's speedups over the passes (median, least,
// most): within a pass each input's sequential and parallel configurations
// run back to back, so a ratio compares runs seconds apart, and the passes
// show how far the ratios move with the host's load. Each pass records that
// load: the load average, the share of CPU time the hypervisor took (steal)
// and one thread's memory copy bandwidth. --memory-detail adds, for the
// sequential and the most threads' configuration, where the resident
// memory is after the runs (the main heap, the allocator's per-thread
// arenas, thread stacks, other anonymous mappings) and what the allocator
// holds free.
//
// --later-threads LIST measures only those thread counts (ending with the
// most) in the passes after the first.
//
//   tcc_parallel_workspace_bench [--threads 1,2,4,8,16] [--repeat N] [--passes P] [--later-threads 16]
//                                [--kernels K1,K2] [--svg FILE]
//                                [--time-limit SECONDS] [--memory-detail] [--no-fork] [MATRIX ...]
//   tcc_parallel_workspace_bench --plot TABLE --svg FILE    (the plot of a table printed earlier)
#include <malloc.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "tcc/ism/memory_counter.h"
#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/pack.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "../common/bench_inputs.h"
#include "../common/stats.h"

namespace {

struct Benchmark {
  std::string kernel, input;
  std::string program, schedule;  // schedule: the parallel one
  // Made only in the process that measures (a child makes one benchmark's).
  std::function<std::map<std::string, tcc::rt::Coo>()> inputs;
};

// Where the resident memory lies (MiB), from /proc/self/smaps, and what
// the allocator holds free (all its arenas).
struct MemoryDetail {
  double heap = 0;     // the main arena ([heap])
  double arenas = 0;   // the allocator's per-thread arenas: anonymous mappings 64 MiB-aligned
  double stacks = 0;   // thread stacks: anonymous mappings right above a one-page guard
  double other = 0;    // every other anonymous mapping (large blocks the allocator mapped on their own)
  double freeHeld = 0; // mallinfo2: bytes free in the arenas, still resident or not
  int arenaCount = 0;  // malloc_info's heaps
  int threads = 0;
};

struct Measurement {
  double seconds = 0;
  double fastest = 0, slowest = 0;  // of the repeats whose median is `seconds`
  double faultsPerRun = 0;          // minor page faults of the process per timed run (memory first touched)
  double peakMiB = 0;       // growth of the peak resident set while the kernel ran
  double ismPeakMiB = 0;    // the ISM's own peak (its counting allocator): workspaces, runs, merged parts
  double difference = 0;    // largest |parallel - sequential| over the largest |sequential|
  double loadSeconds = 0;   // compiling (or loading from the cache) both kernels
  double nonzeros = 0;      // of the result
  MemoryDetail before, after;  // with --memory-detail: ahead of the first run, after the last
  bool ok = false;
};

bool memoryDetail = false;

MemoryDetail memoryNow() {
  MemoryDetail d;
  std::ifstream smaps("/proc/self/smaps");
  const unsigned long long kArenaAlignment = 64ull << 20, kGuard = 4096;
  unsigned long long previousEnd = 0, previousSize = 0;
  bool previousGuard = false;
  double* bucket = nullptr;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long start = 0, end = 0;
    char perms[8] = {};
    unsigned long long offset = 0, inode = 0;
    char device[16] = {};
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu %n", &start, &end, perms, &offset, device, &inode,
                    &consumed) >= 6 && line.find('-') < line.find(' ')) {
      std::string path = consumed > 0 && static_cast<size_t>(consumed) <= line.size() ? line.substr(consumed) : "";
      bool anonymous = inode == 0 && path.empty();
      bucket = nullptr;
      if (path == "[heap]") bucket = &d.heap;
      else if (anonymous && std::strncmp(perms, "rw", 2) == 0) {
        if (start % kArenaAlignment == 0 && end - start <= kArenaAlignment) bucket = &d.arenas;
        else if (previousGuard && previousEnd == start && previousSize == kGuard) bucket = &d.stacks;
        else bucket = &d.other;
      }
      previousGuard = anonymous && std::strncmp(perms, "---", 3) == 0;
      previousEnd = end;
      previousSize = end - start;
      continue;
    }
    if (bucket && line.rfind("Rss:", 0) == 0) *bucket += std::atof(line.c_str() + 4) / 1024;
  }
  struct mallinfo2 info = mallinfo2();
  d.freeHeld = static_cast<double>(info.fordblks) / (1024.0 * 1024.0);
  char* text = nullptr;
  size_t length = 0;
  if (FILE* stream = open_memstream(&text, &length)) {
    malloc_info(0, stream);
    std::fclose(stream);
    for (const char* at = text; at && (at = std::strstr(at, "<heap nr=")); ++at) ++d.arenaCount;
    std::free(text);
  }
  d.threads = static_cast<int>(0.5 + [] {
    FILE* status = std::fopen("/proc/self/status", "r");
    double threads = 0;
    char line[256];
    while (status && std::fgets(line, sizeof line, status))
      if (std::strncmp(line, "Threads:", 8) == 0) threads = std::atof(line + 8);
    if (status) std::fclose(status);
    return threads;
  }());
  return d;
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

namespace fs = std::filesystem;
fs::path workFolder;  // the kernel cache and the sequential results, for this run only

fs::path referencePath(size_t benchmark) { return workFolder / ("sequential_" + std::to_string(benchmark) + ".bin"); }

// The result in storage order: coordinates mode by mode, then values.
void saveResult(const tcc::rt::Coo& result, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  uint64_t order = result.dims.size(), nnz = result.nnz();
  out.write(reinterpret_cast<const char*>(&order), sizeof order);
  out.write(reinterpret_cast<const char*>(&nnz), sizeof nnz);
  for (const auto& mode : result.coords) out.write(reinterpret_cast<const char*>(mode.data()), nnz * sizeof(int32_t));
  out.write(reinterpret_cast<const char*>(result.values.data()), nnz * sizeof(double));
}

// Largest |actual - expected| over the largest |expected|; infinity when
// the stored coordinates differ (both kernels store every component they
// inserted, in the same format) or the saved result is missing.
double differenceFromSaved(const tcc::rt::Coo& actual, const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t order = 0, nnz = 0;
  in.read(reinterpret_cast<char*>(&order), sizeof order);
  in.read(reinterpret_cast<char*>(&nnz), sizeof nnz);
  if (!in || order != actual.dims.size() || nnz != actual.nnz()) return INFINITY;
  std::vector<int32_t> coordinates(nnz);
  for (uint64_t mode = 0; mode < order; ++mode) {
    in.read(reinterpret_cast<char*>(coordinates.data()), nnz * sizeof(int32_t));
    if (!in || coordinates != actual.coords[mode]) return INFINITY;
  }
  std::vector<double> values(nnz);
  in.read(reinterpret_cast<char*>(values.data()), nnz * sizeof(double));
  if (!in) return INFINITY;
  double scale = 1e-300, worst = 0;
  for (uint64_t k = 0; k < nnz; ++k) {
    scale = std::max(scale, std::abs(values[k]));
    worst = std::max(worst, std::abs(actual.values[k] - values[k]));
  }
  return worst / scale;
}

// A benchmark's inputs: made by the first child that needs them (reading
// matrices, Kronecker products, seeded random tensors) and saved for the
// others, which read them back in a fraction of the time.
std::map<std::string, tcc::rt::Coo> inputsOf(const Benchmark& b, size_t index) {
  fs::path path = workFolder / ("inputs_" + std::to_string(index) + ".bin");
  std::map<std::string, tcc::rt::Coo> inputs;
  auto io = [](auto& stream, auto* data, size_t count) {
    if constexpr (std::is_const_v<std::remove_pointer_t<decltype(data)>>)
      stream.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof *data));
    else
      stream.read(reinterpret_cast<char*>(data), static_cast<std::streamsize>(count * sizeof *data));
  };
  if (std::ifstream in{path, std::ios::binary}) {
    uint64_t tensors = 0;
    io(in, &tensors, 1);
    for (uint64_t t = 0; t < tensors && in; ++t) {
      uint64_t nameLength = 0, order = 0, nnz = 0;
      io(in, &nameLength, 1);
      std::string name(nameLength, ' ');
      io(in, name.data(), nameLength);
      io(in, &order, 1);
      io(in, &nnz, 1);
      tcc::rt::Coo coo;
      coo.dims.resize(order);
      io(in, coo.dims.data(), order);
      coo.coords.assign(order, std::vector<int32_t>(nnz));
      for (auto& mode : coo.coords) io(in, mode.data(), nnz);
      coo.values.resize(nnz);
      io(in, coo.values.data(), nnz);
      inputs.emplace(name, std::move(coo));
    }
    if (in) return inputs;
    inputs.clear();
  }
  inputs = b.inputs();
  fs::path partial = path;
  partial += "." + std::to_string(getpid());
  {
    std::ofstream out(partial, std::ios::binary);
    uint64_t tensors = inputs.size();
    io(out, static_cast<const uint64_t*>(&tensors), 1);
    for (const auto& [name, coo] : inputs) {
      uint64_t nameLength = name.size(), order = coo.dims.size(), nnz = coo.nnz();
      io(out, static_cast<const uint64_t*>(&nameLength), 1);
      io(out, name.data(), nameLength);
      io(out, static_cast<const uint64_t*>(&order), 1);
      io(out, static_cast<const uint64_t*>(&nnz), 1);
      io(out, coo.dims.data(), order);
      for (const auto& mode : coo.coords) io(out, mode.data(), nnz);
      io(out, coo.values.data(), nnz);
    }
  }
  std::error_code ignored;
  fs::rename(partial, path, ignored);
  return inputs;
}

tcc::Program parallelProgram(const Benchmark& b) {
  return tcc::Program::fromText(b.program + "schedule {\n  " + b.schedule + "\n}\n", "parallel.tc");
}

// The kernel's own memory: its first call, through its entry point on the
// inputs as they are (Kernel::run binds a copy of every input, which would
// count here: 30 MiB for SpMTTKRP's tensor), into an output of its own.
// Free heap pages go back to the system first (malloc_trim), so that the
// rise is the pages the call needs rather than whatever pages freed by
// the inputs' construction it happens to reuse; and it is the process's
// first call, so no earlier run left memory in the allocator's per-thread
// arenas (whose free tops malloc_trim does not return). The peak resident
// set's rise then holds the workspaces, the output, and what the threads
// add (their stacks, their arenas); the ISM's counter its own bytes alone.
void measureMemory(const tcc::Kernel& kernel, const std::map<std::string, tcc::Tensor>& inputs, Measurement& m) {
  const tcc::CompiledStatement& statement = kernel.lowered().statements.at(0);
  std::vector<tcc_tensor> views;
  int outputSlot = -1;
  for (const auto& parameter : statement.parameters) {
    if (parameter.name() == statement.computedOutput.name()) {
      outputSlot = static_cast<int>(views.size());
      // The output's dimensions, by their symbols in the inputs' declarations.
      std::vector<int32_t> dims;
      for (const auto& dimension : statement.computedOutput.shape()) {
        int32_t size = -1;
        for (const auto& [name, tensor] : inputs) {
          const auto& shape = kernel.program().syntax().findTensor(name)->shape();
          for (size_t mode = 0; mode < shape.size(); ++mode)
            if (shape[mode].isSymbolic() && shape[mode].symbol() == dimension.symbol()) size = tensor.dims()[mode];
        }
        if (size < 0) throw std::runtime_error("no input has the output's dimension " + dimension.toString());
        dims.push_back(size);
      }
      views.push_back(tcc::Tensor::emptyAssembledOutput(dims, tcc::toRuntimeFormat(statement.computedOutput.format()),
                                                        tcc::toRuntimeType(statement.computedOutput.datatype())));
    } else {
      views.push_back(inputs.at(parameter.name()).abiView());
    }
  }
  std::vector<tcc_tensor*> pointers;
  for (auto& view : views) pointers.push_back(&view);
  malloc_trim(0);
  if (memoryDetail) m.before = memoryNow();
  resetPeakResident();
  double before = statusMiB("VmRSS");
  tcc::ism::memoryCounter().resetPeak();
  int64_t ismBefore = tcc::ism::memoryCounter().currentBytes();
  int status = kernel.entryPoint(0)(pointers.data());
  m.peakMiB = statusMiB("VmHWM") - before;
  m.ismPeakMiB = static_cast<double>(tcc::ism::memoryCounter().peakBytes() - ismBefore) / (1024.0 * 1024.0);
  if (memoryDetail) m.after = memoryNow();
  if (status != 0 || outputSlot < 0) throw std::runtime_error("the kernel's entry point failed with status " +
                                                               std::to_string(status));
  tcc::Tensor::adopt(std::move(views[outputSlot]));  // freed here
}

// In a process of its own: threads == 0 times the sequential kernel (and
// saves its result for the others).
Measurement measure(const Benchmark& b, size_t index, int threads, int repeat) {
  auto start = std::chrono::steady_clock::now();
  tcc::Program program = threads == 0 ? tcc::Program::fromText(b.program, "sequential.tc") : parallelProgram(b);
  tcc::Kernel timed = tcc::compile(program);
  Measurement m;
  m.loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::map<std::string, tcc::Tensor> inputs = packedFor(program, inputsOf(b, index));
  measureMemory(timed, inputs, m);  // the first call, which also warms up
  tcc::RunOptions options;
  options.repeat = repeat;
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  long faultsBefore = usage.ru_minflt;
  tcc::RunResult result = timed.run(inputs, options);
  getrusage(RUSAGE_SELF, &usage);
  m.faultsPerRun = static_cast<double>(usage.ru_minflt - faultsBefore) / repeat;
  m.seconds = median(result.seconds);
  m.fastest = *std::min_element(result.seconds.begin(), result.seconds.end());
  m.slowest = *std::max_element(result.seconds.begin(), result.seconds.end());
  tcc::rt::Coo actual = tcc::rt::unpack(result.tensors.at("A"));
  m.nonzeros = static_cast<double>(actual.nnz());
  if (threads == 0) {
    saveResult(actual, referencePath(index));
    m.ok = true;
  } else {
    m.difference = differenceFromSaved(actual, referencePath(index));
    m.ok = m.difference <= 1e-12;
  }
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
  if (!freshProcesses) return measure(all[benchmark], benchmark, threads, repeat);
  int channel[2];
  if (pipe(channel) != 0) return {};
  pid_t child = fork();
  if (child == 0) {
    dup2(channel[1], STDOUT_FILENO);
    close(channel[0]);
    close(channel[1]);
    // A parent that OpenMP bound to one CPU (OMP_PROC_BIND) hands that mask
    // down, and the child's threads would then all share that CPU: on the
    // host, pinned passes ran 16 threads at 1.0x. Every child starts with
    // every online CPU.
    cpu_set_t everyCpu;
    CPU_ZERO(&everyCpu);
    for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN) && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &everyCpu);
    sched_setaffinity(0, sizeof everyCpu, &everyCpu);
    if (threads > 0) {
      setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
    } else {
      // The sequential kernel runs where the system puts it: a binding of
      // OpenMP's threads (OMP_PROC_BIND, OMP_PLACES) would pin its one
      // thread to the first place.
      unsetenv("OMP_PROC_BIND");
      unsetenv("OMP_PLACES");
    }
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
    m = measure(all.at(benchmark), benchmark, threads, repeat);
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
  if (name.rfind("t:", 0) == 0) return name.substr(2) + "^T " + name.substr(2);
  return name.find(',') == std::string::npos ? name : "kron(" + name + ")";
}

// The operands of a product named NAME (B * B), t:NAME (B^T * B, for
// matrices that are not square) or NAME1,NAME2 (their Kronecker product
// squared).
std::map<std::string, tcc::rt::Coo> productOperands(const std::string& name) {
  if (name.rfind("t:", 0) != 0) {
    tcc::rt::Coo m = matrixNamed(name);
    return {{"B", m}, {"C", m}};
  }
  tcc::rt::Coo m = matrixNamed(name.substr(2)), transposed = m;
  std::swap(transposed.dims[0], transposed.dims[1]);
  std::swap(transposed.coords[0], transposed.coords[1]);
  transposed.sort();
  return {{"B", transposed}, {"C", m}};
}

// kron(S, m) for a seeded 4096 x 4096 S with one entry (random column and
// value) in about a sixteenth of its rows: m's pattern in a sixteenth of the
// block rows, the other rows of the result empty.
tcc::rt::Coo hypersparseScaleUp(const tcc::rt::Coo& m, uint64_t seed) {
  constexpr int32_t kBlocks = 4096;
  tcc::rt::Coo s = tcc::rt::Coo::ofShape({kBlocks, kBlocks});
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int32_t row = 0; row < kBlocks; ++row) {
    if (next() % 16 != 0) continue;
    const int32_t coordinate[2] = {row, static_cast<int32_t>(next() % kBlocks)};
    s.push(coordinate, 0.5 + static_cast<double>(next() % 1024) / 1024.0);
  }
  return tcc::rt::kroneckerProduct(s, m);
}

std::vector<Benchmark> benchmarks(const std::vector<std::string>& matrices) {
  std::vector<Benchmark> all;
  for (const auto& name : matrices) {
    auto operands = [name] { return productOperands(name); };
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
  all.push_back({"sp_ttm", "random 300x300x300 at 1%, 0.27 M nnz; C 300x64 at 10%",
                 "tensor A(I, J, L) : coo\ntensor B(K, I, J) : csf\ntensor C(K, L) : csr\n"
                 "A(i, j, l) = B(k, i, j) * C(k, l)\n",
                 "parallelize(k, CPUThread, NoRaces)", [] {
                   return std::map<std::string, tcc::rt::Coo>{
                     {"B", tcc::rt::randomUniform({300, 300, 300}, 0.01, 2027)},
                     {"C", tcc::rt::randomUniform({300, 64}, 0.1, 3)}};
                 }});
  for (const char* name : {"bcspwr10", "dwt_992"})
    for (const char* strategy : {"NoRaces", "Workspace"}) {
      const std::string input = std::string("kron(S, ") + name + "), S 4096 x 4096 with an entry in 1/16 of its rows";
      const std::string suffix = std::string(strategy) == "Workspace" ? "_ws" : "";
      const std::string schedule = std::string("parallelize(i, CPUThread, ") + strategy + ")";
      all.push_back({"dcsr_add" + suffix, input,
                     "tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\nA(i, j) = B(i, j) + C(i, j)\n",
                     schedule, [name] {
                       tcc::rt::Coo m = matrixNamed(name);
                       return std::map<std::string, tcc::rt::Coo>{{"B", hypersparseScaleUp(m, 11)},
                                                                  {"C", hypersparseScaleUp(m, 12)}};
                     }});
      all.push_back({"dcsr_add3" + suffix, input,
                     "tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\ntensor D(I, J) : dcsr\n"
                     "A(i, j) = B(i, j) + C(i, j) + D(i, j)\n",
                     schedule, [name] {
                       tcc::rt::Coo m = matrixNamed(name);
                       return std::map<std::string, tcc::rt::Coo>{{"B", hypersparseScaleUp(m, 21)},
                                                                  {"C", hypersparseScaleUp(m, 22)},
                                                                  {"D", hypersparseScaleUp(m, 23)}};
                     }});
      // One unique level drives the loop alone, or no operand stores the
      // rows sparsely: the ranges cut that level's positions, or the rows.
      all.push_back({"dcsr_scale" + suffix, input,
                     "tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nA(i, j) = 2 * B(i, j)\n", schedule, [name] {
                       return std::map<std::string, tcc::rt::Coo>{{"B", hypersparseScaleUp(matrixNamed(name), 31)}};
                     }});
      all.push_back({"dcsr_mul_csr" + suffix, input,
                     "tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) * C(i, j)\n",
                     schedule, [name] {
                       tcc::rt::Coo m = matrixNamed(name);
                       // (C shares most of B's rows, so the product is not empty.)
                       tcc::rt::Coo b = hypersparseScaleUp(m, 41);
                       return std::map<std::string, tcc::rt::Coo>{{"B", b}, {"C", b}};
                     }});
      all.push_back({"csr_add_to_dcsr" + suffix, input,
                     "tensor A(I, J) : dcsr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) + C(i, j)\n",
                     schedule, [name] {
                       tcc::rt::Coo m = matrixNamed(name);
                       return std::map<std::string, tcc::rt::Coo>{{"B", hypersparseScaleUp(m, 51)},
                                                                  {"C", hypersparseScaleUp(m, 52)}};
                     }});
    }
  return all;
}

std::vector<int> parseThreads(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) counts.push_back(std::stoi(item));
  return counts;
}

struct Row {
  std::string name;  // kernel and input
  Measurement sequential;
  double clock = 0;  // clockProbe() just before the sequential run
  std::vector<Measurement> parallel;  // per thread count; seconds 0 where not measured
};

// Speedup over the sequential kernel against threads, both log2, one line
// per kernel and input, and the ideal.
void writeSvg(const std::string& path, const std::vector<Row>& rows, const std::vector<int>& threads,
              const std::string& caption) {
  const double W = 760, H = 460, left = 60, right = 300, top = 40, bottom = 50;
  double maxThreads = *std::max_element(threads.begin(), threads.end());
  double lx1 = std::max(1.0, std::ceil(std::log2(maxThreads)));
  double fastest = maxThreads;  // the y axis reaches the ideal and every speedup
  for (const Row& row : rows)
    for (const Measurement& m : row.parallel)
      if (m.ok && m.seconds > 0) fastest = std::max(fastest, row.sequential.seconds / m.seconds);
  double ly1 = std::ceil(std::log2(fastest));
  auto X = [&](double t) { return left + std::log2(t) / lx1 * (W - left - right); };
  auto Y = [&](double s) { return H - bottom - (std::log2(s) + 1) / (ly1 + 1) * (H - top - bottom); };  // from 1/2
  std::ofstream out(path);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << (left + W - right) / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << caption
      << "</text>\n";
  for (int e = 0; e <= lx1; ++e) {
    double x = X(std::pow(2, e));
    out << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << H - bottom
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << x << "\" y=\"" << H - bottom + 18 << "\" text-anchor=\"middle\">"
        << (1 << e) << "</text>\n";
  }
  for (int e = -1; e <= ly1; ++e) {
    double y = Y(std::pow(2, e));
    out << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << W - right << "\" y2=\"" << y
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
        << std::pow(2, e) << "x</text>\n";
  }
  out << "<text x=\"" << (left + W - right) / 2 << "\" y=\"" << H - 12
      << "\" text-anchor=\"middle\">threads (log scale)</text>\n";
  out << "<text x=\"16\" y=\"" << (top + H - bottom) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      << (top + H - bottom) / 2 << ")\">speedup over the sequential workspace (log scale)</text>\n";
  out << "<line x1=\"" << X(1) << "\" y1=\"" << Y(1) << "\" x2=\"" << X(maxThreads) << "\" y2=\"" << Y(maxThreads)
      << "\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>\n";
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39"};
  int legend = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const char* color = colors[r % (sizeof colors / sizeof *colors)];
    std::string points;
    for (size_t t = 0; t < threads.size() && t < row.parallel.size(); ++t) {
      const Measurement& m = row.parallel[t];
      if (!m.ok || m.seconds <= 0) continue;
      double speedup = row.sequential.seconds / m.seconds;
      points += std::to_string(X(threads[t])) + "," + std::to_string(Y(std::max(speedup, 0.5))) + " ";
    }
    if (points.empty()) continue;
    out << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"" << points << "\"/>\n";
    double y = top + 10 + 16 * legend++;
    out << "<line x1=\"" << W - right + 12 << "\" y1=\"" << y << "\" x2=\"" << W - right + 34 << "\" y2=\"" << y
        << "\" stroke=\"" << color << "\" stroke-width=\"2\"/><text x=\"" << W - right + 40 << "\" y=\"" << y + 4
        << "\">" << row.name << "</text>\n";
  }
  double y = top + 10 + 16 * legend;
  out << "<line x1=\"" << W - right + 12 << "\" y1=\"" << y << "\" x2=\"" << W - right + 34 << "\" y2=\"" << y
      << "\" stroke=\"#999\" stroke-dasharray=\"4 4\"/><text x=\"" << W - right + 40 << "\" y=\"" << y + 4
      << "\">ideal</text>\n</svg>\n";
}

// The plot of a table this program printed (on another machine, say):
// its rows' times, read back.
int plotTable(const std::string& table, const std::string& svg) {
  std::ifstream in(table);
  std::vector<int> threads;
  size_t firstThreadColumn = 0;
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream cellStream(line);
    for (std::string cell; std::getline(cellStream, cell, '|');) {
      size_t first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    if (cells.size() < 8 || line[0] != '|') continue;
    if (cells[1] == "kernel") {  // the header: the thread counts, in the columns "N thr ms"
      threads.clear();
      firstThreadColumn = 0;
      for (size_t c = 2; c < cells.size(); ++c) {
        if (cells[c].find(" thr") == std::string::npos) continue;
        if (firstThreadColumn == 0) firstThreadColumn = c;
        threads.push_back(std::atoi(cells[c].c_str()));
      }
      continue;
    }
    if (threads.empty() || cells[4].empty() || !std::isdigit(static_cast<unsigned char>(cells[4][0]))) continue;
    Row row{cells[1] + " " + cells[2], {}, 0, {}};
    row.sequential.seconds = std::atof(cells[4].c_str()) / 1e3;
    row.sequential.ok = true;
    for (size_t t = 0; t < threads.size() && firstThreadColumn + t < cells.size(); ++t) {
      Measurement m;
      m.seconds = std::atof(cells[firstThreadColumn + t].c_str()) / 1e3;
      m.ok = m.seconds > 0;
      row.parallel.push_back(m);
    }
    rows.push_back(row);
  }
  if (rows.empty()) {
    std::fprintf(stderr, "%s: no rows of this program's table\n", table.c_str());
    return 1;
  }
  writeSvg(svg, rows, threads, "parallel sparse workspaces: speedup at 1 to " + std::to_string(threads.back()) +
                                   " threads");
  return 0;
}

// The host's load over a pass, from /proc: the hypervisor's steal time
// and how busy all CPUs were (a virtual machine's neighbours show as steal).
struct HostLoad {
  struct Sample {
    unsigned long long busy = 0, steal = 0, total = 0;
    std::string loadAverage;
    double stealShareSince(const Sample& from) const {
      return total > from.total ? static_cast<double>(steal - from.steal) / static_cast<double>(total - from.total) : 0;
    }
    double busyShareSince(const Sample& from) const {
      return total > from.total ? static_cast<double>(busy - from.busy) / static_cast<double>(total - from.total) : 0;
    }
  };
  Sample sample() const {
    Sample s;
    if (FILE* stat = std::fopen("/proc/stat", "r")) {
      unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
      if (std::fscanf(stat, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait, &irq,
                      &softirq, &steal) == 8) {
        s.busy = user + nice + system + irq + softirq;
        s.steal = steal;
        s.total = s.busy + idle + iowait + steal;
      }
      std::fclose(stat);
    }
    if (FILE* average = std::fopen("/proc/loadavg", "r")) {
      char text[64] = {};
      double one = 0, five = 0, fifteen = 0;
      if (std::fscanf(average, "%lf %lf %lf", &one, &five, &fifteen) == 3)
        std::snprintf(text, sizeof text, "%.2f %.2f %.2f", one, five, fifteen);
      s.loadAverage = text;
      std::fclose(average);
    }
    return s;
  }
};

// One thread's clock, probed: a chain of dependent 64-bit multiply-adds
// (about 4 cycles each) for ~10 ms, in G steps per second; times 4 it is
// about the core's GHz. Probed before each sequential run, it shows how far
// that run's clock (turbo, shared with the host's other tenants) moved.
double clockProbe() {
  volatile uint64_t steps = uint64_t{1} << 23, seed = 1;
  uint64_t x = seed;
  const uint64_t n = steps;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t k = 0; k < n; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  seed = x;
  return static_cast<double>(n) / seconds / 1e9;
}

// One thread's copy bandwidth (GB/s, bytes read and written), the best of
// three copies of 64 MiB: a probe of the memory system the kernels share
// with the host's other tenants.
double copyBandwidth() {
  const size_t bytes = size_t{64} << 20;
  std::unique_ptr<char[]> from(new char[bytes]), to(new char[bytes]);
  std::memset(from.get(), 1, bytes);
  std::memset(to.get(), 2, bytes);
  double best = 0;
  for (int copy = 0; copy < 3; ++copy) {
    auto start = std::chrono::steady_clock::now();
    std::memcpy(to.get(), from.get(), bytes);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds / 1e9);
  }
  volatile char sink = to[bytes / 2];
  (void)sink;
  return best;
}

// Where each kernel's resident memory is after its runs (last pass), for
// the sequential kernel and the most threads.
void printMemoryDetail(const std::vector<std::pair<Measurement, Measurement>>& rows, const std::vector<Benchmark>& all,
                       int threads) {
  std::printf("\nResident memory after the runs (MiB; rise = peak rise while the kernel ran, from a trimmed heap): "
              "main heap, the allocator's per-thread arenas, thread stacks, other anonymous mappings; "
              "free = what the allocator holds free; arenas and threads counted.\n\n"
              "| kernel | input | threads | rise | ISM peak | heap | arenas | stacks | other anon | free held | "
              "arenas | threads |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t r = 0; r < rows.size() && r < all.size(); ++r) {
    auto line = [&](const Measurement& m, int t) {
      if (m.seconds <= 0) return;
      std::printf("| %s | %s | %s | %.1f | %.1f | %.1f (+%.1f) | %.1f (+%.1f) | %.1f (+%.1f) | %.1f (+%.1f) | %.1f | "
                  "%d | %d |\n",
                  all[r].kernel.c_str(), all[r].input.c_str(), t == 0 ? "seq." : std::to_string(t).c_str(), m.peakMiB,
                  m.ismPeakMiB, m.after.heap, m.after.heap - m.before.heap, m.after.arenas,
                  m.after.arenas - m.before.arenas, m.after.stacks, m.after.stacks - m.before.stacks, m.after.other,
                  m.after.other - m.before.other, m.after.freeHeld, m.after.arenaCount, m.after.threads);
    };
    line(rows[r].first, 0);
    line(rows[r].second, threads);
  }
}

// Each input's speedup at the most threads in every pass, their median,
// least and most, and how far the sequential and parallel times moved;
// and per pass, how many real inputs (not Kronecker scale-ups) reach 10x.
void printPassSummary(const std::vector<std::vector<Row>>& passes, const std::vector<Benchmark>& all, int threads) {
  std::printf("\nSpeedup at %d threads over the sequential kernel of the same pass, %zu passes (sequential and %d-thread "
              "times: least-most over the passes):\n\n| kernel | input |",
              threads, passes.size(), threads);
  for (size_t p = 0; p < passes.size(); ++p) std::printf(" pass %zu |", p + 1);
  std::printf(" median | least | most | sequential ms | %d thr ms | clock probe |\n|---|---|", threads);
  for (size_t p = 0; p < passes.size(); ++p) std::printf("---:|");
  std::printf("---:|---:|---:|---:|---:|---:|\n");
  std::vector<int> atTen(passes.size(), 0), real(passes.size(), 0);
  for (size_t r = 0; r < all.size(); ++r) {
    std::vector<double> speedups, sequential, parallel, clocks;
    std::string cells;
    for (size_t p = 0; p < passes.size(); ++p) {
      char cell[32] = " - |";
      if (r < passes[p].size() && !passes[p][r].parallel.empty() && passes[p][r].parallel.back().ok &&
          passes[p][r].parallel.back().seconds > 0) {
        const Row& row = passes[p][r];
        double speedup = row.sequential.seconds / row.parallel.back().seconds;
        speedups.push_back(speedup);
        sequential.push_back(row.sequential.seconds * 1e3);
        parallel.push_back(row.parallel.back().seconds * 1e3);
        clocks.push_back(row.clock);
        std::snprintf(cell, sizeof cell, " %.1fx |", speedup);
        bool isReal = all[r].kernel == "outer_spgemm" && all[r].input.find("kron(") == std::string::npos;
        if (isReal) {
          ++real[p];
          if (speedup >= 10) ++atTen[p];
        }
      }
      cells += cell;
    }
    if (speedups.empty()) continue;
    auto [sLeast, sMost] = std::minmax_element(sequential.begin(), sequential.end());
    auto [pLeast, pMost] = std::minmax_element(parallel.begin(), parallel.end());
    auto [cLeast, cMost] = std::minmax_element(clocks.begin(), clocks.end());
    std::printf("| %s | %s |%s %.1fx | %.1fx | %.1fx | %.2f-%.2f | %.2f-%.2f | %.2f-%.2f |\n", all[r].kernel.c_str(),
                all[r].input.c_str(), cells.c_str(), median(speedups),
                *std::min_element(speedups.begin(), speedups.end()), *std::max_element(speedups.begin(), speedups.end()),
                *sLeast, *sMost, *pLeast, *pMost, *cLeast, *cMost);
  }
  std::printf("\nreal matrices (outer SpGEMM) at >= 10x, per pass:");
  for (size_t p = 0; p < passes.size(); ++p) std::printf(" %d of %d%s", atTen[p], real[p], p + 1 < passes.size() ? ";" : "\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads = {1, 2, 4, 8, 16};
  int repeat = 5;
  int passes = 1;
  std::vector<int> laterThreads;  // the thread counts of the passes after the first; empty: the same
  double timeLimit = 0;  // seconds; 0: none
  std::string kernels;   // comma-separated names; empty: all
  std::string svg;
  std::vector<std::string> matrices;
  std::string plotFrom;  // a table printed by an earlier run
  bool child = argc > 4 && std::strcmp(argv[1], "--child") == 0;
  for (int a = child ? 5 : 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--threads" && a + 1 < argc) threads = parseThreads(argv[++a]);
    else if (arg == "--no-fork") freshProcesses = false;
    else if (arg == "--repeat" && a + 1 < argc) repeat = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--kernels" && a + 1 < argc) kernels = argv[++a];
    else if (arg == "--svg" && a + 1 < argc) svg = argv[++a];
    else if (arg == "--time-limit" && a + 1 < argc) timeLimit = std::atof(argv[++a]);
    else if (arg == "--folder" && a + 1 < argc) workFolder = argv[++a];
    else if (arg == "--plot" && a + 1 < argc) plotFrom = argv[++a];
    else if (arg == "--passes" && a + 1 < argc) passes = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--later-threads" && a + 1 < argc) laterThreads = parseThreads(argv[++a]);
    else if (arg == "--memory-detail") memoryDetail = true;
    else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "usage: %s [--threads 1,2,4,8,16] [--repeat N] [--passes P] [--later-threads 16] [--kernels K1,K2] [--svg FILE] "
                           "[--time-limit SECONDS] [--memory-detail] [--no-fork] [MATRIX ...] | --plot TABLE --svg FILE\n",
                   argv[0]);
      return 2;
    } else matrices.push_back(arg);
  }
  if (!laterThreads.empty() && laterThreads.back() != threads.back()) {
    std::fprintf(stderr, "--later-threads must end with the most threads, as --threads does (%d)\n", threads.back());
    return 2;
  }
  if (!plotFrom.empty()) {
    if (svg.empty()) {
      std::fprintf(stderr, "--plot TABLE needs --svg FILE\n");
      return 2;
    }
    return plotTable(plotFrom, svg);
  }
  if (matrices.empty())
    matrices = {"bcsstk16", "bcsstk13", "adder_dcop_05", "dnn_n1024_l1", "t:mbeacxc", "bayer10",
                "t:Franz6_id1959_aug", "cryg2500", "watt_2", "Pd", "dwt_992", "bcspwr10", "494_bus,cage5"};
  std::vector<Benchmark> all = benchmarks(matrices);
  if (!kernels.empty())
    std::erase_if(all, [&](const Benchmark& b) { return ("," + kernels + ",").find("," + b.kernel + ",") == std::string::npos; });
  if (child) return runChild(std::stoul(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), all);

  // A folder of this run's own: the kernel cache the children load from and
  // the sequential results they are checked against.
  std::string pattern = (fs::temp_directory_path() / "tcc_parallel_bench_XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  workFolder = pattern;
  setenv("TCC_CACHE_DIR", (workFolder / "cache").c_str(), 1);
  unsetenv("TCC_NO_DISK_CACHE");
  childArguments = matrices;
  childArguments.insert(childArguments.begin(), {"--folder", workFolder.string()});
  if (!kernels.empty()) childArguments.insert(childArguments.begin(), {"--kernels", kernels});
  if (memoryDetail) childArguments.insert(childArguments.begin(), "--memory-detail");

  auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  // Every kernel compiled once, here; the children find them in the cache.
  for (const Benchmark& b : all) {
    tcc::compile(tcc::Program::fromText(b.program, "sequential.tc"));
    tcc::compile(parallelProgram(b));
  }
  double compileSeconds = elapsed();

  bool allOk = true, stopped = false;
  double slowestLoad = 0;
  std::vector<std::vector<Row>> rowsOfPass;
  std::vector<std::pair<Measurement, Measurement>> memoryRows;  // last pass: sequential, most threads
  HostLoad load;
  const std::vector<int> firstThreads = threads;
  for (int pass = 0; pass < passes && !stopped; ++pass) {
    // Passes after the first may measure fewer thread counts (the most of them at least).
    const std::vector<int>& threads = pass > 0 && !laterThreads.empty() ? laterThreads : firstThreads;
    if (passes > 1) std::printf("\n### pass %d of %d\n\n", pass + 1, passes);
    HostLoad::Sample began = load.sample();
    std::printf("host before the pass: load average %s; one thread copies %.1f GB/s\n\n", began.loadAverage.c_str(),
                copyBandwidth());
    std::printf("| kernel | input | nnz(A) | sequential ms | seq. peak MiB | seq. ISM MiB |");
    for (int t : threads) std::printf(" %d thr ms |", t);
    std::printf(" speedup at %d | peak MiB at %d (x seq.) | ISM MiB at %d (x seq.) | clock probe | page faults a run "
                "(seq., %d thr) |\n|---|---|---:|---:|---:|---:|",
                threads.back(), threads.back(), threads.back(), threads.back());
    for (size_t t = 0; t < threads.size(); ++t) std::printf("---:|");
    std::printf("---:|---:|---:|---:|---:|\n");
    std::fflush(stdout);
    std::vector<Row> rows;
    memoryRows.clear();
    for (size_t k = 0; k < all.size() && !stopped; ++k) {
      const Benchmark& b = all[k];
      if (timeLimit > 0 && elapsed() > timeLimit) {
        stopped = true;
        break;
      }
      double clock = clockProbe();
      Row row{b.kernel + " " + b.input, inChild(k, 0, repeat, all), clock, {}};
      slowestLoad = std::max(slowestLoad, row.sequential.loadSeconds);
      std::printf("| %s | %s | %.0f | %.2f | %.1f | %.1f |", b.kernel.c_str(), b.input.c_str(),
                  row.sequential.nonzeros, row.sequential.seconds * 1e3, row.sequential.peakMiB,
                  row.sequential.ismPeakMiB);
      Measurement last;
      for (int t : threads) {
        if (timeLimit > 0 && elapsed() > timeLimit) {
          stopped = true;
          std::printf(" - |");
          row.parallel.push_back({});
          continue;
        }
        last = inChild(k, t, repeat, all);
        row.parallel.push_back(last);
        slowestLoad = std::max(slowestLoad, last.loadSeconds);
        allOk = allOk && last.ok;
        if (last.ok)
          std::printf(" %.2f |", last.seconds * 1e3);
        else
          std::printf(" WRONG (%.1e) |", last.difference);
      }
      if (last.ok)
        std::printf(" %.1fx | %.1f (%.2fx) | %.1f (%.2fx) | %.2f | %.0f, %.0f |\n", row.sequential.seconds / last.seconds,
                    last.peakMiB, last.peakMiB / std::max(row.sequential.peakMiB, 1e-9), last.ismPeakMiB,
                    last.ismPeakMiB / std::max(row.sequential.ismPeakMiB, 1e-9), row.clock,
                    row.sequential.faultsPerRun, last.faultsPerRun);
      else
        std::printf(" - | - | - | %.2f | %.0f, - |\n", row.clock, row.sequential.faultsPerRun);
      std::fflush(stdout);
      memoryRows.emplace_back(row.sequential, last);
      rows.push_back(std::move(row));
      if (!svg.empty() && pass == 0)
        writeSvg(svg, rows, threads, "parallel sparse workspaces: speedup at 1 to " + std::to_string(threads.back()) +
                                         " threads");
    }
    // Geometric means of the speedup at the most threads, per kernel.
    std::map<std::string, std::pair<double, int>> logSpeedups;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Measurement& last = rows[r].parallel.empty() ? Measurement{} : rows[r].parallel.back();
      if (!last.ok || last.seconds <= 0 || rows[r].parallel.size() != threads.size()) continue;
      auto& [sum, count] = logSpeedups[all[r].kernel];
      sum += std::log(rows[r].sequential.seconds / last.seconds);
      ++count;
    }
    std::printf("\n");
    for (const auto& [kernel, entry] : logSpeedups)
      std::printf("%s: geomean speedup at %d threads over %d inputs: %.2fx\n", kernel.c_str(), threads.back(),
                  entry.second, std::exp(entry.first / entry.second));
    HostLoad::Sample ended = load.sample();
    std::printf("host during the pass: steal %.1f %% of CPU time, busy %.1f %% of %ld CPUs; load average after %s\n",
                ended.stealShareSince(began) * 100, ended.busyShareSince(began) * 100, sysconf(_SC_NPROCESSORS_ONLN),
                ended.loadAverage.c_str());
    rowsOfPass.push_back(std::move(rows));
  }
  if (memoryDetail) printMemoryDetail(memoryRows, all, threads.back());
  if (passes > 1) printPassSummary(rowsOfPass, all, threads.back());
  std::printf("kernels compiled once in %.1f s; each child loaded its kernel from the disk cache in at most %.0f ms; "
              "whole run %.1f s\n", compileSeconds, slowestLoad * 1e3, elapsed());
  if (stopped) std::printf("stopped at the time limit (%.0f s): later configurations not measured\n", timeLimit);
  if (!allOk) std::printf("some parallel results differ from the sequential kernel's (see WRONG)\n");
  std::error_code ignored;
  fs::remove_all(workFolder, ignored);
  return allOk ? 0 : 1;
}
