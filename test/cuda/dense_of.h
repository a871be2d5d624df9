// The GPU tests' side of the dense reference: a tensor as the evaluator's
// array, and a GPU result compared with the evaluator's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {

inline DenseArray denseOf(const rt::Coo& coo) {
  DenseArray array;
  array.dims.assign(coo.dims.begin(), coo.dims.end());
  array.values = rt::toDense(coo);
  return array;
}

// Expects `actual` within `tolerance` of `expected`, relative to the
// largest expected magnitude (at least 1); the first five mismatches are
// reported, prefixed by `what`. Returns how many were reported.
inline int expectClose(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance,
                       const std::string& what) {
  EXPECT_EQ(actual.size(), expected.size()) << what;
  if (actual.size() != expected.size()) return 1;
  double scale = 1;
  for (double v : expected) scale = std::max(scale, std::abs(v));
  int mismatches = 0;
  for (size_t k = 0; k < actual.size() && mismatches < 5; ++k) {
    if (std::abs(actual[k] - expected[k]) > tolerance * scale) {
      ++mismatches;
      ADD_FAILURE() << what << ": entry " << k << " is " << actual[k] << ", expected " << expected[k];
    }
  }
  return mismatches;
}

}  // namespace tcc::test
