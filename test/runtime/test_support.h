// Helpers shared by the runtime tests: temporary files, and reference
// computations written independently of the code under test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "tcc/runtime/coo.h"
#include "tcc/runtime/value_type.h"

namespace tcc::rt::test {

inline std::string sharedDataDir() { return TCC_SHARED_DATA_DIR; }
inline std::string matrixPath(const std::string& name) { return sharedDataDir() + "/matrices/" + name; }
inline std::string malformedPath(const std::string& name) { return sharedDataDir() + "/malformed/" + name; }

// A fresh folder per test process, removed at exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tcc-runtime-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : throw std::runtime_error("mkdtemp failed");
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& text) const {
    std::string path = file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using CoordinateMap = std::map<std::vector<int32_t>, double>;

// Sums repeated coordinates; drops nothing.
inline CoordinateMap toMap(const Coo& coo) {
  CoordinateMap map;
  for (size_t k = 0; k < coo.nnz(); ++k) {
    std::vector<int32_t> coordinate;
    for (int mode = 0; mode < coo.order(); ++mode) coordinate.push_back(coo.coords[mode][k]);
    map[coordinate] += coo.values[k];
  }
  return map;
}

inline CoordinateMap withoutZeros(CoordinateMap map) {
  std::erase_if(map, [](const auto& entry) { return entry.second == 0; });
  return map;
}

// Row-major dense array of a coordinate list, computed from the map.
inline std::vector<double> referenceDense(const Coo& coo) {
  size_t size = 1;
  for (int32_t dim : coo.dims) size *= static_cast<size_t>(dim);
  std::vector<double> dense(size, 0.0);
  for (const auto& [coordinate, value] : toMap(coo)) {
    size_t index = 0;
    for (int mode = 0; mode < coo.order(); ++mode) index = index * coo.dims[mode] + coordinate[mode];
    dense[index] = value;
  }
  return dense;
}

// What a value becomes when stored with `type`, using the compiler's own
// conversions (not the runtime's).
inline double roundTo(ValueType type, double value) {
  switch (type) {
    case ValueType::Float64: return value;
    case ValueType::Float32: return static_cast<float>(value);
    case ValueType::Float16: return static_cast<double>(static_cast<_Float16>(static_cast<float>(value)));
    case ValueType::Int32: return static_cast<int32_t>(value);
    case ValueType::Int64: return static_cast<double>(static_cast<int64_t>(value));
  }
  return value;
}

inline std::vector<ValueType> allValueTypes() {
  return {ValueType::Float64, ValueType::Float32, ValueType::Float16, ValueType::Int32, ValueType::Int64};
}

}  // namespace tcc::rt::test
