// Errors about user files. what() reads "path:line: message" (":line" left
// out when no single line is at fault), followed by the offending line's
// text on a second line where that helps.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tcc::rt {

class FileError : public std::runtime_error {
 public:
  // line is 1-based; 0 means "no particular line".
  FileError(std::string path, int64_t line, std::string message, std::string lineText = {});

  const std::string& path() const { return path_; }
  int64_t line() const { return line_; }
  const std::string& message() const { return message_; }
  const std::string& lineText() const { return lineText_; }

 private:
  std::string path_;
  int64_t line_;
  std::string message_;
  std::string lineText_;
};

}  // namespace tcc::rt
