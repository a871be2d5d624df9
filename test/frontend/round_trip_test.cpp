// Print-parse round trips: a parsed program printed as DSL text parses to
// a program that prints the same, with the same tensors and statements.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend_test_support.h"
#include "tcc/frontend/printer.h"
#include "tcc/ir/index_printer.h"

namespace tcc::frontend {
namespace {

// Parses, prints, parses the print and compares what matters.
void expectRoundTrip(const std::string& text, const std::string& name) {
  SCOPED_TRACE(name);
  Program first = parseProgram(text, name);
  std::string printed = printProgram(first);
  Program second;
  try {
    second = parseProgram(printed, name + ".printed");
  } catch (const DiagnosticError& error) {
    FAIL() << "printed program does not parse:\n" << printed << error.what();
  }
  EXPECT_EQ(printProgram(second), printed);
  ASSERT_EQ(second.tensors.size(), first.tensors.size());
  for (size_t index = 0; index < first.tensors.size(); ++index) {
    const ir::TensorVar& a = first.tensors[index];
    const ir::TensorVar& b = second.tensors[index];
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_EQ(a.format(), b.format()) << a.name();
    EXPECT_EQ(a.datatype(), b.datatype()) << a.name();
  }
  ASSERT_EQ(second.statements.size(), first.statements.size());
  for (size_t index = 0; index < first.statements.size(); ++index)
    EXPECT_EQ(ir::toString(second.statements[index]), ir::toString(first.statements[index]));
  ASSERT_EQ(second.schedule.size(), first.schedule.size());
  for (size_t index = 0; index < first.schedule.size(); ++index)
    EXPECT_EQ(printScheduleCommand(second.schedule[index]),
              printScheduleCommand(first.schedule[index]));
  EXPECT_EQ(second.target.has_value(), first.target.has_value());
  if (first.target && second.target) {
    EXPECT_EQ(second.target->target, first.target->target);
    EXPECT_EQ(second.target->sm, first.target->sm);
  }
}

TEST(RoundTrip, PrintedProgramShape) {
  Program program = parseProgram(
      "tensor A(I, J) : csr\ntensor B(I, K) : csc of float32\ntensor C(K, J) : csr\n"
      "tensor s : dense\n"
      "A(i,j) = B(i,k) * C(k,j)\ns = A(i,j)\n"
      "schedule { reorder(k, i, j) sparse_workspace(policy = hash) }\ntarget cuda(sm_80)\n",
      "p.tc");
  EXPECT_EQ(printProgram(program),
            "tensor A(I, J) : {dense, compressed} of float64\n"
            "tensor B(I, K) : {dense, compressed} order (1,0) of float32\n"
            "tensor C(K, J) : {dense, compressed} of float64\n"
            "tensor s of float64\n"
            "\n"
            "A(i,j) = B(i,k) * C(k,j)\n"
            "s = A(i,j)\n"
            "\n"
            "schedule {\n"
            "  reorder(k, i, j)\n"
            "  sparse_workspace(policy = hash)\n"
            "}\n"
            "\n"
            "target cuda(sm_80)\n");
  EXPECT_EQ(printProgram(parseProgram("tensor a\nfp fast\n", "f.tc")), "tensor a of float64\n\nfp fast\n");
}

TEST(RoundTrip, Expressions) {
  expectRoundTrip(
      "tensor a : dense\ntensor b : dense of float32\ntensor x(N) : sparse\ntensor M(N, N) : csr\n"
      "a = b - (a - b) * -x(i) / 2.5 + sum(j, M(i,j) * x(j))\n"
      "a += -(b + 1) - b + sqrt(abs(b)) * min(a, b)\n"
      "a = perm(M)\n"
      "x(i) = sum(j, M(i,j) * sum(k, M(j,k) * x(k)))\n",
      "expressions.tc");
}

TEST(RoundTrip, Formats) {
  expectRoundTrip(
      "format f = {compressed(nonunique, unordered), singleton(unordered)}\n"
      "tensor A(I, J) : f of int32\ntensor B(4, 8) : nm(2, 4, 1) of float16\n"
      "tensor C(I, J, K) : {dense, compressed, dense} order (2, 0, 1)\n"
      "tensor D(I, J, K) : coo of int64\ntensor E(I, J, K) : csf\ntensor F(I, J) : dcsc\n",
      "formats.tc");
}

// Every seed of the fuzzer's corpus and every example that parses.
TEST(RoundTrip, CorpusAndExamples) {
  std::vector<std::filesystem::path> folders = {TCC_FUZZ_CORPUS_DIR,
                                                std::filesystem::path(TCC_SOURCE_DIR) / "examples"};
  int checked = 0;
  for (const auto& folder : folders) {
    if (!std::filesystem::is_directory(folder)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (entry.path().extension() != ".tc") continue;
      std::ifstream file(entry.path());
      std::stringstream text;
      text << file.rdbuf();
      try {
        parseProgram(text.str(), entry.path().filename().string());
      } catch (const DiagnosticError&) {
        continue;  // seeds with errors on purpose
      }
      expectRoundTrip(text.str(), entry.path().filename().string());
      ++checked;
    }
  }
  EXPECT_GE(checked, 5);
}

}  // namespace
}  // namespace tcc::frontend
