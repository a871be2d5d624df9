// p = perm(A) through the compiler: the DSL and the C++ builder lower it to
// one Intrinsic node, which the C++ backend turns into a call of the
// runtime kernel; results against the dense reference evaluator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "permanent_test_support.h"
#include "tcc/ir/imperative_visitor.h"
#include "tcc/tcc.h"

namespace tcc::permanent_test {
namespace {

using ::testing::HasSubstr;

class IntrinsicFinder : public ir::imp::IRVisitor {
 public:
  void visit(const ir::imp::Intrinsic* op) override { found.push_back(op); }
  std::vector<const ir::imp::Intrinsic*> found;
};

Program permanentProgram(const std::string& format, const std::string& resultType) {
  return Program::fromText("tensor A(N, N) : " + format + "\ntensor p : dense of " + resultType + "\np = perm(A)\n",
                           "perm.tc");
}

TEST(PermanentCompile, LowersToOneIntrinsicThatTheCppBackendCalls) {
  Kernel kernel = compile(permanentProgram("csc", "float64"));
  const auto& statement = kernel.lowered().statements.at(0);
  IntrinsicFinder finder;
  statement.function.body.accept(finder);
  ASSERT_EQ(finder.found.size(), 1u);
  EXPECT_EQ(finder.found[0]->name, "permanent");
  EXPECT_EQ(finder.found[0]->tensors, (std::vector<std::string>{"p", "A"}));
  EXPECT_THAT(kernel.source(), HasSubstr("tcc_permanent(p, A)"));
  ASSERT_EQ(statement.decisions.size(), 1u);
  EXPECT_THAT(statement.decisions[0], HasSubstr("p = perm(A) is the permanent intrinsic"));
  EXPECT_THAT(statement.decisions[0], HasSubstr("in floating point"));
  Lowered exact = lowerProgram(permanentProgram("csr", "int64"));
  EXPECT_THAT(exact.statements.at(0).decisions.at(0), HasSubstr("exact"));
}

TEST(PermanentCompile, MatchesTheReferenceInEveryFormat) {
  for (const char* format : {"csc", "csr", "dense", "coo", "dcsr", "dcsc", "{compressed, compressed} order (1,0)"}) {
    Program program = permanentProgram(format, "float64");
    Kernel kernel = compile(program);
    for (uint64_t seed : {1, 2}) {
      Matrix matrix = randomSparse(9, 0.5, seed + 40);
      rt::Tensor tensor = toTensor(matrix, rt::TensorFormat::csr());
      double result = kernel.run({{"A", tensor}}).at("p").valueAtPosition(0);
      auto reference = test::evaluate(program.statements(), {{"A", toDenseArray(matrix)}});
      EXPECT_NEAR(result, reference.at("p").values.at(0), ryserTolerance(matrix)) << format;
      EXPECT_NEAR(result, test::permanentByPermutations(toDenseArray(matrix)), ryserTolerance(matrix)) << format;
    }
  }
}

TEST(PermanentCompile, AnIntegerResultAsksForTheExactPermanent) {
  Kernel kernel = compile(permanentProgram("csr", "int64"));
  Matrix pattern = randomPattern(18, 0.3, 9);
  Tensor result = kernel.run({{"A", toTensor(pattern, rt::TensorFormat::csr())}}).at("p");
  EXPECT_EQ(result.valueType(), rt::ValueType::Int64);
  EXPECT_EQ(result.valueAtPosition(0), test::permanent(toDenseArray(pattern)));

  try {
    kernel.run({{"A", toTensor(allOnes(21), rt::TensorFormat::csr())}});
    ADD_FAILURE() << "21! fit an int64";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("overflows the result's int64 type"));
  }
}

TEST(PermanentCompile, TheBuilderGivesTheSameKernel) {
  TensorVar M("M", {"N", "N"}, Format::csc()), p("p", {}, Format::denseOfOrder(0));
  Kernel kernel = compile(Program::fromStatements({p() = ir::perm(M)}, {p, M}));
  Matrix matrix = randomSparse(8, 0.6, 12);
  double result = kernel.run({{"M", toTensor(matrix, rt::TensorFormat::csc())}}).at("p").valueAtPosition(0);
  EXPECT_NEAR(result, test::permanentByPermutations(toDenseArray(matrix)), ryserTolerance(matrix));
}

TEST(PermanentCompile, RunOptionsReachTheKernel) {
  Kernel kernel = compile(permanentProgram("csc", "float64"));
  RunOptions options;
  options.permanent.chunkLimit = 3;
  options.permanent.threads = 1;
  options.permanent.progress = rt::ProgressMode::Off;
  try {
    kernel.run({{"A", toTensor(randomPattern(20, 0.3, 13), rt::TensorFormat::csc())}}, options);
    ADD_FAILURE() << "the chunk limit did not stop the run";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("stopped at the chunk limit after 3 of 4096 chunks"));
  }
}

TEST(PermanentCompile, PermInsideALargerExpressionIsRefused) {
  TensorVar M("M", {"N", "N"}, Format::csc()), p("p", {}, Format::denseOfOrder(0)),
      q("q", {}, Format::denseOfOrder(0));
  try {
    compile(Program::fromStatements({p() = ir::perm(M) + q()}, {p, M, q}));
    ADD_FAILURE() << "perm(M) + q compiled";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("perm(A) must be the whole right-hand side of a statement of its own"));
  }
}

TEST(PermanentCompile, ASymbolicShapeThatIsNotSquareIsRefusedAtRunTime) {
  Program program = Program::fromText("tensor A(N, M) : csr\ntensor p : dense\np = perm(A)\n", "wide.tc");
  Kernel kernel = compile(program);
  rt::Tensor wide = rt::fromDense(std::vector<double>(12, 1.0), {3, 4}, rt::TensorFormat::csr());
  try {
    kernel.run({{"A", wide}});
    ADD_FAILURE() << "a 3 x 4 permanent ran";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("expects a square matrix, got 3 x 4"));
  }
}

}  // namespace
}  // namespace tcc::permanent_test
