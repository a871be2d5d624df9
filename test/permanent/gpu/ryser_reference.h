// The plain Gray-code Ryser walk over a GPU problem's columns, on the host:
// what every generated kernel must add up, term by term.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/ryser_problem.h"

namespace tcc::permanent_test {

// Calls visit(g, prod_i x_i(g)) for g = 0 .. iterations-1, where x(0) is
// the problem's start and x(g) adds or removes the column that Gray code g
// flips.
template <typename Visit>
void forEachRyserTerm(const rt::permanent::gpu::RyserProblem& problem, uint64_t iterations, Visit&& visit) {
  std::vector<double> x = problem.start;
  for (uint64_t g = 0; g < iterations; ++g) {
    if (g > 0) {
      const int column = __builtin_ctzll(g);
      const bool added = ((g ^ (g >> 1)) >> column) & 1;
      for (int32_t k = problem.columnStart[column]; k < problem.columnStart[column + 1]; ++k)
        x[problem.rows[k]] += added ? problem.values[k] : -problem.values[k];
    }
    double product = 1;
    for (double value : x) product *= value;
    visit(g, product);
  }
}

}  // namespace tcc::permanent_test
