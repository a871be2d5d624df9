// Outputs whose first level is compressed (DCSR, a sparse vector, CSF)
// appended in place by a row loop on CPU threads that runs in ranges of
// coordinates. In one pass where the operands bound the output's entries
// and a loop merges several of them: each thread claims ranges in order,
// appends a range to arrays of its own and copies it to the offsets the
// ranges before it leave (a look-back). Else in two: a pass counts each
// range's appends, a prefix sum over the ranges gives each its offsets, a
// second pass appends. Unions,
// differences, intersections, unions with intersections inside, three
// operands, DCSR beside CSR, COO and dense operands; inputs with most rows
// empty, rows only one operand stores, fewer rows than ranges (and than
// threads), an empty operand, both empty, rows longer than a thread's
// first arrays, real matrices; 1, 2, 3 and 8 threads; strict and fast
// mode; both forms, and one pass with a range a row (its arrays growing
// from two entries, every range looking back): every run against the
// dense reference. A loop that one unique level drives alone (its
// positions cut by the ranges' binary searches) and a loop over the plain
// coordinates (CSR operands only) append in ranges too (in two passes where
// one operand drives every loop: counting then only reads its positions).
// Where the ranges do not append in order (the Workspace strategy asked
// for) the sparse workspaces stay, and `tcc explain` says which path is
// taken and why.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kernel_check.h"
#include "tcc/jit/jit.h"
#include "tcc/lowering/codegen.h"
#include "tcc/test/reference.h"

namespace tcc::test {
namespace {

// Sets the thread count of the OpenMP runtime the kernels run on (loaded
// with the first OpenMP kernel): whichever of the runtimes is loaded.
// Returns how many runtimes took it.
int setKernelThreads(int threads) {
  int set = 0;
  for (const char* name : {"libomp.so.5", "libomp.so", "libgomp.so.1"}) {
    void* runtime = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (!runtime) continue;
    auto setThreads = reinterpret_cast<void (*)(int)>(dlsym(runtime, "omp_set_num_threads"));
    auto maxThreads = reinterpret_cast<int (*)()>(dlsym(runtime, "omp_get_max_threads"));
    if (setThreads && maxThreads) {
      setThreads(threads);
      if (maxThreads() == threads) ++set;
    }
    dlclose(runtime);
  }
  return set;
}

// Compiles `dsl` once and runs it on `inputs` at each thread count, each
// output against the dense reference. Returns the generated code.
std::string expectEveryThreadCountMatchesReference(const std::string& dsl,
                                                   const std::map<std::string, rt::Coo>& inputs,
                                                   const CompileOptions& options = {}) {
  Program program = Program::fromText(dsl, "test.tc");
  Kernel kernel = compile(program, options);
  std::map<std::string, Tensor> bound;
  std::map<std::string, DenseArray> dense;
  for (const auto& [name, coo] : inputs) {
    const TensorVar* declared = program.syntax().findTensor(name);
    if (!declared) continue;
    bound.emplace(name, rt::pack(coo, toRuntimeFormat(declared->format()), toRuntimeType(declared->datatype())));
    DenseArray array;
    array.dims.assign(coo.dims.begin(), coo.dims.end());
    array.values = rt::toDense(coo);
    dense.emplace(name, std::move(array));
  }
  auto expected = evaluate(program.statements(), dense);
  for (int threads : {1, 2, 3, 8}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_GE(setKernelThreads(threads), 1) << "no OpenMP runtime took the thread count";
    expectOutputsMatch(kernel.run(bound), expected, 1e-10);
  }
  setKernelThreads(2);
  if (::testing::Test::HasFailure()) ADD_FAILURE() << "generated code:\n" << kernel.source();
  return kernel.source();
}

struct Statement {
  std::string declarations;  // every tensor, the output Y first
  std::string text;
  // Whether Y goes in one pass: the operands bound its entries (no COO, no
  // dense operand) and a loop merges several (else counting is cheap).
  bool onePass = true;
};

const std::string kRows = "parallelize(i, CPUThread, NoRaces)";

// Matrix statements over A and B (and C, D) of inputsOverAB.
const std::vector<Statement> kMatrixStatements = {
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) + B(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : dcsr\n",
     "Y(i,j) = 2 * A(i,j) - B(i,j) + C(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) - B(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : coo\ntensor B(I, J) : dcsr\ntensor C(I, J) : csr\n",
     "Y(i,j) = A(i,j) + B(i,j) + C(i,j)", false},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) * B(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\ntensor C(I, J) : csr\n",
     "Y(i,j) = A(i,j) + B(i,j) * C(i,j)"},
    {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor D(I, J) : dense\n", "Y(i,j) = A(i,j) + D(i,j)", false},
};

std::vector<NamedInputs> matrixInputs() {
  rt::Coo none = rt::Coo::ofShape({50, 40});
  return {inputsOverAB("random 10x8, fewer rows than ranges", randomSparse({10, 8}, 0.12, 1),
                       randomSparse({10, 8}, 0.2, 2), 3),
          inputsOverAB("random 40x30, most rows empty", randomSparse({40, 30}, 0.02, 5), randomSparse({40, 30}, 0.04, 6),
                       7),
          inputsOverAB("random 3000x20, rows only one operand stores", randomSparse({3000, 20}, 0.01, 10),
                       randomSparse({3000, 20}, 0.015, 11), 12),
          inputsOverAB("A empty, B random 50x40", none, randomSparse({50, 40}, 0.05, 13), 14),
          inputsOverAB("A and B empty", none, none, 15),
          inputsOverAB("ibm32a + ibm32b^T", realMatrix("ibm32a.mtx"), transposed(realMatrix("ibm32b.mtx")), 20)};
}

std::string program(const Statement& statement, const std::string& mode, const std::string& schedule = kRows) {
  return withSchedule(statement.declarations + statement.text + "\n" + mode, schedule);
}

// The ranges append the output themselves: no sparse workspace, in one
// pass or in two.
void expectAppendedByRanges(const std::string& code, bool onePass) {
  EXPECT_TRUE(contains(code, "ranges of i on the threads, each")) << code;
  EXPECT_EQ(contains(code, "count each range of i's appends to Y's levels"), !onePass) << code;
  EXPECT_EQ(contains(code, "append each range of i to Y from its offsets"), !onePass) << code;
  EXPECT_EQ(contains(code, "ranges of i claimed in order by the threads, in one pass"), onePass) << code;
  EXPECT_EQ(contains(code, "int64_t pY1_range = tcc_chunk_offset(Y1_range_state, i_chunk, pY1_thread);"), onePass)
      << code;
  // (The prelude declares the workspace runtime's calls; the kernel makes none.)
  EXPECT_FALSE(contains(code, "= tcc_ism_kernel_create")) << code;
  EXPECT_FALSE(contains(code, "tcc_ism_insert_hash_2(ws_")) << code;
}

TEST(RangesAppendOutput, MatricesMatchReferenceAtEveryThreadCount) {
  const std::vector<NamedInputs> all = matrixInputs();
  int checked = 0;
  for (const auto& statement : kMatrixStatements)
    for (const char* mode : {"", "fp fast\n"}) {
      std::string dsl = program(statement, mode);
      SCOPED_TRACE(dsl);
      std::string decisions = decisionsOf(dsl);
      EXPECT_TRUE(contains(decisions, "Y ({compressed, compressed}) is appended in place by the ranges of i"))
          << decisions;
      EXPECT_EQ(contains(decisions, "Y is appended by the ranges in one pass"), statement.onePass) << decisions;
      EXPECT_EQ(contains(decisions, "Y is appended by the ranges in two passes (its operands give no bound"),
                !statement.onePass)
          << decisions;
      for (const auto& inputs : all) {
        SCOPED_TRACE(inputs.name);
        ++checked;
        expectAppendedByRanges(expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors)),
                               statement.onePass);
      }
    }
  EXPECT_EQ(checked, 7 * 2 * 6);
}

TEST(RangesAppendOutput, SparseVectorsThirdOrderTensorsAndACopyInTheLoopsOrder) {
  struct Case {
    std::string text;
    std::map<std::string, rt::Coo> inputs;
    bool onePass = true;
  };
  const std::vector<Case> cases = {
      {"tensor Y(I) : sparse\ntensor A(I) : sparse\ntensor B(I) : sparse\nY(i) = A(i) - 3 * B(i)\n",
       {{"A", randomSparse({500}, 0.03, 30)}, {"B", randomSparse({500}, 0.05, 31)}}},
      {"tensor Y(I) : sparse\ntensor A(I) : sparse\ntensor B(I) : sparse\nY(i) = A(i) - 3 * B(i)\n",
       {{"A", rt::Coo::ofShape({70})}, {"B", randomSparse({70}, 0.1, 32)}}},
      {"tensor Y(I, J, K) : {compressed, compressed, compressed}\ntensor A(I, J, K) : {compressed, compressed, "
       "compressed}\ntensor B(I, J, K) : {compressed, compressed, compressed}\nY(i,j,k) = A(i,j,k) + B(i,j,k)\n",
       {{"A", randomSparse({60, 9, 7}, 0.01, 33)}, {"B", randomSparse({60, 9, 7}, 0.02, 34)}}},
      {"tensor Y(I, J, K) : {compressed, compressed, compressed}\ntensor A(I, J, K) : {compressed, compressed, "
       "compressed}\ntensor B(I, J, K) : coo\nY(i,j,k) = A(i,j,k) * B(i,j,k) + A(i,j,k)\n",
       {{"A", randomSparse({40, 6, 8}, 0.05, 35)}, {"B", randomSparse({40, 6, 8}, 0.1, 36)}}, false},
      // B's first level drives the loop over i alone.
      {"tensor Y(I, J, K) : csf\ntensor B(I, J, K) : csf\ntensor c(K) : dense\nY(i,j,k) = B(i,j,k) * c(k)\n",
       {{"B", randomSparse({50, 8, 9}, 0.03, 39)}, {"c", randomDense({9}, 40)}}, false},
      // An operand stored in the other order, read from a copy in the
      // loops' order.
      {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(J, I) : dcsr\nY(i,j) = A(i,j) + B(j,i)\n",
       {{"A", randomSparse({80, 30}, 0.03, 37)}, {"B", randomSparse({30, 80}, 0.03, 38)}}},
  };
  for (const auto& [text, inputs, onePass] : cases) {
    std::string dsl = withSchedule(text, kRows);
    SCOPED_TRACE(dsl);
    EXPECT_TRUE(contains(decisionsOf(dsl), "is appended in place by the ranges of i")) << decisionsOf(dsl);
    EXPECT_EQ(contains(decisionsOf(dsl), "Y is appended by the ranges in one pass"), onePass) << decisionsOf(dsl);
    expectAppendedByRanges(expectEveryThreadCountMatchesReference(dsl, inputs), onePass);
  }
}

// Loops that do not merge: one unique level drives the loop over i alone
// (a range walks the positions between its two binary searches), or no
// operand stores i sparsely (a range walks its coordinates).
const std::vector<std::pair<Statement, std::string>> kUnmergedStatements = {
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) * B(i,j)"},
     "each over the positions of the one level that drives the loop"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\n", "Y(i,j) = 2 * A(i,j)", false},
     "each over the positions of the one level that drives the loop"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) * B(i,j) * A(i,j)"},
     "each merging the operands' cursors"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) + B(i,j)"},
     "each over its coordinates"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : csr\ntensor B(I, J) : csr\n", "Y(i,j) = A(i,j) * B(i,j)"},
     "each over its coordinates"},
    {{"tensor Y(I, J) : dcsr\ntensor A(I, J) : csr\n", "Y(i,j) = -A(i,j)", false}, "each over its coordinates"},
};

TEST(RangesAppendOutput, LoneDriverAndCoordinateLoopsMatchReferenceAtEveryThreadCount) {
  const std::vector<NamedInputs> all = matrixInputs();
  int checked = 0;
  for (const auto& [statement, walk] : kUnmergedStatements)
    for (const char* mode : {"", "fp fast\n"}) {
      std::string dsl = program(statement, mode);
      SCOPED_TRACE(dsl);
      std::string decisions = decisionsOf(dsl);
      EXPECT_TRUE(contains(decisions, "Y ({compressed, compressed}) is appended in place by the ranges of i"))
          << decisions;
      EXPECT_FALSE(contains(decisions, "one per thread of the loop over i")) << decisions;
      // One operand driving the loops alone: counting reads its positions only.
      EXPECT_EQ(contains(decisions, "Y is appended by the ranges in two passes (one operand drives the loops alone"),
                !statement.onePass)
          << decisions;
      for (const auto& inputs : all) {
        SCOPED_TRACE(inputs.name);
        ++checked;
        std::string code = expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors));
        expectAppendedByRanges(code, statement.onePass);
        EXPECT_TRUE(contains(code, "ranges of i on the threads, " + walk)) << code;
        EXPECT_FALSE(contains(code, "= tcc_ism_kernel_create")) << code;
      }
    }
  EXPECT_EQ(checked, 6 * 2 * 6);
}

// assemble(Y, Append, true) (the output's values allocated apart from its
// coordinates otherwise): the ranges allocate every array themselves.
TEST(RangesAppendOutput, UnderAssembleApartFromValues) {
  const std::vector<Statement> statements = {kMatrixStatements[0], kUnmergedStatements[0].first,
                                             kUnmergedStatements[1].first, kUnmergedStatements[3].first};
  const std::vector<NamedInputs> all = matrixInputs();
  for (const auto& statement : statements)
    for (const auto& inputs : {all[1], all[4]}) {
      std::string dsl = program(statement, "", kRows + "\nassemble(Y, Append, true)");
      SCOPED_TRACE(dsl + inputs.name);
      EXPECT_TRUE(contains(decisionsOf(dsl), "is appended in place by the ranges of i")) << decisionsOf(dsl);
      EXPECT_TRUE(contains(decisionsOf(dsl), "Y is appended by the ranges in two passes (its values are allocated "
                                             "apart from its coordinates)"))
          << decisionsOf(dsl);
      expectAppendedByRanges(expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors)), false);
    }
}

// CompileOptions::rowsInOnePass = false (what the bench compares against):
// the two-pass form, on the same statements.
TEST(RangesAppendOutput, TwoPassFormWhenOnePassIsTurnedOff) {
  const std::vector<NamedInputs> all = matrixInputs();
  CompileOptions twoPasses;
  twoPasses.rowsInOnePass = false;
  std::vector<Statement> statements = kMatrixStatements;
  for (const auto& [statement, walk] : kUnmergedStatements) statements.push_back(statement);
  for (const auto& statement : statements) {
    std::string dsl = program(statement, "");
    SCOPED_TRACE(dsl);
    for (const auto& inputs : {all[0], all[2], all[3], all[5]}) {
      SCOPED_TRACE(inputs.name);
      expectAppendedByRanges(
          expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors), twoPasses), false);
    }
  }
}

// Runs the kernel of `dsl`, compiled once by the system compiler with
// `defines`, through its entry point on each of `all` at 1, 2, 3 and 8
// threads: Y against the dense reference. Returns how many inputs it ran.
int expectEntryPointMatchesReference(const std::string& dsl, const std::vector<NamedInputs>& all,
                                     const std::string& defines) {
  Program program = Program::fromText(dsl, "test.tc");
  Lowered lowered = lowerProgram(program);
  const CompiledStatement& statement = lowered.statements.at(0);
  jit::CompileOptions flags{jit::Backend::SystemCompiler, 3, true,
                            lowering::cppFloatingPointFlags(lowering::FloatingPointMode::Strict)};
  std::istringstream words(defines);
  for (std::string word; words >> word;) flags.extraFlags.push_back(word);
  auto module = jit::compile(lowered.cpp, flags);
  auto entryPoint = module->function<int32_t (*)(tcc_tensor**)>("tcc_kernel_0");
  int ran = 0;
  for (const auto& named : all) {
    SCOPED_TRACE(named.name + ", " + defines);
    const std::map<std::string, rt::Coo> inputs = declaredInputs(dsl, named.tensors);
    std::map<std::string, DenseArray> dense;
    for (const auto& [name, coo] : inputs) {
      DenseArray array;
      array.dims.assign(coo.dims.begin(), coo.dims.end());
      array.values = rt::toDense(coo);
      dense.emplace(name, std::move(array));
    }
    auto expected = evaluate(program.statements(), dense);
    const DenseArray& y = expected.at("Y");
    std::map<std::string, Tensor> packed;
    for (const auto& parameter : statement.parameters)
      if (parameter.name() != "Y")
        packed.emplace(parameter.name(), rt::pack(inputs.at(parameter.name()), toRuntimeFormat(parameter.format())));
    for (int threads : {1, 2, 3, 8}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      EXPECT_GE(setKernelThreads(threads), 1) << "no OpenMP runtime took the thread count";
      std::vector<tcc_tensor> views;
      size_t output = 0;
      for (const auto& parameter : statement.parameters) {
        if (parameter.name() == "Y") {
          output = views.size();
          views.push_back(rt::Tensor::emptyAssembledOutput(std::vector<int32_t>(y.dims.begin(), y.dims.end()),
                                                           toRuntimeFormat(statement.computedOutput.format()),
                                                           rt::ValueType::Float64));
        } else {
          views.push_back(packed.at(parameter.name()).abiView());
        }
      }
      std::vector<tcc_tensor*> pointers;
      for (auto& view : views) pointers.push_back(&view);
      EXPECT_EQ(entryPoint(pointers.data()), 0);
      std::map<std::string, Tensor> outputs;
      outputs.emplace("Y", rt::Tensor::adopt(std::move(views[output])));
      expectOutputsMatch(outputs, {{"Y", y}}, 1e-10);
    }
    ++ran;
  }
  setKernelThreads(2);
  if (::testing::Test::HasFailure()) ADD_FAILURE() << "generated code:\n" << lowered.cpp;
  return ran;
}

// One pass with a range a coordinate (-DTCC_CHUNK_ENTRIES=1: a thread's
// arrays start at two entries and grow, every range looks back over the
// ones before it) or a few, streaming stores or not: adds of two and three
// operands, a scale, intersections, a union with an intersection inside,
// CSR operands, on every input of matrixInputs (empty rows, empty
// ranges, more threads than rows, an empty operand).
TEST(RangesAppendOutput, OnePassWithARangeACoordinateGrowsAndLooksBack) {
  const std::vector<Statement> statements = {
      kMatrixStatements[0], kMatrixStatements[1], kMatrixStatements[2], kMatrixStatements[4], kMatrixStatements[5],
      kUnmergedStatements[0].first, kUnmergedStatements[2].first, kUnmergedStatements[3].first,
      kUnmergedStatements[4].first};
  const std::vector<NamedInputs> all = matrixInputs();
  int checked = 0;
  for (const auto& statement : statements) {
    std::string dsl = program(statement, "");
    SCOPED_TRACE(dsl);
    ASSERT_TRUE(contains(decisionsOf(dsl), "Y is appended by the ranges in one pass")) << decisionsOf(dsl);
    for (const char* defines : {"-DTCC_CHUNK_ENTRIES=1", "-DTCC_CHUNK_ENTRIES=3 -DTCC_STREAMING_STORE_VALUES=0"})
      checked += expectEntryPointMatchesReference(dsl, all, defines);
  }
  EXPECT_EQ(checked, 9 * 2 * 6);
}

// Rows longer than a thread's first arrays (tcc_chunk_capacity(), 16384
// entries), a range a row: the arrays grow while a range is appended.
TEST(RangesAppendOutput, OnePassRowsLongerThanAThreadsFirstArrays) {
  const std::vector<Statement> statements = {kMatrixStatements[0], kMatrixStatements[4], kMatrixStatements[5]};
  rt::Coo a = randomSparse({12, 60000}, 0.4, 61), b = randomSparse({12, 60000}, 0.3, 62);
  for (const auto& statement : statements) {
    std::string dsl = program(statement, "");
    SCOPED_TRACE(dsl);
    expectAppendedByRanges(
        expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, {{"A", a}, {"B", b}, {"C", a}})), true);
  }
}

// Where the ranges cannot append in order, the workspaces stay (and give
// the right answer), and explain says why.
TEST(RangesAppendOutput, OtherLoopsKeepTheSparseWorkspaces) {
  struct Kept {
    std::string declarations, text, schedule, why;
  };
  const std::vector<Kept> kept = {
      {"tensor Y(I, J) : dcsr\ntensor A(I, J) : dcsr\ntensor B(I, J) : dcsr\n", "Y(i,j) = A(i,j) + B(i,j)",
       "parallelize(i, CPUThread, Workspace)", ""},
  };
  const NamedInputs inputs = matrixInputs()[1];
  for (const auto& each : kept) {
    std::string dsl = withSchedule(each.declarations + each.text + "\n", each.schedule);
    SCOPED_TRACE(dsl);
    std::string decisions = decisionsOf(dsl);
    EXPECT_FALSE(contains(decisions, "is appended in place by the ranges")) << decisions;
    EXPECT_TRUE(contains(decisions, "one per thread of the loop over i")) << decisions;
    if (!each.why.empty()) EXPECT_TRUE(contains(decisions, each.why)) << decisions;
    std::string code = expectEveryThreadCountMatchesReference(dsl, declaredInputs(dsl, inputs.tensors));
    EXPECT_TRUE(contains(code, "= tcc_ism_kernel_create_per_thread(")) << code;
  }
}

}  // namespace
}  // namespace tcc::test
