// One test per error class: the exact message and where it points.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend_test_support.h"

namespace tcc::frontend {
namespace {

using testing::errorsOf;
using testing::onlyErrorOf;

const char* const kDeclarations =
    "tensor A(I, J) : csr\n"
    "tensor B(I, K) : csc\n"
    "tensor C(K, J) : csr\n";

std::string withDeclarations(const std::string& rest) { return kDeclarations + rest; }

// ---- syntax ----------------------------------------------------------------

TEST(SyntaxError, ListNeedsCommaOrParenthesis) {
  EXPECT_EQ(onlyErrorOf("tensor B(I J)\n"), "1:12: expected ',' or ')'");
}

TEST(SyntaxError, MissingTensorName) {
  EXPECT_EQ(onlyErrorOf("tensor (I)\n"), "1:8: expected a tensor name");
}

TEST(SyntaxError, MissingFormatAfterColon) {
  EXPECT_EQ(onlyErrorOf("tensor A(I) :\n"), "1:14: expected a format");
}

TEST(SyntaxError, MissingAssignment) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) B(i,j)\n")), "4:8: expected '=' or '+='");
}

TEST(SyntaxError, MissingOperand) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k) * \n")), "4:19: expected an operand");
}

TEST(SyntaxError, TwoOperandsWithoutOperator) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k) C(k,j)\n")),
            "4:17: expected an operator ('+', '-', '*', '/') or the end of the line");
}

TEST(SyntaxError, UnclosedParenthesisPointsAtEndOfItsLine) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = (B(i,j)\n\n# comment\ntarget cpu\n")),
            "4:17: expected ')'");
}

TEST(SyntaxError, StrayToken) {
  EXPECT_EQ(onlyErrorOf("tensor a : dense\n}\n"),
            "2:1: expected a tensor or format declaration, a statement, a schedule block, a target or "
            "an fp mode");
}

TEST(SyntaxError, ScheduleNeedsBrace) {
  EXPECT_EQ(onlyErrorOf("schedule reorder(i, j)\n"), "1:10: expected '{' after 'schedule'");
}

TEST(SyntaxError, UnclosedScheduleBlock) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k) * C(k,j)\nschedule {\n  reorder(i, j)\n\n")),
            "6:16: expected '}' to close the schedule block opened at line 5");
}

TEST(SyntaxError, ScheduleCommandNeedsParentheses) {
  EXPECT_EQ(onlyErrorOf("schedule {\n  reorder i, j\n}\n"), "2:11: expected '('");
}

// An empty list names the item it lacks (Spirit alone would describe a list
// by its C++ type).
TEST(SyntaxError, EmptyListNamesItsItem) {
  EXPECT_EQ(onlyErrorOf("tensor Y() : dense\n"), "1:10: expected a size name or an integer");
  EXPECT_EQ(onlyErrorOf(withDeclarations("A() = B(i,j)\n")), "4:3: expected an index variable");
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : {}\n"), "1:19: expected a level format");
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : csr order()\n"), "1:28: expected an integer");
  EXPECT_EQ(onlyErrorOf("tensor a : dense\na = abs()\n"), "2:9: expected an expression");
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k) * C(k,j)\nschedule {\n  reorder({})\n}\n")),
            "6:12: expected an index variable");
}

// A mistake in a block on one line is reported once, not again as an
// unclosed block; the lines after it are still read.
TEST(SyntaxError, OneLineScheduleBlockReportsItsMistakeOnce) {
  std::vector<Diagnostic> errors =
      errorsOf(withDeclarations("A(i,j) = B(i,k) * C(k,j)\nschedule { reorder({i j}) }\nA(i,j) = C(i,j) +\n"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].location.line, 5);
  EXPECT_EQ(errors[0].message, "expected ',' or '}'");
  EXPECT_EQ(errors[1].location.line, 6);
  EXPECT_EQ(errors[1].message, "expected an expression");
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k) * C(k,j)\nschedule { reorder(i j) }\n")), "5:22: expected ',' or ')'");
}

// Every example, cut short at each character and with each character
// deleted: whatever the mistake, the message is prose at a place in the
// file, never a C++ type of the parser's.
TEST(SyntaxError, EveryMistakeInTheExamplesGetsAMessageInWords) {
  int mistakes = 0;
  for (const char* folder : {"examples", "examples/gpu"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TCC_SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".tc") continue;
      std::ifstream file(entry.path());
      std::string program, line;
      while (std::getline(file, line))
        if (line.rfind('#', 0) != 0) program += line + "\n";  // comments would only add cases alike
      for (size_t at = 0; at < program.size(); ++at) {
        for (const std::string& text : {program.substr(0, at), program.substr(0, at) + program.substr(at + 1)}) {
          try {
            parseProgram(text, "mistake.tc");
          } catch (const DiagnosticError& error) {
            for (const Diagnostic& diagnostic : error.diagnostics()) {
              ++mistakes;
              SCOPED_TRACE(entry.path().filename().string() + ":\n" + text);
              EXPECT_FALSE(diagnostic.message.empty());
              for (const char* internal : {"boost", "spirit", "x3::", "N5"})
                EXPECT_EQ(diagnostic.message.find(internal), std::string::npos) << diagnostic.message;
              EXPECT_GE(diagnostic.location.line, 1);
              EXPECT_GE(diagnostic.location.column, 1);
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(mistakes, 1000);
}

TEST(SyntaxError, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "tensor a : dense\na = " + std::string(10000, '(') + "a" +
                     std::string(10000, ')') + "\n";
  std::string message = onlyErrorOf(deep);
  EXPECT_NE(message.find("expression nested too deeply (more than 64 levels)"), std::string::npos)
      << message;
  std::string negations = "tensor a : dense\na = " + std::string(10000, '-') + "a\n";
  EXPECT_NE(onlyErrorOf(negations).find("nested too deeply"), std::string::npos);
}

TEST(SyntaxError, HugeExpressionIsAnErrorNotACrash) {
  std::string text = "tensor a : dense\na = a";
  for (int i = 0; i < 20000; ++i) text += " + a";
  EXPECT_EQ(onlyErrorOf(text + "\n"), "2:40005: expression has more than 10000 operands");
}

// ---- declarations ------------------------------------------------------------

TEST(SemanticError, UnknownFormat) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : cssr\n"),
            "1:18: unknown format 'cssr'; expected dense, sparse, csr, csc, dcsr, dcsc, coo, csf, "
            "nm(N,M,L), a level list such as {dense, compressed}, or a name declared with "
            "'format'");
}

TEST(SemanticError, NamedFormatOfWrongOrder) {
  EXPECT_EQ(onlyErrorOf("tensor x(I) : csr\n"),
            "1:15: format 'csr' is for tensors of order 2, but 'x' has order 1");
}

TEST(SemanticError, LevelCountDiffersFromOrder) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : {dense}\n"),
            "1:18: format has 1 level but tensor 'A' has order 2");
  EXPECT_EQ(onlyErrorOf("format f = {dense, dense, compressed}\ntensor A(I, J) : f\n"),
            "2:18: format 'f' has 3 levels but tensor 'A' has order 2");
}

TEST(SemanticError, UnknownLevelFormatAndProperty) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : {dense, compresed}\n"),
            "1:26: unknown level format 'compresed'; expected dense, compressed, singleton or "
            "nm(N,M,L)");
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : {dense, compressed(nonuniqe)}\n"),
            "1:37: unknown level property 'nonuniqe'; expected unique, nonunique, ordered or "
            "unordered");
}

TEST(SemanticError, BadNMArguments) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : nm(4, 2, 1)\n"),
            "1:18: nm(N,M,L) needs 1 <= N <= M and L >= 1");
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : nm(2, 4)\n"), "1:18: nm(N,M,L) takes 3 integers, not 2");
}

TEST(SemanticError, ModeOrderNotAPermutation) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : {dense, compressed} order (1, 1)\n"),
            "1:38: mode order must list each of 0..1 exactly once");
}

TEST(SemanticError, UnknownElementType) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : csr of float8\n"),
            "1:25: unknown element type 'float8'; expected float64, float32, float16, int32 or "
            "int64");
}

TEST(SemanticError, RedeclaredTensor) {
  EXPECT_EQ(onlyErrorOf("tensor A(I, J) : csr\n\ntensor A(I) : dense\n"),
            "3:8: redeclaration of 'A' (a tensor declared at 1:8)");
}

TEST(SemanticError, ReservedName) {
  EXPECT_EQ(onlyErrorOf("tensor sum(I)\n"), "1:8: 'sum' is reserved and cannot name a tensor");
}

TEST(SemanticError, NamesMustNotClash) {
  EXPECT_EQ(onlyErrorOf("tensor x(N)\ntensor y(N)\ny(b) = x(b)\ntensor b : dense\n"),
            "4:8: 'b' is already an index variable and cannot name a tensor");
  EXPECT_EQ(onlyErrorOf("format csr = {dense, dense}\n"),
            "1:8: 'csr' is a built-in format and cannot be redefined");
  std::vector<Diagnostic> errors = errorsOf(
      "tensor x(N)\ntensor y(N)\ny(i) = x(i)\nschedule { split(i, i0, i1, 4) }\ny(i0) = x(i0)\n");
  ASSERT_EQ(errors.size(), 2u);  // each use
  EXPECT_EQ(errors[0].location, (SourceLocation{"test.tc", 5, 3}));
  EXPECT_EQ(errors[1].location, (SourceLocation{"test.tc", 5, 11}));
  EXPECT_EQ(errors[0].message,
            "index variable 'i0' is introduced by the schedule and cannot be used in a statement");
}

TEST(SemanticError, DimensionMustBePositive) {
  EXPECT_EQ(onlyErrorOf("tensor A(0, J)\n"), "1:10: a dimension size must be positive");
  EXPECT_EQ(onlyErrorOf("tensor A(99999999999999999999)\n"),
            "1:10: integer '99999999999999999999' is out of range");
}

// ---- statements ----------------------------------------------------------------

TEST(SemanticError, UndeclaredTensor) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k) * D(k,j)\n")),
            "4:19: use of undeclared tensor 'D'");
}

TEST(SemanticError, RankMismatch) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k,l) * C(k,j)\n")),
            "4:10: tensor 'B' has order 2 but is accessed with 3 indices");
  EXPECT_EQ(onlyErrorOf(withDeclarations("A = B(i,j)\n")),
            "4:1: tensor 'A' has order 2 but is accessed with 0 indices");
}

TEST(SemanticError, IndexVariableBoundToTwoSizes) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,j)\n")),
            "4:14: index variable 'j' ranges over J in A(i,j) but over K in B(i,j)");
  EXPECT_EQ(onlyErrorOf("tensor x(4)\ntensor y(5)\nx(i) = y(i)\n"),
            "3:10: index variable 'i' ranges over 4 in x(i) but over 5 in y(i)");
}

TEST(SemanticError, OutputIndexMissingOnTheRight) {
  EXPECT_EQ(onlyErrorOf(withDeclarations("A(i,j) = B(i,k)\n")),
            "4:5: index variable 'j' of the output does not appear on the right-hand side");
}

TEST(SemanticError, RepeatedIndexInOneAccess) {
  EXPECT_EQ(onlyErrorOf("tensor M(N, N)\ntensor d(N)\nd(i) = M(i,i)\n"),
            "3:12: index variable 'i' appears twice in M(i,i); repeated indices within one "
            "access are not supported");
}

TEST(SemanticError, SummingAnOutputIndex) {
  EXPECT_EQ(onlyErrorOf("tensor x(N)\ntensor y(N)\ny(i) = sum(i, x(i))\n"),
            "3:12: index variable 'i' indexes the output and cannot be summed");
}

TEST(SemanticError, BadBuiltinArgument) {
  std::vector<Diagnostic> errors = errorsOf("tensor x(N)\ntensor p : dense\np = perm(x)\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].location.line, 3);
  EXPECT_EQ(errors[0].location.column, 5);
}

TEST(SemanticError, PermOfANonSquareMatrix) {
  EXPECT_EQ(onlyErrorOf("tensor A(3, 4) : csr\ntensor p : dense\np = perm(A)\n"),
            "3:5: builtin perm: expects a square matrix, A is 3 x 4");
}

TEST(SemanticError, PermMustBeAStatementOfItsOwn) {
  const std::string declarations = "tensor M(N, N) : csc\ntensor q : dense\ntensor p : dense\ntensor y(N)\n";
  EXPECT_EQ(onlyErrorOf(declarations + "p = q + perm(M)\n"),
            "5:9: perm(A) must be the whole right-hand side of a statement of its own, as in p = perm(A)");
  EXPECT_EQ(onlyErrorOf(declarations + "p = 2 * (perm(M))\n"),
            "5:10: perm(A) must be the whole right-hand side of a statement of its own, as in p = perm(A)");
  EXPECT_EQ(onlyErrorOf(declarations + "y(i) = M(i,j) * perm(M)\n"),
            "5:17: perm(A) must be the whole right-hand side of a statement of its own, as in p = perm(A)");
  std::vector<Diagnostic> errors = errorsOf(declarations + "p = -perm(M)\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].format(),
            "test.tc:5:6: error: perm(A) must be the whole right-hand side of a statement of its own, as in p = "
            "perm(A)\n"
            "p = -perm(M)\n"
            "     ^\n");
  // Parentheses around the whole right-hand side are fine.
  EXPECT_NO_THROW(parseProgram(declarations + "p = (perm(M))\n", "test.tc"));
}

TEST(SemanticError, UnknownTargetAndArchitecture) {
  EXPECT_EQ(onlyErrorOf("target tpu\n"), "1:8: unknown target 'tpu'; expected cpu or cuda");
  EXPECT_EQ(onlyErrorOf("target cuda(sm90)\n"),
            "1:13: expected a GPU architecture like sm_90, not 'sm90'");
  EXPECT_EQ(onlyErrorOf("target cpu\ntarget cpu\n"), "2:1: target already given at 1:1");
}

TEST(SemanticError, FloatingPointModeLine) {
  EXPECT_EQ(onlyErrorOf("fp fastest\n"), "1:4: unknown floating-point mode 'fastest'; expected strict or fast");
  EXPECT_EQ(onlyErrorOf("fp fast\nfp strict\n"), "2:4: floating-point mode already given at 1:4");
  // The mode belongs on the keyword's line; the next line is not taken for it.
  EXPECT_EQ(onlyErrorOf("fp\ntensor a\n"), "1:3: expected a floating-point mode ('strict' or 'fast')");
  EXPECT_EQ(onlyErrorOf("fp 3\n"), "1:4: expected a floating-point mode ('strict' or 'fast')");
  EXPECT_EQ(onlyErrorOf("fp fast strict\n"), "1:9: expected the end of the line");
}

// ---- several errors --------------------------------------------------------------

TEST(Diagnostics, AllSemanticErrorsInOrder) {
  std::vector<Diagnostic> errors = errorsOf(
      "tensor A(I, J) : cssr\n"
      "tensor B(I, K) : csc of float8\n"
      "tensor C(K, J) : csr\n"
      "A(i,j) = B(i,k) * D(k,j)\n"
      "A(i,j) = B(i,k,l) * C(k,j)\n"
      "schedule { reordr(k, i, j) }\n");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0].location.line, 1);
  EXPECT_EQ(errors[1].location.line, 2);
  EXPECT_EQ(errors[2].location.line, 4);
  EXPECT_EQ(errors[3].location.line, 5);
  EXPECT_EQ(errors[4].location.line, 6);
  EXPECT_EQ(errors[4].message, "unknown schedule command 'reordr'; did you mean 'reorder'?");
}

TEST(Diagnostics, AllSyntaxErrorsInOrderWithoutFollowOnErrors) {
  std::vector<Diagnostic> errors = errorsOf(
      "tensor A(I, J) : csr\n"
      "tensor B(I J)\n"                 // B is lost to a syntax error...
      "A(i,j) = B(i,j) C(i,j)\n"
      "A(i,j) = B(i,j)\n"               // ...so no "undeclared tensor 'B'" here
      "tensor A(I) : csr\n"             // semantic errors are still found
      "schedule {\n  split(i, 0, ,)\n  reorder(i j)\n}\n");
  std::vector<std::string> seen;
  for (const Diagnostic& error : errors)
    seen.push_back(std::to_string(error.location.line) + ":" +
                   std::to_string(error.location.column) + ": " + error.message);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "2:12: expected ',' or ')'",
                      "3:17: expected an operator ('+', '-', '*', '/') or the end of the line",
                      "5:8: redeclaration of 'A' (a tensor declared at 1:8)",
                      "5:15: format 'csr' is for tensors of order 2, but 'A' has order 1",
                      "7:15: expected another item after ','",
                      "8:13: expected ',' or ')'",
                  }));
}

TEST(Diagnostics, FormatShowsLineAndCaret) {
  std::vector<Diagnostic> errors = errorsOf("tensor A(I, J) : csr\n\tA(i,j) = Q(i,j)\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].format(),
            "test.tc:2:11: error: use of undeclared tensor 'Q'\n"
            "\tA(i,j) = Q(i,j)\n"
            "\t         ^\n");
  try {
    parseProgram("tensor A(I, J) : csr\n\tA(i,j) = Q(i,j)\n", "test.tc");
  } catch (const DiagnosticError& error) {
    EXPECT_EQ(std::string(error.what()), errors[0].format());
  }
}

TEST(Diagnostics, NonAsciiBytesAreErrorsNotCrashes) {
  std::vector<Diagnostic> errors = errorsOf("# caf\xc3\xa9 comment is fine\ntensor \xc3\xa9(I)\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].location.line, 2);
  EXPECT_EQ(errors[0].message, "expected a tensor name");
}

}  // namespace
}  // namespace tcc::frontend
