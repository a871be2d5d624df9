// Times the row-sum loops of loops.c on Matrix Market files: one thread,
// y allocated once, each sample a batch of `calls` calls (default: about
// 100,000 entries a batch), the loops interleaved over 40 rounds; prints the
// third-fastest sample of each loop in microseconds a call and checks every
// loop's y bit for bit against `plain`'s. Pattern matrices get values
// 0.5-1.1; x(j) = 1 + (j mod 13) / 100.
//
//   strict_row_sums FILE.mtx NAME [CALLS]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#define ROW_SUM_ARGS int32_t, const int64_t*, const int32_t*, const double*, const double*, double*
extern "C" {
void loop_plain(ROW_SUM_ARGS);
void loop_unroll2(ROW_SUM_ARGS);
void loop_unroll4(ROW_SUM_ARGS);
void loop_unroll8(ROW_SUM_ARGS);
void loop_four_then_tail(ROW_SUM_ARGS);
void loop_tail_then_four(ROW_SUM_ARGS);
void loop_mlir_shape(int32_t, const int64_t*, const int64_t*, const double*, const double*, double*);
}

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: %s FILE.mtx NAME [CALLS]\n", argv[0]), 2;
  std::ifstream in(argv[1]);
  std::string line;
  std::getline(in, line);
  const bool pattern = line.find("pattern") != std::string::npos, symmetric = line.find("symmetric") != std::string::npos;
  while (std::getline(in, line) && line[0] == '%') {}
  int32_t rows = 0, columns = 0;
  long entries = 0;
  std::istringstream(line) >> rows >> columns >> entries;
  std::vector<std::tuple<int32_t, int32_t, double>> coo;
  for (long k = 0; k < entries; ++k) {
    int32_t i, j;
    double v = 0.5 + (k % 7) * 0.1;
    in >> i >> j;
    if (!pattern) in >> v;
    coo.emplace_back(i - 1, j - 1, v);
    if (symmetric && i != j) coo.emplace_back(j - 1, i - 1, v);
  }
  std::sort(coo.begin(), coo.end());
  std::vector<int64_t> pos(rows + 1), crd64;
  std::vector<int32_t> crd;
  std::vector<double> vals;
  for (const auto& [i, j, v] : coo) pos[i + 1]++, crd.push_back(j), crd64.push_back(j), vals.push_back(v);
  for (int32_t i = 0; i < rows; ++i) pos[i + 1] += pos[i];
  std::vector<double> x(columns), expected(rows), y(rows);
  for (int32_t j = 0; j < columns; ++j) x[j] = 1.0 + (j % 13) * 0.01;
  loop_plain(rows, pos.data(), crd.data(), vals.data(), x.data(), expected.data());

  const char* names[] = {"plain", "unroll2", "unroll4", "unroll8", "four_then_tail", "tail_then_four", "mlir_shape"};
  auto call = [&](int loop) {
    switch (loop) {
      case 0: return loop_plain(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      case 1: return loop_unroll2(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      case 2: return loop_unroll4(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      case 3: return loop_unroll8(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      case 4: return loop_four_then_tail(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      case 5: return loop_tail_then_four(rows, pos.data(), crd.data(), vals.data(), x.data(), y.data());
      default: return loop_mlir_shape(rows, pos.data(), crd64.data(), vals.data(), x.data(), y.data());
    }
  };
  const int loops = 7;
  const int calls = argc > 3 ? std::atoi(argv[3]) : std::max<int>(1, 100000 / std::max<size_t>(1, coo.size()));
  std::vector<std::vector<double>> samples(loops);
  int status = 0;
  for (int round = 0; round < 40; ++round)
    for (int loop = 0; loop < loops; ++loop) {
      auto start = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) call(loop);
      samples[loop].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
      if (std::memcmp(y.data(), expected.data(), rows * sizeof(double)) != 0)
        status = 1, std::printf("%s: not the bits of plain\n", names[loop]);
    }
  std::printf("%-14s", argv[2]);
  for (int loop = 0; loop < loops; ++loop) {
    std::sort(samples[loop].begin(), samples[loop].end());
    std::printf(" %s %.2f", names[loop], samples[loop][2] * 1e6);
  }
  std::printf("\n");
  return status;
}
