// Through MLIR 16 and through tcc, against the dense reference: updates in
// place (`+=`, a statement reading its output), builtins (those that vanish
// at zero and those that do not) and float16 inputs, on random and real
// inputs.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>

#include "mlir_check.h"
#include "tcc/runtime/value_type.h"

namespace tcc::test {
namespace {

// The tensors of `all` that the program's statement (its last line)
// reads: those on its right-hand side, and its output where it is `+=`.
std::map<std::string, rt::Coo> inputsOf(const std::string& program, const std::map<std::string, rt::Coo>& all) {
  std::string statement = program.substr(program.rfind('\n', program.size() - 2) + 1);
  const size_t equals = statement.find('=');
  const bool accumulates = statement[equals - 1] == '+';
  std::string rhs = " " + statement.substr(equals + 1);
  std::map<std::string, rt::Coo> chosen;
  for (const auto& [name, coo] : all) {
    bool read = false;
    for (size_t at = rhs.find(name); at != std::string::npos; at = rhs.find(name, at + 1))
      read = read || (!std::isalnum(static_cast<unsigned char>(rhs[at - 1])) &&
                      !std::isalnum(static_cast<unsigned char>(rhs[at + name.size()])));
    if (read || (accumulates && statement.rfind(name, 0) == 0 && !std::isalnum(static_cast<unsigned char>(statement[name.size()]))))
      chosen.emplace(name, coo);
  }
  return chosen;
}

void expectEachMatches(const std::vector<std::string>& programs, const std::map<std::string, rt::Coo>& all,
                       double relativeTolerance = 1e-10) {
  for (const auto& program : programs) {
    SCOPED_TRACE(program);
    try {
      expectMlirMatches(program, inputsOf(program, all), relativeTolerance);
    } catch (const std::exception& error) {
      ADD_FAILURE() << error.what();
    }
  }
}

const std::string kMatrices = "tensor B(I, J) : csr\ntensor C(I, J) : dcsr\ntensor x(J) : dense\n";

const std::string kSquare = "tensor B(I, I) : csr\ntensor C(I, I) : dcsr\ntensor x(I) : dense\n";

// `+=` into a dense output: the sum starts from the prior values (the
// generic's outs); into a sparse one without a sum, they are an input.
TEST(MlirUpdateInPlaceTest, AccumulateAndReadTheOutput) {
  TCC_SKIP_WITHOUT_MLIR();
  std::map<std::string, rt::Coo> all{{"B", randomSparse({23, 23}, 0.15, 50)}, {"C", randomSparse({23, 23}, 0.15, 51)},
                                     {"x", randomDense({23}, 52)}, {"y", randomDense({23}, 53)},
                                     {"A", randomSparse({23, 23}, 0.1, 54)}, {"a", randomDense({}, 55)}};
  expectEachMatches(
      {"tensor y(I) : dense\n" + kSquare + "y(i) += B(i, j) * x(j)\n",
       "tensor y(I) : dense\n" + kSquare + "y(i) += B(i, j) * x(j) + C(i, j) * x(j)\n",
       "tensor y(I) : dense\n" + kSquare + "y(i) = y(i) - B(i, j) * x(j)\n",
       "tensor y(I) : dense\n" + kSquare + "y(i) = B(i, j) * y(j)\n",
       "tensor y(I) : dense\n" + kSquare + "y(i) += B(i, j) * y(j)\n",
       "tensor y(I) : dense\n" + kSquare + "y(i) = y(i) * B(i, j) * x(j)\n",
       "tensor y(I) : sparse\n" + kSquare + "y(i) = y(i) * B(i, j) * x(j)\n",
       "tensor A(I, I) : csr\n" + kSquare + "A(i, j) += B(i, j) * C(i, j)\n",
       "tensor A(I, I) : dcsr\n" + kSquare + "A(i, j) = A(i, j) - B(i, j)\n",
       "tensor A(I, I) : dense\n" + kSquare + "A(i, j) += B(i, j)\n",
       "tensor a : dense\n" + kSquare + "a += B(i, j) * C(i, j)\n"},
      all);
}

TEST(MlirUpdateInPlaceTest, RealMatrix) {
  TCC_SKIP_WITHOUT_MLIR();
  rt::Coo b = realMatrix("bcsstk01");
  std::map<std::string, rt::Coo> all{{"B", b}, {"x", randomDense({b.dims[1]}, 56)}, {"y", randomDense({b.dims[0]}, 57)}};
  expectEachMatches({"tensor y(I) : dense\n" + kSquare + "y(i) += B(i, j) * x(j)\n",
                     "tensor y(I) : dense\n" + kSquare + "y(i) = B(i, j) * y(j)\n"},
                    all);
}

// abs and sqrt vanish at zero (math ops the sparsifier knows); exp, max
// and min need not, and tcc evaluates them everywhere, absent entries
// read as zero: exp(B) is 1 off B's entries, max(B, 2) is 2.
const std::vector<std::string> kBuiltinPrograms = {
    "tensor y(I) : dense\n" + kMatrices + "y(i) = abs(B(i, j)) * x(j)\n",
    "tensor A(I, J) : csr\n" + kMatrices + "A(i, j) = sqrt(abs(B(i, j))) + C(i, j)\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = exp(B(i, j))\n",
    "tensor A(I, J) : csr\n" + kMatrices + "A(i, j) = exp(B(i, j))\n",
    "tensor A(I, J) : dcsr\n" + kMatrices + "A(i, j) = exp(B(i, j)) * C(i, j)\n",
    "tensor y(J) : dense\n" + kMatrices + "y(j) = exp(B(i, j))\n",  // (a sum over B's dense level)
    "tensor y(I) : dense\n" + kMatrices + "y(i) = exp(B(i, j)) * x(j)\n",
    "tensor y(I) : dense\n" + kMatrices + "y(i) = exp(B(i, j) * C(i, j)) * x(j)\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = exp(B(i, j) + 0.5) - exp(x(j))\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = exp(B(i, j) + x(j))\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = max(B(i, j), 0.25)\n",
    "tensor A(I, J) : csr\n" + kMatrices + "A(i, j) = min(-0.5, B(i, j))\n",
    "tensor A(I, J) : csr\n" + kMatrices + "A(i, j) = max(B(i, j), -0.5) + C(i, j)\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = max(B(i, j), C(i, j))\n",
    "tensor A(I, J) : dcsr\n" + kMatrices + "A(i, j) = min(B(i, j), C(i, j))\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = min(B(i, j) + 1, C(i, j) - 2)\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = max(B(i, j), x(j))\n",
    "tensor y(I) : dense\n" + kMatrices + "y(i) = max(B(i, j) * x(j), C(i, j)) * 2\n",
    "tensor y(I) : dense\n" + kMatrices + "y(i) = exp(exp(B(i, j)) - 1) * x(j)\n",
    "tensor y(I) : dense\n" + kMatrices + "y(i) = B(i, j) * exp(1.5) * x(j)\n",
    "tensor A(I, J) : dense\ntensor z(I) : dense\n" + kMatrices + "A(i, j) = exp(B(i, j) + z(i))\n",
    "tensor A(I, J) : csr\ntensor z(I) : dense\n" + kMatrices + "A(i, j) = max(B(i, j), z(i))\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = exp((B(i, j) + C(i, j)) * x(j))\n",
    "tensor A(I, J) : dense\n" + kMatrices + "A(i, j) = exp(B(i, j) / 2) * C(i, j)\n",
};

TEST(MlirBuiltinTest, RandomMatrices) {
  TCC_SKIP_WITHOUT_MLIR();
  std::map<std::string, rt::Coo> all{{"B", randomSparse({17, 13}, 0.2, 60)}, {"C", randomSparse({17, 13}, 0.2, 61)},
                                     {"x", randomDense({13}, 62)}, {"z", randomDense({17}, 66)}};
  expectEachMatches(kBuiltinPrograms, all);
}

TEST(MlirBuiltinTest, RealMatrices) {
  TCC_SKIP_WITHOUT_MLIR();
  rt::Coo b = realMatrix("bcspwr03"), c = realMatrix("bcspwr03");
  for (double& v : c.values) v = -v;
  std::map<std::string, rt::Coo> all{{"B", b}, {"C", c}, {"x", randomDense({b.dims[1]}, 63)},
                                     {"z", randomDense({b.dims[0]}, 67)}};
  expectEachMatches(kBuiltinPrograms, all);
}

TEST(MlirBuiltinTest, IntegerAbsMaxMin) {
  TCC_SKIP_WITHOUT_MLIR();
  rt::Coo b = randomSparse({15, 11}, 0.25, 64), c = randomSparse({15, 11}, 0.25, 65);
  for (rt::Coo* coo : {&b, &c})
    for (double& v : coo->values) v = std::round(v * 20 - 10);
  const std::string matrices = "tensor B(I, J) : csr of int32\ntensor C(I, J) : dcsr of int32\n";
  expectEachMatches({"tensor A(I, J) : dense of int32\n" + matrices + "A(i, j) = abs(B(i, j)) - C(i, j)\n",
                     "tensor A(I, J) : csr of int32\n" + matrices + "A(i, j) = max(B(i, j), 3)\n",
                     "tensor A(I, J) : dense of int32\n" + matrices + "A(i, j) = min(B(i, j), C(i, j))\n"},
                    {{"B", b}, {"C", c}}, 0);
}

// An integer negation under a sparse sum (MLIR 16 crashed on `0 - x`),
// alone and after a dense tensor the sum starts from.
TEST(MlirUpdateInPlaceTest, IntegerNegationUnderASparseSum) {
  TCC_SKIP_WITHOUT_MLIR();
  rt::Coo a = randomSparse({12}, 1.0, 80), b = randomSparse({12, 9}, 0.3, 81), c = randomSparse({9}, 1.0, 82);
  for (rt::Coo* coo : {&a, &b, &c})
    for (double& v : coo->values) v = std::round(v * 20 - 10);
  const std::string declarations = "tensor y(I) : dense of int32\ntensor A(I) : dense of int32\n"
                                   "tensor B(I, K) : csr of int32\ntensor C(K) : dense of int32\n";
  expectEachMatches({declarations + "y(i) = -(B(i, k) * C(k))\n", declarations + "y(i) = A(i) - B(i, k) * C(k)\n",
                     declarations + "y(i) = y(i) - B(i, k) * C(k)\n"},
                    {{"A", a}, {"B", b}, {"C", c}, {"y", a}}, 0);
}

// Stored as float16, read as float32 (or float64 where the kernel writes
// float64): the values float16 holds, so both compute exactly alike.
TEST(MlirFloat16Test, InputsReadInTheOutputsType) {
  TCC_SKIP_WITHOUT_MLIR();
  auto held = [](rt::Coo coo) {
    coo.values = rt::heldByFloat16(coo.values);
    return coo;
  };
  rt::Coo real = held(realMatrix("bcsstk01"));
  for (const std::string type : {"float32", "float64"}) {
    SCOPED_TRACE(type);
    const double tolerance = type == "float32" ? 1e-5 : 1e-12;
    expectMlirMatches("tensor y(I) : dense of " + type + "\ntensor A(I, J) : csr of float16\ntensor x(J) : dense of " +
                          type + "\ny(i) = A(i, j) * x(j)\n",
                      {{"A", real}, {"x", randomDense({real.dims[1]}, 70)}}, tolerance);
    expectMlirMatches("tensor C(I, K) : dense of " + type +
                          "\ntensor A(I, J) : csr of float16\ntensor B(J, K) : dense of float16\n"
                          "C(i, k) = A(i, j) * B(j, k)\n",
                      {{"A", held(randomSparse({21, 17}, 0.2, 71))}, {"B", held(randomDense({17, 5}, 72))}}, tolerance);
    expectMlirMatches("tensor A(I, J) : csr of " + type + "\ntensor B(I, J) : csr of float16\ntensor C(I, J) : dcsr of " +
                          type + "\nA(i, j) = B(i, j) + C(i, j) * 2\n",
                      {{"B", held(randomSparse({19, 23}, 0.2, 73))}, {"C", randomSparse({19, 23}, 0.2, 74)}},
                      tolerance);
    rt::Coo alpha = rt::Coo::ofShape({});
    alpha.push(nullptr, 0.375);
    expectMlirMatches("tensor y(I) : dense of " + type + "\ntensor alpha : dense of float16\ntensor A(I, J) : csr of "
                      "float16\ntensor x(J) : dense of float16\ny(i) += alpha * exp(A(i, j)) * x(j)\n",
                      {{"alpha", alpha}, {"A", held(randomSparse({9, 12}, 0.3, 75))}, {"x", held(randomDense({12}, 76))},
                       {"y", randomDense({9}, 77)}},
                      tolerance);
  }
}

}  // namespace
}  // namespace tcc::test
