#include "tcc/runtime/value_type.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tcc::rt {

int byteWidth(ValueType type) {
  switch (type) {
    case ValueType::Float64: return 8;
    case ValueType::Float32: return 4;
    case ValueType::Float16: return 2;
    case ValueType::Int32: return 4;
    case ValueType::Int64: return 8;
  }
  return 0;
}

bool isFloat(ValueType type) {
  return type == ValueType::Float64 || type == ValueType::Float32 || type == ValueType::Float16;
}

std::string toString(ValueType type) {
  switch (type) {
    case ValueType::Float64: return "float64";
    case ValueType::Float32: return "float32";
    case ValueType::Float16: return "float16";
    case ValueType::Int32: return "int32";
    case ValueType::Int64: return "int64";
  }
  return "unknown";
}

std::optional<ValueType> parseValueType(const std::string& name) {
  for (ValueType type : {ValueType::Float64, ValueType::Float32, ValueType::Float16,
                         ValueType::Int32, ValueType::Int64}) {
    if (toString(type) == name) return type;
  }
  return std::nullopt;
}

uint16_t floatToHalf(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {  // infinity or NaN (keep NaN quiet and nonzero)
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0));
  }
  int32_t halfExponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (halfExponent >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the full significand into place.
    if (halfExponent < -10) return static_cast<uint16_t>(sign);
    uint32_t significand = mantissa | 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
    uint32_t half = significand >> shift;
    uint32_t remainder = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fffu;
  // Rounding may carry into the exponent, which is still correct (up to inf).
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t result;
  if (exponent == 0) {
    if (mantissa == 0) {
      result = sign;
    } else {  // subnormal: normalize
      int shift = 0;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      result = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) | (mantissa << 13);
    }
  } else if (exponent == 31) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else {
    result = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(result);
}

std::vector<double> heldByFloat16(std::vector<double> values) {
  double largest = 0;
  for (double value : values) largest = std::max(largest, std::abs(value));
  for (double& value : values)
    value = halfToFloat(floatToHalf(static_cast<float>(largest > 1 ? value / largest : value)));
  return values;
}

}  // namespace tcc::rt
