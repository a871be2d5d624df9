// On a GPU (label gpu): fp strict, the default mode, as a contract.
//  - The default mapping's SpMV, SpMM and a summed term nest give the same
//    bits in 5 runs on real matrices (the inputs fp fast would give to
//    atomic additions from many threads among them: adder_dcop_05's one
//    long row, mbeacxc's long rows), each close to the dense reference.
//  - A kernel that sums each output entry in one thread, in loop order (a
//    thread a row of SpMV and SpMM), gives the CPU's strict bits: no FMA
//    contraction on either side.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "dense_of.h"
#include "tcc/runtime/cuda.h"
#include "tcc/runtime/random.h"
#include "tcc/tcc.h"

namespace tcc::test {
namespace {

rt::Coo shared(const std::string& file) {
  return rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + file);
}

const std::vector<std::string> kMatrices{"adder_dcop_05.mtx", "mbeacxc.mtx", "bcsstk13.mtx", "cage5.mtx"};

// The program's inputs bound for `a` (every other operand drawn dense for
// the shape the statement gives it), in the declared formats.
std::map<std::string, Tensor> inputsFor(const Program& program, const rt::Coo& a, int32_t columns,
                                        std::map<std::string, DenseArray>& dense) {
  // (A sparse B(J, K) is `a` too: K is its columns.)
  const TensorVar* b = program.syntax().findTensor("B");
  const bool sparseB = b && !b->format().isAllDense();
  std::map<std::string, int32_t> sizes{{"I", a.dims[0]}, {"J", a.dims[1]}, {"K", sparseB ? a.dims[1] : columns}};
  std::map<std::string, Tensor> bound;
  uint64_t seed = 70;
  for (const TensorVar& tensor : program.tensors()) {
    if (tensor == program.statements()[0].as<ir::AssignmentNode>()->lhs.tensor()) continue;
    const bool isA = tensor.name() == "A" || (tensor.name() == "B" && sparseB);
    rt::Coo entries = isA ? a : rt::randomUniform(dimsOf(tensor, sizes), 1.0, ++seed);
    bound.emplace(tensor.name(), rt::pack(entries, toRuntimeFormat(tensor.format()), toRuntimeType(tensor.datatype())));
    dense.emplace(tensor.name(), denseOf(rt::unpack(bound.at(tensor.name()))));
  }
  return bound;
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

struct StrictProgram {
  const char* name;
  std::string dsl;
  std::vector<int32_t> columns;  // N where the program has a K
};

class GpuStrict : public ::testing::TestWithParam<StrictProgram> {};

TEST_P(GpuStrict, TheDefaultMappingGivesTheSameBitsEveryRun) {
  Program program = Program::fromText(GetParam().dsl + "target cuda\n", "strict.tc");
  Kernel kernel = compile(program);
  const std::string output = program.statements()[0].as<ir::AssignmentNode>()->lhs.tensor().name();
  for (const std::string& file : kMatrices) {
    rt::Coo a = shared(file);
    if (GetParam().dsl.find("B(J, K) : csr") != std::string::npos && a.dims[0] != a.dims[1]) continue;
    for (int32_t columns : GetParam().columns) {
      SCOPED_TRACE(file + ", N = " + std::to_string(columns));
      std::map<std::string, DenseArray> dense;
      std::map<std::string, Tensor> bound = inputsFor(program, a, columns, dense);
      std::vector<double> first;
      for (int run = 0; run < 5; ++run) {
        RunResult result = kernel.run(bound, RunOptions{1});
        std::vector<double> values = rt::toDense(result.tensors.at(output));
        if (run == 0) {
          first = values;
          ASSERT_TRUE(anyNonZero(first));
          if (int64_t(a.dims[0]) * a.dims[1] * columns <= 40000000)
            expectClose(first, evaluate(program.statements(), dense).at(output).values, 2e-4, "GPU vs dense reference");
        } else {
          EXPECT_TRUE(sameBits(values, first)) << "run " << run << " differs from run 0";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Programs, GpuStrict,
    ::testing::Values(
        StrictProgram{"SpMV", "tensor y(I) : dense of float32\ntensor A(I, J) : csr of float32\n"
                              "tensor x(J) : dense of float32\ny(i) = A(i, j) * x(j)\n", {1}},
        StrictProgram{"SpMM", "tensor C(I, K) : dense of float32\ntensor A(I, J) : csr of float32\n"
                              "tensor B(J, K) : dense of float32\nC(i, k) = A(i, j) * B(j, k)\n", {32, 128}},
        StrictProgram{"TermSums", "tensor y(J) : dense of float32\ntensor A(I, J) : csr of float32\n"
                                  "tensor x(I) : dense of float32\ntensor B(J, K) : csr of float32\n"
                                  "tensor z(K) : dense of float32\ny(j) = A(i, j) * x(i) + B(j, k) * z(k)\n", {1}}),
    [](const auto& info) { return std::string(info.param.name); });

// A GPU thread a row, each entry summed in loop order, against the CPU's
// strict kernel (-ffp-contract=off, the same order): the same bits.
TEST(GpuStrictAgainstCpu, ARowSummedInOneThreadGivesTheCpuStrictBits) {
  struct Case { const char* name; std::string dsl, schedule; int32_t columns; };
  std::vector<Case> cases;
  for (const char* type : {"float32", "float64"}) {
    const std::string of = std::string(" of ") + type;
    cases.push_back({"SpMV", "tensor y(I) : dense" + of + "\ntensor A(I, J) : csr" + of + "\ntensor x(J) : dense" +
                                 of + "\ny(i) = A(i, j) * x(j)\n",
                     "schedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n", 1});
    cases.push_back({"SpMM", "tensor C(I, K) : dense" + of + "\ntensor A(I, J) : csr" + of + "\ntensor B(J, K) : dense" +
                                 of + "\nC(i, k) = A(i, j) * B(j, k)\n",
                     "schedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n", 32});
  }
  for (const Case& each : cases) {
    Program gpu = Program::fromText(each.dsl + each.schedule + "target cuda\n", "strict_gpu.tc");
    Program cpu = Program::fromText(each.dsl, "strict_cpu.tc");
    Kernel onGpu = compile(gpu);
    Kernel onCpu = compile(cpu);
    const std::string output = gpu.statements()[0].as<ir::AssignmentNode>()->lhs.tensor().name();
    int differing = 0;
    for (const std::string& file : kMatrices) {
      SCOPED_TRACE(std::string(each.name) + ", " + each.dsl.substr(each.dsl.find(" of ") + 4, 7) + ", " + file);
      rt::Coo a = shared(file);
      std::map<std::string, DenseArray> dense;
      std::map<std::string, Tensor> bound = inputsFor(cpu, a, each.columns, dense);
      std::vector<double> fromCpu = rt::toDense(onCpu.run(bound, RunOptions{1}).tensors.at(output));
      std::vector<double> fromGpu = rt::toDense(onGpu.run(bound, RunOptions{1}).tensors.at(output));
      ASSERT_TRUE(anyNonZero(fromCpu));
      EXPECT_TRUE(sameBits(fromGpu, fromCpu));
      for (size_t k = 0; k < fromCpu.size() && k < fromGpu.size(); ++k) differing += fromCpu[k] != fromGpu[k];
    }
    EXPECT_EQ(differing, 0) << each.name;
  }
}

}  // namespace
}  // namespace tcc::test
