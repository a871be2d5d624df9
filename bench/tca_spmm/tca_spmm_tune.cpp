// A tuning aid for TCA-SpMM's kernel, not a comparison: compiles variants
// of the device code tcc emits (loads in flight per warp, blocks per SM
// the compiler keeps registers for) and times each, with plans made for
// several device-filling targets, on a few matrices and N. The kernel
// alone is timed (CUDA events around one launch; median of R).
//
//   tcc_tune_tca_spmm MATRIX_DIR [R]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tcc/lowering/tca_spmm.h"
#include "tcc/runtime/cuda.h"
#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

namespace cuda = tcc::rt::cuda;

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

struct Variant {
  std::string name;
  std::vector<std::pair<std::string, std::string>> edits;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MATRIX_DIR [repeats]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  const auto& device = cuda::device();
  std::string base = tcc::lowering::tcaSpmmDeviceCode("tune");
  // The kernel as tcc emits it first (2 steps in flight, 4 blocks per SM
  // where N % 8 == 0), then variants of it.
  std::vector<Variant> variants = {
      {"tcc", {}},
      {"unroll4,3blk", {{"UNROLL = 2;", "UNROLL = 4;"}, {"__launch_bounds__(256, 4)", "__launch_bounds__(256)"}}},
      {"unroll8,2blk", {{"UNROLL = 2;", "UNROLL = 8;"}, {"__launch_bounds__(256, 4)", "__launch_bounds__(256)"}}},
      {"prefetch2", {{"PREFETCH = false;", "PREFETCH = true;"}}},
  };

  std::vector<std::unique_ptr<cuda::Module>> modules;
  for (const auto& variant : variants) {
    std::string code = "typedef int int32_t;\ntypedef long long int64_t;\ntypedef unsigned short uint16_t;\n" + base;
    for (const auto& [from, to] : variant.edits) {
      if (code.find(from) == std::string::npos) std::fprintf(stderr, "variant %s: no '%s'\n", variant.name.c_str(), from.c_str());
      code = replaced(code, from, to);
    }
    modules.push_back(std::make_unique<cuda::Module>(cuda::compileToCubin(code, device.architecture(), "tune.cu")));
  }
  auto real = [&](const std::string& name) { return tcc::rt::readMatrixMarket(dir + "/" + name + ".mtx"); };
  std::vector<std::pair<std::string, tcc::rt::Coo>> inputs;
  inputs.push_back({"bcsstk13", real("bcsstk13")});
  inputs.push_back({"bayer10", real("bayer10")});
  inputs.push_back({"Pd", real("Pd")});
  inputs.push_back({"kron(bcsstk13,cage5)", tcc::rt::kroneckerProduct(real("bcsstk13"), real("cage5"))});
  inputs.push_back({"kron(bayer10,LF10)", tcc::rt::kroneckerProduct(real("bayer10"), real("LF10"))});
  inputs.push_back({"kron(Pd,cage5)", tcc::rt::kroneckerProduct(real("Pd"), real("cage5"))});
  std::printf("%s, %d SMs; kernel time in us (median of %d)\n", device.name.c_str(), device.multiprocessors, repeats);
  std::printf("%-22s %4s %8s |", "matrix", "N", "warps/SM");
  for (const auto& variant : variants) std::printf(" %13s", variant.name.c_str());
  std::printf("\n");
  cuda::EventTimer timer;
  for (const auto& [name, coo] : inputs) {
    tcc::Tensor s = tcc::rt::pack(coo, tcc::rt::TensorFormat::csr(), tcc::rt::ValueType::Float16);
    tcc_tensor view = s.abiView();
    int rows = view.dims[0], cols = view.dims[1];
    int64_t nnz = view.vals_size;
    cuda::DeviceBuffer pos(sizeof(int64_t) * (rows + 1)), crd(sizeof(int32_t) * std::max<int64_t>(nnz, 1)),
        vals(sizeof(uint16_t) * std::max<int64_t>(nnz, 1));
    pos.upload(view.levels[1].pos, sizeof(int64_t) * (rows + 1));
    crd.upload(view.levels[1].crd, sizeof(int32_t) * nnz);
    vals.upload(view.vals, sizeof(uint16_t) * nnz);
    for (int columns : {32, 128, 256}) {
      tcc::Tensor d = tcc::rt::pack(tcc::rt::randomUniform({cols, columns}, 1.0, 3), tcc::rt::TensorFormat::dense(2),
                                    tcc::rt::ValueType::Float16);
      cuda::DeviceBuffer dense(sizeof(uint16_t) * size_t(cols) * columns), out(sizeof(float) * size_t(rows) * columns);
      dense.upload(d.abiView().vals, sizeof(uint16_t) * size_t(cols) * columns);
      for (int warpsPerSm : {32, 128, 512}) {
        std::vector<int64_t> positions(view.levels[1].pos, view.levels[1].pos + rows + 1);
        auto plan = tcc::lowering::planTcaSpmm(positions.data(), rows, columns,
                                               int64_t(device.multiprocessors) * warpsPerSm);
        std::vector<int32_t> arrays = plan.rowIdForEachWarp;
        arrays.insert(arrays.end(), plan.numWarpsPerRow.begin(), plan.numWarpsPerRow.end());
        arrays.insert(arrays.end(), plan.warpidWithinRow.begin(), plan.warpidWithinRow.end());
        cuda::DeviceBuffer planBuffer(sizeof(int32_t) * arrays.size());
        planBuffer.upload(arrays.data(), sizeof(int32_t) * arrays.size());
        std::printf("%-22s %4d %8d |", name.c_str(), columns, warpsPerSm);
        for (size_t v = 0; v < variants.size(); ++v) {
          const int32_t* rowIds = static_cast<const int32_t*>(planBuffer.get());
          const int32_t* counts = rowIds + plan.warps();
          const int32_t* ids = rowIds + 2 * plan.warps();
          int64_t warps = plan.warps();
          void *p = pos.get(), *c = crd.get(), *x = vals.get(), *dd = dense.get(), *o = out.get();
          std::vector<void*> arguments = {&rowIds, &counts, &ids, &warps, &p, &c, &x, &dd, &o, &columns};
          cuda::LaunchShape shape;
          shape.grid[0] = static_cast<unsigned>((warps * 32 + 255) / 256);
          shape.block[0] = 256;
          void* function = modules[v]->function(tcc::lowering::tcaSpmmKernelName("tune", plan.chunksPerStep, plan.aligned));
          std::vector<double> times;
          for (int k = 0; k < repeats + 1; ++k) {
            out.zero();
            timer.start();
            cuda::launch(function, shape, arguments);
            double seconds = timer.stopSeconds();
            if (k > 0) times.push_back(seconds);
          }
          double us = median(times) * 1e6;
          std::printf(" %7.1f %5.1fT", us, 2.0 * nnz * columns / (us * 1e-6) * 1e-12);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
