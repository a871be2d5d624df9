// Errors in DSL text: where they are, what went wrong, and how to show them.
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace tcc::frontend {

// line and column count from 1; line 0 means "the file as a whole"
// (it could not be opened, say), which prints without line, column or caret.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string toString() const;  // "file:line:col", or "file" when line is 0
  bool operator==(const SourceLocation&) const = default;
};

struct Diagnostic {
  SourceLocation location;
  std::string message;
  std::string sourceLine;  // the text of location.line, without its newline

  // "file:line:col: error: message", then the source line and a caret under
  // location.column (tabs copied so the caret lines up), newline-terminated.
  std::string format() const;
};

// Thrown by the parser with every diagnostic of one file, in source order.
class DiagnosticError : public std::exception {
 public:
  explicit DiagnosticError(std::vector<Diagnostic> diagnostics);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // All diagnostics formatted one after another.
  const char* what() const noexcept override { return formatted_.c_str(); }

 private:
  std::vector<Diagnostic> diagnostics_;
  std::string formatted_;
};

}  // namespace tcc::frontend
