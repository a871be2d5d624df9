// A program compiled, run once to warm up, then timed over `repeat` runs on
// the same inputs: the median seconds a run and the output's last value.
#pragma once

#include <map>
#include <string>

#include "stats.h"
#include "tcc/tcc.h"

struct TimedProgram {
  double seconds = 0;
  tcc::Tensor result;
};

inline TimedProgram timeProgram(const std::string& text, const std::map<std::string, tcc::Tensor>& inputs,
                                const std::string& output, int repeat) {
  tcc::Kernel kernel = tcc::compile(tcc::Program::fromText(text, "bench.tc"));
  kernel.run(inputs);  // warm-up
  tcc::RunOptions options;
  options.repeat = repeat;
  tcc::RunResult result = kernel.run(inputs, options);
  return {median(result.seconds), result.tensors.at(output)};
}
