// Runs one case through the library (parse, compile, JIT, run) and compares
// every output with each oracle. A refusal must carry a located or named
// reason (a diagnostic, tcc::Error, LoweringError); any other exception, or
// generated code that does not compile, is an internal failure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "oracle.h"

namespace tcc::differential {

// Crash: the process running the case died (only seen in isolated runs).
enum class Outcome { Matched, Refused, Mismatch, Internal, Crash, InvalidCase };
std::string toString(Outcome outcome);

struct Verdict {
  Outcome outcome = Outcome::Matched;
  std::string detail;     // the reason, the first differing entries, or the exception
  std::string signature;  // what must stay the same while minimizing: outcome and error kind
  bool zeroResult = false;  // matched, but every expected output is all zero (a weaker check)
};

Verdict checkProgram(const std::string& programText, const std::map<std::string, rt::Coo>& inputs,
                     const std::vector<const Oracle*>& oracles);

// Tolerance relative to the larger of 1 and the output's largest magnitude.
double relativeTolerance(ir::Datatype type);

}  // namespace tcc::differential
