// On a GPU (label gpu): the scratch buffer of the GPU threads' workspaces
// is kept between launches up to kKeptGpuScratchBytes; a launch whose
// scratch needs more has it freed once it is done. Either way the results
// match the dense reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gpu_launch.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"
#include "dense_of.h"

namespace tcc::test {
namespace {

// SpMM through a row workspace, a thread per row: each GPU thread's copy
// holds K entries (8 bytes each), so the scratch is about threads * K * 8.
const char* kSpmmThroughRowWorkspaces =
    "tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\n"
    "C(i, k) = A(i, j) * B(j, k)\ntarget cuda\n"
    "schedule {\n  precompute(A(i, j) * B(j, k), k, k)\n  parallelize(i, GPUThread, NoRaces)\n}\n";

void expectMatchesReference(const Kernel& kernel, const Program& program, int32_t rows, int32_t inner, int32_t cols) {
  std::map<std::string, Tensor> bound;
  std::map<std::string, DenseArray> dense;
  const std::map<std::string, rt::Coo> entries = {{"A", rt::randomUniform({rows, inner}, 0.5, 7)},
                                                  {"B", rt::randomUniform({inner, cols}, 1.0, 8)}};
  for (const auto& [name, coo] : entries) {
    const TensorVar* tensor = program.syntax().findTensor(name);
    bound.emplace(name, rt::pack(coo, toRuntimeFormat(tensor->format()), toRuntimeType(tensor->datatype())));
    dense.emplace(name, denseOf(coo));
  }
  std::vector<double> expected = evaluate(program.statements(), dense).at("C").values;
  ASSERT_TRUE(std::any_of(expected.begin(), expected.end(), [](double v) { return v != 0; }));
  std::vector<double> actual = rt::toDense(kernel.run(bound).at("C"));
  ASSERT_EQ(actual.size(), expected.size());
  int mismatches = 0;
  for (size_t k = 0; k < actual.size() && mismatches < 5; ++k)
    if (std::abs(actual[k] - expected[k]) > 1e-10 * std::max(1.0, std::abs(expected[k]))) {
      ++mismatches;
      ADD_FAILURE() << "entry " << k << " is " << actual[k] << ", expected " << expected[k];
    }
}

TEST(GpuScratch, ALaunchPastTheCapLeavesNothingKeptAndOneWithinItIsKept) {
  Program program = Program::fromText(kSpmmThroughRowWorkspaces, "scratch.tc");
  Kernel kernel = compile(program);
  // 600 rows: 3 blocks of 256 threads, each thread's copy 12,000 entries:
  // about 74 MB of scratch, past the 64 MiB kept.
  expectMatchesReference(kernel, program, 600, 4, 12000);
  EXPECT_EQ(detail::gpuScratchBytesKept(), 0u);
  // 40 entries a copy: about 250 kB, kept for the next launch.
  expectMatchesReference(kernel, program, 600, 4, 40);
  EXPECT_GT(detail::gpuScratchBytesKept(), 0u);
  EXPECT_LE(detail::gpuScratchBytesKept(), detail::kKeptGpuScratchBytes);
}

}  // namespace
}  // namespace tcc::test
