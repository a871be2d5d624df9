// Runs one case through the library (parse, compile, JIT, run) and compares
// every output with each oracle. A refusal to compile must be located
// (a frontend::DiagnosticError: file:line:col at the schedule command or
// statement); one without a location (tcc::Error, LoweringError), any
// other exception, or generated code that does not compile, is an internal
// failure. Refusals while running (shapes, a broken bound) are tcc::Error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "oracle.h"

namespace tcc::differential {

// Crash: the process running the case died (only seen in isolated runs).
// CompiledNotRun: a cuda-target program whose kernels NVRTC compiled, with
// no GPU to run them on (or --compile-only).
enum class Outcome { Matched, Refused, Mismatch, Internal, Crash, InvalidCase, CompiledNotRun };
std::string toString(Outcome outcome);

struct Verdict {
  Outcome outcome = Outcome::Matched;
  std::string detail;     // the reason, the first differing entries, or the exception
  std::string signature;  // what must stay the same while minimizing: outcome and error kind
  bool zeroResult = false;  // matched, but every expected output is all zero (a weaker check)
  std::vector<std::string> checkedBy = {};  // the oracles that evaluated the case (others cannot express it)
};

// A program with a `target cuda` line is compiled for the cuda target: run
// on the GPU where there is one (and `compileOnly` is off), otherwise
// lowered and its kernels compiled with NVRTC only (CompiledNotRun).
Verdict checkProgram(const std::string& programText, const std::map<std::string, rt::Coo>& inputs,
                     const std::vector<const Oracle*>& oracles, bool compileOnly = false);

// Tolerance relative to the larger of 1 and the output's largest magnitude.
double relativeTolerance(ir::Datatype type);

}  // namespace tcc::differential
