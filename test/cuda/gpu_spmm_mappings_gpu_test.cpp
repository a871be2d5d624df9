// On a GPU (label gpu): the default mapping of CSR SpMM (spmm_default.tc)
// on inputs the rule gives to each of its five kernels (gpu_spmm_mappings.h),
// at N off the tiles; the kernel launched is the one the rule names, and the
// result matches the sums over A's nonzeros and, where small enough to walk
// densely, the dense reference. fp fast chooses among the tiles and the
// atomic splits; fp strict (the program's default) among the tiles and the
// splits in one order (two kernels each: the shares', then the rows that
// cross them; gpu_ordered_split_gpu_test.cpp checks their bits).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "dense_of.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

namespace fs = std::filesystem;
using lowering::SpmmKernel;

// Which kernel a kernel's text is, by its tiles or shares.
std::optional<SpmmKernel> spmmKernelOf(const std::string& text) {
  auto has = [&](const char* part) { return text.find(part) != std::string::npos; };
  if (has("tcc_segment_of(")) {
    const bool ordered = has("_share_slots");
    if (has("+ 15LL) / 16LL)")) return ordered ? SpmmKernel::OrderedSplit16 : SpmmKernel::Split16;
    if (has("+ 31LL) / 32LL)")) return ordered ? SpmmKernel::OrderedSplit32 : SpmmKernel::Split32;
    return std::nullopt;
  }
  if (has("(C2_dimension + 127) / 128")) return SpmmKernel::Tiles128;
  if (has("(C2_dimension + 63) / 64")) return SpmmKernel::Tiles64;
  if (has("(C2_dimension + 31) / 32")) return SpmmKernel::Tiles32;
  return std::nullopt;
}

rt::Coo shared(const char* file) {
  return rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + file);
}

class GpuSpmmMappings : public ::testing::TestWithParam<bool> {};

TEST_P(GpuSpmmMappings, EachKernelTheRuleNamesRunsAndMatchesTheReference) {
  const bool fast = GetParam();
  fs::path path = fs::path(TCC_SOURCE_DIR) / "examples" / "gpu" / "spmm_default.tc";
  Program program = Program::fromFile(path.string());
  CompileOptions options;
  options.floatingPoint = fast ? frontend::FloatingPointMode::Fast : frontend::FloatingPointMode::Strict;
  Kernel kernel = compile(program, options);
  struct Input {
    const char* name;
    rt::Coo matrix;
    std::vector<int32_t> columns;
  };
  std::vector<Input> inputs;
  inputs.push_back({"4500 x 61, rows of about 3, empty rows", drawnMatrix(4500, 61, 0.05, 9, -1, 41),
                    {1, 17, 32, 33, 100, 128, 300}});
  inputs.push_back({"500 x 300, rows of about 15, empty rows", drawnMatrix(500, 300, 0.05, 7, -1, 42),
                    {1, 33, 64, 100, 300}});
  inputs.push_back({"100 x 400, rows of about 120", drawnMatrix(100, 400, 0.3, 0, -1, 43), {1, 33, 100, 128, 300}});
  inputs.push_back({"600 x 700, one full row, empty rows", drawnMatrix(600, 700, 0.003, 11, 300, 44),
                    {1, 33, 100, 128, 300}});
  inputs.push_back({"70000 x 300, rows of about 2, one full row", drawnMatrix(70000, 300, 0.008, 13, 69998, 45),
                    {1, 33, 100, 128, 300}});
  inputs.push_back({"mbeacxc", shared("mbeacxc.mtx"), {1, 33, 100, 128, 300}});
  inputs.push_back({"bcsstk16", shared("bcsstk16.mtx"), {1, 32, 33, 100, 128, 300}});
  inputs.push_back({"adder_dcop_05", shared("adder_dcop_05.mtx"), {1, 33, 128, 300}});
  std::set<std::string> launchedKinds;
  for (const Input& input : inputs) {
    const rt::Coo& a = input.matrix;
    std::vector<int64_t> lengths(a.dims[0], 0);
    for (size_t e = 0; e < a.nnz(); ++e) ++lengths[a.coords[0][e]];
    const int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    for (int32_t columns : input.columns) {
      SCOPED_TRACE(std::string(input.name) + ", N = " + std::to_string(columns));
      std::map<std::string, Tensor> bound;
      bound.emplace("A", rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float32));
      bound.emplace("B", rt::pack(rt::randomUniform({a.dims[1], columns}, 1.0, 46 + columns), rt::TensorFormat::dense(2),
                                  rt::ValueType::Float32));
      RunResult result = kernel.run(bound, RunOptions{2});
      ASSERT_FALSE(result.gpuKernels.empty());
      const std::string& source = kernel.source();
      size_t at = source.find(") " + result.gpuKernels[0] + "(");
      ASSERT_NE(at, std::string::npos) << result.gpuKernels[0];
      auto launched = spmmKernelOf(source.substr(at, source.find("extern \"C\"", at) - at));
      ASSERT_TRUE(launched.has_value()) << result.gpuKernels[0];
      EXPECT_EQ(result.gpuKernels.size(), lowering::isOrderedSplit(*launched) ? 2u : 1u);
      SpmmKernel named = lowering::spmmKernelRule(
          {a.dims[0], static_cast<int64_t>(a.nnz()), longest, columns},
          fast ? lowering::NonzeroSplits::Atomic : lowering::NonzeroSplits::InOneOrder);
      EXPECT_EQ(toString(*launched), toString(named));
      launchedKinds.insert(toString(*launched));
      // The sums over A's nonzeros, from the float32 values the GPU reads.
      rt::Coo aRead = rt::unpack(bound.at("A"));
      DenseArray b = denseOf(rt::unpack(bound.at("B")));
      std::vector<double> expected = sumsOverNonzeros(aRead, b, columns);
      ASSERT_TRUE(anyNonZero(expected));
      std::vector<double> fromGpu = rt::toDense(result.tensors.at("C"));
      expectClose(fromGpu, expected, 2e-4, "GPU vs the sums over A's nonzeros");
      if (int64_t(a.dims[0]) * a.dims[1] * columns <= 40000000) {
        std::map<std::string, DenseArray> dense{{"A", denseOf(aRead)}, {"B", b}};
        expectClose(fromGpu, evaluate(program.statements(), dense).at("C").values, 2e-4, "GPU vs dense reference");
      }
    }
  }
  EXPECT_EQ(launchedKinds.size(), 5u);  // every kernel ran on some input
}

INSTANTIATE_TEST_SUITE_P(FpModes, GpuSpmmMappings, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fast" : "Strict"; });

}  // namespace
}  // namespace tcc::test
