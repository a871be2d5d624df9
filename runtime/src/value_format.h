// Number formatting for the tensor file writers: the shortest text that
// reads back to the same value (std::to_chars), appended to a buffer.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include "tcc/runtime/value_type.h"

namespace tcc::rt::detail {

inline void appendInteger(std::string& buffer, int64_t value) {
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof digits, value);
  buffer.append(digits, result.ptr);
}

inline void appendReal(std::string& buffer, double value) {
  char digits[32];
  auto result = std::to_chars(digits, digits + sizeof digits, value);
  buffer.append(digits, result.ptr);
}

// Float32 and Float16 values print as the shortest float text, which reads
// back (through double) to the same stored value.
inline void appendValue(std::string& buffer, double value, ValueType type) {
  if (type == ValueType::Float32 || type == ValueType::Float16) {
    char digits[32];
    auto result = std::to_chars(digits, digits + sizeof digits, static_cast<float>(value));
    buffer.append(digits, result.ptr);
    return;
  }
  if (type == ValueType::Int32 || type == ValueType::Int64) {
    appendInteger(buffer, static_cast<int64_t>(value));
    return;
  }
  appendReal(buffer, value);
}

}  // namespace tcc::rt::detail
