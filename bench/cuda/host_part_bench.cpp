// The host time of one call of a CUDA program's host part (what tcc's
// launcher runs on the CPU before each kernel launch, timed on the GPU as
// idle time when the launch waits for it): the default SpMM's host part,
// which computes its rule and picks one of five kernels, against the
// tiles-of-32 kernel's alone, in the same run, on a fake device (no GPU:
// launches are counted, pos is handed over from a host copy as the
// launcher keeps it).
//
//   tcc_bench_host_part [calls] [rounds]
//
// Prints the median microseconds a call of each host part over `rounds`
// rounds of `calls` calls, and the default's extra time over the tiles of
// 32 alone.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpu_host_part.h"
#include "tcc/tcc.h"

namespace {

// bcsstk16's shape (4884 rows, 290378 nonzeros, rows of about 59) at N = 32.
constexpr int kRows = 4884, kRowLength = 59, kColumns = 32;

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Inputs {
  std::vector<long long> pos;
  std::vector<int> crd;
  std::vector<float> values, dense;
  tcc_tensor a{}, b{}, c{};
  Inputs() {
    pos.resize(kRows + 1);
    for (int r = 0; r < kRows; ++r) pos[r + 1] = pos[r] + kRowLength;
    crd.assign(pos.back(), 0);
    values.assign(pos.back(), 1.0f);
    dense.assign(1, 0.0f);
    a.order = 2, a.dims[0] = kRows, a.dims[1] = kRows;
    a.levels[0].size = kRows, a.levels[1].size = kRows;
    a.levels[1].kind = TCC_LEVEL_COMPRESSED, a.levels[1].pos = pos.data(), a.levels[1].crd = crd.data();
    a.vals = values.data(), a.vals_size = pos.back();
    b.order = 2, b.dims[0] = kRows, b.dims[1] = kColumns, b.vals = dense.data();
    c.order = 2, c.dims[0] = kRows, c.dims[1] = kColumns, c.vals = dense.data();
  }
};

// Microseconds a call, the median of `rounds` rounds.
double microsecondsPerCall(const tcc::lowering::GpuFunction& function, Inputs& inputs, int calls, int rounds) {
  auto kept = tcc::detail::hostPositionsOf(std::vector<int64_t>(inputs.pos.begin(), inputs.pos.end()));
  // As the launcher's: a lock and a lookup by the device array.
  std::mutex mutex;
  std::map<const void*, std::shared_ptr<const tcc::detail::HostPositions>> copies{{inputs.pos.data(), kept}};
  tcc::detail::HostPartDevice device;
  long launches = 0;
  device.launch = [&](const tcc::detail::KernelLaunch&) { ++launches; };
  device.read = [](void*, const void*, size_t) {};
  device.positions = [&](const void* pos, int64_t) {
    std::lock_guard<std::mutex> lock(mutex);
    return copies.at(pos);
  };
  std::vector<tcc_tensor*> tensors{&inputs.c, &inputs.a, &inputs.b};
  std::vector<double> times;
  for (int round = 0; round <= rounds; ++round) {
    auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < calls; ++k) tcc::detail::runHostPart(function, tensors, device);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round > 0) times.push_back(seconds * 1e6 / calls);  // the first is the warm-up
  }
  if (launches != long(calls) * (rounds + 1)) {
    std::fprintf(stderr, "a call launched %ld kernels, not one\n", launches / (long(calls) * (rounds + 1)));
    std::exit(1);
  }
  return medianOf(times);
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  tcc::CompileOptions options;
  options.target = tcc::frontend::Target::Cuda;
  Inputs inputs;
  std::map<std::string, double> perCall;
  std::printf("host part of one call, median of %d rounds of %d calls (us), %dx%d CSR of rows of %d, N = %d:\n",
              rounds, calls, kRows, kRows, kRowLength, kColumns);
  for (const char* name : {"spmm_default", "spmm_tiles32", "spmm_tiles64"}) {
    tcc::Lowered lowered =
        tcc::lowerProgram(tcc::Program::fromFile(std::string(TCC_SOURCE_DIR) + "/examples/gpu/" + name + ".tc"),
                          options);
    perCall[name] = microsecondsPerCall(lowered.gpuFunctions.at(0), inputs, calls, rounds);
    std::printf("  %-13s %.3f\n", name, perCall[name]);
  }
  std::printf("the default's rule over the tiles of 32 alone: +%.3f us a call (%.2fx)\n",
              perCall["spmm_default"] - perCall["spmm_tiles32"], perCall["spmm_default"] / perCall["spmm_tiles32"]);
  return 0;
}
