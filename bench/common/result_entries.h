// A result as its nonzero entries sorted by coordinate, so that a dense
// and a sparse result of the same computation compare (zeros left out).
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "tcc/tcc.h"

using Entries = std::vector<std::pair<std::vector<int64_t>, double>>;

inline Entries entriesOf(const tcc::rt::Coo& coo) {
  Entries entries;
  for (size_t k = 0; k < coo.nnz(); ++k) {
    if (coo.values[k] == 0) continue;
    std::vector<int64_t> coordinate;
    for (int mode = 0; mode < coo.order(); ++mode) coordinate.push_back(coo.coords[mode][k]);
    entries.emplace_back(std::move(coordinate), coo.values[k]);
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

inline Entries entriesOf(const tcc::Tensor& tensor) { return entriesOf(tcc::rt::unpack(tensor)); }

// max |actual - expected| / max |expected| over the union of both results'
// entries (an entry one side lacks counts as that side's zero).
inline double relativeDifference(const Entries& actual, const Entries& expected) {
  double worst = 0, scale = 0;
  size_t a = 0, b = 0;
  while (a < actual.size() || b < expected.size()) {
    if (b == expected.size() || (a < actual.size() && actual[a].first < expected[b].first)) {
      worst = std::max(worst, std::abs(actual[a++].second));
    } else if (a == actual.size() || expected[b].first < actual[a].first) {
      scale = std::max(scale, std::abs(expected[b].second));
      worst = std::max(worst, std::abs(expected[b++].second));
    } else {
      scale = std::max(scale, std::abs(expected[b].second));
      worst = std::max(worst, std::abs(actual[a++].second - expected[b++].second));
    }
  }
  return worst / std::max(scale, 1e-300);
}
