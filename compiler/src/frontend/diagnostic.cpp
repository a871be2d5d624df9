#include "tcc/frontend/diagnostic.h"

namespace tcc::frontend {

std::string SourceLocation::toString() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::format() const {
  std::string text = location.toString() + ": error: " + message + "\n";
  if (location.line <= 0) return text;
  text += sourceLine + "\n";
  // Copy tabs from the source line so the caret sits under the culprit
  // however wide the terminal draws a tab.
  int caretColumn = location.column < 1 ? 1 : location.column;
  for (int column = 1; column < caretColumn; ++column) {
    size_t index = static_cast<size_t>(column - 1);
    text += index < sourceLine.size() && sourceLine[index] == '\t' ? '\t' : ' ';
  }
  return text + "^\n";
}

DiagnosticError::DiagnosticError(std::vector<Diagnostic> diagnostics)
    : diagnostics_(std::move(diagnostics)) {
  for (const Diagnostic& diagnostic : diagnostics_) formatted_ += diagnostic.format();
}

}  // namespace tcc::frontend
