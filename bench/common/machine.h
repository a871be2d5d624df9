// The machine a memory-bound bench runs on, read at run time: the CPU's
// model name and its last-level cache, which sets how large "out of
// cache" inputs and the STREAM triad's arrays must be (a scale-up that
// fits the last-level cache measures the cache, not memory).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

struct Machine {
  std::string cpu = "unknown CPU";
  int cpus = 0;               // online logical CPUs
  int llcLevel = 0;           // 0: not found
  long long llcBytes = 0;     // the last-level cache one core shares (sysfs; sysconf where sysfs says nothing)
  std::string llcSource;      // where llcBytes came from
};

namespace machine_detail {

inline std::string firstLine(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// sysfs cache sizes read "491520K", "2048K" or "32M".
inline long long parseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  long long value = std::atoll(text.c_str());
  switch (text.back()) {
    case 'K': return value << 10;
    case 'M': return value << 20;
    case 'G': return value << 30;
    default: return value;
  }
}

}  // namespace machine_detail

inline Machine thisMachine() {
  Machine m;
  m.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("model name", 0) == 0) {
        size_t colon = line.find(':');
        if (colon != std::string::npos) m.cpu = line.substr(line.find_first_not_of(' ', colon + 1));
        break;
      }
  }
  // cpu0's caches: the highest level that holds data.
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = machine_detail::firstLine(dir + "level");
    if (level.empty()) break;
    if (machine_detail::firstLine(dir + "type") == "Instruction") continue;
    const int l = std::atoi(level.c_str());
    const long long bytes = machine_detail::parseCacheSize(machine_detail::firstLine(dir + "size"));
    if (l > m.llcLevel && bytes > 0) m.llcLevel = l, m.llcBytes = bytes, m.llcSource = dir + "size";
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (m.llcBytes == 0) {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l3 > 0) m.llcLevel = 3, m.llcBytes = l3, m.llcSource = "sysconf";
    else if (l2 > 0) m.llcLevel = 2, m.llcBytes = l2, m.llcSource = "sysconf";
  }
#endif
  return m;
}

// "Intel(R) Xeon(R) Processor, 2 CPUs, L3 480 MB (from ...)".
inline std::string describe(const Machine& m) {
  char text[512];
  if (m.llcBytes > 0)
    std::snprintf(text, sizeof text, "%s, %d CPUs, last-level cache L%d %.0f MB (%s)", m.cpu.c_str(), m.cpus,
                  m.llcLevel, m.llcBytes / 1048576.0, m.llcSource.c_str());
  else
    std::snprintf(text, sizeof text, "%s, %d CPUs, last-level cache unknown", m.cpu.c_str(), m.cpus);
  return text;
}

inline std::string loadAverageNow() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  file >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}
