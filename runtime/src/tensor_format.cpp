#include "tcc/runtime/tensor_format.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "tcc/runtime/nm.h"

namespace tcc::rt {

std::string LevelSpec::toString() const {
  std::string name;
  switch (kind) {
    case TCC_LEVEL_DENSE: return "dense";
    case TCC_LEVEL_COMPRESSED: name = "compressed"; break;
    case TCC_LEVEL_SINGLETON: name = "singleton"; break;
    case TCC_LEVEL_NM:
      return "nm(" + std::to_string(nmN) + "," + std::to_string(nmM) + "," + std::to_string(nmL) + ")";
    default: return "unknown(" + std::to_string(kind) + ")";
  }
  std::vector<std::string> properties;
  if (!unique) properties.push_back("nonunique");
  if (!ordered) properties.push_back("unordered");
  if (properties.empty()) return name;
  name += "(" + properties[0];
  for (size_t i = 1; i < properties.size(); ++i) name += ", " + properties[i];
  return name + ")";
}

TensorFormat::TensorFormat(std::vector<LevelSpec> levels, std::vector<int> modeOrdering)
    : levels(std::move(levels)), modeOrdering(std::move(modeOrdering)) {
  if (this->modeOrdering.empty()) {
    this->modeOrdering.resize(this->levels.size());
    std::iota(this->modeOrdering.begin(), this->modeOrdering.end(), 0);
  }
}

int TensorFormat::modeOfLevel(int level) const {
  if (modeOrdering.empty()) return level;
  return modeOrdering.at(level);
}

int TensorFormat::levelOfMode(int mode) const {
  for (int level = 0; level < order(); ++level) {
    if (modeOfLevel(level) == mode) return level;
  }
  throw std::out_of_range("mode " + std::to_string(mode) + " is stored by no level of " +
                          toString());
}

bool TensorFormat::isNM() const { return order() > 0 && levels.back().kind == TCC_LEVEL_NM; }

bool TensorFormat::isAllDense() const {
  return std::all_of(levels.begin(), levels.end(),
                     [](const LevelSpec& level) { return level.kind == TCC_LEVEL_DENSE; });
}

void TensorFormat::validate() const {
  if (order() > TCC_MAX_ORDER) {
    throw std::invalid_argument("format " + toString() + " has " + std::to_string(order()) +
                                " levels; at most " + std::to_string(TCC_MAX_ORDER) +
                                " are supported");
  }
  if (!modeOrdering.empty()) {
    std::vector<int> sorted = modeOrdering;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = static_cast<int>(sorted.size()) == order();
    for (int i = 0; permutation && i < order(); ++i) permutation = sorted[i] == i;
    if (!permutation) {
      throw std::invalid_argument("format " + toString() +
                                  ": mode ordering is not a permutation of 0.." +
                                  std::to_string(order() - 1));
    }
  }
  for (int level = 0; level < order(); ++level) {
    int kind = levels[level].kind;
    if (kind == TCC_LEVEL_NM) {
      bool lastOfMatrix = order() == 2 && level == 1 && levels[0].kind == TCC_LEVEL_DENSE &&
                          modeOfLevel(0) == 0 && modeOfLevel(1) == 1;
      if (!lastOfMatrix) {
        throw std::invalid_argument("format " + toString() +
                                    ": an nm level must be the second level of a matrix stored {dense, nm(N,M,L)} "
                                    "in mode order (the rows are pruned in windows of M)");
      }
      validateNmParameters(levels[level].nmN, levels[level].nmM, levels[level].nmL);
      continue;
    }
    if (kind != TCC_LEVEL_DENSE && kind != TCC_LEVEL_COMPRESSED && kind != TCC_LEVEL_SINGLETON) {
      throw std::invalid_argument("format " + toString() + ": level " + std::to_string(level) +
                                  " has a kind the runtime cannot store (" +
                                  levels[level].toString() + ")");
    }
  }
  if (order() > 0 && levels[0].kind == TCC_LEVEL_SINGLETON) {
    throw std::invalid_argument("format " + toString() +
                                ": a singleton level needs a parent level");
  }
}

std::string TensorFormat::toString() const {
  std::string text = "{";
  for (int level = 0; level < order(); ++level) {
    if (level > 0) text += ", ";
    text += levels[level].toString();
  }
  text += "}";
  bool identity = true;
  for (int level = 0; level < order(); ++level) identity = identity && modeOfLevel(level) == level;
  if (!identity) {
    text += " order (";
    for (int level = 0; level < order(); ++level) {
      if (level > 0) text += ",";
      text += std::to_string(modeOfLevel(level));
    }
    text += ")";
  }
  return text;
}

bool TensorFormat::operator==(const TensorFormat& other) const {
  if (levels != other.levels) return false;
  for (int level = 0; level < order(); ++level) {
    if (modeOfLevel(level) != other.modeOfLevel(level)) return false;
  }
  return true;
}

TensorFormat TensorFormat::dense(int order) {
  return TensorFormat(std::vector<LevelSpec>(order, LevelSpec::dense()));
}
TensorFormat TensorFormat::sparseVector() { return TensorFormat({LevelSpec::compressed()}); }
TensorFormat TensorFormat::csr() {
  return TensorFormat({LevelSpec::dense(), LevelSpec::compressed()});
}
TensorFormat TensorFormat::csc() {
  return TensorFormat({LevelSpec::dense(), LevelSpec::compressed()}, {1, 0});
}
TensorFormat TensorFormat::dcsr() {
  return TensorFormat({LevelSpec::compressed(), LevelSpec::compressed()});
}
TensorFormat TensorFormat::dcsc() {
  return TensorFormat({LevelSpec::compressed(), LevelSpec::compressed()}, {1, 0});
}
TensorFormat TensorFormat::coo(int order) {
  std::vector<LevelSpec> levels;
  for (int level = 0; level < order; ++level) {
    bool last = level == order - 1;
    if (level == 0) {
      levels.push_back(LevelSpec::compressed(order == 1));
    } else {
      levels.push_back(LevelSpec::singleton(last));
    }
  }
  return TensorFormat(std::move(levels));
}
TensorFormat TensorFormat::csf(int order) {
  return TensorFormat(std::vector<LevelSpec>(order, LevelSpec::compressed()));
}

}  // namespace tcc::rt
