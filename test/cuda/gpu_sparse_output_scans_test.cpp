// On a GPU (label gpu): sparse outputs whose counts a parallel scan turns
// into offsets (gpu_prefix_sums.cpp: tiles on threads, three levels, a
// fixup) at the lengths that could go wrong (1, a tile and one, a tile of
// tiles and one, past 2^20 and past three levels' worth of one thread's
// share) and on scale-ups past 2^20 rows (Kronecker products of two real
// matrices): a CSR sum, a DCSR sum (two arrays scanned together) and a
// sparse vector sum (a coordinate each). Each result equals the CPU
// kernel's, array for array (the same additions, so the same bits), and,
// where it fits, the dense reference; the form before (one GPU thread,
// CompileOptions::gpuParallelPrefixSums off) gives the same arrays.
#include <gtest/gtest.h>

#include <cstring>

#include "tcc/runtime/random.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"
#include "dense_of.h"

namespace tcc::test {
namespace {

std::string sumOf(const std::string& format, bool vector) {
  if (vector) return "tensor y(I) : " + format + "\ntensor a(I) : " + format + "\ntensor b(I) : " + format +
                     "\ny(i) = a(i) + b(i)\nschedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n";
  return "tensor Y(I, J) : " + format + "\ntensor A(I, J) : " + format + "\ntensor B(I, J) : " + format +
         "\nY(i, j) = A(i, j) + B(i, j)\nschedule {\n  parallelize(i, GPUThread, NoRaces)\n}\n";
}

// Every array of two assembled tensors equal (their sizes from pos).
void expectSameArrays(const Tensor& ours, const Tensor& theirs, const std::string& what) {
  tcc_tensor a = ours.abiView(), b = theirs.abiView();
  ASSERT_EQ(a.order, b.order) << what;
  int64_t positions = 1;
  for (int level = 0; level < a.order; ++level) {
    ASSERT_EQ(a.levels[level].kind, b.levels[level].kind) << what;
    ASSERT_EQ(a.dims[level], b.dims[level]) << what;
    if (a.levels[level].kind == TCC_LEVEL_DENSE) {
      positions *= a.levels[level].size;
      continue;
    }
    ASSERT_EQ(std::memcmp(a.levels[level].pos, b.levels[level].pos, sizeof(long long) * (positions + 1)), 0)
        << what << ": pos of level " << level;
    positions = a.levels[level].pos[positions];
    ASSERT_EQ(std::memcmp(a.levels[level].crd, b.levels[level].crd, sizeof(int) * positions), 0)
        << what << ": crd of level " << level;
  }
  ASSERT_EQ(a.vals_size, positions) << what;
  ASSERT_EQ(b.vals_size, positions) << what;
  ASSERT_EQ(std::memcmp(a.vals, b.vals, sizeof(double) * positions), 0) << what << ": values";
}

struct Sum {
  std::string format;
  bool vector;
};

const std::vector<Sum> kSums{{"csr", false}, {"dcsr", false}, {"sparse", true}};

TEST(GpuSparseOutputScans, EveryLengthMatchesTheCpuKernelAndTheDenseReference) {
  uint64_t seed = 70;
  for (const Sum& sum : kSums) {
    Program program = Program::fromText(sumOf(sum.format, sum.vector), "sum.tc");
    CompileOptions cuda, cpu, oneThread;
    cuda.target = frontend::Target::Cuda;
    oneThread.target = frontend::Target::Cuda;
    oneThread.gpuParallelPrefixSums = false;
    cpu.target = frontend::Target::Cpu;
    Kernel onGpu = compile(program, cuda), before = compile(program, oneThread);
    Kernel onCpu = compile(Program::fromStatements(program.statements(), program.tensors()), cpu);
    const std::string output = sum.vector ? "y" : "Y";
    for (int32_t length : {1, 127, 129, 128 * 128 + 1, (1 << 21) + 77}) {
      SCOPED_TRACE(sum.format + ", " + std::to_string(length));
      std::vector<int32_t> dims = sum.vector ? std::vector<int32_t>{length} : std::vector<int32_t>{length, 3};
      std::map<std::string, Tensor> bound;
      std::map<std::string, DenseArray> dense;
      for (const char* name : {"A", "B"}) {
        std::string tensor = sum.vector ? std::string(1, char(std::tolower(name[0]))) : name;
        bound.emplace(tensor, rt::pack(rt::randomUniform(dims, length > 100000 ? 0.02 : 0.3, ++seed),
                                       toRuntimeFormat(program.syntax().findTensor(tensor)->format())));
        dense.emplace(tensor, denseOf(rt::unpack(bound.at(tensor))));
      }
      Tensor ours = onGpu.run(bound).at(output);
      Tensor cpuResult = onCpu.run(bound).at(output);
      expectSameArrays(ours, cpuResult, "GPU vs CPU kernel");
      expectSameArrays(before.run(bound).at(output), cpuResult, "one-thread scan vs CPU kernel");
      expectClose(rt::toDense(ours), evaluate(program.statements(), dense).at(output).values, 1e-12,
                  "GPU vs reference");
    }
  }
}

// Scale-ups past 2^20 rows: kron(Pd, impcol_a) + kron(impcol_a, Pd), both
// 1,672,767 square (8081 * 207), 7.5 million entries each, their patterns
// apart; the dense reference would not fit, the CPU kernel is the check.
TEST(GpuSparseOutputScans, ScaleUpsPast2To20RowsMatchTheCpuKernel) {
  auto real = [](const std::string& name) {
    return rt::readMatrixMarket(std::string(TCC_SHARED_DATA_DIR) + "/matrices/" + name + ".mtx");
  };
  rt::Coo pd = real("Pd"), impcol = real("impcol_a");
  rt::Coo a = rt::kroneckerProduct(pd, impcol), b = rt::kroneckerProduct(impcol, pd);
  ASSERT_GT(a.dims[0], 1 << 20);
  for (const Sum& sum : kSums) {
    if (sum.vector) continue;
    SCOPED_TRACE(sum.format);
    Program program = Program::fromText(sumOf(sum.format, false), "sum.tc");
    CompileOptions cuda, cpu;
    cuda.target = frontend::Target::Cuda;
    cpu.target = frontend::Target::Cpu;
    Kernel onGpu = compile(program, cuda);
    Kernel onCpu = compile(Program::fromStatements(program.statements(), program.tensors()), cpu);
    rt::TensorFormat format = toRuntimeFormat(program.syntax().findTensor("Y")->format());
    std::map<std::string, Tensor> bound{{"A", rt::pack(a, format)}, {"B", rt::pack(b, format)}};
    Tensor ours = onGpu.run(bound).at("Y");
    EXPECT_GT(ours.nnz(), static_cast<int64_t>(a.nnz()));
    expectSameArrays(ours, onCpu.run(bound).at("Y"), "GPU vs CPU kernel");
  }
}

}  // namespace
}  // namespace tcc::test
