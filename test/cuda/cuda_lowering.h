// Lowering for the cuda target without a GPU, for the tests that read what
// it prints or why it refuses.
#pragma once

#include <exception>
#include <string>

#include "tcc/tcc.h"

namespace tcc::test {

inline Lowered lowerForCuda(const std::string& dsl, CompileOptions options = {}) {
  options.target = frontend::Target::Cuda;
  return lowerProgram(Program::fromText(dsl, "test.tc"), options);
}

// The refusal's message, or "" when the program lowers.
inline std::string cudaErrorOf(const std::string& dsl) {
  try {
    lowerForCuda(dsl);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

// What the lowering decided for the first statement (`tcc explain`'s
// lines), one a line.
inline std::string decisionsOf(const Lowered& lowered) {
  std::string all;
  for (const auto& decision : lowered.statements.at(0).decisions) all += decision + "\n";
  return all;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace tcc::test
