#include "element_values.h"

#include <cmath>
#include <cstring>

#include "rank_check.h"

namespace slimeccl_test {

namespace {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Binary16 bits of a float that binary16 holds exactly (zero or a normal number).
uint16_t halfBits(float value) {
  const uint32_t bits = floatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if ((bits & 0x7fffffff) == 0) return sign;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  RANK_CHECK(exponent > 0 && exponent < 31 && (bits & 0x1fff) == 0, value, " is not exact in float16");
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
}

float halfValue(uint16_t half) {
  const int exponent = (half >> 10) & 0x1f;
  const int mantissa = half & 0x3ff;
  const float sign = (half & 0x8000) != 0 ? -1.0f : 1.0f;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
}

uint16_t bfloat16Bits(float value) {
  const uint32_t bits = floatBits(value);
  RANK_CHECK((bits & 0xffff) == 0, value, " is not exact in bfloat16");
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T>
void storeAs(T value, void* element) {
  std::memcpy(element, &value, sizeof(T));
}

template <typename T>
T loadAs(const void* element) {
  T value;
  std::memcpy(&value, element, sizeof(T));
  return value;
}

}  // namespace

void storeValue(slimecclDataType_t datatype, int64_t value, void* element) {
  switch (datatype) {
    case slimecclInt8: storeAs(static_cast<int8_t>(value), element); return;
    case slimecclUint8: storeAs(static_cast<uint8_t>(value), element); return;
    case slimecclInt32: storeAs(static_cast<int32_t>(value), element); return;
    case slimecclUint32: storeAs(static_cast<uint32_t>(value), element); return;
    case slimecclInt64: storeAs(value, element); return;
    case slimecclUint64: storeAs(static_cast<uint64_t>(value), element); return;
    case slimecclFloat16: storeAs(halfBits(static_cast<float>(value)), element); return;
    case slimecclFloat32: storeAs(static_cast<float>(value), element); return;
    case slimecclFloat64: storeAs(static_cast<double>(value), element); return;
    case slimecclBfloat16: storeAs(bfloat16Bits(static_cast<float>(value)), element); return;
    case slimecclNumTypes: break;
  }
  failRank(__FILE__, __LINE__, concat("no such datatype: ", static_cast<int>(datatype)));
}

std::string elementText(slimecclDataType_t datatype, const void* element) {
  switch (datatype) {
    case slimecclInt8: return std::to_string(loadAs<int8_t>(element));
    case slimecclUint8: return std::to_string(loadAs<uint8_t>(element));
    case slimecclInt32: return std::to_string(loadAs<int32_t>(element));
    case slimecclUint32: return std::to_string(loadAs<uint32_t>(element));
    case slimecclInt64: return std::to_string(loadAs<int64_t>(element));
    case slimecclUint64: return std::to_string(loadAs<uint64_t>(element));
    case slimecclFloat32: return concat(loadAs<float>(element));
    case slimecclFloat64: return concat(loadAs<double>(element));
    case slimecclFloat16: {
      uint16_t bits = loadAs<uint16_t>(element);
      return concat(halfValue(bits), " (0x", std::hex, bits, ")");
    }
    case slimecclBfloat16: {
      uint16_t bits = loadAs<uint16_t>(element);
      return concat(floatFromBits(static_cast<uint32_t>(bits) << 16), " (0x", std::hex, bits, ")");
    }
    case slimecclNumTypes: break;
  }
  return "?";
}

bool isUnsignedInteger(slimecclDataType_t datatype) {
  return datatype == slimecclUint8 || datatype == slimecclUint32 || datatype == slimecclUint64;
}

bool isFloatingPoint(slimecclDataType_t datatype) {
  return datatype == slimecclFloat16 || datatype == slimecclFloat32 || datatype == slimecclFloat64 ||
         datatype == slimecclBfloat16;
}

}  // namespace slimeccl_test
