// Element types of stored tensors. The numbering matches tcc_datatype in
// abi.h. Float16 is a storage type: values are IEEE binary16 bit patterns
// converted to and from float on access.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcc::rt {

enum class ValueType { Float64 = 0, Float32 = 1, Float16 = 2, Int32 = 3, Int64 = 4 };

int byteWidth(ValueType type);
bool isFloat(ValueType type);
std::string toString(ValueType type);  // "float64", ...
std::optional<ValueType> parseValueType(const std::string& name);

// IEEE binary16 <-> binary32, rounding to nearest even.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);

// Values a float16 tensor holds, made from any: scaled into [-1, 1] when the
// largest magnitude exceeds 1 (float16's largest finite value is 65504, below
// many real matrices' entries), then each rounded to the nearest float16.
std::vector<double> heldByFloat16(std::vector<double> values);

}  // namespace tcc::rt
