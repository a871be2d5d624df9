// Reads one large generated Matrix Market file with tcc's reader and with
// a plain iostream reader in the same run, and prints MB/s for both.
//
//   tcc_bench_mtx_read [file.mtx] [--entries N] [--repeat R]
//
// The file is generated (seeded, real values at full precision) when it
// does not exist yet.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <cmath>
#include <string>
#include <vector>

#include "tcc/runtime/matrix_market.h"
#include "tcc/runtime/random.h"

namespace {

using Clock = std::chrono::steady_clock;

struct ReadResult {
  size_t entries = 0;
  double checksum = 0;
};

// The peer: what a program without a dedicated reader does.
ReadResult readWithIostream(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && !line.empty() && line[0] == '%') {}
  std::istringstream sizeLine(line);
  long rows = 0, cols = 0, entries = 0;
  sizeLine >> rows >> cols >> entries;
  std::vector<int> rowIndex(entries), colIndex(entries);
  std::vector<double> values(entries);
  for (long k = 0; k < entries; ++k) in >> rowIndex[k] >> colIndex[k] >> values[k];
  if (!in) {
    std::cerr << "iostream reader failed on " << path << "\n";
    std::exit(1);
  }
  ReadResult result{static_cast<size_t>(entries), 0};
  for (long k = 0; k < entries; ++k) result.checksum += values[k] * (rowIndex[k] + 2 * colIndex[k]);
  return result;
}

ReadResult readWithTcc(const std::string& path) {
  tcc::rt::Coo coo = tcc::rt::readMatrixMarket(path);
  ReadResult result{coo.nnz(), 0};
  for (size_t k = 0; k < coo.nnz(); ++k) {
    result.checksum += coo.values[k] * ((coo.coords[0][k] + 1) + 2 * (coo.coords[1][k] + 1));
  }
  return result;
}

double processCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

struct Timing {
  double wall = 1e30;  // best wall-clock seconds
  double cpu = 1e30;   // best CPU seconds of all threads (immune to other load)
};

template <typename Read>
Timing bestTiming(Read read, int repeat, ReadResult& result) {
  Timing best;
  for (int r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    double cpuStart = processCpuSeconds();
    result = read();
    best.cpu = std::min(best.cpu, processCpuSeconds() - cpuStart);
    best.wall = std::min(best.wall, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = TCC_BENCH_DEFAULT_FILE;
  long entries = 4'500'000;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--entries" && i + 1 < argc) entries = std::atol(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else path = arg;
  }
  if (!std::filesystem::exists(path)) {
    std::cerr << "generating " << path << " (" << entries << " entries)\n";
    int32_t rows = 2'000'000, cols = 2'000'000;
    tcc::rt::Coo coo = tcc::rt::randomPowerLaw(rows, cols, static_cast<double>(entries) / rows, 0.8, 2026);
    tcc::rt::writeMatrixMarket(path, coo);
  }
  double megabytes = static_cast<double>(std::filesystem::file_size(path)) / 1e6;

  ReadResult tcc, iostream;
  Timing tccTime = bestTiming([&] { return readWithTcc(path); }, repeat, tcc);
  Timing iostreamTime = bestTiming([&] { return readWithIostream(path); }, repeat, iostream);
  if (tcc.entries != iostream.entries ||
      std::abs(tcc.checksum - iostream.checksum) > 1e-9 * std::abs(iostream.checksum)) {
    std::cerr << "readers disagree: " << tcc.entries << " vs " << iostream.entries << " entries\n";
    return 1;
  }
  std::printf("file: %s (%.1f MB, %zu entries), best of %d\n\n", path.c_str(), megabytes, tcc.entries, repeat);
  std::printf("| reader | wall s | wall MB/s | CPU s | CPU MB/s | speedup vs iostream (wall, CPU) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  auto row = [&](const char* name, Timing t) {
    std::printf("| %s | %.3f | %.1f | %.3f | %.1f | %.2fx, %.2fx |\n", name, t.wall, megabytes / t.wall,
                t.cpu, megabytes / t.cpu, iostreamTime.wall / t.wall, iostreamTime.cpu / t.cpu);
  };
  row("tcc::rt::readMatrixMarket", tccTime);
  row("std::ifstream >> (iostream)", iostreamTime);
  return 0;
}
