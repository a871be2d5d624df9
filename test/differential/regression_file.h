// A regression case as one self-contained .tc file: the program as tcc
// reads it, with the inputs' shapes and entries in comment lines after it
//
//   # input A 3 4
//   # entry A 0 1 0.5
//
// and header comments saying what it found (`# open bug: ...` marks a case
// that is known to fail until that bug is fixed).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case_model.h"

namespace tcc::differential {

struct RegressionCase {
  std::string programText;  // the whole file; tcc skips the comments
  std::map<std::string, rt::Coo> inputs;
  std::string openBug;      // "" when the case is expected to match
};

std::string regressionFileText(const Case& c, const std::vector<std::string>& headerLines);
// Throws std::invalid_argument naming the line for a malformed input line.
RegressionCase parseRegressionFile(const std::string& text);
RegressionCase readRegressionFile(const std::string& path);

}  // namespace tcc::differential
