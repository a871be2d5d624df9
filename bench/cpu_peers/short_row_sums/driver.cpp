// Times the short-row sums of strict.c and fast.c (listed in loops.def) on
// a Matrix Market file: one thread, each sample a batch of CALLS calls, the
// loops interleaved over ROUNDS rounds; prints each loop's 10th-percentile
// sample in microseconds a call, and checks strict loops against the first
// (s_plain) bit for bit, fast ones within 1e-12 of its largest sum. Pattern
// matrices get values 0.5-1.1; x(j) = 1 + (j mod 13) / 100.
//
//   driver FILE.mtx NAME [ROUNDS [CALLS]]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>
typedef void (*Loop)(int32_t, const int64_t*, const int32_t*, const double*, const double*, double*);
#define ARGS int32_t, const int64_t*, const int32_t*, const double*, const double*, double*
extern "C" {
#define X(name, strict) void name(ARGS);
#include "loops.def"
#undef X
}
struct Entry { const char* name; Loop loop; bool strict; };
static const Entry entries[] = {
#define X(name, strict) {#name, name, strict},
#include "loops.def"
#undef X
};
int main(int argc, char** argv) {
  std::ifstream in(argv[1]);
  std::string line;
  std::getline(in, line);
  const bool pattern = line.find("pattern") != std::string::npos, symmetric = line.find("symmetric") != std::string::npos;
  while (std::getline(in, line) && line[0] == '%') {}
  int32_t rows = 0, columns = 0; long nnz = 0;
  std::istringstream(line) >> rows >> columns >> nnz;
  std::vector<std::tuple<int32_t, int32_t, double>> coo;
  for (long k = 0; k < nnz; ++k) {
    int32_t i, j; double v = 0.5 + (k % 7) * 0.1;
    in >> i >> j; if (!pattern) in >> v;
    coo.emplace_back(i - 1, j - 1, v);
    if (symmetric && i != j) coo.emplace_back(j - 1, i - 1, v);
  }
  std::sort(coo.begin(), coo.end());
  std::vector<int64_t> pos(rows + 1); std::vector<int32_t> crd; std::vector<double> vals;
  for (const auto& [i, j, v] : coo) pos[i + 1]++, crd.push_back(j), vals.push_back(v);
  for (int32_t i = 0; i < rows; ++i) pos[i + 1] += pos[i];
  std::vector<double> x(columns), expected(rows), y(rows);
  for (int32_t j = 0; j < columns; ++j) x[j] = 1.0 + (j % 13) * 0.01;
  const int n = sizeof(entries) / sizeof(entries[0]);
  entries[0].loop(rows, pos.data(), crd.data(), vals.data(), x.data(), expected.data());
  const int calls = argc > 4 ? std::atoi(argv[4]) : std::max<int>(1, 1000000 / std::max<size_t>(1, coo.size()));
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 40;
  std::vector<std::vector<double>> samples(n);
  int status = 0;
  for (int round = 0; round < rounds; ++round)
    for (int l = 0; l < n; ++l) {
      entries[l].loop(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) entries[l].loop(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      samples[l].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
      if (round == 0) {
        bool bad = false; double scale = 0;
        for (int32_t i = 0; i < rows; ++i) scale = std::max(scale, std::fabs(expected[i]));
        for (int32_t i = 0; i < rows; ++i)
          if (entries[l].strict ? std::memcmp(&y[i], &expected[i], 8) != 0 : std::fabs(y[i] - expected[i]) > 1e-12 * scale) bad = true;
        if (bad) status = 1, std::printf("%s: wrong\n", entries[l].name);
      }
    }
  std::printf("%-14s", argv[2]);
  for (int l = 0; l < n; ++l) {
    std::sort(samples[l].begin(), samples[l].end());
    std::printf(" %s %.2f", entries[l].name, samples[l][samples[l].size() / 10] * 1e6);
  }
  std::printf("\n");
  return status;
}
