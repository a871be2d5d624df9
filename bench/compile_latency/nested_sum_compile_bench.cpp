// Compile time of statements with sums nested in the expression, each
// program compiled with the nested sums computed in every lattice case of
// TACO's loops per lattice point (the form before,
// CompileOptions::hoistNestedSums = false, oneMergeLoop = false) and as by
// default, in the same run: lowering time (parse to C++ text), the C++ lines, and the JIT's
// time (text to callable, the rest of tcc::compile), kernel cache off.
// Prints a Markdown table.
//
//   tcc_nested_sum_compile_bench [--strict] [--per-point-loops] [--compiles N] FILE.tc ...
//
// --strict compiles every program in strict mode, whatever its `fp` line.
// --per-point-loops: "before" is the sums hoisted with one co-iteration
// loop per lattice point (CompileOptions::oneMergeLoop = false), "after"
// the default, one loop per co-iteration whose cases hold loops.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tcc/tcc.h"
#include "../common/stats.h"

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Measured {
  double lowerMs = 0, jitMs = 0;
  long lines = 0;
};

Measured measure(const std::string& path, bool hoist, bool oneMergeLoop, bool strict, int compiles) {
  tcc::CompileOptions options;
  options.useKernelCache = false;
  options.hoistNestedSums = hoist;
  options.oneMergeLoop = oneMergeLoop;
  if (strict) options.floatingPoint = tcc::frontend::FloatingPointMode::Strict;
  std::vector<double> lowerMs, totalMs;
  Measured result;
  for (int k = 0; k < compiles; ++k) {
    auto start = Clock::now();
    tcc::Lowered lowered = tcc::lowerProgram(tcc::Program::fromFile(path), options);
    lowerMs.push_back(millisecondsSince(start));
    result.lines = 0;
    for (char c : lowered.cpp) result.lines += c == '\n';
    start = Clock::now();
    tcc::Kernel kernel = tcc::compile(tcc::Program::fromFile(path), options);
    totalMs.push_back(millisecondsSince(start));
  }
  result.lowerMs = median(lowerMs);
  result.jitMs = median(totalMs) - result.lowerMs;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  bool strict = false, perPointLoops = false;
  int compiles = 1;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--strict")) {
      strict = true;
    } else if (!std::strcmp(argv[a], "--per-point-loops")) {
      perPointLoops = true;
    } else if (!std::strcmp(argv[a], "--compiles") && a + 1 < argc) {
      compiles = std::atoi(argv[++a]);
    } else {
      files.push_back(argv[a]);
    }
  }
  std::printf("| program | lines before | lines after | lower ms before | lower ms after | JIT s before | "
              "JIT s after | JIT ratio (before/after) |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& file : files) {
    std::string name = file.substr(file.find_last_of('/') + 1);
    // Before: the sums in every case of TACO's loops per lattice point (or,
    // with --per-point-loops, hoisted in those loops); after: the default.
    Measured before = measure(file, perPointLoops, false, strict, compiles);
    Measured after = measure(file, true, true, strict, compiles);
    std::printf("| %s | %ld | %ld | %.1f | %.1f | %.2f | %.2f | %.2f |\n", name.c_str(), before.lines, after.lines,
                before.lowerMs, after.lowerMs, before.jitMs / 1e3, after.jitMs / 1e3, before.jitMs / after.jitMs);
    std::fflush(stdout);
  }
  return 0;
}
