#include "permanent_mpi_cases.h"

#include <stdexcept>

#include "tcc/test/reference.h"

namespace tcc::permanent_test {
namespace {

double factorial(int n) { return n <= 1 ? 1 : n * factorial(n - 1); }

double derangements(int n) {  // D(n) = (n - 1) (D(n - 1) + D(n - 2))
  double previous = 1, current = 0;
  for (int k = 2; k <= n; ++k) {
    double next = (k - 1) * (current + previous);
    previous = current;
    current = next;
  }
  return n == 0 ? 1 : current;
}

MpiCase byDefinition(std::string name, Matrix matrix, bool exact) {
  double expected = test::permanentByPermutations(toDenseArray(matrix));
  return {std::move(name), matrix, exact, expected, exact ? 0 : ryserTolerance(matrix)};
}

}  // namespace

std::vector<MpiCase> mpiCases() {
  std::vector<MpiCase> cases;
  for (int n : {7, 8, 9}) {
    cases.push_back(byDefinition("random" + std::to_string(n), randomSparse(n, 0.6, 500 + n), false));
    cases.push_back(byDefinition("integers" + std::to_string(n), randomSparse(n, 0.7, 600 + n, true), true));
  }
  cases.push_back({"ones13", allOnes(13), true, factorial(13), 0});
  cases.push_back({"ones16-float", allOnes(16), false, factorial(16), 1e-9 * factorial(16)});
  cases.push_back({"derangements15", onesMinusIdentity(15), true, derangements(15), 0});
  cases.push_back({"derangements14-float", onesMinusIdentity(14), false, derangements(14), 1e-9 * derangements(14)});
  Matrix block = randomSparse(6, 0.8, 700, true);
  const double blockPermanent = test::permanentByPermutations(toDenseArray(block));
  cases.push_back({"block-diagonal", blockDiagonal({block, allOnes(5), onesMinusIdentity(7)}), true,
                   blockPermanent * factorial(5) * derangements(7), 0});
  Matrix singular = randomPattern(14, 0.5, 800);
  for (int row = 0; row < 14; ++row) singular.at(row, 3) = 0;  // an empty column: no perfect matching
  cases.push_back({"singular", singular, true, 0, 0});
  cases.push_back({"singular-float", singular, false, 0, 0});
  // Failures every rank must report alike: the sum does not fit the int64
  // result (21! > 2^63), or a chunk's products pass 2^127 on whichever rank
  // runs it (entries of 2^50).
  cases.push_back({"ones21-int64", allOnes(21), true, 0, 0, "overflows the result's int64 type"});
  Matrix huge = allOnes(3);
  for (double& entry : huge.values) entry = 1125899906842624.0;  // 2^50
  cases.push_back({"huge-entries", huge, true, 0, 0, "overflows 128-bit integer accumulation"});
  // Larger ones, against the single-process result only (n = 20: 4096 chunks
  // of 128 iterations; n = 17: 4096 of 16).
  cases.push_back({"random20", randomSparse(20, 0.35, 900), false, 0, -1});
  cases.push_back({"pattern17", randomPattern(17, 0.3, 901), true, 0, -1});
  return cases;
}

MpiCase mpiCase(const std::string& name) {
  for (MpiCase& each : mpiCases())
    if (each.name == name) return each;
  throw std::out_of_range("no MPI test case named " + name);
}

}  // namespace tcc::permanent_test
