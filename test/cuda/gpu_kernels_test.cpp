// On a GPU (label gpu): every examples/gpu/*.tc kernel (SpMV, SpMM, SDDMM,
// MTTKRP) against the same program compiled for the CPU and against the
// dense reference, on random matrices (empty rows, a single row, sizes that
// are not multiples of the block size) and on real ones; MTTKRP on random
// 3-tensors (empty slices, one entry, skewed slices).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tcc/runtime/cuda.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"
#include "dense_of.h"

namespace tcc::test {
namespace {

namespace fs = std::filesystem;

// TCA-SpMM (tca_spmm.tc) computes in float16, which the CPU does not: its
// own tests (test/tca_spmm) hold it against the dense reference.
std::vector<std::string> gpuExamples() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TCC_SOURCE_DIR) / "examples" / "gpu"))
    if (entry.path().extension() == ".tc" && entry.path().stem() != "tca_spmm") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A random rows x cols matrix; every `emptyEvery`-th row is left empty.
rt::Coo randomMatrix(int32_t rows, int32_t cols, double density, int emptyEvery, uint64_t seed) {
  rt::Coo all = rt::randomUniform({rows, cols}, density, seed);
  rt::Coo kept = rt::Coo::ofShape({rows, cols});
  for (size_t k = 0; k < all.nnz(); ++k) {
    if (emptyEvery > 0 && all.coords[0][k] % emptyEvery == 0) continue;
    int32_t coordinate[2] = {all.coords[0][k], all.coords[1][k]};
    kept.push(coordinate, all.values[k]);
  }
  return kept;
}

// randomMatrix with row `longRow` holding every column: one row far longer
// than the others (the default mapping's nonzero split runs on it).
rt::Coo withOneFullRow(const rt::Coo& random, int32_t longRow) {
  rt::Coo result = rt::Coo::ofShape({random.dims[0], random.dims[1]});
  for (size_t k = 0; k < random.nnz(); ++k) {
    if (random.coords[0][k] == longRow) continue;
    int32_t coordinate[2] = {random.coords[0][k], random.coords[1][k]};
    result.push(coordinate, random.values[k]);
  }
  for (int32_t column = 0; column < random.dims[1]; ++column) {
    int32_t coordinate[2] = {longRow, column};
    result.push(coordinate, 0.25 + (column % 7) * 0.125);
  }
  return result;
}

struct Case {
  std::string name;
  rt::Coo tensor;  // a matrix; a 3-tensor for MTTKRP
};

std::vector<Case> matrices() {
  std::vector<Case> cases;
  cases.push_back({"one entry", randomMatrix(1, 1, 1.0, 0, 1)});
  cases.push_back({"a single row", randomMatrix(1, 300, 0.5, 0, 2)});
  cases.push_back({"257 x 130, empty rows", randomMatrix(257, 130, 0.05, 7, 3)});
  cases.push_back({"1000 x 999, long rows", randomMatrix(1000, 999, 0.2, 0, 4)});
  cases.push_back({"3001 x 2000, sparse, empty rows", randomMatrix(3001, 2000, 0.002, 5, 5)});
  cases.push_back({"all rows empty", rt::Coo::ofShape({70, 40})});
  cases.push_back({"701 x 600, one full row, empty rows", withOneFullRow(randomMatrix(701, 600, 0.004, 9, 6), 5)});
  for (const char* real : {"494_bus.mtx", "cage5.mtx", "bcsstk13.mtx", "dwt_992.mtx", "Erdos971.mtx"})
    cases.push_back({real, rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + real)});
  return cases;
}

// MTTKRP's B: random 3-tensors.
std::vector<Case> tensors() {
  std::vector<Case> cases;
  cases.push_back({"one entry", rt::randomUniform({1, 1, 1}, 1.0, 31)});
  cases.push_back({"all slices empty", rt::Coo::ofShape({9, 4, 5})});
  rt::Coo sparse = rt::randomUniform({70, 33, 41}, 0.01, 32);
  rt::Coo kept = rt::Coo::ofShape(sparse.dims);  // every third slice empty
  for (size_t k = 0; k < sparse.nnz(); ++k) {
    if (sparse.coords[0][k] % 3 == 0) continue;
    int32_t coordinate[3] = {sparse.coords[0][k], sparse.coords[1][k], sparse.coords[2][k]};
    kept.push(coordinate, sparse.values[k]);
  }
  cases.push_back({"70 x 33 x 41, empty slices", kept});
  cases.push_back({"40 x 20 x 30, dense fibers", rt::randomUniform({40, 20, 30}, 0.3, 33)});
  cases.push_back({"300 x 50 x 60, power-law slices", rt::randomPowerLawTensor({300, 50, 60}, 20000, 1.0, 34)});
  return cases;
}

class GpuExample : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuExample, MatchesTheCpuKernelAndTheDenseReference) {
  fs::path path = fs::path(TCC_SOURCE_DIR) / "examples" / "gpu" / (GetParam() + ".tc");
  Program program = Program::fromFile(path.string());
  CompileOptions cpu;
  cpu.target = frontend::Target::Cpu;
  CompileOptions cuda;
  cuda.target = frontend::Target::Cuda;
  Kernel onGpu = compile(program, cuda);
  // The CPU kernel of the same statements, without the GPU schedule.
  Kernel onCpu = compile(Program::fromStatements(program.statements(), program.tensors()), cpu);
  const TensorVar& output = program.statements()[0].as<ir::AssignmentNode>()->lhs.tensor();
  bool single = output.datatype() == ir::Datatype::Float32;
  double tolerance = single ? 2e-4 : 1e-10;

  // SpMV (A, x), SpMM (A, B), SDDMM (B sparse, C and D dense), MTTKRP
  // (B a sparse 3-tensor, C and D dense), or a reduction (A's column sums,
  // a dot product of vectors).
  const TensorVar* b = program.syntax().findTensor("B");
  bool mttkrp = b != nullptr && b->order() == 3;
  bool sddmm = !mttkrp && program.syntax().findTensor("D") != nullptr;
  bool spmm = !sddmm && !mttkrp && b != nullptr;
  for (const Case& test : mttkrp ? tensors() : matrices()) {
    for (int32_t columns : spmm ? std::vector<int32_t>{1, 33, 128, 300}
                           : sddmm || mttkrp ? std::vector<int32_t>{1, 40}
                                             : std::vector<int32_t>{1}) {
      // N = 300 (two whole 128-column tiles and a part) where the dense
      // reference, which walks every (i, j, k), stays quick.
      if (columns == 300 && int64_t(test.tensor.dims[0]) * test.tensor.dims[1] > 300000) continue;
      SCOPED_TRACE(test.name + (spmm || sddmm || mttkrp ? ", N = " + std::to_string(columns) : ""));
      std::map<std::string, rt::Coo> inputs;
      if (mttkrp) {
        inputs["B"] = test.tensor;
        inputs["C"] = rt::randomUniform({test.tensor.dims[1], columns}, 1.0, 15);
        inputs["D"] = rt::randomUniform({test.tensor.dims[2], columns}, 1.0, 16);
      } else if (sddmm) {
        inputs["B"] = test.tensor;
        inputs["C"] = rt::randomUniform({test.tensor.dims[0], columns}, 1.0, 13);
        inputs["D"] = rt::randomUniform({columns, test.tensor.dims[1]}, 1.0, 14);
      } else if (spmm) {
        inputs["A"] = test.tensor;
        inputs["B"] = rt::randomUniform({test.tensor.dims[1], columns}, 1.0, 11);
      } else {
        // SpMV (A, x), A's column sums (A alone), or a dot product (vectors
        // alone): every vector input drawn with A's columns as its size.
        if (program.syntax().findTensor("A")) inputs["A"] = test.tensor;
        uint64_t seed = 12;
        for (const TensorVar& tensor : program.tensors())
          if (!(tensor == output) && tensor.order() == 1)
            inputs[tensor.name()] = rt::randomUniform({test.tensor.dims[1]}, 1.0, seed++);
      }
      std::map<std::string, Tensor> bound;
      std::map<std::string, DenseArray> dense;
      for (const auto& [name, coo] : inputs) {
        const TensorVar* declared = program.syntax().findTensor(name);
        bound.emplace(name, rt::pack(heldBy(declared->datatype(), coo), toRuntimeFormat(declared->format()),
                                     toRuntimeType(declared->datatype())));
        // The reference sees the values the kernels see (rounded to float32 or float16).
        dense.emplace(name, denseOf(rt::unpack(bound.at(name))));
      }
      auto expected = evaluate(program.statements(), dense).at(output.name()).values;
      auto fromGpu = rt::toDense(onGpu.run(bound).at(output.name()));
      auto fromCpu = rt::toDense(onCpu.run(bound).at(output.name()));
      expectClose(fromGpu, expected, tolerance, "GPU vs reference");
      expectClose(fromGpu, fromCpu, tolerance, "GPU vs CPU kernel");
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << onGpu.source();
        return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuExample, ::testing::ValuesIn(gpuExamples()),
                         [](const auto& info) { return info.param; });

TEST(GpuRuntime, RepeatedRunsReuseTheDeviceTensorsAndGiveTheSameResult) {
  fs::path path = fs::path(TCC_SOURCE_DIR) / "examples" / "gpu" / "spmv_default.tc";
  Kernel kernel = compile(Program::fromFile(path.string()));
  std::map<std::string, Tensor> inputs;
  inputs["A"] = rt::pack(randomMatrix(500, 400, 0.05, 3, 21), rt::TensorFormat::csr());
  inputs["x"] = rt::pack(rt::randomUniform({400}, 1.0, 22), rt::TensorFormat::dense(1));
  RunResult once = kernel.run(inputs, RunOptions{1});
  RunResult many = kernel.run(inputs, RunOptions{5});
  EXPECT_EQ(rt::toDense(once.tensors.at("y")), rt::toDense(many.tensors.at("y")));
  for (double seconds : many.seconds) EXPECT_GT(seconds, 0.0);
}

// The default mapping of CSR SpMM holds a row kernel and a nonzero split
// and launches one per input: the split on a matrix with one long row (and
// empty rows, sizes off the block and share sizes), the rows on even rows;
// SpMV runs its rows on all of them. All against the dense reference. (fp
// fast: fp strict leaves the split out, gpu_strict_gpu_test.cpp.)
TEST(GpuRuntime, TheDefaultMappingSplitsNonzerosForOneLongRowAndMapsRowsOtherwise) {
  struct Input { const char* name; rt::Coo matrix; bool split; };
  std::vector<Input> inputs;
  inputs.push_back({"one full row of 700 among rows of about 2, empty rows",
                    withOneFullRow(randomMatrix(603, 700, 0.003, 11, 31), 300), true});
  inputs.push_back({"a single long row in the last place", withOneFullRow(randomMatrix(333, 500, 0.002, 0, 32), 332),
                    true});
  inputs.push_back({"rows of about 30, empty rows", randomMatrix(603, 700, 0.04, 11, 33), false});
  inputs.push_back({"adder_dcop_05.mtx",
                    rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/adder_dcop_05.mtx"), true});
  for (const char* example : {"spmv_default", "spmm_default"}) {
    fs::path path = fs::path(TCC_SOURCE_DIR) / "examples" / "gpu" / (std::string(example) + ".tc");
    Program program = Program::fromFile(path.string());
    CompileOptions fast;
    fast.floatingPoint = frontend::FloatingPointMode::Fast;
    Kernel kernel = compile(program, fast);
    bool spmm = program.syntax().findTensor("B") != nullptr;
    const TensorVar& output = program.statements()[0].as<ir::AssignmentNode>()->lhs.tensor();
    for (const Input& input : inputs) {
      for (int32_t columns : spmm ? std::vector<int32_t>{1, 40, 130} : std::vector<int32_t>{1}) {
        // The dense reference walks every (i, j, k): the real matrix at N = 1.
        if (columns > 1 && int64_t(input.matrix.dims[0]) * input.matrix.dims[1] > 2000000) continue;
        SCOPED_TRACE(std::string(example) + ", " + input.name + ", N = " + std::to_string(columns));
        std::map<std::string, rt::Coo> coo;
        coo["A"] = input.matrix;
        if (spmm) coo["B"] = rt::randomUniform({input.matrix.dims[1], columns}, 1.0, 34);
        else coo["x"] = rt::randomUniform({input.matrix.dims[1]}, 1.0, 35);
        std::map<std::string, Tensor> bound;
        std::map<std::string, DenseArray> dense;
        for (const auto& [name, entries] : coo) {
          const TensorVar* declared = program.syntax().findTensor(name);
          bound.emplace(name, rt::pack(heldBy(declared->datatype(), entries), toRuntimeFormat(declared->format()),
                                       toRuntimeType(declared->datatype())));
          dense.emplace(name, denseOf(rt::unpack(bound.at(name))));
        }
        RunResult result = kernel.run(bound, RunOptions{2});
        ASSERT_EQ(result.gpuKernels.size(), 1u);
        // The split is the kernel that finds its rows by searching pos.
        const std::string& source = kernel.source();
        size_t at = source.find(") " + result.gpuKernels[0] + "(");
        ASSERT_NE(at, std::string::npos) << result.gpuKernels[0];
        size_t end = source.find("extern \"C\"", at);
        bool split = source.substr(at, end - at).find("tcc_segment_of(") != std::string::npos;
        EXPECT_EQ(split, input.split && spmm) << result.gpuKernels[0];
        auto expected = evaluate(program.statements(), dense).at(output.name()).values;
        double tolerance = output.datatype() == ir::Datatype::Float32 ? 2e-4 : 1e-10;
        expectClose(rt::toDense(result.tensors.at(output.name())), expected, tolerance, "GPU vs reference");
      }
    }
  }
}

TEST(GpuRuntime, TheDeviceIsNamed) {
  const auto& device = rt::cuda::device();
  EXPECT_FALSE(device.name.empty());
  EXPECT_GE(device.major, 7);
}

}  // namespace
}  // namespace tcc::test
