// The permanents the MPI tests compute under mpirun and on one process:
// each with the value it must have by brute force or a closed form.
#pragma once

#include <string>
#include <vector>

#include "permanent_test_support.h"

namespace tcc::permanent_test {

struct MpiCase {
  std::string name;
  Matrix matrix;
  bool exact = false;     // int64 result (128-bit exact mode), else float64
  double expected = 0;    // by the definition or a closed form
  double tolerance = 0;   // of `expected` (0 for exact cases)
  std::string error;      // when not empty: the run must fail with this
};

std::vector<MpiCase> mpiCases();
// The case of that name; throws std::out_of_range.
MpiCase mpiCase(const std::string& name);

}  // namespace tcc::permanent_test
