// A cursor over a text file in memory for the tensor file readers: tracks
// the line number, parses numbers with std::from_chars, and raises
// FileError with the file, line and line text.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "tcc/runtime/errors.h"

namespace tcc::rt::detail {

enum class ParseStatus { Ok, Missing, NotNumber, OutOfRange };

class TextScanner {
 public:
  TextScanner(std::string_view text, const std::string& path)
      : p_(text.data()),
        end_(text.data() + text.size()),
        lineStart_(text.data()),
        endsWithNewline_(!text.empty() && text.back() == '\n'),
        path_(path) {}

  bool atEnd() const { return p_ == end_; }
  int64_t line() const { return line_; }
  // The number of the file's last line, for errors about its end.
  int64_t lastLine() const { return endsWithNewline_ && line_ > 1 ? line_ - 1 : line_; }

  static bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
  static bool isDelimiter(char c) { return isBlank(c) || c == '\n'; }

  void skipBlanks() {
    while (p_ != end_ && isBlank(*p_)) ++p_;
  }
  bool atLineEnd() const { return p_ == end_ || *p_ == '\n'; }
  // Moves to the start of the next line (or the end of the text).
  void nextLine() {
    while (p_ != end_ && *p_ != '\n') ++p_;
    if (p_ != end_) {
      ++p_;
      ++line_;
      lineStart_ = p_;
    }
  }
  // Skips lines that are blank or start with `comment` (0: none); returns
  // false at the end of the text. Leaves the cursor at the first token.
  bool skipEmptyLines(char comment) {
    for (;;) {
      skipBlanks();
      if (p_ == end_) return false;
      if (*p_ == '\n' || (comment != 0 && *p_ == comment)) {
        nextLine();
        continue;
      }
      return true;
    }
  }

  // The next whitespace-delimited token (without consuming it).
  std::string_view peekToken() const {
    const char* q = p_;
    while (q != end_ && !isDelimiter(*q)) ++q;
    return {p_, static_cast<size_t>(q - p_)};
  }
  std::string_view takeToken() {
    std::string_view token = peekToken();
    p_ += token.size();
    skipBlanks();
    return token;
  }
  std::string_view restOfLine() const {
    const char* q = p_;
    while (q != end_ && *q != '\n') ++q;
    std::string_view rest(p_, static_cast<size_t>(q - p_));
    while (!rest.empty() && isBlank(rest.back())) rest.remove_suffix(1);
    return rest;
  }

  // The common case of an index: plain decimal digits followed by a
  // delimiter. Returns false, consuming nothing, for anything else.
  bool parseDigits(int64_t& value) {
    skipBlanks();
    const char* q = p_;
    int64_t result = 0;
    int digits = 0;
    while (q != end_ && static_cast<unsigned char>(*q - '0') < 10 && digits < 18) {
      result = result * 10 + (*q - '0');
      ++q;
      ++digits;
    }
    if (digits == 0 || (q != end_ && !isDelimiter(*q))) return false;
    value = result;
    p_ = q;
    return true;
  }

  template <typename Integer>
  ParseStatus parseInteger(Integer& value) {
    skipBlanks();
    if (atLineEnd()) return ParseStatus::Missing;
    const char* start = p_;
    if (*start == '+') ++start;
    auto [next, error] = std::from_chars(start, end_, value);
    if (error == std::errc::invalid_argument || (next != end_ && !isDelimiter(*next))) {
      return ParseStatus::NotNumber;
    }
    if (error == std::errc::result_out_of_range) return ParseStatus::OutOfRange;
    p_ = next;
    return ParseStatus::Ok;
  }

  ParseStatus parseReal(double& value) {
    skipBlanks();
    if (atLineEnd()) return ParseStatus::Missing;
    const char* start = p_;
    if (*start == '+' && start + 1 != end_ && *(start + 1) != '-') ++start;
    auto [next, error] = std::from_chars(start, end_, value);
    if (error == std::errc::invalid_argument || (next != end_ && !isDelimiter(*next))) {
      return ParseStatus::NotNumber;
    }
    // Out of range: overflow to infinity or underflow to zero is not silent
    // data loss we can repair; report it.
    if (error == std::errc::result_out_of_range) return ParseStatus::OutOfRange;
    p_ = next;
    return ParseStatus::Ok;
  }

  // Whitespace-separated fields on the current line, from its start.
  int fieldsOnLine() const {
    int fields = 0;
    bool inField = false;
    for (const char* q = lineStart_; q != end_ && *q != '\n'; ++q) {
      bool blank = isBlank(*q);
      if (!blank && !inField) ++fields;
      inField = !blank;
    }
    return fields;
  }

  std::string currentLineText() const {
    const char* q = lineStart_;
    while (q != end_ && *q != '\n') ++q;
    std::string_view text(lineStart_, static_cast<size_t>(q - lineStart_));
    while (!text.empty() && isBlank(text.back())) text.remove_suffix(1);
    if (text.size() > 160) return std::string(text.substr(0, 160)) + "...";
    return std::string(text);
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw FileError(path_, line_, message, currentLineText());
  }
  [[noreturn]] void failAtLine(int64_t line, const std::string& message) const {
    throw FileError(path_, line, message);
  }

 private:
  const char* p_;
  const char* end_;
  const char* lineStart_;
  bool endsWithNewline_;
  int64_t line_ = 1;
  const std::string& path_;
};

// Quoted token for messages, shortened.
inline std::string quoted(std::string_view token) {
  std::string text(1, '\'');
  text.append(token.substr(0, 40));
  if (token.size() > 40) text.append("...");
  text.push_back('\'');
  return text;
}

}  // namespace tcc::rt::detail
