// The ISM ablation (the paper's Fig. 21, extended with its §5.3
// optimizations): each policy, with and without pipelining and double
// buffering, assembles A = B * B in CSR from the outer-product component
// stream of a real matrix B. Reports time per assembly (insert, sort,
// merge, compress) and the workspace's peak bytes, counted by the ISM's own
// allocator (memory_counter.h) from an empty workspace to the CSR result.
// "LowerBound" only generates the stream.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spgemm_stream.h"
#include "tcc/ism/ism.h"

namespace {

using namespace tcc::ism;
using tcc::bench::OuterProductStream;

const std::vector<std::string> kMatrices = {
    "bcsstk13", "cryg2500", "olm1000", "watt_2", "adder_dcop_05", "G51",
    "dwt_992",  "jagmesh7", "bcspwr10", "Pd",    "bayer10"};

// capacity 0: the default (2^ceil(log2 nnz(B)), grown by the heuristic);
// otherwise that fixed capacity, so that the run merges many times.
template <template <int> class Policy>
void assemble(benchmark::State& state, const OuterProductStream& stream, bool pipelining,
              bool doubleBuffering, std::size_t fixedCapacity = 0) {
  int64_t peak = 0, merges = 0, nonzeros = 0;
  for (auto _ : state) {
    int64_t before = memoryCounter().currentBytes();
    memoryCounter().resetPeak();
    WorkspaceOptions options;
    options.pipelining = pipelining;
    options.doubleBuffering = doubleBuffering;
    options.nnzHint = static_cast<std::size_t>(stream.inputNonzeros());
    if (fixedCapacity != 0) {
      options.capacity = fixedCapacity;
      options.growCapacity = false;
    }
    Workspace<Policy, 2> workspace(Shape<2>::rowMajor({stream.rows(), stream.cols()}), options);
    stream.forEach([&](int32_t i, int32_t j, double v) { workspace.insertLevelOrder({i, j}, v); });
    CompressedTensor csr = finishAndCompress(workspace, chains::csr());
    benchmark::DoNotOptimize(csr.vals.data());
    peak = memoryCounter().peakBytes() - before;
    merges = static_cast<int64_t>(workspace.merges());
    nonzeros = static_cast<int64_t>(csr.vals.size());
  }
  state.counters["peak_MiB"] = static_cast<double>(peak) / (1 << 20);
  state.counters["merges"] = static_cast<double>(merges);
  state.counters["nnz_A"] = static_cast<double>(nonzeros);
  state.counters["components"] = static_cast<double>(stream.components());
}

void lowerBound(benchmark::State& state, const OuterProductStream& stream) {
  for (auto _ : state) {
    double sum = 0;
    int64_t coordinates = 0;
    stream.forEach([&](int32_t i, int32_t j, double v) {
      sum += v;
      coordinates += i ^ j;
    });
    benchmark::DoNotOptimize(sum);
    benchmark::DoNotOptimize(coordinates);
  }
  state.counters["components"] = static_cast<double>(stream.components());
}

struct Variant {
  const char* name;
  bool pipelining;
  bool doubleBuffering;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::unique_ptr<OuterProductStream>> streams;
  for (const std::string& matrix : kMatrices) {
    std::string path = std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + matrix + ".mtx";
    try {
      streams.push_back(std::make_unique<OuterProductStream>(path));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tcc_ism_bench: skipping %s: %s\n", matrix.c_str(), e.what());
      continue;
    }
    const OuterProductStream* s = streams.back().get();
    const Variant variants[] = {{"", false, false},
                                {"+DoubleBuffer", false, true},
                                {"+Pipeline", true, false},
                                {"+Pipeline+DoubleBuffer", true, true}};
    auto add = [&](const std::string& name, auto function) {
      benchmark::RegisterBenchmark((matrix + "/" + name).c_str(), function)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    };
    add("LowerBound", [s](benchmark::State& st) { lowerBound(st, *s); });
    add("Map", [s](benchmark::State& st) { assemble<MapPolicy>(st, *s, false, false); });
    add("Vector", [s](benchmark::State& st) { assemble<VectorPolicy>(st, *s, false, false); });
    add("ChainedBucket", [s](benchmark::State& st) { assemble<ChainedBucketPolicy>(st, *s, false, false); });
    for (const Variant& v : variants) {
      bool p = v.pipelining, d = v.doubleBuffering;
      add(std::string("Bucket") + v.name, [s, p, d](benchmark::State& st) { assemble<BucketPolicy>(st, *s, p, d); });
      add(std::string("Hash") + v.name, [s, p, d](benchmark::State& st) { assemble<HashPolicy>(st, *s, p, d); });
      add(std::string("Coord") + v.name, [s, p, d](benchmark::State& st) { assemble<CoordPolicy>(st, *s, p, d); });
    }
    // The optimizations matter when merges are many: a small fixed
    // accumulation array (16 Ki components).
    for (const Variant& v : variants) {
      bool p = v.pipelining, d = v.doubleBuffering;
      add(std::string("Bucket@16k") + v.name,
          [s, p, d](benchmark::State& st) { assemble<BucketPolicy>(st, *s, p, d, 1 << 14); });
      add(std::string("Coord@16k") + v.name,
          [s, p, d](benchmark::State& st) { assemble<CoordPolicy>(st, *s, p, d, 1 << 14); });
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
