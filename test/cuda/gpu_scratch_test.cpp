// On a GPU (label gpu): the scratch buffer of the GPU threads' workspaces
// and the workspaces GPU loops share (a sparse output's scan totals) are
// kept between launches, up to kKeptGpuScratchBytes the two together; a
// launch whose scratch needs more has it freed once it is done. Either way
// the results match the dense reference.
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

// Up to five entries that differ from the reference by more than
// `tolerance` relative, each a failure.
void expectNear(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  int mismatches = 0;
  for (size_t k = 0; k < actual.size() && mismatches < 5; ++k)
    if (std::abs(actual[k] - expected[k]) > tolerance * std::max(1.0, std::abs(expected[k]))) {
      ++mismatches;
      ADD_FAILURE() << "entry " << k << " is " << actual[k] << ", expected " << expected[k];
    }
}

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
  expectNear(actual, expected, 1e-10);
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
  EXPECT_LE(detail::gpuScratchBytesKept() + detail::gpuWorkspaceBytesKept(), detail::kKeptGpuScratchBytes);
}

// A + B into CSR: the scan's tile totals (one array, not zeroed) are kept
// for the next call, which takes them again (the bytes kept do not grow),
// and a smaller call after a larger one (totals left in the array) is
// still right.
TEST(GpuScratch, ASparseOutputsScanTotalsAreKeptForTheNextCall) {
  const char* sum = "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n"
                    "C(i, j) = A(i, j) + B(i, j)\ntarget cuda\n"
                    "schedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n";
  Program program = Program::fromText(sum, "sum.tc");
  Kernel kernel = compile(program);
  size_t keptAfterFirst = 0;
  uint64_t seed = 20;
  for (int32_t rows : {40000, 40000, 3000}) {
    SCOPED_TRACE(rows);
    std::map<std::string, Tensor> bound;
    std::map<std::string, DenseArray> dense;
    for (const char* name : {"A", "B"}) {
      rt::Coo entries = rt::randomUniform({rows, 30}, 0.1, ++seed);
      bound.emplace(name, rt::pack(entries, rt::TensorFormat::csr(), rt::ValueType::Float64));
      dense.emplace(name, denseOf(entries));
    }
    std::vector<double> expected = evaluate(program.statements(), dense).at("C").values;
    ASSERT_TRUE(std::any_of(expected.begin() + 128 * 30, expected.end(), [](double v) { return v != 0; }));
    std::vector<double> actual = rt::toDense(kernel.run(bound).at("C"));
    expectNear(actual, expected, 1e-12);
    EXPECT_GT(detail::gpuWorkspaceBytesKept(), 0u);
    EXPECT_LE(detail::gpuScratchBytesKept() + detail::gpuWorkspaceBytesKept(), detail::kKeptGpuScratchBytes);
    if (keptAfterFirst == 0) keptAfterFirst = detail::gpuWorkspaceBytesKept();
    EXPECT_EQ(detail::gpuWorkspaceBytesKept(), keptAfterFirst);  // taken again, not allocated anew
  }
}

// The cap holds for the arena and the pool together: with the arena
// keeping all but 10 kB of it, a sparse output's scan totals (about 12 kB
// for 400,000 rows) are freed after the call instead of kept.
TEST(GpuScratch, TheArenaAndThePoolShareOneCap) {
  Program spmm = Program::fromText(kSpmmThroughRowWorkspaces, "scratch.tc");
  Kernel spmmKernel = compile(spmm);
  // 768 threads, each thread's copy 10,921 entries of 8 bytes: 10,240
  // bytes under the cap.
  expectMatchesReference(spmmKernel, spmm, 600, 4, 10921);
  ASSERT_LE(detail::gpuScratchBytesKept(), detail::kKeptGpuScratchBytes);
  ASSERT_GE(detail::gpuScratchBytesKept(), detail::kKeptGpuScratchBytes - 10240);

  const char* sum = "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n"
                    "C(i, j) = A(i, j) + B(i, j)\ntarget cuda\n"
                    "schedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n";
  Program program = Program::fromText(sum, "sum.tc");
  Kernel kernel = compile(program);
  const int32_t rows = 400000;
  std::map<std::string, Tensor> bound;
  std::map<std::string, DenseArray> dense;
  uint64_t seed = 40;
  for (const char* name : {"A", "B"}) {
    rt::Coo entries = rt::randomUniform({rows, 30}, 0.1, ++seed);
    bound.emplace(name, rt::pack(entries, rt::TensorFormat::csr(), rt::ValueType::Float64));
    dense.emplace(name, denseOf(entries));
  }
  std::vector<double> expected = evaluate(program.statements(), dense).at("C").values;
  ASSERT_TRUE(std::any_of(expected.begin(), expected.end(), [](double v) { return v != 0; }));
  std::vector<double> actual = rt::toDense(kernel.run(bound).at("C"));
  expectNear(actual, expected, 1e-12);
  EXPECT_LE(detail::gpuScratchBytesKept() + detail::gpuWorkspaceBytesKept(), detail::kKeptGpuScratchBytes);
}

}  // namespace
}  // namespace tcc::test
