// On a GPU (label gpu): fp strict's nonzero split in one order
// (orderedSplitSums in gpu_spmm_mappings.h), the default CSR SpMM's kernel
// for long rows under fp strict, on the inputs its rule gives it: the
// kernels launched are the split's two, the result has the same bits in 5
// runs, and they are the bits of the CPU's sums in the split's order
// (ordered_split_reference.h; no FMA contraction under fp strict on either
// side), close to the sums over A's nonzeros and, where small enough to
// walk densely, to the dense reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dense_of.h"
#include "ordered_split_reference.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

using lowering::NonzeroSplits;
using lowering::SpmmKernel;

constexpr const char* kSpmm = kCsrSpmmFloat32;

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

rt::Coo shared(const char* file) {
  return rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + file);
}

std::string kernelText(const std::string& source, const std::string& name) {
  size_t at = source.find(") " + name + "(");
  if (at == std::string::npos) return "";
  return source.substr(at, source.find("extern \"C\"", at) - at);
}

TEST(GpuOrderedSplit, TheSplitInOneOrderGivesTheBitsOfItsOrderEveryRun) {
  Program program = Program::fromText(kSpmm, "spmm.tc");
  Kernel kernel = compile(program);
  struct Input {
    const char* name;
    rt::Coo matrix;
    std::vector<int32_t> columns;
  };
  std::vector<Input> inputs;
  inputs.push_back({"adder_dcop_05", shared("adder_dcop_05.mtx"), {1, 32, 33, 128, 300}});
  inputs.push_back({"mbeacxc", shared("mbeacxc.mtx"), {1, 32, 33, 128}});
  inputs.push_back({"3000 x 2500, rows of about 2, one full row", drawnMatrix(3000, 2500, 0.0008, 13, 1717, 51),
                    {1, 33, 100, 128}});
  inputs.push_back({"600 x 700, one full row, empty rows", drawnMatrix(600, 700, 0.003, 11, 300, 52), {1, 33, 128}});
  inputs.push_back({"70000 x 300, rows of about 2, one full row (shares of 32)",
                    drawnMatrix(70000, 300, 0.008, 13, 69998, 53), {1, 33}});
  std::set<std::string> kinds;
  for (const Input& input : inputs) {
    const rt::Coo& a = input.matrix;
    std::vector<int64_t> lengths(a.dims[0], 0);
    for (size_t e = 0; e < a.nnz(); ++e) ++lengths[a.coords[0][e]];
    const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    for (int32_t columns : input.columns) {
      SCOPED_TRACE(std::string(input.name) + ", N = " + std::to_string(columns));
      const SpmmKernel named = lowering::spmmKernelRule({a.dims[0], static_cast<int64_t>(a.nnz()), longest, columns},
                                                        NonzeroSplits::InOneOrder);
      ASSERT_TRUE(lowering::isOrderedSplit(named)) << toString(named);
      kinds.insert(toString(named));
      std::map<std::string, Tensor> bound;
      bound.emplace("A", rt::pack(a, rt::TensorFormat::csr(), rt::ValueType::Float32));
      bound.emplace("B", rt::pack(rt::randomUniform({a.dims[1], columns}, 1.0, 60 + columns),
                                  rt::TensorFormat::dense(2), rt::ValueType::Float32));
      rt::Coo aRead = rt::unpack(bound.at("A"));
      DenseArray b = denseOf(rt::unpack(bound.at("B")));
      const std::vector<double> inOrder = orderedSplitSums(aRead, b.values, columns, lowering::shareOf(named));
      std::vector<double> first;
      for (int run = 0; run < 5; ++run) {
        RunResult result = kernel.run(bound, RunOptions{1});
        // The shares' kernel, then the crossing rows'.
        ASSERT_EQ(result.gpuKernels.size(), 2u);
        const std::string shares = kernelText(kernel.source(), result.gpuKernels[0]);
        EXPECT_NE(shares.find("tcc_segment_of("), std::string::npos) << shares;
        EXPECT_NE(shares.find("_share_slots" + std::to_string(lowering::shareOf(named))), std::string::npos)
            << shares;
        std::vector<double> values = rt::toDense(result.tensors.at("C"));
        if (run == 0) {
          first = values;
          EXPECT_TRUE(sameBits(values, inOrder)) << "not the bits of the CPU's sums in the split's order";
        } else {
          EXPECT_TRUE(sameBits(values, first)) << "run " << run << " differs from run 0";
        }
      }
      std::vector<double> expected = sumsOverNonzeros(aRead, b, columns);
      ASSERT_TRUE(anyNonZero(expected));
      expectClose(first, expected, 2e-4, "GPU vs the sums over A's nonzeros");
      if (int64_t(a.dims[0]) * a.dims[1] * columns <= 40000000) {
        std::map<std::string, DenseArray> dense{{"A", denseOf(aRead)}, {"B", b}};
        expectClose(first, evaluate(program.statements(), dense).at("C").values, 2e-4, "GPU vs dense reference");
      }
    }
  }
  EXPECT_EQ(kinds.size(), 2u);  // shares of 16 and of 32
}

}  // namespace
}  // namespace tcc::test
