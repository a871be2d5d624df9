#include "level_properties.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace tcc::rt::detail {

namespace {

// The coordinates of a position at `level` and of its ancestors, in mode
// order and 1-based as in a .mtx or .tns file; modes stored below `level`
// show as '*'.
std::string entryText(const Tensor& tensor, int level, int64_t position) {
  const TensorFormat& format = tensor.format();
  std::vector<std::string> shown(tensor.order(), "*");
  for (int l = level; l >= 0; --l) {
    const LevelStorage& storage = tensor.levelStorage(l);
    int64_t coordinate = 0;
    switch (format.levels[l].kind) {
      case TCC_LEVEL_DENSE: {
        int64_t size = tensor.levelSize(l);  // not 0: a position lies below it
        coordinate = position % size;
        position /= size;
        break;
      }
      case TCC_LEVEL_COMPRESSED: {
        coordinate = storage.crd[position];
        std::span<const int64_t> pos = storage.pos.span();
        position = std::upper_bound(pos.begin(), pos.end(), position) - pos.begin() - 1;
        break;
      }
      case TCC_LEVEL_SINGLETON:
        coordinate = storage.crd[position];
        break;
    }
    shown[format.modeOfLevel(l)] = std::to_string(coordinate + 1);
  }
  std::string text = "(";
  for (size_t mode = 0; mode < shown.size(); ++mode) text += (mode > 0 ? ", " : "") + shown[mode];
  return text + ")";
}

std::string levelText(const Tensor& tensor, int level) {
  return "level " + std::to_string(level) + " (" + tensor.format().levels[level].toString() + ", mode " +
         std::to_string(tensor.format().modeOfLevel(level) + 1) + ")";
}

[[noreturn]] void failRepeat(const Tensor& tensor, int level, int64_t position, int64_t earlier) {
  throw std::invalid_argument(levelText(tensor, level) + " is declared unique, but its position " +
                              std::to_string(position) + " repeats the coordinates " +
                              entryText(tensor, level, position) + " of position " + std::to_string(earlier) +
                              " (1-based coordinates)");
}

[[noreturn]] void failOrder(const Tensor& tensor, int level, int64_t position, int64_t earlier) {
  throw std::invalid_argument(levelText(tensor, level) + " is declared ordered, but its position " +
                              std::to_string(position) + " holds " + entryText(tensor, level, position) +
                              " after " + entryText(tensor, level, earlier) + " at position " +
                              std::to_string(earlier) + " (1-based coordinates)");
}

// Ids that are equal exactly for the positions of one level whose
// coordinates, at that level and above, are equal. Each id is a position
// of the level, so an array indexed by id has one entry per position.
struct Groups {
  bool identity = true;  // every position has coordinates of its own
  std::vector<int64_t> ids;
  int64_t of(int64_t position) const { return identity ? position : ids[position]; }
};

// Calls visit(parent, position, coordinate) for every position of `level`
// in storage order.
template <typename Visit>
void forEachPosition(const Tensor& tensor, int level, int64_t parents, Visit&& visit) {
  const LevelStorage& storage = tensor.levelStorage(level);
  switch (tensor.format().levels[level].kind) {
    case TCC_LEVEL_DENSE: {
      int64_t size = tensor.levelSize(level);
      for (int64_t parent = 0; parent < parents; ++parent) {
        for (int64_t c = 0; c < size; ++c) visit(parent, parent * size + c, static_cast<int32_t>(c));
      }
      return;
    }
    case TCC_LEVEL_COMPRESSED:
      for (int64_t parent = 0; parent < parents; ++parent) {
        for (int64_t p = storage.pos[parent]; p < storage.pos[parent + 1]; ++p) visit(parent, p, storage.crd[p]);
      }
      return;
    case TCC_LEVEL_SINGLETON:
      for (int64_t parent = 0; parent < parents; ++parent) visit(parent, parent, storage.crd[parent]);
      return;
  }
}

// An ordered level: within a group, coordinates never decrease, so a
// repeat sits right after its first occurrence.
Groups checkOrderedLevel(const Tensor& tensor, int level, const Groups& parentGroups, int64_t parents,
                         int64_t positions) {
  bool unique = tensor.format().levels[level].unique;
  std::vector<int32_t> lastCoordinate(parents, -1);
  std::vector<int64_t> lastPosition(parents, -1);
  Groups groups;
  groups.identity = unique;
  if (!unique) groups.ids.resize(positions);
  forEachPosition(tensor, level, parents, [&](int64_t parent, int64_t position, int32_t coordinate) {
    int64_t group = parentGroups.of(parent);
    int64_t earlier = lastPosition[group];
    if (earlier >= 0 && coordinate < lastCoordinate[group]) failOrder(tensor, level, position, earlier);
    if (earlier >= 0 && coordinate == lastCoordinate[group]) {
      if (unique) failRepeat(tensor, level, position, earlier);
      groups.ids[position] = groups.ids[earlier];
    } else if (!unique) {
      groups.ids[position] = position;
    }
    lastCoordinate[group] = coordinate;
    lastPosition[group] = position;
  });
  return groups;
}

struct GroupAndCoordinate {
  int64_t group;
  int32_t coordinate;
  bool operator==(const GroupAndCoordinate&) const = default;
};

struct GroupAndCoordinateHash {
  size_t operator()(const GroupAndCoordinate& key) const {
    uint64_t mixed = static_cast<uint64_t>(key.group) * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(key.coordinate);
    return std::hash<uint64_t>()(mixed);
  }
};

// An unordered level below parents with coordinates of their own, whose
// children are therefore contiguous: repeats found by stamping each
// coordinate with the parent that last used it.
Groups checkUnorderedLevelByStamps(const Tensor& tensor, int level, int64_t parents, int64_t positions) {
  bool unique = tensor.format().levels[level].unique;
  std::vector<int64_t> stampParent(tensor.levelSize(level), -1), stampPosition(tensor.levelSize(level), -1);
  Groups groups;
  groups.identity = unique;
  if (!unique) groups.ids.resize(positions);
  forEachPosition(tensor, level, parents, [&](int64_t parent, int64_t position, int32_t coordinate) {
    bool repeated = stampParent[coordinate] == parent;
    if (repeated && unique) failRepeat(tensor, level, position, stampPosition[coordinate]);
    if (!unique) groups.ids[position] = repeated ? groups.ids[stampPosition[coordinate]] : position;
    if (!repeated) {
      stampParent[coordinate] = parent;
      stampPosition[coordinate] = position;
    }
  });
  return groups;
}

// An unordered level: repeats found through a hash table of the first
// position of each (group, coordinate).
Groups checkUnorderedLevel(const Tensor& tensor, int level, const Groups& parentGroups, int64_t parents,
                           int64_t positions) {
  bool unique = tensor.format().levels[level].unique;
  // Stamps need one entry per coordinate: worth it unless the level is far
  // larger than what it stores.
  if (parentGroups.identity && tensor.levelSize(level) <= 4 * positions + 4096) {
    return checkUnorderedLevelByStamps(tensor, level, parents, positions);
  }
  std::unordered_map<GroupAndCoordinate, int64_t, GroupAndCoordinateHash> firstPosition;
  firstPosition.reserve(static_cast<size_t>(positions));
  Groups groups;
  groups.identity = unique;
  if (!unique) groups.ids.resize(positions);
  forEachPosition(tensor, level, parents, [&](int64_t parent, int64_t position, int32_t coordinate) {
    auto [found, inserted] = firstPosition.try_emplace({parentGroups.of(parent), coordinate}, position);
    if (!inserted && unique) failRepeat(tensor, level, position, found->second);
    if (!unique) groups.ids[position] = inserted ? position : groups.ids[found->second];
  });
  return groups;
}

// A dense level keeps its promises by construction; only the groups move on.
Groups denseLevelGroups(const Tensor& tensor, int level, const Groups& parentGroups, int64_t parents,
                        int64_t positions) {
  if (parentGroups.identity) return parentGroups;
  Groups groups;
  groups.identity = false;
  groups.ids.resize(positions);
  int64_t size = tensor.levelSize(level);
  forEachPosition(tensor, level, parents, [&](int64_t parent, int64_t position, int32_t coordinate) {
    groups.ids[position] = parentGroups.of(parent) * size + coordinate;
  });
  return groups;
}

}  // namespace

void checkLevelProperties(const Tensor& tensor) {
  const TensorFormat& format = tensor.format();
  if (format.isNM()) return;  // validateNmStorage checks an N:M level
  Groups groups;  // the root: one position
  int64_t parents = 1;
  for (int level = 0; level < tensor.order(); ++level) {
    bool onlyDenseBelow = std::all_of(format.levels.begin() + level, format.levels.end(),
                                      [](const LevelSpec& spec) { return spec.kind == TCC_LEVEL_DENSE; });
    if (onlyDenseBelow) return;
    const LevelSpec& spec = format.levels[level];
    int64_t positions = tensor.positionCount(level);
    if (spec.kind == TCC_LEVEL_DENSE) {
      groups = denseLevelGroups(tensor, level, groups, parents, positions);
    } else if (spec.kind == TCC_LEVEL_SINGLETON && groups.identity) {
      // One child per parent, and no two parents alike: nothing to break.
    } else if (spec.ordered) {
      groups = checkOrderedLevel(tensor, level, groups, parents, positions);
    } else {
      groups = checkUnorderedLevel(tensor, level, groups, parents, positions);
    }
    parents = positions;
  }
}

}  // namespace tcc::rt::detail
