// Level formats the Compress stage can build, and the arrays it produces.
// Kept apart from the compiler's tcc::ir::Format so generated code and the
// runtime can use the ISM without the IR; LevelKind values match the C
// ABI's tcc_level_kind (dense 0, compressed 1, singleton 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::ism {

enum class LevelKind { Dense = 0, Compressed = 1, Singleton = 2 };

struct LevelSpec {
  LevelKind kind = LevelKind::Dense;
  bool unique = true;  // false: one position per component (COO's top level)

  static LevelSpec dense() { return {LevelKind::Dense, true}; }
  static LevelSpec compressed(bool unique = true) { return {LevelKind::Compressed, unique}; }
  static LevelSpec singleton(bool unique = true) { return {LevelKind::Singleton, unique}; }
  bool operator==(const LevelSpec&) const = default;
};

inline std::string toString(const LevelSpec& level) {
  std::string name = level.kind == LevelKind::Dense        ? "dense"
                     : level.kind == LevelKind::Compressed ? "compressed"
                                                           : "singleton";
  return level.unique ? name : name + "(nonunique)";
}

struct CompressedLevel {
  LevelSpec spec;
  int32_t dimension = 0;
  std::vector<int64_t> pos;  // compressed only: parent positions + 1 entries
  std::vector<int32_t> crd;  // compressed and singleton: one per position
};

// A result tensor in level order; the caller keeps the mode ordering it
// gave the workspace's Shape.
struct CompressedTensor {
  std::vector<CompressedLevel> levels;
  std::vector<double> vals;  // one per position of the last level
};

// Level chains of the named formats, outermost level first. CSC is csr()
// with level order {1, 0} in the workspace Shape; DCSC likewise.
namespace chains {
inline std::vector<LevelSpec> dense(int order) {
  return std::vector<LevelSpec>(static_cast<std::size_t>(order), LevelSpec::dense());
}
inline std::vector<LevelSpec> sparseVector() { return {LevelSpec::compressed()}; }
inline std::vector<LevelSpec> csr() { return {LevelSpec::dense(), LevelSpec::compressed()}; }
inline std::vector<LevelSpec> dcsr() { return {LevelSpec::compressed(), LevelSpec::compressed()}; }
inline std::vector<LevelSpec> coo(int order) {
  if (order == 1) return {LevelSpec::compressed()};
  std::vector<LevelSpec> levels{LevelSpec::compressed(false)};
  for (int l = 1; l < order; ++l) levels.push_back(LevelSpec::singleton(l + 1 == order));
  return levels;
}
inline std::vector<LevelSpec> csf(int order) {
  return std::vector<LevelSpec>(static_cast<std::size_t>(order), LevelSpec::compressed());
}
}  // namespace chains

}  // namespace tcc::ism
