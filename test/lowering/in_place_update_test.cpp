// Statements that read the tensor they write: `y(i) += e` and `y(i) = ...
// y(j) ...`. Every entry read is the one from before the statement, as
// the notation says (the reference evaluates the statement over a copy of
// the output taken first): reading other entries than the one written
// (`A(i,j) * y(j)`, `Y(j,i)`), in dense and sparse outputs, scalars,
// updates in a row, under schedules, and the error where the output has
// no value to update.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct InPlaceCase {
  std::string name;
  std::string statements;  // over A, B (N x N), x (N) and the outputs y, z (N), Y (N x N), s
  std::string schedule;
  bool outputsAreInputs;  // y, Y and s are bound before the program runs
  // Formats of y and z, and of B and Y, where not every one (a schedule
  // that only some formats take: threads assemble a sparse vector in
  // order, a reorder against a CSC's storage order is refused).
  std::vector<std::string> vectorFormats = {"dense", "sparse"};
  std::vector<std::string> matrixFormats = {"csr", "dcsr", "dense", "{dense, compressed} order (1, 0)", "coo"};
};

std::vector<InPlaceCase> cases() {
  return {
      {"AddARowSum", "y(i) += A(i, j) * x(j)", "", true},
      {"ReadOtherEntries", "y(i) = A(i, j) * y(j)", "", true},
      {"ScaleAndShift", "y(i) = y(i) * 2 + x(i)", "", true},
      {"SubtractFromItself", "y(i) = x(i) - y(i) * y(i)", "", true},
      {"AddAMatrix", "Y(i, j) += B(i, j)", "", true},
      {"KeepTheIntersection", "Y(i, j) = Y(i, j) * B(i, j)", "", true},
      {"AddTheTranspose", "Y(i, j) = Y(j, i) + B(i, j)", "", true},
      {"AddAProduct", "Y(i, j) += A(i, k) * B(k, j)", "", true},
      {"MultiplyByAMatrix", "Y(i, j) = Y(i, k) * A(k, j)", "", true},
      {"AddADotProduct", "s += x(i) * x(i)", "", true},
      {"SquareAScalar", "s = s * s - x(i) * A(i, j) * x(j)", "", true},
      {"AddARowSumOnThreads", "y(i) += A(i, j) * x(j)", "parallelize(i, CPUThread, NoRaces)", true, {"dense"}},
      {"ReadOtherEntriesReordered", "Y(i, j) = Y(i, k) * A(k, j)", "reorder(i, k, j)", true, {"dense"},
       {"csr", "dense"}},
      {"ReadOtherEntriesOnThreads", "y(i) = A(i, j) * y(j)", "parallelize(i, CPUThread, NoRaces)", true, {"dense"}},
      {"ComputedThenUpdated", "y(i) = A(i, j) * x(j)\ny(i) += B(i, j) * x(j)", "", false},
      {"UpdatedTwiceThenRead", "y(i) = x(i) * 3\ny(i) += A(i, j) * y(j)\ny(i) += x(i)\nz(i) = y(i) * y(i)", "",
       false},
      {"MatrixComputedThenUpdated", "Y(i, j) = A(i, j) * 2\nY(i, j) = Y(j, i) - Y(i, j) * B(i, j)", "", false},
  };
}

void PrintTo(const InPlaceCase& c, std::ostream* out) { *out << c.name; }

std::string programOf(const InPlaceCase& c, const std::string& vectorFormat, const std::string& matrixFormat) {
  std::string program = "tensor A(N, N) : csr\ntensor B(N, N) : " + matrixFormat +
                        "\ntensor x(N) : dense\ntensor y(N) : " + vectorFormat + "\ntensor z(N) : " + vectorFormat +
                        "\ntensor Y(N, N) : " + matrixFormat + "\ntensor s : dense\n" + c.statements + "\n";
  return withScheduleIfAny(program, c.schedule);
}

class InPlaceUpdates : public ::testing::TestWithParam<InPlaceCase> {};

TEST_P(InPlaceUpdates, ReadTheValuesFromBeforeTheStatement) {
  const InPlaceCase& c = GetParam();
  struct Inputs {
    std::string name;
    int n;
    double density;
  };
  const std::vector<Inputs> sizes{{"one entry", 1, 1.0}, {"30 x 30, empty rows", 30, 0.08}, {"20 x 20", 20, 0.3}};
  uint64_t seed = 1;
  for (const std::string& vectorFormat : c.vectorFormats) {
    for (const std::string& matrixFormat : c.matrixFormats) {
      for (const Inputs& input : sizes) {
        SCOPED_TRACE(c.statements + ", y " + vectorFormat + ", B and Y " + matrixFormat + ", " + input.name);
        std::map<std::string, rt::Coo> tensors{{"A", randomSparse({input.n, input.n}, input.density, seed++)},
                                               {"B", randomSparse({input.n, input.n}, input.density, seed++)},
                                               {"x", randomDense({input.n}, seed++)}};
        if (c.outputsAreInputs) {
          tensors["y"] = randomSparse({input.n}, 0.5, seed++);
          tensors["Y"] = randomSparse({input.n, input.n}, input.density, seed++);
          tensors["s"] = randomDense({}, seed++);
        }
        expectProgramMatchesReference(programOf(c, vectorFormat, matrixFormat), tensors);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Statements, InPlaceUpdates, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(InPlaceUpdates, ARealMatrixTimesItsOwnRowSums) {
  rt::Coo bus = realMatrix("494_bus.mtx");
  expectProgramMatchesReference(
      "tensor A(N, N) : csr\ntensor x(N) : dense\ntensor y(N) : dense\ny(i) = A(i, j) * x(j)\ny(i) = A(i, j) * y(j)\n"
      "y(i) += A(j, i) * y(j)\n",
      {{"A", bus}, {"x", randomDense({bus.dims[0]}, 3)}});
}

TEST(InPlaceUpdates, AnUpdateOfATensorWithNoValueIsAnError) {
  const std::string message = runError(
      "tensor A(N, N) : csr\ntensor x(N) : dense\ntensor y(N) : dense\ny(i) += A(i, j) * x(j)\n",
      {{"A", randomSparse({5, 5}, 0.5, 1)}, {"x", randomDense({5}, 2)}});
  EXPECT_TRUE(contains(message, "`y(i) += A(i,j) * x(j)` reads y's values from before it, and y has none: bind y as "
                                "an input or write it in an earlier statement"))
      << message;
}

TEST(InPlaceUpdates, ExplainSaysWhereTheValuesFromBeforeComeFrom) {
  const std::string decisions =
      decisionsOf("tensor A(N, N) : csr\ntensor y(N) : dense\ny(i) = A(i, j) * y(j)\n");
  EXPECT_TRUE(contains(decisions, "y is read and written by this statement: it reads y's values from before the "
                                  "statement as y_before"))
      << decisions;
}

// A tensor of the program named like the one tcc inserts keeps its name.
TEST(InPlaceUpdates, TheValuesFromBeforeTakeAFreshName) {
  const std::string program =
      "tensor y_before(N) : dense\ntensor A(N, N) : csr\ntensor y(N) : dense\ntensor z(N) : dense\n"
      "y(i) += A(i, j) * y_before(j)\nz(i) = y(i) + y_before(i)\n";
  EXPECT_TRUE(contains(decisionsOf(program), "as y_before_2")) << decisionsOf(program);
  expectProgramMatchesReference(program, {{"A", randomSparse({9, 9}, 0.4, 1)},
                                          {"y_before", randomDense({9}, 2)},
                                          {"y", randomSparse({9}, 0.5, 3)}});
}

// Two statements write y: the program's y is the second's (it came back
// with empty storage: the second statement's result was moved out twice).
TEST(InPlaceUpdates, ATensorWrittenTwiceHoldsTheLastValue) {
  const std::string program =
      "tensor x(N) : dense\ntensor y(N) : dense\ntensor z(N) : sparse\n"
      "y(i) = x(i) * 2\nz(i) = y(i) + x(i)\ny(i) = x(i) * 3\n";
  expectProgramMatchesReference(program, {{"x", randomDense({7}, 1)}});
}

}  // namespace
}  // namespace tcc::test
