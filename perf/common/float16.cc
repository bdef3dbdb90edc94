#include "common/float16.h"

#include <bit>

namespace slimeccl_perf {
namespace {

constexpr uint32_t kFloatExponentMask = 0x7F800000u;
constexpr uint32_t kFloatAbsMask = 0x7FFFFFFFu;
constexpr uint32_t kHalfInfinity = 0x7C00u;
// Exponent bias difference between float (127) and half (15).
constexpr uint32_t kBiasDifference = 127 - 15;

// Drops the low `shift` bits of `value`, rounding to nearest, ties to even.
uint32_t shiftRightRoundEven(uint32_t value, unsigned shift) {
  const uint32_t kept = value >> shift;
  const uint32_t dropped = value & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  return kept + ((dropped > halfway || (dropped == halfway && (kept & 1u))) ? 1u : 0u);
}

}  // namespace

uint16_t floatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & kFloatAbsMask;
  if (abs >= kFloatExponentMask) {
    // Keep NaNs NaN (quiet, top payload bits kept); infinity stays infinity.
    const uint32_t nan = abs > kFloatExponentMask ? 0x200u | ((abs >> 13) & 0x3FFu) : 0u;
    return static_cast<uint16_t>(sign | kHalfInfinity | nan);
  }
  const uint32_t exponent = abs >> 23;
  if (exponent > kBiasDifference) {
    // Normal half range: rebias the exponent; a rounding carry moves into the exponent, up to infinity.
    const uint32_t rounded = shiftRightRoundEven(abs, 13) - (kBiasDifference << 10);
    return static_cast<uint16_t>(sign | (rounded > kHalfInfinity ? kHalfInfinity : rounded));
  }
  // Half subnormal or zero: the result is the value in units of 2^-24.
  if (exponent < kBiasDifference - 11) return static_cast<uint16_t>(sign);
  const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
  return static_cast<uint16_t>(sign | shiftRightRoundEven(mantissa, 126 - exponent));
}

float halfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | kFloatExponentMask | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + kBiasDifference) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal half: normalise the mantissa into a float exponent.
  uint32_t floatExponent = kBiasDifference + 1;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --floatExponent;
  }
  return std::bit_cast<float>(sign | (floatExponent << 23) | ((mantissa & 0x3FFu) << 13));
}

uint16_t floatToBfloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & kFloatAbsMask) > kFloatExponentMask) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>(shiftRightRoundEven(bits, 16));
}

float bfloat16ToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace slimeccl_perf
