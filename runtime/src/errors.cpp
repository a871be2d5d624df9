#include "tcc/runtime/errors.h"

namespace tcc::rt {

namespace {

std::string formatFileError(const std::string& path, int64_t line, const std::string& message,
                            const std::string& lineText) {
  std::string text = path;
  if (line > 0) text.append(":").append(std::to_string(line));
  text.append(": ").append(message);
  if (!lineText.empty()) text.append("\n  ").append(lineText);
  return text;
}

}  // namespace

FileError::FileError(std::string path, int64_t line, std::string message, std::string lineText)
    : std::runtime_error(formatFileError(path, line, message, lineText)),
      path_(std::move(path)),
      line_(line),
      message_(std::move(message)),
      lineText_(std::move(lineText)) {}

}  // namespace tcc::rt
