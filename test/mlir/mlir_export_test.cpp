// The exported text (the product of --emit mlir) and every refusal, with
// the part it names.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "mlir_check.h"
#include "tcc/mlir.h"

namespace tcc::test {
namespace {

TEST(MlirExportTest, SpmvIsAGenericOverACsrEncoding) {
  std::string text = exportMlir(Program::fromText(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n", "spmv.tc"));
  EXPECT_NE(text.find("#dense_compressed = #sparse_tensor.encoding<{ dimLevelType = [ \"dense\", \"compressed\" ] }>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("affine_map<(i, j) -> (i, j)>,  // A(i,j)"), std::string::npos) << text;
  EXPECT_NE(text.find("iterator_types = [\"parallel\", \"reduction\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("func.func @kernel(%A: tensor<?x?xf64, #dense_compressed>, %x: tensor<?xf64>, %y.size0: index)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("arith.mulf %A.value, %x.value : f64"), std::string::npos) << text;
}

TEST(MlirExportTest, FormatsBecomeLevelTypesAndDimOrderings) {
  // One sparse operand each: MLIR 16 co-iterates repeated coordinates wrongly (see the refusals).
  std::string coo = exportMlir(Program::fromText(
      "tensor a : dense of int32\ntensor B(I, J, K) : {compressed(nonunique), singleton(nonunique), singleton} of int32\n"
      "tensor D(I, J, K) : dense of int32\na = B(i, j, k) * D(i, j, k)\n",
      "coo.tc"));
  EXPECT_NE(coo.find("dimLevelType = [ \"compressed-nu\", \"singleton-nu\", \"singleton\" ]"), std::string::npos) << coo;
  std::string ordered = exportMlir(Program::fromText(
      "tensor a : dense of int32\ntensor C(I, J, K) : {dense, compressed, compressed} order (2, 0, 1) of int32\n"
      "tensor D(I, J, K) : dense of int32\na = C(i, j, k) * D(i, j, k)\n",
      "ordered.tc"));
  EXPECT_NE(ordered.find("dimLevelType = [ \"dense\", \"compressed\", \"compressed\" ], dimOrdering = affine_map<(d0, d1, "
                         "d2) -> (d2, d0, d1)>"),
            std::string::npos)
      << ordered;
  EXPECT_NE(ordered.find("-> tensor<i32>"), std::string::npos) << ordered;
  EXPECT_NE(ordered.find("arith.addi %a.value"), std::string::npos) << ordered;
}

std::string exportedText(const std::string& program) { return exportMlir(Program::fromText(program, "test.tc")); }

// `+=`: the kernel takes the output's prior values (y_before) and the sum
// adds to a copy of them.
TEST(MlirExportTest, AccumulateAddsTheSumToACopyOfThePriorValues) {
  std::string text =
      exportedText("tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) += A(i, j) * x(j)\n");
  EXPECT_NE(text.find("// y(i) = y_before(i) + A(i,j) * x(j)\n"
                      "func.func @kernel(%y_before: tensor<?xf64>, %A: tensor<?x?xf64, #dense_compressed>, %x: "
                      "tensor<?xf64>, %y.size0: index) -> tensor<?xf64> {\n"
                      "  %init = bufferization.alloc_tensor() copy(%y_before) : tensor<?xf64>\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("outs(%init : tensor<?xf64>)"), std::string::npos) << text;
  EXPECT_NE(text.find("%t.1 = arith.addf %y.value, %t.0 : f64"), std::string::npos) << text;
}

// Reading the output at other indices reads its prior values, an input.
TEST(MlirExportTest, ReadingTheOutputReadsItsPriorValues) {
  std::string text = exportedText("tensor y(I) : dense\ntensor A(I, I) : csr\ny(i) = A(i, j) * y(j)\n");
  EXPECT_NE(text.find("ins(%A, %y_before : tensor<?x?xf64, #dense_compressed>, tensor<?xf64>)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("affine_map<(i, j) -> (j)>,  // y_before(j)"), std::string::npos) << text;
  EXPECT_NE(text.find("linalg.fill"), std::string::npos) << text;
}

// abs vanishes at zero: a math op. exp over a sparse operand: a unary whose
// absent region yields exp(0); min of two sparse operands: a binary whose
// one-sided regions take the other as zero.
TEST(MlirExportTest, BuiltinsSayWhatTheyGiveWhereOperandsAreAbsent) {
  std::string text = exportedText("tensor Z(I, J) : csr\ntensor A(I, J) : csr\ntensor B(I, J) : dcsr\n"
                                  "Z(i, j) = min(A(i, j), B(i, j)) + abs(A(i, j)) * exp(B(i, j))\n");
  EXPECT_NE(text.find("  %invariant.0 = arith.constant 0.0 : f64\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %invariant.1 = arith.constant 1.0 : f64  // exp(0.0)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      %t.0 = sparse_tensor.binary %A.value, %B.value : f64, f64 to f64\n"
                      "        overlap={\n"
                      "          ^bb0(%t.1: f64, %t.2: f64):\n"
                      "            %t.3.0 = arith.minf %t.1, %t.2 : f64\n"
                      "            sparse_tensor.yield %t.3.0 : f64\n"
                      "        }\n"
                      "        left={\n"
                      "          ^bb0(%t.1: f64):\n"
                      "            %t.3.1 = arith.minf %t.1, %invariant.0 : f64\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("math.absf %A.value1 : f64"), std::string::npos) << text;
  EXPECT_NE(text.find("        absent={\n"
                      "          sparse_tensor.yield %invariant.1 : f64\n"
                      "        }\n"),
            std::string::npos)
      << text;
}

// Where no tensor is sparse the sparsifier does not run: plain math ops.
TEST(MlirExportTest, BuiltinsOfDenseKernelsArePlainOps) {
  std::string text = exportedText("tensor y(I) : dense\ntensor x(I) : dense\ny(i) = max(exp(x(i)), 2)\n");
  EXPECT_NE(text.find("%t.0 = math.exp %x.value : f64"), std::string::npos) << text;
  EXPECT_NE(text.find("%t.2 = arith.maxf %t.0, %t.1 : f64"), std::string::npos) << text;
  EXPECT_EQ(text.find("sparse_tensor.unary"), std::string::npos) << text;
}

TEST(MlirExportTest, Float16InputsAreWidened) {
  std::string text = exportedText("tensor y(I) : dense of float32\ntensor A(I, J) : csr of float16\n"
                                  "tensor x(J) : dense of float32\ny(i) = A(i, j) * x(j)\n");
  EXPECT_NE(text.find("%A: tensor<?x?xf16, #dense_compressed>"), std::string::npos) << text;
  EXPECT_NE(text.find("^bb0(%A.value: f16, %x.value: f32, %y.value: f32):\n"
                      "      %t.0 = arith.extf %A.value : f16 to f32\n"
                      "      %t.1 = arith.mulf %t.0, %x.value : f32\n"),
            std::string::npos)
      << text;
}

struct Refusal {
  const char* name;
  const char* program;
  const char* names;  // what the message must name
};

class MlirRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(MlirRefusalTest, NamesThePart) {
  std::string message = mlirExportErrorOf(GetParam().program);
  EXPECT_NE(message.find(GetParam().names), std::string::npos) << message;
}

// Each refusal of a DSL program is a diagnostic at the statement (the
// second, where there are several): file:line:col, the line and a caret;
// a schedule's is at its first command (above).
TEST_P(MlirRefusalTest, IsLocatedAtTheStatement) {
  const std::string program = GetParam().program;
  if (program.find("schedule {") != std::string::npos) return;
  // The statement's line: the first (second) that declares no tensor.
  const int wanted = std::string(GetParam().name) == "SeveralStatements" ? 2 : 1;
  int line = 0, statements = 0;
  std::string statement;
  std::istringstream lines(program);
  for (std::string text; std::getline(lines, text);) {
    ++line;
    if (text.rfind("tensor ", 0) == 0) continue;
    statement = text;
    if (++statements == wanted) break;
  }
  try {
    exportMlir(Program::fromText(program, "test.tc"));
    FAIL() << "exported";
  } catch (const MlirExportDiagnosticError& error) {
    ASSERT_EQ(error.diagnostics().size(), 1u);
    const frontend::Diagnostic& refusal = error.diagnostics()[0];
    EXPECT_EQ(refusal.location, (frontend::SourceLocation{"test.tc", line, 1})) << error.what();
    EXPECT_EQ(refusal.message.rfind("cannot export ", 0), 0u) << refusal.message;
    EXPECT_NE(refusal.message.find(GetParam().names), std::string::npos) << refusal.message;
    EXPECT_EQ(std::string(error.what()),
              "test.tc:" + std::to_string(line) + ":1: error: " + refusal.message + "\n" + statement + "\n^\n");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Refusals, MlirRefusalTest,
    ::testing::Values(
        Refusal{"CooCoIterated",
                "tensor y(I) : dense\ntensor A(I, J) : coo\ntensor B(I, J) : csr\ny(i) = A(i, j) * B(i, j)\n",
                "co-iterated with another sparse operand"},
        Refusal{"CooReadAtTwoPlaces", "tensor y(I) : dense\ntensor A(I, I) : coo\ny(i) = A(i, j) * A(j, i)\n",
                "A ({compressed(nonunique), singleton}) repeats coordinates and is read at 2 places (A(i,j), A(j,i))"},
        Refusal{"AccumulateIntoASparseOutputWithASum",
                "tensor y(I) : sparse\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) += A(i, j) * x(j)\n",
                "the term y_before(i) does not use the summed variable j"},
        Refusal{"SubtractingTheOutputFromASum",
                "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j) - y(i)\n",
                "the term y_before(i) does not use the summed variable j"},
        Refusal{"NestedSum", "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(I) : dense\ny(i) = sum(j, A(i, j)) * x(i)\n",
                "the sum sum(j, A(i,j)) inside an expression"},
        Refusal{"TermWithoutSummedVariable",
                "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ntensor z(I) : dense\n"
                "y(i) = A(i, j) * x(j) - z(i)\n",
                "the term z(i) does not use the summed variable j"},
        Refusal{"SumOverASparseLevelOfExp", "tensor y(I) : dense\ntensor B(I, J) : csr\ny(i) = exp(B(i, j))\n",
                "the sum over j (a sparse level) of exp(B(i,j)), which is exp(0.0) where the sparse operands j indexes are "
                "absent"},
        Refusal{"SumOverASparseLevelOfAConstantPlus",
                "tensor y(I) : dense\ntensor B(I, J) : csr\ny(i) = (B(i, j) + 1) * 2\n",
                "the sum over j (a sparse level) of (B(i,j) + 1) * 2"},
        Refusal{"SumOverASparseLevelOfExpTimesAnInvariant",
                "tensor y(I) : dense\ntensor B(I, J) : csr\ntensor z(I) : dense\ny(i) = exp(B(i, j)) * z(i)\n",
                "which is exp(0.0) * z(i) where the sparse operands j indexes are absent"},
        Refusal{"SumOverASparseLevelOfASparseOperandItDoesNotIndex",
                "tensor y(I) : dense\ntensor B(I, J) : csr\ntensor w(I) : sparse\ntensor z(I) : dense\n"
                "y(i) = (B(i, j) + w(i)) * z(i)\n",
                "which is (0.0 + w(i)) * z(i) where the sparse operands j indexes are absent"},
        Refusal{"CooSummedIntoASparseOutput", "tensor y(I) : sparse\ntensor A(I, J) : coo\ny(i) = A(i, j)\n",
                "A ({compressed(nonunique), singleton}) repeats coordinates and is summed into the sparse output y"},
        Refusal{"IntegerExp", "tensor y(I) : dense of int32\ntensor x(I) : sparse of int32\ny(i) = exp(x(i))\n",
                "the builtin exp(x(i)) computes in float64 inside an int32 expression"},
        Refusal{"DivisionByATensor",
                "tensor A(I, J) : csr\ntensor B(I, J) : csr\ntensor C(I, J) : csr\nA(i, j) = B(i, j) / C(i, j)\n",
                "the division B(i,j) / C(i,j)"},
        Refusal{"SeveralStatements", "tensor y(I) : dense\ntensor z(I) : dense\ntensor x(I) : sparse\ny(i) = x(i)\nz(i) = x(i)\n",
                "the program has 2 statements"},
        Refusal{"NmLevel", "tensor A(I, J) : nm(2, 4, 1)\ntensor B(I, J) : dense\nB(i, j) = A(i, j)\n",
                "the level format nm(2,4,1)"},
        Refusal{"Float16Output", "tensor y(I) : dense of float16\ntensor x(I) : sparse of float16\ny(i) = x(i)\n",
                "the float16 output y"},
        Refusal{"Float16IntoAnInteger", "tensor y(I) : dense of int32\ntensor x(I) : sparse of float16\ny(i) = x(i)\n",
                "mixed element types (x is float16, y is int32)"},
        Refusal{"MixedTypes", "tensor y(I) : dense of float32\ntensor x(I) : sparse\ny(i) = x(i)\n",
                "mixed element types (x is float64, y is float32)"},
        Refusal{"CooOutput", "tensor A(I, J) : coo\ntensor B(I, J) : csr\nA(i, j) = B(i, j)\n",
                "the sparse output A has a compressed(nonunique) level"},
        Refusal{"SparseOutputAgainstTheLoopOrder", "tensor A(J, I) : csr\ntensor B(I, J) : csr\nA(j, i) = B(i, j)\n",
                "the sparse output A is stored in the order (j, i)"},
        Refusal{"Schedule",
                "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i, j) * x(j)\n"
                "schedule {\n  split(i, i0, i1, 32)\n}\n",
                "test.tc:6:3: error: split(i, i0, i1, 32): schedules are not exported to MLIR 16"}),
    [](const auto& info) { return std::string(info.param.name); });

struct Outcome {
  std::string output;
  int exitCode = -1;
};

Outcome runCommand(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, read);
  int status = pclose(pipe);
  outcome.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

TEST(MlirCommandTest, EmitMlirCompilesWithMlirOpt) {
  TCC_SKIP_WITHOUT_MLIR();
  for (std::string example : {"spmv", "spgemm", "mttkrp", "sddmm", "add_csr", "inner"}) {
    SCOPED_TRACE(example);
    std::string tc = std::string(TCC_SOURCE_DIR) + "/examples/" + example + ".tc";
    std::string mlir = ::testing::TempDir() + example + ".mlir";
    Outcome exported =
        runCommand(std::string("'") + TCC_EXECUTABLE + "' compile '" + tc + "' --emit mlir -o '" + mlir + "'");
    ASSERT_EQ(exported.exitCode, 0) << exported.output;
    Outcome compiled = runCommand("'" + mlirTools()->optimizer + "' --sparse-compiler '" + mlir + "' -o /dev/null");
    EXPECT_EQ(compiled.exitCode, 0) << compiled.output;
    std::remove(mlir.c_str());
  }
}

// A program from the C++ builder has no source: the plain MlirExportError.
TEST(MlirExportTest, BuilderProgramsAreRefusedWithoutALocation) {
  IndexVar i("i"), j("j");
  TensorVar y("y", {"I"}, Format::denseOfOrder(1)), A("A", {"I", "J"}, Format::csr()),
      x("x", {"J"}, Format::denseOfOrder(1));
  try {
    exportMlir(Program::fromStatements({y(i) = A(i, j) / x(j)}, {y, A, x}));
    FAIL() << "exported";
  } catch (const lowering::MlirExportError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("cannot export `y(i) = A(i,j) / x(j)` to MLIR 16: the division", 0), 0u)
        << error.what();
  }
}

TEST(MlirCommandTest, RefusalExitsNonZeroWithoutOutputFile) {
  std::string tc = std::string(TCC_SOURCE_DIR) + "/examples/spmv_parallel.tc";
  std::string output = ::testing::TempDir() + "refused.mlir";
  std::remove(output.c_str());
  Outcome outcome = runCommand(std::string("'") + TCC_EXECUTABLE + "' compile '" + tc + "' --emit mlir -o '" + output + "'");
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_NE(outcome.output.find("schedules are not exported to MLIR 16"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("^"), std::string::npos) << outcome.output;
  FILE* file = std::fopen(output.c_str(), "r");
  EXPECT_EQ(file, nullptr);
  if (file) std::fclose(file);
}

// A statement the export cannot express: file:line:col at the statement,
// the line and a caret, and no output file.
TEST(MlirCommandTest, RefusalOfTheStatementIsLocated) {
  std::string tc = ::testing::TempDir() + "divide.tc";
  std::string output = ::testing::TempDir() + "divide.mlir";
  std::remove(output.c_str());
  {
    std::ofstream file(tc);
    file << "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\n\n  y(i) = A(i, j) / x(j)\n";
  }
  Outcome outcome = runCommand(std::string("'") + TCC_EXECUTABLE + "' compile '" + tc + "' --emit mlir -o '" + output + "'");
  EXPECT_NE(outcome.exitCode, 0);
  EXPECT_EQ(outcome.output, tc + ":5:3: error: cannot export `y(i) = A(i,j) / x(j)` to MLIR 16: the division A(i,j) / "
                                 "x(j): MLIR 16's sparsifier divides only by a nonzero constant\n  y(i) = A(i, j) / x(j)\n  ^\n");
  FILE* file = std::fopen(output.c_str(), "r");
  EXPECT_EQ(file, nullptr);
  if (file) std::fclose(file);
  std::remove(tc.c_str());
}

TEST(MlirCommandTest, HelpListsMlir) {
  Outcome outcome = runCommand(std::string("'") + TCC_EXECUTABLE + "' compile --help");
  EXPECT_EQ(outcome.exitCode, 0);
  EXPECT_NE(outcome.output.find("mlir (MLIR 16 linalg.generic"), std::string::npos) << outcome.output;
}

}  // namespace
}  // namespace tcc::test
