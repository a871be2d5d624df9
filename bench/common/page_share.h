// How much of an array the system backs with 2 MB pages: the
// AnonHugePages of the mappings that hold it (/proc/self/smaps), over the
// array's bytes, at most 1; 0 where there is no smaps (not Linux). Mappings
// the array shares with its neighbours count whole, so a small array beside
// a large one in huge pages may read high; for tensor arrays of many MB
// (each its own aligned mapping) it is the share of their pages that are
// 2 MB ones.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

inline double hugePageShare(const void* array, long long bytes) {
  if (array == nullptr || bytes <= 0) return 0;
  std::ifstream smaps("/proc/self/smaps");
  const auto begin = reinterpret_cast<uintptr_t>(array), end = begin + static_cast<uintptr_t>(bytes);
  long long hugeKb = 0;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &from, &to) == 2 && line.find(':') > line.find(' ')) {
      inside = from < end && to > begin;
      continue;
    }
    long long kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %lld kB", &kb) == 1) hugeKb += kb;
  }
  return std::min(1.0, 1024.0 * static_cast<double>(hugeKb) / static_cast<double>(bytes));
}
