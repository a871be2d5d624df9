// The runtime's description of a storage format: one level per mode,
// outermost first, and the mode each level stores. It mirrors
// tcc::ir::Format without depending on the IR library; level kinds use
// tcc_level_kind's numbering from abi.h.
#pragma once

#include <string>
#include <vector>

#include "tcc/runtime/abi.h"

namespace tcc::rt {

struct LevelSpec {
  int kind = TCC_LEVEL_DENSE;  // enum tcc_level_kind
  bool unique = true;
  bool ordered = true;
  int nmN = 0, nmM = 0, nmL = 0;  // an nm level: N vectors kept of every M rows, vectors of length L

  static LevelSpec dense() { return {TCC_LEVEL_DENSE, true, true}; }
  static LevelSpec compressed(bool unique = true, bool ordered = true) {
    return {TCC_LEVEL_COMPRESSED, unique, ordered};
  }
  static LevelSpec singleton(bool unique = true, bool ordered = true) {
    return {TCC_LEVEL_SINGLETON, unique, ordered};
  }
  // Vector-wise N:M (tcc/runtime/nm.h); only as the last level of a matrix.
  static LevelSpec nm(int n, int m, int l) { return {TCC_LEVEL_NM, true, true, n, m, l}; }
  bool operator==(const LevelSpec&) const = default;
  std::string toString() const;  // "dense", "compressed(nonunique)", "nm(2,4,32)", ...
};

struct TensorFormat {
  std::vector<LevelSpec> levels;  // outermost first
  std::vector<int> modeOrdering;  // level l stores mode modeOrdering[l]; empty = identity

  TensorFormat() = default;  // a scalar
  explicit TensorFormat(std::vector<LevelSpec> levels, std::vector<int> modeOrdering = {});

  int order() const { return static_cast<int>(levels.size()); }
  int modeOfLevel(int level) const;
  int levelOfMode(int mode) const;
  bool isAllDense() const;
  // Whether the last level is N:M (the format is then {dense, nm(N,M,L)}).
  bool isNM() const;
  // Throws std::invalid_argument when the ordering is not a permutation,
  // a level kind is unknown, the order exceeds TCC_MAX_ORDER, a singleton
  // level opens the format, or an nm level is anything but the last level
  // of {dense, nm(N,M,L)} with valid N, M and L.
  void validate() const;
  std::string toString() const;  // "{dense, compressed} order (1,0)"
  bool operator==(const TensorFormat& other) const;

  static TensorFormat dense(int order);
  static TensorFormat sparseVector();  // {compressed}
  static TensorFormat csr();           // {dense, compressed}
  static TensorFormat csc();           // {dense, compressed} order (1,0)
  static TensorFormat dcsr();          // {compressed, compressed}
  static TensorFormat dcsc();          // {compressed, compressed} order (1,0)
  static TensorFormat coo(int order);  // {compressed(nonunique), singleton(nonunique)..., singleton}
  static TensorFormat csf(int order);  // all compressed
};

}  // namespace tcc::rt
