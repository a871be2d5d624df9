// DSL text with its name, and the mapping from byte offsets to line and
// column that every diagnostic goes through.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tcc/frontend/diagnostic.h"

namespace tcc::frontend {

class SourceFile {
 public:
  SourceFile(std::string text, std::string name);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  const char* begin() const { return text_.data(); }
  const char* end() const { return text_.data() + text_.size(); }

  // Offsets past the end clamp to the end of the text.
  SourceLocation locate(size_t offset) const;
  SourceLocation locate(const char* position) const { return locate(offsetOf(position)); }
  size_t offsetOf(const char* position) const { return static_cast<size_t>(position - begin()); }
  std::string lineText(int line) const;  // without the newline

  Diagnostic diagnose(size_t offset, std::string message) const;
  Diagnostic diagnose(const char* position, std::string message) const {
    return diagnose(offsetOf(position), std::move(message));
  }

 private:
  std::string text_;
  std::string name_;
  std::vector<size_t> lineStarts_;  // offset of the first byte of each line
};

}  // namespace tcc::frontend
