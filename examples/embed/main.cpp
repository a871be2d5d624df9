// Embeds tcc: compiles SpMV from DSL text and the same kernel from the C++
// builder, runs both on a random CSR matrix, and checks them against a
// plain loop. Exits non-zero on any mismatch.
#include <tcc/tcc.h>

#include <cmath>
#include <cstdio>

int main() {
  using namespace tcc;
  rt::Coo matrix = rt::randomUniform({200, 150}, 0.05, 42);
  rt::Coo vector = rt::randomUniform({150}, 1.0, 43);
  Tensor A = rt::pack(matrix, toRuntimeFormat(Format::csr()));
  Tensor x = rt::pack(vector, toRuntimeFormat(Format::denseOfOrder(1)));

  std::vector<double> expected(200, 0.0), dense = rt::toDense(vector);
  for (size_t k = 0; k < matrix.nnz(); ++k)
    expected[matrix.coords[0][k]] += matrix.values[k] * dense[matrix.coords[1][k]];

  Kernel fromText = compile(Program::fromText(
      "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n", "spmv.tc"));

  IndexVar i("i"), j("j");
  TensorVar y("y", {"I"}, Format::denseOfOrder(1)), A_("A", {"I", "J"}, Format::csr()),
      x_("x", {"J"}, Format::denseOfOrder(1));
  Kernel fromBuilder = compile(Program::fromStatements({y(i) = A_(i, j) * x_(j)}, {y, A_, x_}));

  int failures = 0;
  for (const Kernel* kernel : {&fromText, &fromBuilder}) {
    std::vector<double> result = rt::toDense(kernel->run({{"A", A}, {"x", x}}).at("y"));
    for (size_t row = 0; row < expected.size(); ++row)
      if (std::abs(result[row] - expected[row]) > 1e-12 * (1 + std::abs(expected[row]))) ++failures;
  }
  std::printf("embedded tcc: SpMV from text and from the builder, %d mismatches\n", failures);
  return failures == 0 ? 0 : 1;
}
