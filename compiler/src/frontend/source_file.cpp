#include "source_file.h"

#include <algorithm>

namespace tcc::frontend {

SourceFile::SourceFile(std::string text, std::string name)
    : text_(std::move(text)), name_(std::move(name)) {
  lineStarts_.push_back(0);
  for (size_t offset = 0; offset < text_.size(); ++offset)
    if (text_[offset] == '\n') lineStarts_.push_back(offset + 1);
}

SourceLocation SourceFile::locate(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto next = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  int line = static_cast<int>(next - lineStarts_.begin());
  int column = static_cast<int>(offset - lineStarts_[line - 1]) + 1;
  return {name_, line, column};
}

std::string SourceFile::lineText(int line) const {
  if (line < 1 || line > static_cast<int>(lineStarts_.size())) return "";
  size_t start = lineStarts_[line - 1];
  size_t stop = text_.find('\n', start);
  if (stop == std::string::npos) stop = text_.size();
  if (stop > start && text_[stop - 1] == '\r') --stop;
  return text_.substr(start, stop - start);
}

Diagnostic SourceFile::diagnose(size_t offset, std::string message) const {
  SourceLocation location = locate(offset);
  return {location, std::move(message), lineText(location.line)};
}

}  // namespace tcc::frontend
