// Sparse outputs under GPU loops, without a GPU. A GPU loop over a CSR
// output's rows assembles them as CPU threads do, in two passes: a kernel
// counts each row's entries into pos, one GPU thread turns the counts into
// row offsets, the host allocates the columns and values (arrays it hands
// to the output), and a second kernel fills each row from its offset. An
// output whose first level is compressed (a sparse vector, DCSR, COO
// assembled as DCSR) under a GPU loop over its first index goes the same
// way, each coordinate counting its appends to every level into offsets of
// its own (the CPU threads' ranges, one coordinate each).
// Checked here: the kernels and the host part as lowered, and the lowered
// IR itself run on the CPU (each GPU
// loop's iterations one after another, printed by the C++ backend) against
// the dense reference on random inputs and real matrices. What the GPU
// still cannot assemble (a dense level above two compressed ones, a row's
// entries split among threads) is refused at the parallelize. (NVRTC compiles the
// kernels of programs/sparse_out_*.tc in gpu_lowering_test.cpp; on a GPU
// they run against the dense reference, gpu_programs_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cuda_lowering.h"
#include "dense_of.h"
#include "gpu_host_part.h"
#include "serial_gpu_loops.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/jit/jit.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/runtime/random.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

namespace fs = std::filesystem;
namespace imp = ir::imp;

fs::path programsFolder() { return fs::path(TCC_SOURCE_DIR) / "test" / "cuda" / "programs"; }

std::string programText(const std::string& name) {
  std::ifstream file(programsFolder() / (name + ".tc"));
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::vector<std::string> sparseOutputPrograms() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(programsFolder()))
    if (entry.path().extension() == ".tc" && entry.path().stem().string().rfind("sparse_out_", 0) == 0)
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::string kCsrUnion = "tensor Y(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n"
                              "Y(i, j) = A(i, j) + B(i, j)\n";

std::string withSchedule(const std::string& statement, const std::string& schedule) {
  return statement + "schedule {\n" + schedule + "\n}\n";
}

TEST(GpuSparseOutputs, ACsrRowPerThreadIsCountedScannedAndFilled) {
  Lowered lowered = lowerForCuda(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"));
  const lowering::GpuFunction& function = lowered.gpuFunctions.at(0);
  ASSERT_EQ(function.kernels.size(), 3u);
  const std::string& kernels = lowered.cudaKernels;
  // The counting kernel stores each row's size; the fill starts each row
  // at its offset.
  EXPECT_TRUE(contains(kernels, "int64_t pY2_row = 0LL;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(pY1 + 1LL)] = pY2_row;")) << kernels;
  EXPECT_TRUE(contains(kernels, "int64_t pY2_row_0 = Y2_pos[pY1_0];")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_crd[pY2_row_0] = j_2;\n        Y_vals[pY2_row_0] = (A_vals[pA2_0] + B_vals[pB2_0]);"))
      << kernels;
  // The prefix sum, on one GPU thread.
  EXPECT_TRUE(contains(kernels, "thread < 1; thread += ")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(pY1_offset + 1LL)] += Y2_pos[pY1_offset];")) << kernels;
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

// A fake device: launches recorded, allocations in host memory, reads of
// single entries from it.
struct RecordingDevice {
  std::vector<std::string> launched;
  std::vector<std::vector<unsigned char>> arrays;
  detail::HostPartDevice device;
  RecordingDevice() {
    device.launch = [this](const detail::KernelLaunch& launch) { launched.push_back(launch.kernel->name); };
    device.read = [](void* host, const void* address, size_t bytes) { std::memcpy(host, address, bytes); };
    device.allocateOutput = [this](size_t bytes) {
      arrays.emplace_back(std::max<size_t>(bytes, 1), 0);
      return static_cast<void*>(arrays.back().data());
    };
  }
};

TEST(GpuSparseOutputs, TheHostPartLaunchesThreeKernelsAndHandsItsArraysToTheOutput) {
  Lowered lowered = lowerForCuda(withSchedule(kCsrUnion, "parallelize(i, GPUThread, NoRaces)"));
  tcc_tensor y = Tensor::emptyAssembledOutput({5, 7}, rt::TensorFormat::csr(), rt::ValueType::Float64);
  Tensor a = rt::pack(rt::randomUniform({5, 7}, 0.3, 1), rt::TensorFormat::csr(), rt::ValueType::Float64);
  Tensor b = rt::pack(rt::randomUniform({5, 7}, 0.3, 2), rt::TensorFormat::csr(), rt::ValueType::Float64);
  tcc_tensor av = a.abiView(), bv = b.abiView();
  RecordingDevice fake;
  fake.arrays.reserve(8);  // (the pointers handed out stay put)
  ASSERT_EQ(detail::runHostPart(lowered.gpuFunctions.at(0), {&y, &av, &bv}, fake.device), 0);
  ASSERT_EQ(fake.launched.size(), 3u);
  // pos, then (after the count read back, 0 here: no kernel ran) crd and vals.
  ASSERT_EQ(fake.arrays.size(), 3u);
  EXPECT_EQ(fake.arrays[0].size(), 6u * sizeof(long long));
  EXPECT_EQ(static_cast<void*>(y.levels[1].pos), static_cast<void*>(fake.arrays[0].data()));
  EXPECT_EQ(static_cast<void*>(y.levels[1].crd), static_cast<void*>(fake.arrays[1].data()));
  EXPECT_EQ(y.vals, static_cast<void*>(fake.arrays[2].data()));
  EXPECT_EQ(y.vals_size, 0);
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
  // A row's entries split among a warp's lanes.
  EXPECT_TRUE(contains(cudaErrorOf(withSchedule(kCsrUnion, "parallelize(i, GPUWarp, NoRaces)\n"
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
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3u);
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
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3u);
  const std::string& kernels = lowered.cudaKernels;
  // Both levels counted per row coordinate, then both prefix sums.
  EXPECT_TRUE(contains(kernels, "Y1_coordinate_offsets[((int64_t)(i) + 1LL)] = pY1_own;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_coordinate_offsets[((int64_t)(i) + 1LL)] = pY2_own;")) << kernels;
  EXPECT_TRUE(contains(kernels, "Y2_pos[(pY1_own")) << kernels;  // a row's end, at its offset
  // The second level's pos allocated zeroed once the rows are counted.
  EXPECT_TRUE(contains(lowered.cuda, "if (cudaMemset(Y2_pos, 0, ")) << lowered.cuda;
}

rt::Coo withoutEveryOtherRow(const rt::Coo& all) {
  rt::Coo kept = rt::Coo::ofShape(all.dims);
  std::vector<int32_t> coordinate(all.dims.size());
  for (size_t k = 0; k < all.nnz(); ++k) {
    if (all.coords[0][k] % 2 == 0) continue;
    for (size_t mode = 0; mode < all.dims.size(); ++mode) coordinate[mode] = all.coords[mode][k];
    kept.push(coordinate.data(), all.values[k]);
  }
  return kept;
}

class GpuSparseOutputPrograms : public ::testing::TestWithParam<std::string> {};

// Inputs: random (a single entry, rows past a block, every other row
// empty, an empty operand) and real matrices as A (the other operands
// random, of A's shape).
TEST_P(GpuSparseOutputPrograms, TheLoweredIrRunOnTheCpuMatchesTheDenseReference) {
  Program program = Program::fromFile((programsFolder() / (GetParam() + ".tc")).string());
  Lowered lowered = lowerForCuda(programText(GetParam()));
  ASSERT_EQ(lowered.gpuFunctions.at(0).kernels.size(), 3u);  // count, prefix sum, fill
  const CompiledStatement& statement = lowered.statements.at(0);
  imp::Function function = statement.function;
  function.body = SerialGpuLoops().mutate(function.body);
  std::string source = lowering::makeCodeGenerator(lowering::TargetKind::Cpu)->emit({function});
  jit::CompileOptions jitOptions;
  if (!jit::isAvailable(jitOptions.backend)) jitOptions.backend = jit::Backend::SystemCompiler;
  if (!jit::isAvailable(jitOptions.backend)) GTEST_SKIP() << "no C++ JIT here";
  auto module = jit::compile(source, jitOptions);
  auto entry = module->function<int32_t (*)(tcc_tensor**)>(function.name);
  const TensorVar& output = statement.computedOutput;
  const double tolerance = output.datatype() == ir::Datatype::Float32 ? 2e-4 : 1e-10;

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
    std::optional<rt::Coo> matrix;
    int32_t rows = drawn.rows, columns = drawn.columns;
    if (!drawn.realMatrix.empty()) {
      matrix = rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + drawn.realMatrix);
      rows = matrix->dims[0], columns = matrix->dims[1];
    }
    std::map<std::string, Tensor> bound;
    std::map<std::string, DenseArray> dense;
    std::vector<Tensor> kept;
    std::vector<tcc_tensor> views;
    tcc_tensor outputView{};
    for (const TensorVar& parameter : statement.parameters) {
      std::vector<int32_t> dims;
      for (int mode = 0; mode < parameter.order(); ++mode)
        dims.push_back(parameter.dimension(mode).symbol() == "I" ? rows : columns);
      if (parameter == output) {
        outputView = Tensor::emptyAssembledOutput(dims, toRuntimeFormat(parameter.format()),
                                                  toRuntimeType(parameter.datatype()));
        continue;
      }
      rt::Coo entries;
      if (matrix && parameter.name() == "A") {
        entries = *matrix;
      } else if (parameter.format().isAllDense()) {
        entries = rt::randomUniform(dims, 1.0, ++seed);
      } else if (drawn.emptyB && parameter.name() == "B") {
        entries = rt::Coo::ofShape(dims);
      } else {
        entries = rt::randomUniform(dims, drawn.density, ++seed);
        if (drawn.emptyRows) entries = withoutEveryOtherRow(entries);
      }
      bound.emplace(parameter.name(),
                    rt::pack(entries, toRuntimeFormat(parameter.format()), toRuntimeType(parameter.datatype())));
      dense.emplace(parameter.name(), denseOf(rt::unpack(bound.at(parameter.name()))));
    }
    for (const TensorVar& parameter : statement.parameters)
      views.push_back(parameter == output ? outputView : bound.at(parameter.name()).abiView());
    std::vector<tcc_tensor*> pointers;
    for (auto& view : views) pointers.push_back(&view);
    ASSERT_EQ(entry(pointers.data()), 0);
    size_t slot = 0;
    while (!(statement.parameters[slot] == output)) ++slot;
    Tensor assembled = Tensor::adopt(std::move(views[slot]));
    std::vector<double> expected = evaluate(program.statements(), dense).at(output.name()).values;
    // (An intersection with an empty operand: an output with no entries.)
    if (std::none_of(expected.begin(), expected.end(), [](double v) { return v != 0; })) {
      EXPECT_TRUE(drawn.emptyB);
      EXPECT_EQ(assembled.nnz(), 0);
      ++checked;
      continue;
    }
    EXPECT_EQ(expectClose(rt::toDense(assembled), expected, tolerance, "serial GPU IR vs reference"), 0) << source;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuSparseOutputPrograms, ::testing::ValuesIn(sparseOutputPrograms()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tcc::test
