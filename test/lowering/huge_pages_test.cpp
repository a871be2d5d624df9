// Arrays a kernel allocates itself go through the runtime's allocator
// (tcc/runtime/array_alloc.h, pasted into the prelude): a sparse output
// that outgrows 4 MB while it is appended moves to 2 MB-aligned arrays
// advised MADV_HUGEPAGE, a sparse workspace's output (the ISM) too, and
// CompileOptions::hugePages = false keeps both in malloc's memory. Every
// result is checked against the dense reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "kernel_check.h"
#include "tcc/runtime/pack.h"

namespace tcc::test {
namespace {

bool alignedTo2MB(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % (uintptr_t(2) << 20) == 0; }

// Statement 0's entry point run directly on `inputs` (Kernel::run may copy
// an output into the runtime's storage), its output (of `dims`) assembled
// by the kernel: where the kernel put the arrays, and the adopted tensor.
struct Assembled {
  const void* vals = nullptr;
  const void* crd = nullptr;
  Tensor tensor;
};
Assembled runEntryPoint(const Kernel& kernel, const std::map<std::string, Tensor>& inputs, std::vector<int32_t> dims) {
  const CompiledStatement& statement = kernel.lowered().statements.at(0);
  std::vector<tcc_tensor> views;
  int outputSlot = -1;
  for (const auto& parameter : statement.parameters) {
    if (parameter.name() == statement.computedOutput.name()) {
      outputSlot = static_cast<int>(views.size());
      views.push_back(Tensor::emptyAssembledOutput(dims, toRuntimeFormat(parameter.format()), rt::ValueType::Float64));
    } else {
      views.push_back(inputs.at(parameter.name()).abiView());
    }
  }
  std::vector<tcc_tensor*> pointers;
  for (auto& view : views) pointers.push_back(&view);
  EXPECT_EQ(kernel.entryPoint(0)(pointers.data()), 0);
  Assembled out;
  out.vals = views[outputSlot].vals;
  out.crd = views[outputSlot].levels[1].crd;
  out.tensor = Tensor::adopt(std::move(views[outputSlot]));
  return out;
}

// A sum of two 2000 x 2000 CSR matrices of 15 % density: about 1.1 M
// entries, 4.4 MB of coordinates and 8.9 MB of values.
struct LargeSum {
  rt::Coo a = randomSparse({2000, 2000}, 0.15, 71), b = randomSparse({2000, 2000}, 0.15, 72);

  Assembled run(const std::string& program, bool hugePages) const {
    CompileOptions options;
    options.hugePages = hugePages;
    Kernel kernel = compile(Program::fromText(program, "test.tc"), options);
    std::map<std::string, Tensor> inputs = {{"A", rt::pack(a, toRuntimeFormat(Format::csr()))},
                                            {"B", rt::pack(b, toRuntimeFormat(Format::csr()))}};
    return runEntryPoint(kernel, inputs, {2000, 2000});
  }
  // The dense reference, compared value for value (the same one addition).
  void expectSum(const Tensor& c) const {
    std::vector<double> da = rt::toDense(a), db = rt::toDense(b), dc = rt::toDense(c);
    ASSERT_EQ(dc.size(), da.size());
    size_t stored = 0;
    for (size_t k = 0; k < da.size(); ++k) {
      ASSERT_EQ(dc[k], da[k] + db[k]) << "cell " << k;
      stored += da[k] != 0 || db[k] != 0;
    }
    EXPECT_EQ(static_cast<size_t>(c.nnz()), stored);
    EXPECT_GT(c.nnz() * 8, int64_t(4) << 20);  // the values reach the threshold
  }
};

const char* const kAppendedSum =
    "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nC(i,j) = A(i,j) + B(i,j)\n";
const char* const kWorkspaceSum =
    "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\nC(i,j) = A(i,j) + B(i,j)\n"
    "schedule { sparse_workspace(i, policy = coord) }\n";

// The sum's output in 2 MB pages with the option on, and the same sum
// with it off.
void expectSumIn2MBPagesAndWithout(const char* program) {
  LargeSum sum;
  Assembled c = sum.run(program, true);
  sum.expectSum(c.tensor);
  EXPECT_TRUE(alignedTo2MB(c.vals));
  EXPECT_TRUE(alignedTo2MB(c.crd));
  sum.expectSum(sum.run(program, false).tensor);
}

// The sum's output is sized from its operands at once: in 2 MB pages.
// (With the option off malloc's memory of this size may still be 2 MB-
// aligned, a freed aligned array's chunk reused as it was; the option off
// is checked on larger arrays below.)
TEST(HugePages, AppendedOutputsAreIn2MBPages) {
  expectSumIn2MBPagesAndWithout(kAppendedSum);
}

// A sparse workspace's output: the kernel asks the ISM for 2 MB pages
// (create flag 4) unless the option is off.
TEST(HugePages, SparseWorkspaceOutputsFollowTheOption) {
  expectSumIn2MBPagesAndWithout(kWorkspaceSum);
  for (bool huge : {true, false}) {
    CompileOptions options;
    options.hugePages = huge;
    std::string source = compile(Program::fromText(kWorkspaceSum, "test.tc"), options).source();
    // order 2, the policy (coord, 2), then the flags
    EXPECT_TRUE(contains(source, std::string("ws_C_level_order, 2, ") + (huge ? "4" : "0") + ", 0LL, 0LL)")) << source;
  }
}

// A sparse vector added to every row: the output far outgrows the first
// capacity the kernel gives it (the operands' sizes), so its arrays are
// reallocated as they fill, past 4 MB into 2 MB pages, their contents
// kept; with the option off they stay malloc's (values of 36 MB: above
// glibc's mmap thresholds, a mapping of their own 16 bytes past a page
// boundary, never 2 MB-aligned).
TEST(HugePages, ReallocatedOutputsKeepTheirEntries) {
  rt::Coo a = randomSparse({4500, 1000}, 0.01, 73), b = randomSparse({1000}, 0.99, 74);
  const char* program = "tensor C(I, J) : csr\ntensor A(I, J) : csr\ntensor b(J) : sparse\nC(i,j) = A(i,j) + b(j)\n";
  std::map<std::string, Tensor> inputs = {{"A", rt::pack(a, toRuntimeFormat(Format::csr()))},
                                          {"b", rt::pack(b, toRuntimeFormat(Format::sparseVector()))}};
  for (bool huge : {true, false}) {
    SCOPED_TRACE(huge ? "huge pages" : "malloc");
    CompileOptions options;
    options.hugePages = huge;
    Kernel kernel = compile(Program::fromText(program, "test.tc"), options);
    EXPECT_TRUE(contains(kernel.source(), "C2_crd = (int32_t*)tcc_realloc(C2_crd")) << kernel.source();
    Assembled c = runEntryPoint(kernel, inputs, {4500, 1000});
    std::vector<double> da = rt::toDense(a), db = rt::toDense(b), dc = rt::toDense(c.tensor);
    ASSERT_EQ(dc.size(), da.size());
    for (size_t k = 0; k < da.size(); ++k) ASSERT_EQ(dc[k], da[k] + db[k % 1000]) << "cell " << k;
    EXPECT_GT(c.tensor.nnz() * 8, int64_t(33) << 20);
    EXPECT_EQ(alignedTo2MB(c.vals), huge);
    if (huge) EXPECT_TRUE(alignedTo2MB(c.crd));
  }
}

// Unset, the option follows the runtime's threshold.
TEST(HugePages, TheOptionDefaultsToTheRuntimeSetting) {
  const int64_t saved = rt::hugePageMinBytes();
  rt::setHugePageMinBytes(0);
  EXPECT_FALSE(hugePages(CompileOptions{}));
  rt::setHugePageMinBytes(int64_t(4) << 20);
  EXPECT_TRUE(hugePages(CompileOptions{}));
  CompileOptions off;
  off.hugePages = false;
  EXPECT_FALSE(hugePages(off));
  rt::setHugePageMinBytes(saved);
}

}  // namespace
}  // namespace tcc::test
