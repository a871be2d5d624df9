// The programs under test/cuda/programs that the GPU tests run against the
// dense reference (and nvcc compiles, CMakeLists.txt).
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tcc::test {

inline std::filesystem::path programsFolder() {
  return std::filesystem::path(TCC_SOURCE_DIR) / "test" / "cuda" / "programs";
}

inline std::filesystem::path programPath(const std::string& name) { return programsFolder() / (name + ".tc"); }

// The names (without .tc) of the programs whose names start with `prefix`,
// sorted; all of them for "".
inline std::vector<std::string> programsNamed(const std::string& prefix = "") {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(programsFolder()))
    if (entry.path().extension() == ".tc" && entry.path().stem().string().rfind(prefix, 0) == 0)
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string programText(const std::string& name) {
  std::ifstream file(programPath(name));
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

}  // namespace tcc::test
