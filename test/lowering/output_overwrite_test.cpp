// Kernel::run hands a kernel an unzeroed dense vector output only when the
// kernel stores every value of it (lowering::storesEveryValueOfVectorOutput):
// which kernels qualify, and every kernel's result against the reference
// with the allocator filling fresh memory with garbage.
#include <gtest/gtest.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "kernel_check.h"
#include "tcc/lowering/lower.h"

namespace tcc::test {
namespace {

using frontend::FloatingPointMode;

struct OutputCase {
  std::string name;
  std::string dsl;
  std::map<std::string, rt::Coo> inputs;
  bool storesEveryValue;
};

const char* const kVectors = "tensor y(I) : dense\ntensor x(J) : dense\n";

std::vector<OutputCase> outputCases() {
  // Rows 3, 7 and 11 empty: a kernel that visits only stored rows leaves
  // them alone, so they must start at zero.
  rt::Coo holes = rt::Coo::ofShape({13, 9});
  for (int32_t i = 0; i < 13; ++i)
    for (int32_t k = 0; i % 4 != 3 && k < 1 + i % 5; ++k) {
      int32_t c[2] = {i, (3 * k + i) % 9};
      holes.push(c, 0.75 - 0.125 * k + 0.0625 * i);
    }
  auto spmv = [&](const std::string& format, const std::string& schedule = "") {
    std::string dsl = std::string(kVectors) + "tensor A(I, J) : " + format + "\ny(i) = A(i,j) * x(j)\n";
    return schedule.empty() ? dsl : withSchedule(dsl, schedule);
  };
  const std::map<std::string, rt::Coo> spmvInputs = {{"A", holes}, {"x", randomDense({9}, 71)}};
  return {
      {"CsrSpmv", spmv("csr"), spmvInputs, true},
      {"CsrSpmvParallel", spmv("csr", "parallelize(i, CPUThread, NoRaces)"), spmvInputs, true},
      {"DenseMatrixVector", spmv("{dense, dense}"), {{"A", randomDense({13, 9}, 72)}, {"x", randomDense({9}, 73)}},
       true},
      {"CscSpmv", spmv("csc"), spmvInputs, false},
      {"DcsrSpmv", spmv("dcsr"), spmvInputs, false},
      {"CooSpmv", spmv("coo"), spmvInputs, false},
      {"Residual",
       "tensor r(I) : dense\ntensor b(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n"
       "r(i) = b(i) - sum(j, A(i,j) * x(j))\n",
       {{"A", holes}, {"b", randomDense({13}, 74)}, {"x", randomDense({9}, 75)}}, true},
      {"DenseAdd", "tensor y(I) : dense\ntensor b(I) : dense\ntensor c(I) : dense\ny(i) = b(i) + c(i)\n",
       {{"b", randomDense({40}, 76)}, {"c", randomDense({40}, 77)}}, true},
      {"SparseTimesDense", "tensor y(I) : dense\ntensor b(I) : sparse\ntensor c(I) : dense\ny(i) = b(i) * c(i)\n",
       {{"b", randomSparse({40}, 0.3, 78)}, {"c", randomDense({40}, 79)}}, false},
      {"SparsePlusSparse", "tensor y(I) : dense\ntensor b(I) : sparse\ntensor c(I) : sparse\ny(i) = b(i) + c(i)\n",
       {{"b", randomSparse({40}, 0.3, 80)}, {"c", randomSparse({40}, 0.3, 81)}}, false},
      {"TransposedSpmv", "tensor y(J) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ny(j) = A(i,j) * x(i)\n",
       {{"A", holes}, {"x", randomDense({13}, 82)}}, false},
      {"Ttv", "tensor A(I, J) : dense\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nA(i,j) = B(i,j,k) * c(k)\n",
       {{"B", randomSparse({5, 6, 7}, 0.3, 83)}, {"c", randomDense({7}, 84)}}, false},
  };
}

TEST(OutputOverwrite, OnlyKernelsThatStoreEveryValueQualify) {
  for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
    CompileOptions options;
    options.floatingPoint = mode;
    for (const OutputCase& c : outputCases()) {
      SCOPED_TRACE(c.name + ", " + frontend::toString(mode));
      Lowered lowered = lowerProgram(Program::fromText(c.dsl, "test.tc"), options);
      ASSERT_EQ(lowered.statements.size(), 1u);
      EXPECT_EQ(lowering::storesEveryValueOfVectorOutput(lowered.statements[0].function), c.storesEveryValue)
          << lowered.cpp;
    }
  }
}

// The rule on hand-built functions: y[i] = 1 for i in [0, dims[0]) stores
// every value; each change below breaks it.
TEST(OutputOverwrite, TheRuleOnHandBuiltFunctions) {
  using namespace ir::imp;
  using lowering::storesEveryValueOfVectorOutput;
  const Expr dim = Var::make("y1_dimension", Type::int32());
  const Expr vals = Var::make("y_vals", Type::pointerTo(Type::float64()));
  const Expr i = Var::make("i", Type::int32());
  const Expr one = FloatImm::make(1.0, Type::float64());
  auto function = [&](std::vector<Stmt> beforeLoop, std::vector<Stmt> loopBody, Expr begin) {
    std::vector<Stmt> body = {Declare::make(dim, TensorProperty::make("y", TensorField::Dim, 0)),
                              Declare::make(vals, TensorProperty::make("y", TensorField::Vals, 0))};
    body.insert(body.end(), beforeLoop.begin(), beforeLoop.end());
    body.push_back(For::make(i, begin, dim, Block::make(loopBody)));
    body.push_back(Return::make(IntImm::make(0)));
    Function f;
    f.name = "k";
    f.parameters = {TensorParameter{"y", 1, ScalarKind::Float64, true},
                    TensorParameter{"x", 1, ScalarKind::Float64, false}};
    f.body = Block::make(body);
    return f;
  };
  const Expr zero = IntImm::make(0);
  const Stmt store = Store::make(vals, Cast::make(Type::int64(), i), one);
  EXPECT_TRUE(storesEveryValueOfVectorOutput(function({}, {store}, zero)));
  const Stmt declare = Declare::make(Var::make("t", Type::float64()), one);
  EXPECT_TRUE(storesEveryValueOfVectorOutput(function({}, {declare, store}, zero)));
  EXPECT_FALSE(storesEveryValueOfVectorOutput(function({}, {store}, IntImm::make(1))));  // from 1
  EXPECT_FALSE(storesEveryValueOfVectorOutput(function({Assign::make(dim, IntImm::make(5))}, {store}, zero)));
  EXPECT_FALSE(storesEveryValueOfVectorOutput(
      function({}, {If::make(Binary::make(BinaryOp::Lt, i, IntImm::make(3)), store)}, zero)));  // under a condition
  EXPECT_FALSE(storesEveryValueOfVectorOutput(function({}, {Store::make(vals, i, one, true)}, zero)));  // +=
  EXPECT_FALSE(storesEveryValueOfVectorOutput(
      function({}, {If::make(Binary::make(BinaryOp::Gt, i, IntImm::make(3)), Break::make()), store}, zero)));
  EXPECT_FALSE(storesEveryValueOfVectorOutput(function({}, {store, store}, zero)));  // two stores
  EXPECT_FALSE(storesEveryValueOfVectorOutput(
      function({}, {Store::make(vals, Binary::make(BinaryOp::Add, i, IntImm::make(1)), one)}, zero)));  // y[i + 1]
  EXPECT_FALSE(storesEveryValueOfVectorOutput(
      function({}, {Store::make(vals, i, Load::make(vals, i))}, zero)));  // reads the output
}

// With glibc's M_PERTURB every malloc'd block (outputs among them) starts
// filled with a garbage byte: a kernel given an unzeroed output it does not
// store whole would leave garbage behind, and the comparison fails.
TEST(OutputOverwrite, EveryKernelMatchesTheReferenceOnGarbageMemory) {
#if defined(__GLIBC__)
  ASSERT_EQ(mallopt(M_PERTURB, 0x5a), 1);
  for (FloatingPointMode mode : {FloatingPointMode::Strict, FloatingPointMode::Fast}) {
    CompileOptions options;
    options.floatingPoint = mode;
    for (const OutputCase& c : outputCases()) {
      SCOPED_TRACE(c.name + ", " + frontend::toString(mode));
      expectProgramMatchesReference(c.dsl, c.inputs, options, mode == FloatingPointMode::Fast ? 1e-9 : 1e-10);
    }
  }
  mallopt(M_PERTURB, 0);
#else
  GTEST_SKIP() << "needs glibc's M_PERTURB";
#endif
}

TEST(OutputOverwrite, OnlyDenseTensorsAreLeftUnset) {
  const auto dense = toRuntimeFormat(Format::denseOfOrder(1));
  Tensor vector = Tensor::denseForOverwrite({1000}, dense);
  EXPECT_EQ(vector.nnz(), 1000);
  EXPECT_EQ(vector.dims(), std::vector<int32_t>{1000});
  EXPECT_THROW(Tensor::denseForOverwrite({4, 5}, toRuntimeFormat(Format::csr())), std::invalid_argument);
}

}  // namespace
}  // namespace tcc::test
