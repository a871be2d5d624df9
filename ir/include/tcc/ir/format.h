// Tensor formats as the compiler sees them: a level format per stored
// mode, a mode ordering, and an element type. Storage itself lives in the
// runtime; lowering derives iteration and assembly from LevelFormat's
// properties, so adding a level kind (such as N:M) does not touch it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcc::ir {

enum class Datatype { Float64, Float32, Float16, Int32, Int64 };

std::string toString(Datatype type);
std::optional<Datatype> parseDatatype(const std::string& name);
int byteWidth(Datatype type);
bool isFloat(Datatype type);

enum class LevelKind { Dense, Compressed, Singleton, NM };

// One level of a tensor's storage. N:M levels carry their group shape:
// N nonzeros kept out of every M consecutive coordinates, in vectors of L.
struct LevelFormat {
  LevelKind kind = LevelKind::Dense;
  bool ordered = true;  // coordinates within a segment are sorted
  bool unique = true;   // no coordinate appears twice within a segment
  int nmN = 0, nmM = 0, nmL = 0;

  static LevelFormat dense() { return {LevelKind::Dense}; }
  static LevelFormat compressed(bool unique = true, bool ordered = true) {
    return {LevelKind::Compressed, ordered, unique};
  }
  static LevelFormat singleton(bool unique = true, bool ordered = true) {
    return {LevelKind::Singleton, ordered, unique};
  }
  static LevelFormat nm(int n, int m, int l) { return {LevelKind::NM, true, true, n, m, l}; }

  bool isDense() const { return kind == LevelKind::Dense; }
  bool isSparse() const { return kind != LevelKind::Dense; }
  // Sorted compressed coordinates: a range of them is found by binary search.
  bool isOrderedCompressed() const { return kind == LevelKind::Compressed && ordered; }
  std::string toString() const;  // "dense", "compressed(nonunique)", "nm(2,4,1)"
  bool operator==(const LevelFormat&) const = default;
};

class Format {
 public:
  Format() = default;  // the format of a scalar: no levels
  // Levels outermost first; modeOrdering[l] is the mode stored at level l
  // (identity when empty).
  explicit Format(std::vector<LevelFormat> levels, std::vector<int> modeOrdering = {});

  int order() const { return static_cast<int>(levels_.size()); }
  const std::vector<LevelFormat>& levels() const { return levels_; }
  const LevelFormat& level(int l) const { return levels_.at(l); }
  const std::vector<int>& modeOrdering() const { return modeOrdering_; }
  int modeOfLevel(int level) const { return modeOrdering_.at(level); }
  int levelOfMode(int mode) const;
  // The outermost level that is not dense; order() when every level is.
  int firstSparseLevel() const;
  bool isAllDense() const { return firstSparseLevel() == order(); }
  bool hasIdentityOrdering() const;

  // "{dense, compressed}" plus " order (1,0)" when not the identity.
  std::string toString() const;
  bool operator==(const Format&) const = default;

  // The named formats of the DSL.
  static Format denseOfOrder(int order);
  static Format sparseVector();  // {compressed}
  static Format csr();
  static Format csc();
  static Format dcsr();
  static Format dcsc();
  static Format coo(int order);  // {compressed(nonunique), singleton...}
  static Format csf(int order);  // all compressed
  // Looks up a named format ("csr", "dense", ...) for a tensor of `order`.
  static std::optional<Format> named(const std::string& name, int order);

 private:
  std::vector<LevelFormat> levels_;
  std::vector<int> modeOrdering_;
};

}  // namespace tcc::ir
