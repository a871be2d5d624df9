// Test support: random component streams, the std::map reference the ISM
// is checked against, and an independent decoder of compressed levels.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "tcc/ism/ism.h"

namespace tcc::ism::testing {

template <int N>
struct Stream {
  Shape<N> shape;
  std::vector<Coordinates<N>> coordinates;  // mode order
  std::vector<double> values;
};

enum class Duplication { Light, Heavy };

// Heavy: every component is drawn from a pool of `count / 16` distinct
// coordinates; light: coordinates uniform over dimensions large enough that
// repeats are rare (but present).
template <int N>
Stream<N> randomStream(std::size_t count, Duplication duplication, uint32_t seed,
                       bool transposed = false) {
  std::mt19937 rng(seed);
  Stream<N> stream;
  std::array<int32_t, N> dims;
  for (int m = 0; m < N; ++m) {
    int32_t base = duplication == Duplication::Heavy ? 8 : (N == 1 ? 1 << 20 : N == 2 ? 4096 : 256);
    dims[m] = base + static_cast<int32_t>(rng() % 7);
  }
  stream.shape = Shape<N>::rowMajor(dims);
  if (transposed) {
    for (int l = 0; l < N; ++l) stream.shape.levelOrder[l] = N - 1 - l;
  }
  std::vector<Coordinates<N>> pool;
  if (duplication == Duplication::Heavy) {
    pool.resize(std::max<std::size_t>(count / 16, 1));
    for (auto& c : pool) {
      for (int m = 0; m < N; ++m) c[m] = static_cast<int32_t>(rng() % static_cast<uint32_t>(dims[m]));
    }
  }
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (std::size_t k = 0; k < count; ++k) {
    Coordinates<N> c;
    if (duplication == Duplication::Heavy) {
      c = pool[rng() % pool.size()];
    } else {
      for (int m = 0; m < N; ++m) c[m] = static_cast<int32_t>(rng() % static_cast<uint32_t>(dims[m]));
    }
    stream.coordinates.push_back(c);
    double v = value(rng);
    stream.values.push_back(v == 0.0 ? 0.5 : v);
  }
  return stream;
}

// Reference result: level-order coordinates to summed value and the sum of
// magnitudes (for a tolerance that does not depend on summation order).
struct ReferenceEntry {
  double value = 0;
  double magnitude = 0;
};

template <int N>
std::map<Coordinates<N>, ReferenceEntry> referenceOf(const Stream<N>& stream) {
  std::map<Coordinates<N>, ReferenceEntry> reference;
  for (std::size_t k = 0; k < stream.values.size(); ++k) {
    Coordinates<N> level;
    for (int l = 0; l < N; ++l) level[l] = stream.coordinates[k][stream.shape.levelOrder[l]];
    auto& entry = reference[level];
    entry.value += stream.values[k];
    entry.magnitude += std::abs(stream.values[k]);
  }
  return reference;
}

inline bool closeEnough(double actual, const ReferenceEntry& expected) {
  return std::abs(actual - expected.value) <= 1e-12 * (1.0 + expected.magnitude);
}

template <int N, class Reference>
void expectAllArrayMatches(const AllArray<N>& all, const Reference& reference) {
  ASSERT_EQ(all.size(), reference.size());
  std::size_t k = 0;
  for (const auto& [crd, entry] : reference) {
    ASSERT_EQ(all.coordinates()[k], crd) << "at all-array position " << k;
    ASSERT_TRUE(closeEnough(all.values()[k], entry))
        << "at all-array position " << k << ": " << all.values()[k] << " vs " << entry.value;
    ++k;
  }
}

// Walks compressed levels the way generated code iterates them and
// collects the stored components (level order); checks the structural
// invariants on the way. Dense positions holding zero are skipped.
template <int N>
std::map<Coordinates<N>, double> decode(const CompressedTensor& tensor) {
  std::map<Coordinates<N>, double> out;
  Coordinates<N> crd{};
  auto walk = [&](auto&& self, int level, int64_t parent) -> void {
    if (level == N) {
      EXPECT_LT(static_cast<std::size_t>(parent), tensor.vals.size());
      double v = tensor.vals[static_cast<std::size_t>(parent)];
      if (v != 0.0) out[crd] += v;
      return;
    }
    const CompressedLevel& l = tensor.levels[level];
    switch (l.spec.kind) {
      case LevelKind::Dense:
        for (int32_t i = 0; i < l.dimension; ++i) {
          crd[level] = i;
          self(self, level + 1, parent * l.dimension + i);
        }
        break;
      case LevelKind::Compressed: {
        ASSERT_LT(static_cast<std::size_t>(parent + 1), l.pos.size());
        int64_t begin = l.pos[parent], end = l.pos[parent + 1];
        ASSERT_LE(begin, end);
        for (int64_t p = begin; p < end; ++p) {
          if (p > begin) {
            if (l.spec.unique) EXPECT_LT(l.crd[p - 1], l.crd[p]);
            else EXPECT_LE(l.crd[p - 1], l.crd[p]);
          }
          crd[level] = l.crd[p];
          ASSERT_GE(crd[level], 0);
          ASSERT_LT(crd[level], l.dimension);
          self(self, level + 1, p);
        }
        break;
      }
      case LevelKind::Singleton:
        ASSERT_LT(static_cast<std::size_t>(parent), l.crd.size());
        crd[level] = l.crd[parent];
        self(self, level + 1, parent);
        break;
    }
  };
  walk(walk, 0, 0);
  return out;
}

}  // namespace tcc::ism::testing
