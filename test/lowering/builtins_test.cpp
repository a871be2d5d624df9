// The builtins abs, sqrt, exp, max and min against the dense reference.
// A builtin is not a product: it is evaluated wherever any argument has an
// entry, an absent one reading as zero (max(A(i,j), 2) is 2 off A's
// entries), and everywhere when it is not zero at zero (exp(A(i,j)) is 1
// off A's entries). Each statement runs over several formats of its
// sparse operands, dense and sparse outputs, with and without threads, on
// random matrices (signed values, empty rows) and a real one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_check.h"

namespace tcc::test {
namespace {

struct BuiltinCase {
  std::string name;
  std::string statement;
  std::string outputFormat;  // of Y (matrix outputs) or y (vectors)
  std::string schedule;
};

const std::vector<std::string> kMatrixFormats = {"csr", "dcsr", "coo", "{dense, compressed} order (1, 0)", "dense"};

std::vector<BuiltinCase> cases() {
  return {
      {"ExpOfAMatrix", "Y(i, j) = exp(A(i, j))", "dense", ""},
      {"ExpOfAMatrixIntoCsr", "Y(i, j) = exp(A(i, j))", "csr", ""},
      {"AbsOfAMatrixIntoCsr", "Y(i, j) = abs(A(i, j))", "csr", ""},
      {"MaxWithAConstant", "Y(i, j) = max(A(i, j), 0.25)", "dense", ""},
      {"MaxWithAConstantIntoCsr", "Y(i, j) = max(A(i, j), 0.25)", "csr", ""},
      {"MinOfTwoMatrices", "Y(i, j) = min(A(i, j), B(i, j))", "dense", ""},
      {"MinOfTwoMatricesIntoCsr", "Y(i, j) = min(A(i, j), B(i, j))", "csr", ""},
      {"AbsOfADifference", "Y(i, j) = abs(A(i, j) - B(i, j))", "csr", ""},
      {"ExpPlusAMatrix", "Y(i, j) = exp(A(i, j)) + B(i, j)", "dense", ""},
      {"RowSumsOfSqrtOfSquares", "y(i) = sqrt(A(i, j) * A(i, j))", "dense", ""},
      {"RowSumsOfExp", "y(i) = exp(A(i, j))", "dense", ""},
      {"RowSumsOfExpThreads", "y(i) = exp(A(i, j))", "dense", "parallelize(i, CPUThread, NoRaces)"},
      {"MaxWithADenseVector", "y(i) = max(A(i, j), x(j))", "dense", ""},
      {"ExpTimesADenseVector", "y(i) = exp(A(i, j)) * x(j)", "dense", ""},
      {"AMatrixTimesExp", "y(i) = B(i, j) * exp(A(i, j))", "dense", ""},
      {"MaxOfAProductAndZero", "y(i) = max(A(i, j) * x(j), 0)", "dense", ""},
      {"ExpOfARowSumPlusOne", "y(i) = exp(A(i, j) * x(j)) + 1", "dense", ""},
      {"MinOfTwoMatricesThreads", "Y(i, j) = min(A(i, j), B(i, j))", "dense", "parallelize(i, CPUThread, NoRaces)"},
  };
}

// A parameterized test's case is printed as its name.
void PrintTo(const BuiltinCase& c, std::ostream* out) { *out << c.name; }

std::string programOf(const BuiltinCase& c, const std::string& formatA, const std::string& formatB) {
  bool vectorOutput = c.statement.rfind("y(", 0) == 0;
  std::string program = "tensor A(I, J) : " + formatA + " of float64\n" + "tensor B(I, J) : " + formatB +
                        " of float64\n" + "tensor x(J) : dense of float64\n";
  program += vectorOutput ? "tensor y(I) : " + c.outputFormat + " of float64\n"
                          : "tensor Y(I, J) : " + c.outputFormat + " of float64\n";
  program += c.statement + "\n";
  return withScheduleIfAny(program, c.schedule);
}

class Builtins : public ::testing::TestWithParam<BuiltinCase> {};

TEST_P(Builtins, MatchTheDenseReference) {
  const BuiltinCase& c = GetParam();
  struct Inputs {
    std::string name;
    rt::Coo a, b;
  };
  rt::Coo bus = realMatrix("494_bus.mtx");
  std::vector<Inputs> inputs{
      {"one entry", randomSparse({1, 1}, 1.0, 1), randomSparse({1, 1}, 1.0, 2)},
      {"40 x 30, empty rows", randomSparse({40, 30}, 0.1, 3), randomSparse({40, 30}, 0.1, 4)},
      {"no entries in A", rt::Coo::ofShape({7, 9}), randomSparse({7, 9}, 0.3, 5)},
      {"494_bus", bus, randomSparse({bus.dims[0], bus.dims[1]}, 0.01, 6)},
  };
  for (const std::string& formatA : kMatrixFormats) {
    for (const std::string& formatB : {std::string("csr"), std::string("dense")}) {
      for (const Inputs& input : inputs) {
        SCOPED_TRACE(c.statement + ", A " + formatA + ", B " + formatB + ", " + input.name);
        std::map<std::string, rt::Coo> tensors{
            {"A", input.a}, {"B", input.b}, {"x", randomSparse({input.a.dims[1]}, 1.0, 7)}};
        expectProgramMatchesReference(programOf(c, formatA, formatB), tensors);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Statements, Builtins, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// A sparse vector: exp's sum covers every coordinate, stored or not.
TEST(Builtins, TheSumOfExpOverASparseVectorCountsItsZeros) {
  const std::string program =
      "tensor a(I) : sparse of float64\n"
      "tensor d : dense of float64\n"
      "d = exp(a(i))\n";
  for (double density : {0.0, 0.2, 1.0}) {
    SCOPED_TRACE(density);
    expectProgramMatchesReference(program, {{"a", density == 0.0 ? rt::Coo::ofShape({50}) : randomSparse({50}, density, 9)}});
  }
}

}  // namespace
}  // namespace tcc::test
