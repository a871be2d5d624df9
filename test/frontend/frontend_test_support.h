// Helpers shared by the front-end tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tcc/frontend/program.h"

namespace tcc::frontend::testing {

// The diagnostics parsing `text` produces; fails the test if it parses.
inline std::vector<Diagnostic> errorsOf(const std::string& text) {
  try {
    parseProgram(text, "test.tc");
  } catch (const DiagnosticError& error) {
    return error.diagnostics();
  }
  ADD_FAILURE() << "expected errors in:\n" << text;
  return {};
}

// The single diagnostic `text` produces, as "line:col: message".
inline std::string onlyErrorOf(const std::string& text) {
  std::vector<Diagnostic> errors = errorsOf(text);
  if (errors.size() != 1) {
    std::string all;
    for (const Diagnostic& error : errors) all += error.format();
    ADD_FAILURE() << "expected one error, got " << errors.size() << ":\n" << all;
    return "";
  }
  const Diagnostic& error = errors.front();
  return std::to_string(error.location.line) + ":" + std::to_string(error.location.column) + ": " +
         error.message;
}

}  // namespace tcc::frontend::testing
