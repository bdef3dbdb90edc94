// IEEE half and bfloat16 conversions on bit patterns, so host code can fill and check 16-bit float
// buffers without compiler support for those types. float -> 16 bit rounds to nearest even.
#pragma once

#include <cstdint>

namespace slimeccl_perf {

uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);

uint16_t floatToBfloat16(float value);
float bfloat16ToFloat(uint16_t bits);

}  // namespace slimeccl_perf
