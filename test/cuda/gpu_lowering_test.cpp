// GPU schedules on the cuda target, without a GPU: what they lower to, the
// default mapping, and the schedules that are refused, located at their line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "gpu_host_part.h"
#include "gpu_launch.h"
#include "tcc/ir/index_printer.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/gpu_default_mapping.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/runtime/cuda.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

constexpr const char* kSpmv = R"(tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense

y(i) = A(i, j) * x(j)
)";

constexpr const char* kSpmm = R"(tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense

C(i, k) = A(i, j) * B(j, k)
)";

// fp fast: the nonzero splits among the kernels (fp strict leaves them out,
// gpu_strict_test.cpp).
const std::string kSpmmFast = std::string(kSpmm) + "fp fast\n";

std::string withSchedule(const std::string& program, const std::string& schedule) {
  return program + "schedule {\n" + schedule + "\n}\n";
}


// The printed text of one kernel (up to the next kernel or host function).
std::string kernelText(const std::string& cuda, const std::string& name) {
  size_t start = cuda.find(") " + name + "(");
  if (start == std::string::npos) return "";
  size_t end = cuda.find("extern \"C\"", start);
  return cuda.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The kernel of a GPU function that runs over `unit`, or null.
const lowering::GpuKernel* kernelOver(const lowering::GpuFunction& function, ir::imp::LoopKind unit) {
  for (const auto& kernel : function.kernels)
    if (kernel.unit() == unit) return &kernel;
  return nullptr;
}

TEST(CudaTarget, TheTargetLineSelectsTheCudaBackend) {
  Lowered lowered = lowerProgram(Program::fromText(std::string(kSpmv) + "target cuda(sm_90)\n", "test.tc"));
  EXPECT_EQ(lowered.target, frontend::Target::Cuda);
  EXPECT_TRUE(lowered.cpp.empty());
  EXPECT_EQ(count(lowered.cuda, "__global__ void"), 1u) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "extern \"C\" int32_t tcc_kernel_0(tcc_tensor** tcc_tensors)")) << lowered.cuda;
  // The NVRTC text carries the same kernel and no system header.
  EXPECT_EQ(count(lowered.cudaKernels, "__global__ void"), 1u);
  EXPECT_FALSE(contains(lowered.cudaKernels, "#include"));
}

TEST(CudaTarget, TheOptionOverridesTheTargetLine) {
  CompileOptions options;
  options.target = frontend::Target::Cpu;
  Lowered lowered = lowerProgram(Program::fromText(std::string(kSpmv) + "target cuda\n", "test.tc"), options);
  EXPECT_EQ(lowered.target, frontend::Target::Cpu);
  EXPECT_TRUE(contains(lowered.cpp, "tcc_kernel_0"));
}

TEST(DefaultMapping, CsrSpmvGivesEachRowAWarpAndSumsWithShuffles) {
  Lowered lowered = lowerForCuda(kSpmv);
  const auto& decisions = lowered.statements[0].decisions;
  std::string all;
  for (const auto& line : decisions) all += line + "\n";
  EXPECT_TRUE(contains(all, "default GPU mapping: one warp per row i, its lanes over j (partial sums added with warp "
                            "shuffles)")) << all;
  ASSERT_EQ(lowered.gpuFunctions.size(), 1u);
  // The row kernel alone (no nonzero split for SpMV, see NonzeroSplit below).
  ASSERT_EQ(lowered.gpuFunctions[0].kernels.size(), 1u);
  EXPECT_EQ(lowered.gpuFunctions[0].kernels[0].unit(), ir::imp::LoopKind::GpuWarp);
  EXPECT_FALSE(contains(all, "nonzero-split")) << all;
  EXPECT_FALSE(contains(lowered.cuda, "A_longest_row")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "_before + tcc_warp_sum(")) << lowered.cuda;
  // After the warp sum one lane stores the row's result.
  EXPECT_TRUE(contains(lowered.cuda, "if (threadIdx.x % 32 == 0) {")) << lowered.cuda;
}

TEST(DefaultMapping, CsrSpmmPutsColumnTilesOnWarpsAndTwoColumnsOnEachLane) {
  Lowered lowered = lowerForCuda(kSpmm);
  std::string all;
  for (const auto& line : lowered.statements[0].decisions) all += line + "\n";
  EXPECT_TRUE(contains(all, "default GPU mapping: the dense k in tiles of 64 columns, one warp per row i and tile"))
      << all;
  EXPECT_TRUE(contains(all, "loop order after the schedule: ik_warp, k_lane, k_round, j")) << all;
  // The tiles of 64 (one of the three row kernels, told by their tiles;
  // see SpmmMappings for the others): one walk over the row's nonzeros
  // feeds two sums per lane.
  std::string tiles64;
  int rowKernels = 0;
  for (const auto& kernel : lowered.gpuFunctions.at(0).kernels) {
    std::string text = kernelText(lowered.cuda, kernel.name);
    // A split searches pos for its rows; the split in one order's second
    // kernel adds the slots of crossing rows.
    if (contains(text, "tcc_segment_of(") || contains(text, "_share_slots")) continue;
    ++rowKernels;
    EXPECT_FALSE(contains(text, "atomicAdd")) << text;
    if (contains(text, "(C2_dimension + 63) / 64")) tiles64 = text;
  }
  EXPECT_EQ(rowKernels, 3) << lowered.cuda;
  ASSERT_FALSE(tiles64.empty()) << lowered.cuda;
  EXPECT_TRUE(contains(tiles64, "2 iterations at once (unroll and jam)")) << tiles64;
  // The walk over the nonzeros: jammed, and as written for the rounds left over.
  EXPECT_EQ(count(tiles64, "iterate j over A's level 2"), 2u) << tiles64;
  EXPECT_TRUE(contains(tiles64, "the iterations left over")) << tiles64;
  for (const char* sum : {"tC_u0 +=", "tC_u1 +="}) EXPECT_TRUE(contains(tiles64, sum)) << sum << "\n" << tiles64;
  EXPECT_FALSE(contains(tiles64, "tC_u2")) << tiles64;
  EXPECT_FALSE(contains(tiles64, "tcc_warp_sum(t")) << tiles64;
}

// The nonzero split beside the row mapping, for CSR SpMV and SpMM with no
// schedule: both kernels in one host part, which picks by A's row lengths.
TEST(NonzeroSplit, CsrSpmmGetsAWarpPerShareAndTileBesideTheTiles) {
  Lowered lowered = lowerForCuda(kSpmmFast);
  std::string all = decisionsOf(lowered);
  EXPECT_TRUE(contains(all, "nonzero-split GPU mapping: A's nonzeros in shares of 32, a warp per (share, tile of 32 "
                            "k), a column per lane")) << all;
  EXPECT_TRUE(contains(all, "nonzero-split GPU mapping: A's nonzeros in shares of 16")) << all;
  EXPECT_TRUE(contains(all, "per input: nonzero split, shares of 32 where A_long_row_split and nonzeros > 131072; "
                            "nonzero split, shares of 16 where A_long_row_split or A_few_long_rows;")) << all;
  EXPECT_TRUE(contains(all, "; A_split_nonzeros: the longest row >= 256 and the longest row * rows >= 32 * "
                            "nonzeros (")) << all;
  // The printed launcher computes the rule and launches one of the five.
  EXPECT_TRUE(contains(lowered.cuda, "int64_t A_longest_row = tcc_longest_segment(")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "bool A_split_nonzeros = ((A_longest_row >= 256LL) && "
                                     "(tcc_saturating_mul(A_longest_row, (int64_t)(A->dims[0])) >= "
                                     "tcc_saturating_mul(32LL, A_nonzeros)));")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "if (A_split_in_32s) {")) << lowered.cuda;
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), 5u);
  int atomic = 0;
  for (const auto& kernel : function.kernels) {
    EXPECT_EQ(kernel.unit(), ir::imp::LoopKind::GpuWarp);
    atomic += contains(kernelText(lowered.cuda, kernel.name), "atomicAdd(");
  }
  EXPECT_EQ(atomic, 2) << lowered.cuda;
}

// Only the bare statement over a CSR matrix gets the choice: a schedule,
// even one that maps nothing, keeps the one mapping it had.
TEST(NonzeroSplit, OnlyAnUnscheduledCsrProductGetsIt) {
  EXPECT_EQ(lowerForCuda(withSchedule(kSpmm, "parallelize(i, GPUWarp, NoRaces)\nparallelize(k, GPUThread, "
                                             "NoRaces)")).gpuFunctions.at(0).kernels.size(), 1u);
  // A product with more dense factors is still one.
  EXPECT_EQ(lowerForCuda("tensor C(I, K) : dense\ntensor A(I, J) : csr\ntensor B(J, K) : dense\ntensor w(I) : dense\n"
                         "C(i, k) = 2 * A(i, j) * B(j, k) * w(i)\nfp fast\n").gpuFunctions.at(0).kernels.size(), 5u);
  EXPECT_FALSE(contains(decisionsOf(lowerForCuda(withSchedule(kSpmm, "reorder(i, j, k)"))), "nonzero-split"));
}

// The rule on the row statistics of matrices the benchmark runs (longest
// row, rows, nonzeros).
TEST(NonzeroSplit, TheRuleTakesTheSplitForALongRowFarAboveTheMean) {
  struct Row { const char* name; int64_t longest, rows, nonzeros; bool split; };
  for (const Row& row : std::vector<Row>{{"adder_dcop_05: one row of 1310, mean 6", 1310, 1813, 11097, true},
                                         {"mbeacxc: 484 against a mean of 101", 484, 492, 49920, false},
                                         {"kron(mbeacxc,LF10): 5.2 times the mean", 2420, 8856, 4093440, false},
                                         {"bcsstk16: even rows", 81, 4884, 290378, false},
                                         {"watt_2: 128, 20 times the mean", 128, 1856, 11550, false},
                                         {"one row alone: no other row to balance", 3000, 1, 3000, false},
                                         {"long rows, all alike", 950, 74111, 19544739, false},
                                         {"exactly at both limits", 256, 100, 800, true},
                                         {"one below the skew", 256, 100, 801, false},
                                         {"one below the length", 255, 100, 100, false},
                                         {"empty matrix", 0, 0, 0, false}})
    EXPECT_EQ(lowering::balancedRowRule(row.longest, row.rows, row.nonzeros), row.split) << row.name;
}

// A CSR matrix of `rows` rows, the lengths given for some rows (the others
// empty), as host arrays a fake device hands to the host part.
struct FakeCsr {
  std::vector<long long> pos;
  std::vector<int> crd;
  std::vector<float> values;
  tcc_tensor tensor{};
  FakeCsr(int rows, int cols, const std::map<int, int>& lengths) {
    pos.assign(rows + 1, 0);
    for (int r = 0; r < rows; ++r) pos[r + 1] = pos[r] + (lengths.count(r) ? lengths.at(r) : 0);
    crd.assign(std::max<long long>(pos.back(), 1), 0);
    values.assign(crd.size(), 1.0f);
    tensor.order = 2, tensor.dims[0] = rows, tensor.dims[1] = cols;
    tensor.levels[1].kind = TCC_LEVEL_COMPRESSED, tensor.levels[1].pos = pos.data(), tensor.levels[1].crd = crd.data();
    tensor.levels[0].size = rows, tensor.levels[1].size = cols;
    tensor.vals = values.data(), tensor.vals_size = pos.back();
  }
};

// Runs a default-mapped program's host part on A and a dense operand; the
// kernels it launched, and how often it asked for a pos array.
std::vector<const lowering::GpuKernel*> launchedFor(const Lowered& lowered, FakeCsr& a, int columns, int& copies) {
  std::vector<float> dense(size_t(a.tensor.dims[1]) * columns + size_t(a.tensor.dims[0]) * columns + 1);
  tcc_tensor out{}, operand{};
  out.order = 2, out.dims[0] = a.tensor.dims[0], out.dims[1] = columns, out.vals = dense.data();
  operand.order = 2, operand.dims[0] = a.tensor.dims[1], operand.dims[1] = columns;
  operand.vals = dense.data();
  std::vector<const lowering::GpuKernel*> launched;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch& launch) { launched.push_back(launch.kernel); };
  device.read = [&](void*, const void*, size_t) { ADD_FAILURE() << "a pos entry was read from the device"; };
  device.positions = [&](const void* pos, int64_t entries) {
    ++copies;
    const auto* first = static_cast<const int64_t*>(pos);
    return detail::hostPositionsOf(std::vector<int64_t>(first, first + entries));
  };
  // (The split in one order allocates its slots; no kernel runs here.)
  std::vector<std::vector<char>> buffers;
  device.allocateZeroed = [&](size_t bytes) { return buffers.emplace_back(bytes + 1).data(); };
  device.release = [](void*) {};
  EXPECT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&out, &a.tensor, &operand}, device), 0);
  return launched;
}

TEST(NonzeroSplit, TheHostPartLaunchesTheSplitForOneLongRowAndTheRowKernelOtherwise) {
  for (int columns : {1, 64}) {
    SCOPED_TRACE("N = " + std::to_string(columns));
    Lowered lowered = lowerForCuda(kSpmmFast);
    const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
    auto isSplit = [&](const lowering::GpuKernel* kernel) {
      return contains(kernelText(lowered.cuda, kernel->name), "tcc_segment_of(");
    };
    // 1001 rows of 2, one of 900 and some empty: the split.
    std::map<int, int> lengths;
    for (int r = 0; r < 1001; r += 2) lengths[r] = 2;
    lengths[17] = 900;
    FakeCsr skewed(1001, 950, lengths);
    int copies = 0;
    auto launched = launchedFor(lowered, skewed, columns, copies);
    ASSERT_EQ(launched.size(), 1u);
    EXPECT_TRUE(isSplit(launched[0])) << launched[0]->name;
    EXPECT_EQ(copies, 1);  // pos once per run; the launcher keeps it with the device tensor
    // Rows of 40 alike: a row kernel.
    std::map<int, int> even;
    for (int r = 0; r < 40; ++r) even[r] = 40;
    FakeCsr alike(40, 950, even);
    launched = launchedFor(lowered, alike, columns, copies);
    ASSERT_EQ(launched.size(), 1u);
    EXPECT_FALSE(isSplit(launched[0])) << launched[0]->name;
    EXPECT_EQ(function.kernels.size(), 5u);
  }
}

// Which of the default SpMM's five kernels a kernel's text is, by its
// tiles or shares (see gpu_spmm_mappings.h).
std::optional<lowering::SpmmKernel> spmmKernelOf(const std::string& text) {
  if (contains(text, "tcc_segment_of(")) {
    const bool ordered = contains(text, "_share_slots");
    if (contains(text, "+ 15LL) / 16LL)"))
      return ordered ? lowering::SpmmKernel::OrderedSplit16 : lowering::SpmmKernel::Split16;
    if (contains(text, "+ 31LL) / 32LL)"))
      return ordered ? lowering::SpmmKernel::OrderedSplit32 : lowering::SpmmKernel::Split32;
    return std::nullopt;
  }
  if (contains(text, "(C2_dimension + 127) / 128")) return lowering::SpmmKernel::Tiles128;
  if (contains(text, "(C2_dimension + 63) / 64")) return lowering::SpmmKernel::Tiles64;
  if (contains(text, "(C2_dimension + 31) / 32")) return lowering::SpmmKernel::Tiles32;
  return std::nullopt;
}

// The rule on the statistics of the benchmark's inputs (longest row, rows,
// nonzeros; bench/cuda/RESULTS.md) at its three N.
TEST(SpmmMappings, TheRulePicksByRowLengthsAndColumns) {
  using lowering::SpmmKernel;
  struct Row {
    const char* name;
    int64_t longest, rows, nonzeros;
    SpmmKernel at32, at128, at256;
  };
  const std::vector<Row> table{
      {"adder_dcop_05: one row of 1310 among rows of 6", 1310, 1813, 11097, SpmmKernel::Split16, SpmmKernel::Split16,
       SpmmKernel::Split16},
      {"R-MAT: a row of 23401, 8 M nonzeros (the split until its atomics outweigh the long walk)", 23401, 1048576,
       8175461, SpmmKernel::Split32, SpmmKernel::Tiles64, SpmmKernel::Tiles64},
      {"mbeacxc: 492 rows of 101", 484, 492, 49920, SpmmKernel::Split16, SpmmKernel::Split16, SpmmKernel::Tiles64},
      {"kron(mbeacxc,LF10): rows up to 2420", 2420, 8856, 4093440, SpmmKernel::Tiles64, SpmmKernel::Tiles64,
       SpmmKernel::Tiles64},
      {"kron(Pd,cage5): short rows", 50, 298997, 3037388, SpmmKernel::Tiles32, SpmmKernel::Tiles128,
       SpmmKernel::Tiles128},
      {"kron(bcsstk13,cage5): rows of 264", 950, 74111, 19544739, SpmmKernel::Tiles32, SpmmKernel::Tiles128,
       SpmmKernel::Tiles128},
      {"bcsstk16: 4884 rows", 81, 4884, 290378, SpmmKernel::Tiles32, SpmmKernel::Tiles128, SpmmKernel::Tiles128},
      {"bcsstk13: 2003 rows of 42", 140, 2003, 83883, SpmmKernel::Tiles64, SpmmKernel::Tiles64, SpmmKernel::Tiles64},
      {"dnn_n1024_l1: 1024 rows of 32", 32, 1024, 32768, SpmmKernel::Tiles64, SpmmKernel::Tiles64,
       SpmmKernel::Tiles64},
      {"watt_2: 128 against a mean of 6", 128, 1856, 11550, SpmmKernel::Tiles64, SpmmKernel::Tiles64,
       SpmmKernel::Tiles64},
      {"empty", 0, 0, 0, SpmmKernel::Tiles64, SpmmKernel::Tiles64, SpmmKernel::Tiles64}};
  for (const Row& row : table) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(toString(lowering::spmmKernelRule({row.rows, row.nonzeros, row.longest, 32})), toString(row.at32));
    EXPECT_EQ(toString(lowering::spmmKernelRule({row.rows, row.nonzeros, row.longest, 128})), toString(row.at128));
    EXPECT_EQ(toString(lowering::spmmKernelRule({row.rows, row.nonzeros, row.longest, 256})), toString(row.at256));
  }
  // At the limits: N = 64 is no wide tile's, nor N = 33 a narrow one's.
  EXPECT_EQ(lowering::spmmKernelRule({5000, 20000, 10, 64}), SpmmKernel::Tiles64);
  EXPECT_EQ(lowering::spmmKernelRule({5000, 20000, 10, 65}), SpmmKernel::Tiles128);
  EXPECT_EQ(lowering::spmmKernelRule({5000, 20000, 10, 33}), SpmmKernel::Tiles64);
  EXPECT_EQ(lowering::spmmKernelRule({4095, 20000, 10, 32}), SpmmKernel::Tiles64);
  EXPECT_EQ(lowering::spmmKernelRule({4096, 200000, 1023, 32}), SpmmKernel::Tiles32);
  EXPECT_EQ(lowering::spmmKernelRule({4096, 200000, 1024, 32}), SpmmKernel::Tiles64);
  EXPECT_EQ(lowering::spmmKernelRule({4096, 200000, 1024, 300}), SpmmKernel::Tiles64);
  EXPECT_EQ(lowering::spmmKernelRule({1024, 65536, 64, 64}), SpmmKernel::Split16);  // rows * N = 65536, mean 64
  EXPECT_EQ(lowering::spmmKernelRule({1024, 65535, 64, 64}), SpmmKernel::Tiles64);
}

// The host part computes the same rule: for matrices of each kind and N off
// the tiles, the kernel it launches is the one spmmKernelRule names (fp
// fast: among the tiles and the atomic splits; fp strict: among the tiles
// and the splits in one order, each two kernels: the shares', then the
// crossing rows').
class SpmmHostPartRule : public ::testing::TestWithParam<bool> {};

TEST_P(SpmmHostPartRule, TheHostPartLaunchesTheKernelTheRuleNames) {
  const bool fast = GetParam();
  Lowered lowered = lowerForCuda(fast ? kSpmmFast : std::string(kSpmm));
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), fast ? 5u : 7u);
  std::set<std::string> seen;
  struct Matrix { const char* name; int rows, cols; std::map<int, int> lengths; };
  std::vector<Matrix> matrices;
  auto rows = [](int count, int length, int every) {
    std::map<int, int> lengths;
    for (int r = 0; r < count; r += every) lengths[r] = length;
    return lengths;
  };
  matrices.push_back({"5000 rows of 3", 5000, 400, rows(5000, 3, 1)});
  matrices.push_back({"5000 rows of 3, one of 1100", 5000, 1200, rows(5000, 3, 1)});
  matrices.back().lengths[4000] = 1100;
  matrices.push_back({"100 rows of 80", 100, 400, rows(100, 80, 1)});
  matrices.push_back({"800 rows of 2, one of 900, empty rows", 800, 950, rows(800, 2, 2)});
  matrices.back().lengths[3] = 900;
  matrices.push_back({"70000 rows of 2, one of 400", 70000, 500, rows(70000, 2, 1)});
  matrices.back().lengths[69999] = 400;
  matrices.push_back({"700 rows of 40", 700, 400, rows(700, 40, 1)});
  for (const Matrix& matrix : matrices) {
    FakeCsr a(matrix.rows, matrix.cols, matrix.lengths);
    int64_t longest = 0;
    for (const auto& [row, length] : matrix.lengths) longest = std::max<int64_t>(longest, length);
    for (int columns : {1, 33, 64, 100, 128, 300}) {
      SCOPED_TRACE(std::string(matrix.name) + ", N = " + std::to_string(columns));
      int copies = 0;
      auto launched = launchedFor(lowered, a, columns, copies);
      ASSERT_FALSE(launched.empty());
      auto kernel = spmmKernelOf(kernelText(lowered.cuda, launched[0]->name));
      ASSERT_TRUE(kernel.has_value()) << kernelText(lowered.cuda, launched[0]->name);
      EXPECT_EQ(launched.size(), lowering::isOrderedSplit(*kernel) ? 2u : 1u);
      lowering::SpmmKernel expected = lowering::spmmKernelRule(
          {matrix.rows, a.pos.back(), longest, columns},
          fast ? lowering::NonzeroSplits::Atomic : lowering::NonzeroSplits::InOneOrder);
      EXPECT_EQ(toString(*kernel), toString(expected));
      seen.insert(toString(*kernel));
    }
  }
  EXPECT_EQ(seen.size(), 5u);  // every kernel launched for some input
}

INSTANTIATE_TEST_SUITE_P(FpModes, SpmmHostPartRule, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fast" : "Strict"; });

// MTTKRP with B in CSF: the slices i are a compressed level's, which the
// column tiles' fuse cannot cut; a warp takes each slice, its lanes the
// columns j, and no two warps write one row of A.
TEST(DefaultMapping, CsfMttkrpGivesEachSliceAWarpAndItsColumnsToTheLanes) {
  Lowered lowered = lowerForCuda(R"(tensor A(I, J) : dense
tensor B(I, K, L) : csf
tensor C(K, J) : dense
tensor D(L, J) : dense

A(i, j) = B(i, k, l) * C(k, j) * D(l, j)
)");
  std::string all;
  for (const auto& line : lowered.statements[0].decisions) all += line + "\n";
  EXPECT_TRUE(contains(all, "default GPU mapping: one warp per row i (a compressed level's), its lanes over the "
                            "dense j")) << all;
  EXPECT_TRUE(contains(all, "loop order after the schedule: i, j, k, l")) << all;
  ASSERT_EQ(lowered.gpuFunctions.size(), 1u);
  ASSERT_EQ(lowered.gpuFunctions[0].kernels.size(), 1u);
  EXPECT_EQ(lowered.gpuFunctions[0].kernels[0].unit(), ir::imp::LoopKind::GpuWarp);
  EXPECT_TRUE(contains(lowered.cuda, "iterate i over B's level 1, over GPU warps")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "atomicAdd")) << lowered.cuda;
}

TEST(CombineAtomics, AWarpsWalkOverNonzerosAddsOncePerRowSegment) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "reorder(i, j, k)\nfuse(i, j, f)\npos(f, fp, A(i, j))\n"
                                                     "split(fp, fw, fl, 64)\nreorder(fw, k, fl)\n"
                                                     "parallelize(fw, GPUWarp, Atomics)\n"
                                                     "parallelize(k, GPUThread, Atomics)"));
  // One atomic addition when the row changes, one when the walk ends.
  EXPECT_EQ(count(lowered.cuda, "atomicAdd(&C_vals[tcc_combined0_at], tcc_combined0);"), 2u) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "tcc_combined0 += ")) << lowered.cuda;
}

TEST(CombineAtomics, AtomicsOfAParallelLoopStayAsTheyAre) {
  Lowered lowered =
      lowerForCuda(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, Atomics)"));
  EXPECT_FALSE(contains(lowered.cuda, "tcc_combined")) << lowered.cuda;
}

TEST(UnrollAndJam, ALoopWhoseIterationsShareAnInnerLoopIsJammed) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "split(k, k0, k1, 32)\nreorder(i, k1, k0, j)\n"
                                                     "parallelize(i, GPUWarp, NoRaces)\n"
                                                     "parallelize(k1, GPUThread, NoRaces)\nunroll(k0, 3)"));
  EXPECT_TRUE(contains(lowered.cuda, "3 iterations at once (unroll and jam)")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "tC_u2 +=")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tC_u3")) << lowered.cuda;
  // Copies whose column is past N are predicated off; the rounds left
  // over (N / 32 not a multiple of 3) run as written.
  EXPECT_TRUE(contains(lowered.cuda, "if (tcc_live2) {")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "the iterations left over")) << lowered.cuda;
}

// A copy that may be dead (its columns past N) updates its sum in the walk
// without a branch, its load of B at a live copy's column where it is dead
// (so the device compiler can issue several nonzeros' loads ahead); only
// its store stays guarded, under CompileOptions::gpuSpeculativeJamLoads;
// by default the sums are guarded as well.
TEST(UnrollAndJam, ADeadCopysSumRunsUnguardedWithALiveCopysColumn) {
  const std::string program = withSchedule(kSpmm, "split(k, k0, k1, 32)\nreorder(i, k1, k0, j)\n"
                                                  "parallelize(i, GPUWarp, NoRaces)\n"
                                                  "parallelize(k1, GPUThread, NoRaces)\nunroll(k0, 2)");
  CompileOptions unguarded;
  unguarded.gpuSpeculativeJamLoads = true;
  Lowered speculative = lowerForCuda(program, unguarded);
  EXPECT_TRUE(contains(speculative.cuda, "tC_u1 += __dmul_rn(A_vals[pA2], B_vals[(((int64_t)(jA) * "
                                         "(int64_t)(B2_dimension)) + (int64_t)((tcc_live1 ? k_u1 : (tcc_live0 ? k_u0 "
                                         ": k_u1))))]);"))
      << speculative.cuda;
  EXPECT_FALSE(contains(speculative.cuda, "if (tcc_live1) {\n              tC_u1 +=")) << speculative.cuda;
  EXPECT_TRUE(contains(speculative.cuda, "if (tcc_live1) {\n            C_vals[")) << speculative.cuda;
  Lowered before = lowerForCuda(program);
  EXPECT_TRUE(contains(before.cuda, "if (tcc_live1) {\n              tC_u1 +=")) << before.cuda;
}

TEST(UnrollAndJam, ALoopWithoutAnInnerLoopIsOnlyUnrolled) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "reorder(i, k, j)\nsplit(k, k0, k1, 32)\n"
                                                     "parallelize(i, GPUWarp, NoRaces)\n"
                                                     "parallelize(k0, GPUThread, NoRaces)\nunroll(j, 4)"));
  EXPECT_FALSE(contains(lowered.cuda, "unroll and jam")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "#pragma unroll 4")) << lowered.cuda;
}

TEST(UnrollAndJam, ALoopThatAccumulatesIntoTheOutputIsNotJammed) {
  // k0 inside j: each iteration adds into C, whose order must stay.
  Lowered lowered = lowerForCuda(withSchedule(kSpmm, "split(k, k0, k1, 32)\nreorder(i, k1, j, k0)\n"
                                                     "parallelize(i, GPUWarp, NoRaces)\n"
                                                     "parallelize(k1, GPUThread, NoRaces)\nunroll(j, 2)"));
  EXPECT_FALSE(contains(lowered.cuda, "unroll and jam")) << lowered.cuda;
}

TEST(DefaultMapping, AStatementWithoutSparseRowsGetsAThreadPerIteration) {
  Lowered lowered = lowerForCuda("tensor y(I) : dense\ntensor x(I) : dense\ny(i) = x(i) * x(i)\n");
  EXPECT_EQ(lowered.gpuFunctions.at(0).kernels.at(0).unit(), ir::imp::LoopKind::GpuThread);
}

TEST(GpuSchedules, AtomicsBecomeAtomicAdds) {
  Lowered lowered =
      lowerForCuda(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(lowered.cuda, "atomicAdd(&y_vals[")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "tcc_warp_sum(t")) << lowered.cuda;
}

TEST(GpuSchedules, AReductionOverABlocksThreadsGoesThroughSharedMemory) {
  Lowered lowered =
      lowerForCuda(withSchedule(kSpmv, "parallelize(i, GPUBlock, NoRaces)\nparallelize(j, GPUThread, Temporary)"));
  EXPECT_TRUE(contains(lowered.cuda, "_before + tcc_block_sum(")) << lowered.cuda;
  EXPECT_TRUE(contains(lowered.cuda, "if (threadIdx.x == 0) {")) << lowered.cuda;
}

TEST(GpuSchedules, ASplitMapsBlocksAndThreadsWithTheSplitsBlockSize) {
  Lowered lowered = lowerForCuda(withSchedule(
      kSpmv, "split(i, i0, i1, 64)\nparallelize(i0, GPUBlock, NoRaces)\nparallelize(i1, GPUThread, NoRaces)"));
  const auto& kernel = lowered.gpuFunctions.at(0).kernels.at(0);
  EXPECT_EQ(kernel.unit(), ir::imp::LoopKind::GpuBlock);
  EXPECT_EQ(kernel.threadsPerBlock, 64);
  EXPECT_TRUE(contains(lowered.cuda, "(int32_t)(threadIdx.x); ")) << lowered.cuda;
}

TEST(GpuSchedules, AGpuUnitOnTheCpuTargetIsRefusedAtItsLine) {
  std::string message;
  try {
    compile(Program::fromText(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)"), "test.tc"));
  } catch (const std::exception& error) {
    message = error.what();
  }
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(i, GPUWarp, NoRaces): GPU parallel units need the "
                                "CUDA target")) << message;
}

// (Units that can be put in order are: gpu_unit_order_test.cpp. A row's
// nonzeros are no rectangle with the rows: two thread loops stay nested.)
TEST(GpuSchedules, UnitsNestedOutOfOrderAreRefusedAtTheirLine) {
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(i, GPUThread, NoRaces)\n"
                                                        "parallelize(j, GPUThread, ParallelReduction)"));
  EXPECT_TRUE(contains(message, "test.tc:8:1: error: parallelize(j, GPUThread, ParallelReduction): GPU units nest as "
                                "GPUBlock, then GPUWarp, then GPUThread")) << message;
}

// (A row per GPU thread, warp or block assembles; gpu_sparse_outputs_test.cpp.)
// A CSR row split among a warp's lanes compiles (each lane a slice of the
// row's columns: gpu_lane_sliced_rows_test.cpp); among a block's threads,
// or a DCSR row among a warp's lanes, it stays refused at the inner loop.
TEST(GpuSchedules, ASparseOutputsRowSplitAmongLanesCompilesForCsrRowsOnly) {
  const std::string csr = "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) + C(i, j)\n";
  EXPECT_EQ(cudaErrorOf(withSchedule(csr, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)")), "");
  std::string message =
      cudaErrorOf(withSchedule(csr, "parallelize(i, GPUBlock, NoRaces)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(j, GPUThread, NoRaces): output A is sparse")) << message;
  message = cudaErrorOf(withSchedule(
      "tensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\nA(i, j) = B(i, j) + C(i, j)\n",
      "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(j, GPUThread, NoRaces): output A is sparse")) << message;
}

TEST(GpuSchedules, ARaceWithoutAStrategyIsRefused) {
  std::string message =
      cudaErrorOf(withSchedule(kSpmv, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:8:1: error: parallelize(j, GPUThread, NoRaces): j is summed into y")) << message;
}

TEST(GpuSchedules, AReductionOverThreadsOutsideAWarpOrBlockIsRefused) {
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(j, GPUThread, ParallelReduction)"));
  EXPECT_TRUE(contains(message, "must be a GPUThread loop inside a GPUWarp or GPUBlock loop")) << message;
}

TEST(GpuSchedules, WorkOutsideTheGpuLoopsIsRefused) {
  // Rows to threads on the inner loop only: the row loop would run on the host.
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(j, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(message, "every loop must run inside a GPU loop")) << message;
}

TEST(GpuSchedules, ASumIntoAHostScalarIsRefusedNotLost) {
  std::string message = cudaErrorOf(withSchedule("tensor a : dense\ntensor x(I) : dense\na = x(i) * x(i)\n",
                                                 "parallelize(i, GPUThread, IgnoreRaces)"));
  EXPECT_TRUE(contains(message, "the GPU kernel updates")) << message;
}

TEST(GpuSchedules, CpuThreadsOnTheCudaTargetAreRefused) {
  std::string message = cudaErrorOf(withSchedule(kSpmv, "parallelize(i, CPUThread, NoRaces)"));
  EXPECT_TRUE(contains(message, "test.tc:7:1: error: parallelize(i, CPUThread, NoRaces): CPU parallel units need the "
                                "cpu target")) << message;
}

// Loops on CPU threads or in vector lanes never reach the CUDA printer from
// a program: every CPU unit's parallelize is refused at the command, also
// where it would bring more CPU loops (a per-thread sparse workspace's
// merge, threads owning ranges of the output's rows, rows in chunks; a
// workspace a command asks for is refused at that command first).
TEST(GpuSchedules, CpuUnitsOnTheCudaTargetAreRefusedAtTheParallelize) {
  const std::string rows = "tensor Y(I, J) : csr\ntensor A(I, K) : csr\ntensor B(K, J) : csr\nY(i,j) = A(i,k) * B(k,j)\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kSpmv, "parallelize(i, CPUVector, NoRaces)"},
      {kSpmv, "parallelize(j, CPUVector, ParallelReduction)"},
      {kSpmv, "parallelize(i, DefaultUnit, NoRaces)"},
      {rows, "parallelize(i, CPUThread, NoRaces)"},
      {rows, "parallelize(k, CPUThread, Workspace)"},
  };
  for (const auto& [program, schedule] : cases) {
    std::string dsl = withSchedule(program, schedule);
    SCOPED_TRACE(dsl);
    std::string message = cudaErrorOf(dsl);
    std::string parallelize = schedule.substr(schedule.find("parallelize"));
    int line = static_cast<int>(std::count(dsl.begin(), dsl.end(), '\n')) - 1;
    EXPECT_TRUE(contains(message, "test.tc:" + std::to_string(line) + ":1: error: " + parallelize +
                                      ": CPU parallel units need the cpu target")) << message;
    EXPECT_TRUE(contains(message, "\n" + parallelize + "\n^\n")) << message;
  }
}

// A sparse workspace a command asks for whose where is outside every GPU
// loop, for a sparse output, is refused at that command on the cuda
// target, whether the schedule maps loops to the GPU or the default mapping
// would. (A dense output takes the results itself:
// gpu_workspace_into_dense_test.cpp; dense workspaces:
// gpu_workspaces_test.cpp; per GPU thread: gpu_sparse_workspaces_test.cpp.)
TEST(GpuSchedules, ASparseOutputsSparseWorkspaceACommandAsksForIsRefusedAtIt) {
  const std::string rows = "tensor Y(I) : sparse\ntensor A(I, J, K) : {dense, dense, dense}\nY(i) = A(i,j,k)\n";
  for (const std::string parallelize : {"", "\nparallelize(i, GPUThread, NoRaces)"}) {
    const std::string workspace = "sparse_workspace()";
    std::string dsl = withSchedule(rows, workspace + parallelize);
    SCOPED_TRACE(dsl);
    std::string message = cudaErrorOf(dsl);
    EXPECT_TRUE(contains(message, "test.tc:5:1: error: " + workspace + ": sparse workspaces are not supported on the "
                                  "cuda target")) << message;
    EXPECT_TRUE(contains(message, "\n" + workspace + "\n^\n")) << message;
  }
}

// A workspace tcc inserted itself (no command asked for it) under a GPU
// loop is described by what it is for, not by its name inside (w_A, ws_A).
TEST(GpuSchedules, AWorkspaceTccInsertedIsDescribedInWords) {
  const std::string rowWise = "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\n"
                              "A(i,j) = B(i,k) * C(k,j)\n";
  const std::string outer = "tensor A(I, J) : csr\ntensor B(I, K) : dcsc\ntensor C(K, J) : dcsr\n"
                            "A(i,j) = B(i,k) * C(k,j)\n";
  struct Case {
    std::string dsl, message;
  };
  const std::vector<Case> cases = {
      {withSchedule(rowWise, "parallelize(k, GPUThread, Atomics)"),
       "test.tc:6:1: error: parallelize(k, GPUThread, Atomics): the dense workspace tcc inserted for A would be "
       "shared by GPU threads; on the cuda target only dense workspaces of dense results run on the GPU"},
      {outer,
       "test.tc:4:1: error: cannot compile `A(i,j) = B(i,k) * C(k,j)`: the default GPU mapping's "
       "parallelize(k, GPUThread, NoRaces): the sparse workspace tcc inserted for A would be shared by GPU threads"},
  };
  for (const auto& each : cases) {
    SCOPED_TRACE(each.dsl);
    std::string message = cudaErrorOf(each.dsl);
    EXPECT_TRUE(contains(message, each.message)) << message;
    EXPECT_FALSE(contains(message, "w_A")) << message;
  }
}

// A schedule with no parallelize gets the default mapping; where its
// parallelize does not fit the loops the schedule made, the refusal is the
// statement's and says whose parallelize it was (the user wrote none).
TEST(GpuSchedules, TheDefaultMappingsRefusalsSaySo) {
  std::string message = cudaErrorOf(withSchedule("tensor Y(I, J, K) : {dense, compressed, compressed}\n"
                                                 "tensor A(I, J, K, L) : {dense, dense, dense, dense}\n"
                                                 "Y(i,j,k) = A(i,j,k,l)\n",
                                                 "reorder(i, j, k, l)"));
  EXPECT_TRUE(contains(message, "test.tc:3:1: error: cannot compile `Y(i,j,k) = A(i,j,k,l)`: the default GPU "
                                "mapping's parallelize(i, GPUThread, NoRaces): output Y is sparse")) << message;
}

// Sums nested in the expression (`y(i) = A(i,j) * x(j) + b(i)`) go to
// scalar temporaries; under a GPU loop each lives in a register of the
// thread that owns the output's iteration.
constexpr const char* kSpmvPlusVector = R"(tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
tensor b(I) : dense

y(i) = A(i, j) * x(j) + b(i)
)";

TEST(DefaultMapping, NestedSumsOverSparseRowsGetAWarpPerRowAndItsLanesOverEachSum) {
  Lowered lowered = lowerForCuda(kSpmvPlusVector);
  EXPECT_TRUE(contains(decisionsOf(lowered), "default GPU mapping: one warp per row i, the sums nested in the "
                                             "expression in its registers, its lanes over each sum's loop (j; "
                                             "partial sums added with warp shuffles)")) << decisionsOf(lowered);
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 1u);
  EXPECT_EQ(lowered.gpuFunctions[0].kernels[0].unit(), ir::imp::LoopKind::GpuWarp);
  std::string kernel = kernelText(lowered.cuda, lowered.gpuFunctions[0].kernels[0].name);
  // The row's sum is declared in the kernel, per row, and added across lanes.
  EXPECT_TRUE(contains(kernel, "double tj_0 = 0.0;")) << kernel;
  EXPECT_TRUE(contains(kernel, "ttj = ttj_before + tcc_warp_sum(ttj);")) << kernel;
}

TEST(DefaultMapping, NestedSumsOverDenseLoopsGetAThreadPerIteration) {
  Lowered lowered = lowerForCuda("tensor y(I) : dense\ntensor D(I, K) : dense\ntensor z(K) : dense\n"
                                 "tensor b(I) : dense\ny(i) = D(i, k) * z(k) + b(i)\n");
  EXPECT_TRUE(contains(decisionsOf(lowered), "default GPU mapping: one thread per iteration of i, the sums nested "
                                             "in the expression in its registers")) << decisionsOf(lowered);
  EXPECT_EQ(lowered.gpuFunctions.at(0).kernels.at(0).unit(), ir::imp::LoopKind::GpuThread);
}

// A column-major output over a row-major sparse operand: the loops over the
// output's indices take the order B allows (i outside j), so the default
// mapping has a loop to map (it was refused: "the schedule visits j outside
// i, but B stores i above j").
TEST(DefaultMapping, NestedSumsTakeTheLoopOrderTheSparseOperandsAllow) {
  Lowered lowered = lowerForCuda("tensor Y(I, J) : {dense, dense} order (1,0) of float32\n"
                                 "tensor A(I, J, K) : dense of float32\ntensor B(I, J, K) : {dense, compressed, dense} "
                                 "of float32\ntensor E(K) : dense of float32\n"
                                 "Y(i,j) = B(i,j,k) * A(i,j,k) + A(i,j,k) / E(k)\n");
  EXPECT_TRUE(contains(decisionsOf(lowered), "default GPU mapping: one thread per iteration of i, the sums nested "
                                             "in the expression in its registers")) << decisionsOf(lowered);
  EXPECT_EQ(lowered.gpuFunctions.at(0).kernels.at(0).unit(), ir::imp::LoopKind::GpuThread);
}

// A schedule without parallelize may have split the output's loop: its
// outer part derives from the output's index, so its iterations write
// entries of their own.
TEST(DefaultMapping, NestedSumsUnderASplitGetAThreadPerOuterIteration) {
  Lowered lowered = lowerForCuda(withSchedule(kSpmvPlusVector, "split(i, i0, i1, 4)"));
  EXPECT_TRUE(contains(decisionsOf(lowered), "default GPU mapping: one thread per iteration of i0, the sums nested "
                                             "in the expression in its registers")) << decisionsOf(lowered);
  EXPECT_EQ(lowered.gpuFunctions.at(0).kernels.at(0).unit(), ir::imp::LoopKind::GpuThread);
}

// A scalar result has no loop around its sums to give the threads: each
// sum goes to a scalar of its own in device memory (gpu_scalar_sums_test.cpp);
// a schedule keeps the statement whole, and the refusal says why.
TEST(DefaultMapping, NestedSumsIntoAScalarGoToDeviceScalarsOrAreRefusedWithTheReason) {
  const std::string program = "tensor a : dense\ntensor x(I) : dense\ntensor z(J) : dense\na = x(i) * x(i) + z(j)\n";
  Lowered lowered = lowerForCuda(program);
  ASSERT_EQ(lowered.statements.size(), 3u);
  EXPECT_EQ(ir::toString(lowered.statements[2].statement), "a = a_sum + a_sum_2");
  std::string message = cudaErrorOf(program + "schedule {\n  split(i, i0, i1, 4)\n}\n");
  EXPECT_TRUE(contains(message, "test.tc:4:1: error: cannot compile `a = x(i) * x(i) + z(j)`: the default GPU mapping: "
                                "the sums nested in `x(i) * x(i) + z(j)` go to scalar temporaries outside every loop, "
                                "on the host, where no GPU thread can add to them")) << message;
}

TEST(GpuSchedules, AtomicsIntoATemporaryAddTheLanesWithShuffles) {
  Lowered lowered = lowerForCuda(
      withSchedule(kSpmvPlusVector, "parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, Atomics)"));
  EXPECT_TRUE(contains(lowered.cuda, "ttj = ttj_before + tcc_warp_sum(ttj);")) << lowered.cuda;
  EXPECT_FALSE(contains(lowered.cuda, "atomicAdd")) << lowered.cuda;
}

TEST(GpuSchedules, ATemporarysSumOverABlocksThreadsGoesThroughSharedMemory) {
  Lowered lowered = lowerForCuda(
      withSchedule(kSpmvPlusVector, "parallelize(i, GPUBlock, NoRaces)\nparallelize(j, GPUThread, Temporary)"));
  EXPECT_TRUE(contains(lowered.cuda, "ttj = ttj_before + tcc_block_sum(ttj);")) << lowered.cuda;
}

// The sum into a temporary races where its loop is on the GPU without a
// reduction, or can only reduce across a warp's lanes or a block's threads.
TEST(GpuSchedules, SumsIntoATemporaryThatCannotReduceAreRefusedAtTheParallelize) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, NoRaces)",
       "test.tc:9:1: error: parallelize(j, GPUThread, NoRaces): j is summed into tj (the scalar temporary of a sum "
       "below the statement's top), so GPU iterations race on it; choose ParallelReduction"},
      {"parallelize(i, GPUWarp, NoRaces)\nparallelize(j, GPUThread, IgnoreRaces)",
       "test.tc:9:1: error: parallelize(j, GPUThread, IgnoreRaces): j is summed into tj"},
      {"parallelize(i, GPUBlock, NoRaces)\nparallelize(j, GPUWarp, Atomics)",
       "test.tc:9:1: error: parallelize(j, GPUWarp, Atomics): j is summed into tj (the scalar temporary of a sum "
       "below the statement's top), which is in registers"},
      {"parallelize(j, GPUThread, ParallelReduction)",
       "test.tc:8:1: error: parallelize(j, GPUThread, ParallelReduction): j is summed into tj (the scalar temporary "
       "of a sum below the statement's top), which is declared outside the GPU loops, on the host"},
  };
  for (const auto& [schedule, expected] : cases) {
    std::string dsl = withSchedule(kSpmvPlusVector, schedule);
    SCOPED_TRACE(dsl);
    std::string message = cudaErrorOf(dsl);
    EXPECT_TRUE(contains(message, expected)) << message;
  }
}

// pos over A in a sum whose other operands have entries A lacks (a union):
// position loops that are a kernel's GPU loops leave the rest to a kernel
// of their own, a thread per row; inside a GPU loop the rest runs in the
// threads that ran the positions.
constexpr const char* kUnion = R"(tensor Y(I, J) : dense
tensor A(I, J) : csr
tensor B(I, J) : dense

Y(i, j) = A(i, j) - 2 * B(i, j)
)";

// Scalars alone have no loop to map: one GPU thread computes them.
TEST(DefaultMapping, AStatementOfScalarsGetsOneThread) {
  Lowered lowered = lowerForCuda("tensor a : dense\ntensor b : dense\ntensor c : dense\na = b * c - 2\n");
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 1u);
  std::string kernel = kernelText(lowered.cuda, lowered.gpuFunctions[0].kernels[0].name);
  EXPECT_TRUE(contains(kernel, "thread < 1;")) << kernel;
  EXPECT_TRUE(contains(kernel, "a_vals[0LL] = ")) << kernel;
}

TEST(PosOverAUnion, PositionKernelsLeaveTheRestToAKernelOfItsOwn) {
  Lowered lowered = lowerForCuda(withSchedule(kUnion, "fuse(i, j, ij)\npos(ij, ijp, A(i, j))\n"
                                                      "split(ijp, ijp0, ijp1, 128)\n"
                                                      "parallelize(ijp0, GPUBlock, NoRaces)\n"
                                                      "parallelize(ijp1, GPUThread, NoRaces)"));
  const auto& kernels = lowered.gpuFunctions.at(0).kernels;
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].unit(), ir::imp::LoopKind::GpuBlock);
  EXPECT_EQ(kernels[1].unit(), ir::imp::LoopKind::GpuThread);
  // The second skips A's coordinates: B's alone where A has none.
  std::string rest = kernelText(lowered.cuda, kernels[1].name);
  EXPECT_TRUE(contains(rest, "tcc_lower_bound(A2_crd")) << rest;
  EXPECT_TRUE(contains(rest, "= -(__dmul_rn(2LL, B_vals[")) << rest;
}

TEST(PosOverAUnion, InAThreadTheRestFollowsThePositions) {
  Lowered lowered = lowerForCuda(withSchedule(kUnion, "pos(j, jp, A(i, j))\nparallelize(i, GPUThread, NoRaces)"));
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 1u);
  std::string kernel = kernelText(lowered.cuda, lowered.gpuFunctions[0].kernels[0].name);
  EXPECT_TRUE(contains(kernel, "// iterate jp")) << kernel;
  EXPECT_TRUE(contains(kernel, "tcc_lower_bound(A2_crd")) << kernel;
}

// A row of the kernel after the positions shares columns with other rows:
// its threads add atomically.
TEST(PosOverAUnion, TheRestAddsAtomicallyWhereItsThreadsShareEntries) {
  Lowered lowered = lowerForCuda(
      "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor x(I) : dense\n"
      "y(j) = (A(i, j) + B(i, j)) * x(i)\nschedule {\nfuse(i, j, ij)\npos(ij, ijp, A(i, j))\n"
      "parallelize(ijp, GPUThread, Atomics)\n}\n");
  const auto& kernels = lowered.gpuFunctions.at(0).kernels;
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_TRUE(contains(kernelText(lowered.cuda, kernels[1].name), "atomicAdd(&y_vals[")) << lowered.cuda;
}

TEST(PosOverAUnion, WhereTheRestMergesSparseOperandsItsThreadsSearchThem) {
  // The rest merges C's coordinates with the dense D's: each thread of the
  // kernel after the positions searches C for its i (a cursor carried
  // across rows would be shared by the threads).
  Lowered lowered = lowerForCuda(withSchedule(
      "tensor Y(I) : dense\ntensor B(I) : sparse\ntensor C(I) : sparse\ntensor D(I) : dense\n"
      "Y(i) = B(i) + C(i) + D(i)\n",
      "pos(i, ip, B(i))\nparallelize(ip, GPUThread, NoRaces)"));
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 2u);
  EXPECT_TRUE(contains(lowered.cudaKernels, "int64_t pC1_0_at = tcc_lower_bound(C1_crd, pC1_0, pC1_end_0, i);"))
      << lowered.cudaKernels;
}

class GpuTestProgramKernels : public ::testing::TestWithParam<std::string> {};

// Each program the GPU tests run (gpu_programs_test.cpp) lowers for the
// cuda target, and NVRTC compiles its kernels.
TEST_P(GpuTestProgramKernels, CompileWithNvrtcAlone) {
  auto path = programPath(GetParam());
  Lowered lowered = lowerProgram(Program::fromFile(path.string()));
  ASSERT_EQ(lowered.target, frontend::Target::Cuda);
  ASSERT_FALSE(lowered.gpuFunctions.at(0).kernels.empty());
  std::string kernels;
  for (const auto& kernel : lowered.gpuFunctions[0].kernels) kernels += kernelText(lowered.cuda, kernel.name);
  // A nested sum's temporary is declared in the kernel; a pos over a
  // union leaves A's coordinates to a search.
  if (GetParam().rfind("nested_", 0) == 0)
    EXPECT_TRUE(contains(kernels, " = 0.0") || contains(kernels, " = (float)(0.0)")) << kernels;
  else if (GetParam().rfind("pos_union_", 0) == 0)
    EXPECT_TRUE(contains(kernels, "tcc_lower_bound(")) << kernels;
  else if (GetParam().rfind("sparse_workspace_into_dense_", 0) == 0)
    EXPECT_FALSE(contains(kernels, "tcc_gpu_sparse_workspace_merge(")) << kernels;  // the output takes the results
  else if (GetParam().rfind("sparse_workspace_", 0) == 0)
    EXPECT_TRUE(contains(kernels, "tcc_gpu_sparse_workspace_merge(")) << kernels;
  else if (GetParam().rfind("term_sums_", 0) == 0)
    EXPECT_GE(lowered.gpuFunctions[0].kernels.size(), 2u);  // a kernel per term's nest
  else if (GetParam().rfind("workspace_shared_", 0) == 0)
    EXPECT_EQ(lowered.gpuFunctions[0].host.gpuSharedWorkspaces.size(), 1u);
  else if (GetParam().rfind("workspace_", 0) == 0)
    EXPECT_TRUE(contains(kernels, "tcc_gpu_thread_index()")) << kernels;
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  std::string cubin = rt::cuda::compileToCubin(lowered.cudaKernels, "sm_90", GetParam() + ".cu");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuTestProgramKernels, ::testing::ValuesIn(programsNamed()),
                         [](const auto& info) { return info.param; });

// What the printer does if lowering ever hands it such a loop: an internal
// error that says so, not code.
TEST(GpuSchedules, ACpuLoopGivenToTheCudaPrinterIsAnInternalError) {
  using namespace ir::imp;
  for (LoopKind cpu : {LoopKind::Parallel, LoopKind::Vectorized}) {
    Expr i = Var::make("i", Type::int32()), j = Var::make("j", Type::int32());
    Expr dim = Var::make("y1_dimension", Type::int32());
    Expr vals = Var::make("y_vals", Type::pointerTo(Type::float64()));
    Stmt store = Store::make(vals, Cast::make(Type::int64(), i), FloatImm::make(1.0, Type::float64()), true, true);
    Function function;
    function.name = "k";
    function.parameters = {TensorParameter{"y", 1, ScalarKind::Float64, true}};
    function.body = Block::make(
        {Declare::make(dim, TensorProperty::make("y", TensorField::Dim, 0)),
         Declare::make(vals, TensorProperty::make("y", TensorField::Vals, 0)),
         For::make(i, IntImm::make(0), dim, For::make(j, IntImm::make(0), IntImm::make(4), store, cpu),
                   LoopKind::GpuThread),
         Return::make(IntImm::make(0))});
    lowering::GpuFunction gpu = lowering::splitIntoKernels(function);
    try {
      lowering::emitCudaKernels({gpu});
      ADD_FAILURE() << "printed";
    } catch (const std::logic_error& error) {
      EXPECT_EQ(std::string(error.what()).rfind("internal: the CUDA printer was given a loop ", 0), 0u) << error.what();
      EXPECT_TRUE(contains(error.what(), " over j, which lowering for the cuda target never makes")) << error.what();
    }
  }
}

template <typename T> T argumentAs(const detail::KernelLaunch& launch, size_t k) {
  T value;
  std::memcpy(&value, launch.arguments.at(k).data(), sizeof value);
  return value;
}

// The host part of CSR SpMV on fake device tensors: one launch, with
// blocks for every row's warp and the tensors' own fields as arguments.
TEST(HostPart, LaunchesOneWarpPerRowWithTheTensorsFields) {
  Lowered lowered = lowerForCuda(kSpmv);
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  std::vector<long long> pos(1002, 0);  // no nonzeros
  int crd[1] = {0};
  float values[1] = {0};
  tcc_tensor y{}, a{}, x{};
  y.order = 1, y.dims[0] = 1001, y.vals = values;
  a.order = 2, a.dims[0] = 1001, a.dims[1] = 77, a.levels[1].pos = pos.data(), a.levels[1].crd = crd, a.vals = values;
  a.levels[0].size = 1001, a.levels[1].kind = TCC_LEVEL_COMPRESSED, a.levels[1].size = 77;
  x.order = 1, x.dims[0] = 77, x.vals = values;
  std::vector<detail::KernelLaunch> launches;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch& launch) { launches.push_back(launch); };
  device.read = [](void* host, const void* address, size_t bytes) { std::memcpy(host, address, bytes); };
  int32_t status = detail::runHostPart(function, {&y, &a, &x}, device);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(launches.size(), 1u);
  const auto& kernel = *launches[0].kernel;
  EXPECT_EQ(launches[0].blocks, (1001 + kernel.iterationsPerBlock() - 1) / kernel.iterationsPerBlock());
  ASSERT_EQ(launches[0].arguments.size(), kernel.parameters.size());
  for (size_t k = 0; k < kernel.parameters.size(); ++k) {
    const std::string& name = kernel.parameters[k].as<ir::imp::Var>()->name;
    if (name == "y1_dimension") EXPECT_EQ(argumentAs<int32_t>(launches[0], k), 1001);
    if (name == "A2_pos") EXPECT_EQ(argumentAs<void*>(launches[0], k), static_cast<void*>(pos.data()));
    if (name == "A2_crd") EXPECT_EQ(argumentAs<void*>(launches[0], k), static_cast<void*>(crd));
  }
}

TEST(HostPart, NothingIsLaunchedForAnEmptyOutput) {
  Lowered lowered = lowerForCuda(kSpmv);
  tcc_tensor y{}, a{}, x{};
  long long pos[1] = {0};
  y.order = 1, a.order = 2, x.order = 1, a.levels[1].pos = pos;
  int launches = 0;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch&) { ++launches; };
  device.read = [](void* host, const void* address, size_t bytes) { std::memcpy(host, address, bytes); };
  detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &a, &x}, device);
  EXPECT_EQ(launches, 0);
}

// SDDMM over B's positions: the host reads the ends of the position range
// to size the launch, from one copy of B's pos array (with no launcher to
// keep it, it is copied whole for this run).
TEST(HostPart, ReadsAPositionRangeToSizeTheLaunch) {
  auto path = std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu" / "sddmm_pos.tc";
  Lowered lowered = lowerProgram(Program::fromFile(path.string()));
  long long pos[4] = {0, 30, 30, 101};  // 3 rows, the second empty: 101 nonzeros
  double values[1] = {0};
  tcc_tensor a{}, b{}, c{}, d{};
  a.order = 2, a.dims[0] = 3, a.dims[1] = 50, a.vals = values;
  b.order = 2, b.dims[0] = 3, b.dims[1] = 50, b.levels[1].pos = pos, b.vals = values;
  b.levels[0].size = 3, b.levels[1].kind = TCC_LEVEL_COMPRESSED, b.levels[1].size = 50;
  c.order = 2, c.dims[0] = 3, c.dims[1] = 5, c.vals = values;
  d.order = 2, d.dims[0] = 5, d.dims[1] = 50, d.vals = values;
  std::vector<detail::KernelLaunch> launches;
  int reads = 0;
  detail::HostPartDevice device;
  device.launch = [&](const detail::KernelLaunch& launch) { launches.push_back(launch); };
  device.read = [&](void* host, const void* address, size_t bytes) {
    ++reads;
    std::memcpy(host, address, bytes);
  };
  EXPECT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&a, &b, &c, &d}, device), 0);
  EXPECT_EQ(reads, 1);
  ASSERT_EQ(launches.size(), 1u);
  // ceil(101 / 8) = 13 groups of positions, one per warp, 8 warps a block.
  EXPECT_EQ(launches[0].blocks, 2);
}

std::vector<std::string> gpuExamples() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu"))
    if (entry.path().extension() == ".tc") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GpuExampleKernels : public ::testing::TestWithParam<std::string> {};

// NVRTC needs no GPU: the kernels `tcc run --target cuda` would load compile
// to a cubin here too.
TEST_P(GpuExampleKernels, CompileWithNvrtcAlone) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  auto path = std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu" / (GetParam() + ".tc");
  Lowered lowered = lowerProgram(Program::fromFile(path.string()));
  ASSERT_EQ(lowered.target, frontend::Target::Cuda);
  std::string cubin = rt::cuda::compileToCubin(lowered.cudaKernels, "sm_90", GetParam() + ".cu");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
}

// The launcher in the .cu file runs on the host, where the tensors' arrays
// are device addresses: it may read one of their entries only through
// tcc_read_device (a copy), never by subscripting the array (a compressed top
// level's B1_pos[0] sizing a launch, say).
TEST_P(GpuExampleKernels, TheLauncherNeverSubscriptsADeviceArray) {
  auto path = std::filesystem::path(TCC_SOURCE_DIR) / "examples" / "gpu" / (GetParam() + ".tc");
  Lowered lowered = lowerProgram(Program::fromFile(path.string()));
  for (const auto& function : lowered.gpuFunctions) {
    size_t start = lowered.cuda.find("extern \"C\" int32_t " + function.host.name + "(");
    ASSERT_NE(start, std::string::npos) << function.host.name;
    size_t end = lowered.cuda.find("\n}\n", start);
    std::string launcher = lowered.cuda.substr(start, end - start);
    for (const char* array : {"_pos[", "_crd[", "_vals["})
      EXPECT_EQ(launcher.find(array), std::string::npos) << "the launcher subscripts a device array:\n" << launcher;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuExampleKernels, ::testing::ValuesIn(gpuExamples()),
                         [](const auto& info) { return info.param; });

// The disk cache keeps one cubin per architecture (the key holds it); a
// repeated request is answered from memory, writing nothing new.
TEST(Nvrtc, CubinsAreCachedOnDiskPerArchitecture) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  namespace fs = std::filesystem;
  fs::path directory = fs::temp_directory_path() / ("tcc_cubin_cache_" + std::to_string(::getpid()));
  fs::remove_all(directory);
  ::setenv("TCC_CACHE_DIR", directory.c_str(), 1);
  ::unsetenv("TCC_NO_DISK_CACHE");
  // A kernel text unique to this run, so no earlier entry can answer.
  std::string kernels = lowerForCuda(kSpmv).cudaKernels + "// run " + std::to_string(::getpid()) + "\n";
  std::string first = detail::cubinFor(kernels, "sm_90", true);
  auto files = [&] {
    size_t n = 0;
    for (const auto& entry : fs::directory_iterator(directory)) n += entry.path().extension() == ".cubin";
    return n;
  };
  EXPECT_EQ(files(), 1u);
  EXPECT_EQ(detail::cubinFor(kernels, "sm_90", true), first);  // from memory
  EXPECT_EQ(files(), 1u);
  std::string other = detail::cubinFor(kernels, "sm_80", true);
  EXPECT_EQ(files(), 2u);
  EXPECT_NE(other, first);
  ::unsetenv("TCC_CACHE_DIR");
  fs::remove_all(directory);
}

TEST(Nvrtc, ACompileErrorCarriesTheLog) {
  if (!rt::cuda::builtWithCuda()) GTEST_SKIP() << "built without the CUDA toolkit";
  try {
    rt::cuda::compileToCubin("extern \"C\" __global__ void k() { undeclared(); }", "sm_90", "broken.cu");
    FAIL() << "expected a CudaError";
  } catch (const rt::cuda::CudaError& error) {
    EXPECT_TRUE(contains(error.what(), "NVRTC could not compile")) << error.what();
    EXPECT_TRUE(contains(error.what(), "undeclared")) << error.what();
  }
}

}  // namespace
}  // namespace tcc::test
