// Sparse outputs under GPU loops, without a GPU. A GPU loop over a CSR
// output's rows assembles them as CPU threads do, in two passes: a kernel
// counts each row's entries into pos, GPU loops turn the counts into row
// offsets (a scan of tiles, one a thread, of their totals, then a fixup;
// gpu_prefix_sums.cpp), the host allocates the columns and values (arrays it hands
// to the output), and a second kernel fills each row from its offset. An
// output whose first level is compressed (a sparse vector, DCSR, COO
// assembled as DCSR) under a GPU loop over its first index goes the same
// way, each coordinate counting its appends to every level into offsets of
// its own (the CPU threads' ranges, one coordinate each).
// Checked here: the kernels and the host part as lowered, and the lowered
// IR itself run on the CPU (each GPU
// loop's iterations one after another, printed by the C++ backend) against
// the dense reference on random inputs and real matrices. What the GPU
// still cannot assemble (a dense level above two compressed ones, a DCSR
// row's entries split among threads) is refused at the parallelize. (NVRTC compiles the
// kernels of programs/sparse_out_*.tc in gpu_lowering_test.cpp; on a GPU
// they run against the dense reference, gpu_programs_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "cuda_lowering.h"
#include "cuda_programs.h"
#include "dense_of.h"
#include "gpu_host_part.h"
#include "serial_gpu_loops.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/random.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

const std::string kCsrUnion = "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n"
                              "Y(i, j) = A(i, j) + B(i, j)\n";

std::string withSchedule(const std::string& statement, const std::string& schedule) {
  return statement + "schedule {\n" + schedule + "\n}\n";
}

// The kernels of a prefix sum: three levels of tiles scanned a thread
// each and their fixups, the last level's totals on one thread.
constexpr size_t kScanKernels = 7;

TEST(GpuSparseOutputs, ACsrRowPerThreadIsCountedScannedAndFilled) {
  Lowered lowered = lowerForCuda(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"));
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), 2 + kScanKernels);
  const std::string& kernels = lowered.cudaKernels;
  // The counting kernel stores each row's size; the fill starts each row
  // at its offset.
  EXPECT_TRUE(contains(kernels, "int64_t pY2_row = 0LL;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(pY1 + 1LL)] = pY2_row;")) << kernels;
  EXPECT_TRUE(contains(kernels, "int64_t pY2_row_0 = Y2_pos[pY1_0];")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_crd[pY2_row_0] = j_2;\n        Y_vals[pY2_row_0] = (A_vals[pA2_0] + B_vals[pB2_0]);"))
      << kernels;
  // The prefix sum: tiles of 128 row sizes scanned in place, a GPU thread
  // each; the rows past the first tile add the totals of the tiles before.
  EXPECT_TRUE(contains(kernels, "Y2_pos_running += Y2_pos[(scan_k + 1LL)];")) << kernels;
  // (Every level's totals in one array, each level's from its own offset.)
  EXPECT_TRUE(contains(kernels, "Y2_pos_tile_totals[(scan_tile + 1LL)] = Y2_pos_running;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(scan_entry + 1LL)] += Y2_pos_tile_totals[(scan_entry / 128LL)];"))
      << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos_tile_totals[(Y2_pos_totals2_offset + (scan_tile_0 + 1LL))] = "))
      << kernels;
  // The last level's totals alone, where there are two or more.
  EXPECT_EQ(count(kernels, "thread < ((scan_counts_2 > 1LL) ? 1 : 0); thread += "), 1u) << kernels;
  EXPECT_EQ(count(kernels, "// co-iterate j"), 6u) << kernels;  // both rows, then each alone: counted, then filled
  // The host reads the entries' count back between the two kernels.
  EXPECT_TRUE(contains(lowered.cuda, "pY2 = tcc_read_device(Y2_pos, (int64_t)(Y1_dimension));")) << lowered.cuda;
  // The host allocates the output's arrays (pos zeroed) and hands them to it.
  const std::string& host = lowered.cuda;
  EXPECT_TRUE(contains(host, "if (cudaMalloc((void**)&Y2_pos, ")) << host;
  EXPECT_TRUE(contains(host, "if (cudaMemset(Y2_pos, 0, ")) << host;
  EXPECT_TRUE(contains(host, "if (cudaMalloc((void**)&Y2_crd, ")) << host;
  EXPECT_TRUE(contains(host, "if (cudaMalloc((void**)&Y_vals, ")) << host;
  EXPECT_TRUE(contains(host, "Y->levels[1].pos = (long long*)Y2_pos;")) << host;
  EXPECT_TRUE(contains(host, "Y->vals_size = pY2;")) << host;
  EXPECT_FALSE(contains(host, "tcc_buffers.hold(0, Y2_pos)")) << host;  // the output's: never freed here
}

// A fake device: launches recorded, allocations in host memory (the
// output's in `arrays`, the scans' tile totals and the coordinates' offsets
// in `workspaces`, how many of those zeroed in `zeroedWorkspaces`), reads
// of single entries from it.
struct RecordingDevice {
  std::vector<std::string> launched;
  std::vector<std::vector<unsigned char>> arrays;
  std::vector<std::unique_ptr<unsigned char[]>> workspaces;
  size_t zeroedWorkspaces = 0, released = 0;
  detail::HostPartDevice device;
  RecordingDevice() {
    device.launch = [this](const detail::KernelLaunch& launch) { launched.push_back(launch.kernel->name); };
    device.read = [](void* host, const void* address, size_t bytes) { std::memcpy(host, address, bytes); };
    device.allocate = [this](size_t bytes) {
      workspaces.push_back(std::make_unique<unsigned char[]>(std::max<size_t>(bytes, 1)));
      return static_cast<void*>(workspaces.back().get());
    };
    device.allocateZeroed = [this](size_t bytes) {
      ++zeroedWorkspaces;
      return device.allocate(bytes);
    };
    device.release = [this](void*) { ++released; };
    device.allocateOutput = [this](size_t bytes) {
      arrays.emplace_back(std::max<size_t>(bytes, 1), 0);
      return static_cast<void*>(arrays.back().data());
    };
  }
};

TEST(GpuSparseOutputs, TheHostPartLaunchesItsKernelsAndHandsItsArraysToTheOutput) {
  Lowered lowered = lowerForCuda(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"));
  tcc_tensor y = Tensor::emptyAssembledOutput({5, 7}, rt::TensorFormat::csr(), rt::ValueType::Float64);
  Tensor a = rt::pack(rt::randomUniform({5, 7}, 0.3, 1), rt::TensorFormat::csr(), rt::ValueType::Float64);
  Tensor b = rt::pack(rt::randomUniform({5, 7}, 0.3, 2), rt::TensorFormat::csr(), rt::ValueType::Float64);
  tcc_tensor av = a.abiView(), bv = b.abiView();
  RecordingDevice fake;
  fake.arrays.reserve(8);  // (the pointers handed out stay put)
  ASSERT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &av, &bv}, fake.device), 0);
  // (One tile of 5 rows: its scan is the whole scan; the levels below
  // scan nothing, and the fixups start past the first tile.)
  ASSERT_EQ(fake.launched.size(), 2u + 1u);
  // The scan's tile totals: one array for all levels, not zeroed.
  EXPECT_EQ(fake.workspaces.size(), 1u);
  EXPECT_EQ(fake.zeroedWorkspaces, 0u);
  // pos, then (after the count read back, 0 here: no kernel ran) crd and vals.
  ASSERT_EQ(fake.arrays.size(), 3u);
  EXPECT_EQ(fake.arrays[0].size(), 6u * sizeof(long long));
  EXPECT_EQ(static_cast<void*>(y.levels[1].pos), static_cast<void*>(fake.arrays[0].data()));
  EXPECT_EQ(static_cast<void*>(y.levels[1].crd), static_cast<void*>(fake.arrays[1].data()));
  EXPECT_EQ(y.vals, static_cast<void*>(fake.arrays[2].data()));
  EXPECT_EQ(y.vals_size, 0);
}

// Unscheduled, the host part picks a thread a row for short rows and a
// warp a row, its columns cut among the lanes, for long ones: each hands
// the output its three arrays; the warps' form launches its own kernels
// (the rows' offsets copied from their first lanes') and allocates the
// lanes' offsets (zeroed) beside the scan's totals.
TEST(GpuSparseOutputs, TheDefaultMappingsHostPartRunsTheFormTheRowLengthsPick) {
  Lowered lowered = lowerForCuda(kCsrUnion + "target cuda\n");
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  struct Case {
    int32_t columns;
    double density;
    bool lanes;
  };
  for (const Case& tested : {Case{7, 0.3, false}, Case{400, 0.5, true}}) {
    SCOPED_TRACE(tested.lanes ? "long rows" : "short rows");
    tcc_tensor y = Tensor::emptyAssembledOutput({5, tested.columns}, rt::TensorFormat::csr(), rt::ValueType::Float64);
    Tensor a = rt::pack(rt::randomUniform({5, tested.columns}, tested.density, 1), rt::TensorFormat::csr(),
                        rt::ValueType::Float64);
    Tensor b = rt::pack(rt::randomUniform({5, tested.columns}, tested.density, 2), rt::TensorFormat::csr(),
                        rt::ValueType::Float64);
    tcc_tensor av = a.abiView(), bv = b.abiView();
    RecordingDevice fake;
    fake.arrays.reserve(8);
    ASSERT_EQ(detail::runHostPart(function, {&y, &av, &bv}, fake.device), 0);
    EXPECT_EQ(fake.arrays.size(), 3u);
    EXPECT_EQ(static_cast<void*>(y.levels[1].pos), static_cast<void*>(fake.arrays[0].data()));
    EXPECT_EQ(static_cast<void*>(y.levels[1].crd), static_cast<void*>(fake.arrays[1].data()));
    // Counted, the scan (one tile of 5 rows; two of 160 lanes' counts and
    // the tile of their totals, then the fixups), the rows' offsets, filled.
    EXPECT_EQ(fake.launched.size(), tested.lanes ? 6u : 3u);
    EXPECT_EQ(fake.workspaces.size(), tested.lanes ? 2u : 1u);
    EXPECT_EQ(fake.zeroedWorkspaces, tested.lanes ? 1u : 0u);
    EXPECT_EQ(fake.released, fake.workspaces.size());
  }
}

// What a call costs the host besides its kernels: each allocation of
// device memory (and each zeroing, each free, each wait for the device)
// is a fixed cost that small outputs feel. Per call, a CSR output takes its
// three arrays (pos zeroed) and one array for all the scan's tile totals
// (unzeroed, released once); a DCSR output, its five arrays (both pos
// zeroed), each level's offsets of the row coordinates (zeroed) and the
// totals of both levels' offsets in one array. The same in the .cu
// launcher. (Before: an array of totals per level and scanned array,
// each zeroed: 3 more for CSR, 5 more for DCSR.)
TEST(GpuSparseOutputs, EachCallAllocatesOneArrayForAllTheScansTileTotals) {
  struct Case {
    std::string dsl;
    rt::TensorFormat format;
    size_t outputArrays, workspaces, zeroed, mallocs, memsets, launches;
  };
  const std::vector<Case> cases{
      {kCsrUnion, rt::TensorFormat::csr(), 3, 1, 0, 4, 1, 5},
      {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\nY(i, j) = A(i, j) + B(i, j)\n",
       rt::TensorFormat::dcsr(), 5, 3, 2, 8, 4, 6}};
  for (const Case& tested : cases) {
    SCOPED_TRACE(tested.format.toString());
    Lowered lowered = lowerForCuda(withSchedule(tested.dsl, "parallelize(i, GPUThread, NoRaces)"));
    // 300 rows: the scan's fixups run past the first tile.
    tcc_tensor y = Tensor::emptyAssembledOutput({300, 7}, tested.format, rt::ValueType::Float64);
    Tensor a = rt::pack(rt::randomUniform({300, 7}, 0.3, 1), tested.format, rt::ValueType::Float64);
    Tensor b = rt::pack(rt::randomUniform({300, 7}, 0.3, 2), tested.format, rt::ValueType::Float64);
    tcc_tensor av = a.abiView(), bv = b.abiView();
    RecordingDevice fake;
    fake.arrays.reserve(8);  // (the pointers handed out stay put)
    ASSERT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &av, &bv}, fake.device), 0);
    EXPECT_EQ(fake.arrays.size(), tested.outputArrays);
    EXPECT_EQ(fake.workspaces.size(), tested.workspaces);
    EXPECT_EQ(fake.zeroedWorkspaces, tested.zeroed);
    EXPECT_EQ(fake.released, tested.workspaces);
    // Counted, filled (DCSR: the first level's end stored too), and the
    // scan of 300 counts: 3 tiles scanned, their 3 totals (one tile: no
    // level below), the fixups past the first tile. (Before: the levels
    // below and the last level's serial sum launched as well, 2 more.)
    EXPECT_EQ(fake.launched.size(), tested.launches);
    const std::string& host = lowered.cuda;
    EXPECT_EQ(count(host, "if (cudaMalloc("), tested.mallocs) << host;
    EXPECT_EQ(count(host, "if (cudaMemset("), tested.memsets) << host;
    EXPECT_EQ(count(host, "tcc_buffers.release("), tested.workspaces) << host;
  }
}

TEST(GpuSparseOutputs, ADeviceThatAllocatesNoOutputsRefusesTheProgram) {
  Lowered lowered = lowerForCuda(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"));
  tcc_tensor y = Tensor::emptyAssembledOutput({5, 7}, rt::TensorFormat::csr(), rt::ValueType::Float64);
  Tensor a = rt::pack(rt::randomUniform({5, 7}, 0.3, 1), rt::TensorFormat::csr(), rt::ValueType::Float64);
  tcc_tensor av = a.abiView(), bv = a.abiView();
  RecordingDevice fake;
  fake.device.allocateOutput = nullptr;
  try {
    detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &av, &bv}, fake.device);
    ADD_FAILURE() << "ran";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "cannot allocate device memory for a sparse output")) << error.what();
  }
}

// What the GPU cannot assemble keeps its refusal.
TEST(GpuSparseOutputs, OutputsOtherThanRowsOrFirstCoordinatesAreStillRefused) {
  const std::string sparse = "and sparse outputs cannot be assembled under a GPU loop";
  // A dense level above two compressed ones: a row's second level would
  // need offsets of its own.
  EXPECT_TRUE(contains(cudaErrorOf(withSchedule("tensor Y(I, J, K) : {dense, compressed, compressed}\n"
                                                "tensor A(I, J, K) : {dense, compressed, compressed}\n"
                                                "Y(i, j, k) = 2 * A(i, j, k)\n",
                                                "parallelize(i, GPUThread, NoRaces)")),
                       "output Y is sparse, " + sparse));
  // A DCSR row's entries split among a warp's lanes (a CSR row's are:
  // gpu_lane_sliced_rows_test.cpp).
  EXPECT_TRUE(contains(cudaErrorOf(withSchedule("tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\n"
                                                "tensor B(I, J) : dcsr\nY(i, j) = A(i, j) + B(i, j)\n",
                                                "parallelize(i, GPUWarp, NoRaces)\n"
                                                "parallelize(j, GPUThread, NoRaces)")),
                       "parallelize(j, GPUThread, NoRaces): output Y is sparse, " + sparse));
  // A DCSR output's rows under a loop over its columns.
  EXPECT_TRUE(contains(cudaErrorOf(withSchedule("tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\n"
                                                "Y(i, j) = A(i, j)\n",
                                                "parallelize(j, GPUThread, NoRaces)")),
                       "output Y is sparse, " + sparse));
}

TEST(GpuSparseOutputs, ASparseVectorsCoordinatesAreCountedAndFilledAtTheirOffsets) {
  Lowered lowered = lowerForCuda(withSchedule("tensor y(I) : sparse\ntensor a(I) : sparse\ntensor b(I) : sparse\n"
                                              "y(i) = a(i) + b(i)\n",
                                              "parallelize(i, GPUThread, NoRaces)"));
  // Counted, scanned, the first level's end stored, filled.
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3 + kScanKernels);
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "int64_t py1_own = 0LL;")) << kernels;
  EXPECT_TRUE(contains(kernels, "y1_coordinate_offsets[((int64_t)(i) + 1LL)] = py1_own;")) << kernels;
  EXPECT_TRUE(contains(kernels, "y1_pos[1LL] = y1_coordinate_offsets[i_coordinates];")) << kernels;
  EXPECT_TRUE(contains(kernels, "int64_t py1_own_2 = y1_coordinate_offsets[(int64_t)(i_0)];")) << kernels;
  EXPECT_TRUE(contains(kernels, "y1_crd[py1_own_2] = i_0;")) << kernels;
  // The offsets are device memory of the call, zeroed, freed after the fill.
  const std::string& host = lowered.cuda;
  EXPECT_TRUE(contains(host, "tcc_buffers.hold(0, y1_coordinate_offsets);")) << host;
  EXPECT_TRUE(contains(host, "if (tcc_buffers.release(0) != cudaSuccess) return 2;  // y1_coordinate_offsets")) << host;
  EXPECT_TRUE(contains(host, "py1 = tcc_read_device(y1_coordinate_offsets, i_coordinates);")) << host;
  EXPECT_TRUE(contains(host, "y->levels[0].pos = (long long*)y1_pos;")) << host;
}

TEST(GpuSparseOutputs, ADcsrRowsSegmentEndsAreStoredAtTheRowsOffsets) {
  Lowered lowered = lowerForCuda(withSchedule("tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n"
                                              "Y(i, j) = A(i, j) + B(i, j)\n",
                                              "parallelize(i, GPUThread, NoRaces)"));
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3 + kScanKernels);
  const std::string& kernels = lowered.cudaKernels;
  // Both levels counted per row coordinate, then both prefix sums, in the
  // same kernels.
  EXPECT_TRUE(contains(kernels, "Y1_coordinate_offsets_running += Y1_coordinate_offsets[(scan_k + 1LL)];\n"
                                "      Y1_coordinate_offsets[(scan_k + 1LL)] = Y1_coordinate_offsets_running;\n"
                                "      Y2_coordinate_offsets_running += "))
      << kernels;
  EXPECT_TRUE(contains(kernels, "Y1_coordinate_offsets[((int64_t)(i) + 1LL)] = pY1_own;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_coordinate_offsets[((int64_t)(i) + 1LL)] = pY2_own;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(pY1_own")) << kernels;  // a row's end, at its offset
  // The second level's pos allocated zeroed once the rows are counted.
  EXPECT_TRUE(contains(lowered.cuda, "if (cudaMemset(Y2_pos, 0, ")) << lowered.cuda;
}

class GpuSparseOutputPrograms : public ::testing::TestWithParam<std::string> {};

// Inputs: random (a single entry, rows past a block, every other row
// empty, an empty operand) and real matrices as A (the other operands
// random, of A's shape).
TEST_P(GpuSparseOutputPrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile(programPath(GetParam()).string());
  Lowered lowered = lowerForCuda(programText(GetParam()));
  // Count, prefix sum (the first level's end stored too, or the rows'
  // offsets taken from their lanes' slices), fill.
  const bool firstCompressed = !lowered.statements.at(0).computedOutput.format().level(0).isDense();
  // (The default mapping of a CSR output lowers both a thread a row and
  // a warp a row, picked per input by A's row lengths.)
  const bool laneSlices = contains(GetParam(), "lane_slices");
  const bool both = contains(GetParam(), "csr_scaled_default_mapping");
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(),
            (firstCompressed || laneSlices ? 3 : 2) + kScanKernels + (both ? 3 + kScanKernels : 0));
  const CompiledStatement& statement = lowered.statements.at(0);
  SerialGpuIr serial(statement);
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  const TensorVar& output = statement.computedOutput;

  struct Case {
    std::string name;
    int32_t rows, columns;
    double density;
    std::string realMatrix;  // A
    bool emptyRows = false, emptyB = false;
  };
  std::vector<Case> cases{{"1 entry", 1, 1, 1.0, ""},
                          {"300 rows, every other one empty", 300, 90, 0.1, "", true},
                          {"1500 rows", 1500, 400, 0.01, ""},
                          {"B empty", 40, 50, 0.2, "", false, true},
                          {"494_bus", 0, 0, 0.01, "494_bus.mtx"},
                          {"bcsstk13", 0, 0, 0.001, "bcsstk13.mtx"}};
  uint64_t seed = 500;
  int checked = 0;
  for (const Case& drawn : cases) {
    SCOPED_TRACE(GetParam() + ", " + drawn.name);
    std::map<std::string, int32_t> sizes{{"I", drawn.rows}, {"J", drawn.columns}};
    std::optional<rt::Coo> matrix;
    if (!drawn.realMatrix.empty()) matrix = realMatrix(drawn.realMatrix, sizes);
    BoundInputs inputs;
    for (const TensorVar& parameter : statement.parameters) {
      if (parameter == output) continue;
      std::vector<int32_t> dims = dimsOf(parameter, sizes);
      rt::Coo entries;
      if (matrix && parameter.name() == "A") {
        entries = *matrix;
      } else if (parameter.format().isAllDense()) {
        entries = rt::randomUniform(dims, 1.0, ++seed);
      } else if (drawn.emptyB && parameter.name() == "B") {
        entries = rt::Coo::ofShape(dims);
      } else {
        entries = rt::randomUniform(dims, drawn.density, ++seed);
        if (drawn.emptyRows)
          entries = withoutEntries(entries, [](const std::vector<int32_t>& at) { return at[0] % 2 == 0; });
      }
      inputs.bind(parameter, entries);
    }
    std::vector<double> expected = referenceOf(program, inputs, output);
    if (anyNonZero(expected)) {
      serial.expectMatches(inputs.tensors, dimsOf(output, sizes), expected);
    } else {
      // (An intersection with an empty operand: an output with no entries.)
      EXPECT_TRUE(drawn.emptyB);
      EXPECT_EQ(serial.run(inputs.tensors, dimsOf(output, sizes)).nnz(), 0);
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuSparseOutputPrograms,
                         ::testing::ValuesIn(programsNamed("sparse_out_")),
                         [](const auto& info) { return info.param; });

// The scan at every length that could go wrong: none, one, a tile less
// one, a tile, a tile and one, a tile of tiles and one, and past 2^20 and
// a tile of tiles of tiles (three levels, the last one's totals left to
// one thread), for a row per CSR row and a coordinate per vector entry or
// DCSR row (two arrays scanned together), against the dense reference.
TEST(GpuSparseOutputs, TheScansAreRightAtEveryLengthRunSerially) {
  const std::vector<int32_t> lengths{0, 1, 127, 128, 129, 128 * 128 + 1, (1 << 21) + 77};
  struct Statement {
    std::string dsl;
    bool matrix;
  };
  const std::vector<Statement> statements{
      {withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"), true},
      {withSchedule("tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n"
                    "Y(i, j) = A(i, j) + B(i, j)\n",
                    "parallelize(i, GPUThread, NoRaces)"),
       true},
      {withSchedule("tensor y(I) : sparse\ntensor a(I) : sparse\ntensor b(I) : sparse\ny(i) = a(i) + b(i)\n",
                    "parallelize(i, GPUThread, NoRaces)"),
       false}};
  uint64_t seed = 900;
  for (const Statement& tested : statements) {
    Program program = Program::fromText(tested.dsl, "test.tc");
    Lowered lowered = lowerForCuda(tested.dsl);
    const CompiledStatement& statement = lowered.statements.at(0);
    SerialGpuIr serial(statement);
    if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
    for (int32_t length : lengths) {
      SCOPED_TRACE(statement.computedOutput.format().toString() + ", " + std::to_string(length));
      std::vector<int32_t> dims = tested.matrix ? std::vector<int32_t>{length, 3} : std::vector<int32_t>{length};
      BoundInputs inputs;
      for (const TensorVar& parameter : statement.parameters) {
        if (parameter == statement.computedOutput) continue;
        // Empty rows (coordinates) among the others: offsets repeat.
        inputs.bind(parameter, rt::randomUniform(dims, length > 100000 ? 0.02 : 0.3, ++seed));
      }
      Tensor assembled = serial.run(inputs.tensors, dims);
      std::vector<double> expected = referenceOf(program, inputs, statement.computedOutput);
      // (Entries past the first tile, whose offsets the fixups add to.)
      const size_t width = tested.matrix ? 3 : 1;
      if (length > 128)
        ASSERT_TRUE(std::any_of(expected.begin() + 128 * width, expected.end(), [](double v) { return v != 0; }));
      EXPECT_EQ(expectClose(rt::toDense(assembled), expected, 1e-12, "serial GPU IR vs reference"), 0);
    }
  }
}

// CompileOptions::gpuParallelPrefixSums off: the form before, one GPU
// thread for the whole prefix sum (for comparisons), still right.
TEST(GpuSparseOutputs, WithoutParallelPrefixSumsOneGpuThreadScans) {
  CompileOptions options;
  options.gpuParallelPrefixSums = false;
  Lowered lowered = lowerForCuda(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"), options);
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3u);
  const std::string& kernels = lowered.cudaKernels;
  EXPECT_TRUE(contains(kernels, "thread < 1; thread += ")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(scan_k + 1LL)] += Y2_pos[scan_k];")) << kernels;
  EXPECT_FALSE(contains(kernels, "_totals1")) << kernels;
  SerialGpuIr serial(lowered.statements.at(0));
  if (!serial.available()) GTEST_SKIP() << "no C++ JIT here";
  Program program = Program::fromText(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"), "test.tc");
  std::map<std::string, Tensor> inputs;
  std::map<std::string, DenseArray> dense;
  for (const char* name : {"A", "B"}) {
    inputs.emplace(name, rt::pack(rt::randomUniform({1000, 30}, 0.1, name[0]), rt::TensorFormat::csr(),
                                  rt::ValueType::Float64));
    dense.emplace(name, denseOf(rt::unpack(inputs.at(name))));
  }
  std::vector<double> expected = evaluate(program.statements(), dense).at("Y").values;
  EXPECT_EQ(expectClose(rt::toDense(serial.run(inputs, {1000, 30})), expected, 1e-12, "one-thread scan"), 0);
}

}  // namespace
}  // namespace tcc::test
