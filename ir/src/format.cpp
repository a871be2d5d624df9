#include "tcc/ir/format.h"

#include <numeric>
#include <stdexcept>

namespace tcc::ir {

std::string toString(Datatype type) {
  switch (type) {
    case Datatype::Float64: return "float64";
    case Datatype::Float32: return "float32";
    case Datatype::Float16: return "float16";
    case Datatype::Int32: return "int32";
    case Datatype::Int64: return "int64";
  }
  return "?";
}

std::optional<Datatype> parseDatatype(const std::string& name) {
  if (name == "float64" || name == "double") return Datatype::Float64;
  if (name == "float32" || name == "float") return Datatype::Float32;
  if (name == "float16") return Datatype::Float16;
  if (name == "int32") return Datatype::Int32;
  if (name == "int64") return Datatype::Int64;
  return std::nullopt;
}

int byteWidth(Datatype type) {
  switch (type) {
    case Datatype::Float64: case Datatype::Int64: return 8;
    case Datatype::Float32: case Datatype::Int32: return 4;
    case Datatype::Float16: return 2;
  }
  return 0;
}

bool isFloat(Datatype type) {
  return type == Datatype::Float64 || type == Datatype::Float32 || type == Datatype::Float16;
}

std::string LevelFormat::toString() const {
  std::string name;
  switch (kind) {
    case LevelKind::Dense: return "dense";
    case LevelKind::Compressed: name = "compressed"; break;
    case LevelKind::Singleton: name = "singleton"; break;
    case LevelKind::NM:
      return "nm(" + std::to_string(nmN) + "," + std::to_string(nmM) + "," + std::to_string(nmL) + ")";
  }
  std::vector<std::string> properties;
  if (!unique) properties.push_back("nonunique");
  if (!ordered) properties.push_back("unordered");
  if (properties.empty()) return name;
  name += "(";
  for (size_t i = 0; i < properties.size(); ++i) name += (i ? "," : "") + properties[i];
  return name + ")";
}

Format::Format(std::vector<LevelFormat> levels, std::vector<int> modeOrdering)
    : levels_(std::move(levels)), modeOrdering_(std::move(modeOrdering)) {
  if (modeOrdering_.empty()) {
    modeOrdering_.resize(levels_.size());
    std::iota(modeOrdering_.begin(), modeOrdering_.end(), 0);
  }
  if (modeOrdering_.size() != levels_.size())
    throw std::invalid_argument("format: mode ordering has " + std::to_string(modeOrdering_.size()) +
                                " entries for " + std::to_string(levels_.size()) + " levels");
  std::vector<bool> seen(levels_.size(), false);
  for (int mode : modeOrdering_) {
    if (mode < 0 || mode >= order() || seen[mode])
      throw std::invalid_argument("format: mode ordering is not a permutation of 0.." +
                                  std::to_string(order() - 1));
    seen[mode] = true;
  }
}

int Format::levelOfMode(int mode) const {
  for (int l = 0; l < order(); ++l)
    if (modeOrdering_[l] == mode) return l;
  throw std::out_of_range("format: no level stores mode " + std::to_string(mode));
}

int Format::firstSparseLevel() const {
  int level = 0;
  while (level < order() && levels_[level].isDense()) ++level;
  return level;
}

bool Format::hasIdentityOrdering() const {
  for (int l = 0; l < order(); ++l)
    if (modeOrdering_[l] != l) return false;
  return true;
}

std::string Format::toString() const {
  std::string text = "{";
  for (int l = 0; l < order(); ++l) {
    if (l > 0) text += ", ";
    text += levels_[l].toString();
  }
  text += "}";
  if (!hasIdentityOrdering()) {
    text += " order (";
    for (int l = 0; l < order(); ++l) {
      if (l > 0) text += ",";
      text += std::to_string(modeOrdering_[l]);
    }
    text += ")";
  }
  return text;
}

Format Format::denseOfOrder(int order) {
  return Format(std::vector<LevelFormat>(order, LevelFormat::dense()));
}
Format Format::sparseVector() { return Format({LevelFormat::compressed()}); }
Format Format::csr() { return Format({LevelFormat::dense(), LevelFormat::compressed()}); }
Format Format::csc() { return Format({LevelFormat::dense(), LevelFormat::compressed()}, {1, 0}); }
Format Format::dcsr() { return Format({LevelFormat::compressed(), LevelFormat::compressed()}); }
Format Format::dcsc() { return Format({LevelFormat::compressed(), LevelFormat::compressed()}, {1, 0}); }

Format Format::coo(int order) {
  if (order <= 1) return Format(std::vector<LevelFormat>(order, LevelFormat::compressed()));
  std::vector<LevelFormat> levels{LevelFormat::compressed(/*unique=*/false)};
  for (int l = 1; l < order; ++l) levels.push_back(LevelFormat::singleton(/*unique=*/l == order - 1));
  return Format(levels);
}

Format Format::csf(int order) {
  return Format(std::vector<LevelFormat>(order, LevelFormat::compressed()));
}

std::optional<Format> Format::named(const std::string& name, int order) {
  if (name == "dense") return denseOfOrder(order);
  if (name == "coo") return coo(order);
  if (name == "csf") return csf(order);
  if (name == "sparse" && order == 1) return sparseVector();
  if (order != 2) return std::nullopt;
  if (name == "csr") return csr();
  if (name == "csc") return csc();
  if (name == "dcsr") return dcsr();
  if (name == "dcsc") return dcsc();
  return std::nullopt;
}

}  // namespace tcc::ir
