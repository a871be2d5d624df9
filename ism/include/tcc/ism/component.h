// Tensor components: the coordinates of one result entry (order 1 to 4,
// already permuted into the result's level order) and its value.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcc::ism {

inline constexpr int kMaxOrder = 4;

template <int N>
using Coordinates = std::array<int32_t, N>;

template <int N>
struct Component {
  Coordinates<N> crd;
  double val;
};

// Lexicographic order on coordinates: the storage order of the result.
template <int N>
inline bool lessThan(const Coordinates<N>& a, const Coordinates<N>& b) {
  for (int l = 0; l < N; ++l) {
    if (a[l] != b[l]) return a[l] < b[l];
  }
  return false;
}

template <int N>
inline bool sameCoordinates(const Coordinates<N>& a, const Coordinates<N>& b) {
  for (int l = 0; l < N; ++l) {
    if (a[l] != b[l]) return false;
  }
  return true;
}

// The shape of a workspace. Components are inserted in mode order;
// `levelOrder[l]` names the mode stored at level l (identity for a
// row-major result, {1, 0} for CSC), and the workspace sorts and compresses
// in level order.
template <int N>
struct Shape {
  std::array<int32_t, N> modeDims{};   // size of each mode, in mode order
  std::array<int, N> levelOrder{};      // mode stored at each level

  static Shape rowMajor(const std::array<int32_t, N>& dims) {
    Shape shape;
    shape.modeDims = dims;
    for (int l = 0; l < N; ++l) shape.levelOrder[l] = l;
    return shape;
  }

  int32_t levelDim(int level) const { return modeDims[levelOrder[level]]; }

  bool isIdentityOrder() const {
    for (int l = 0; l < N; ++l) {
      if (levelOrder[l] != l) return false;
    }
    return true;
  }

  // Throws std::invalid_argument on non-positive dimensions or a level order
  // that is not a permutation.
  void validate() const {
    std::array<bool, N> seen{};
    for (int l = 0; l < N; ++l) {
      if (modeDims[l] <= 0) {
        throw std::invalid_argument("ism: dimension of mode " + std::to_string(l) +
                                    " must be positive, got " + std::to_string(modeDims[l]));
      }
      int mode = levelOrder[l];
      if (mode < 0 || mode >= N || seen[mode]) {
        throw std::invalid_argument("ism: level order is not a permutation of 0.." +
                                    std::to_string(N - 1));
      }
      seen[mode] = true;
    }
  }

  // Mode-order coordinates to level-order coordinates.
  Coordinates<N> toLevelOrder(const Coordinates<N>& modeCoordinates) const {
    Coordinates<N> out;
    for (int l = 0; l < N; ++l) out[l] = modeCoordinates[levelOrder[l]];
    return out;
  }
};

// Row-major linearization of level-order coordinates, wrapping modulo 2^64.
// Used by the hash policy only, where wrap-around is harmless.
template <int N>
inline uint64_t linearize(const Coordinates<N>& crd, const Shape<N>& shape) {
  uint64_t key = static_cast<uint32_t>(crd[0]);
  for (int l = 1; l < N; ++l) {
    key = key * static_cast<uint64_t>(shape.levelDim(l)) + static_cast<uint32_t>(crd[l]);
  }
  return key;
}

}  // namespace tcc::ism
