// Reduction kernels: element-wise sum, prod, max, min over the ten datatypes. Half and bfloat16
// are computed in float and rounded back (to nearest even). avg is a sum followed by a division by
// the rank count (integers: truncating division, like C).
#pragma once

#include <cstddef>
#include <cstdint>

#include "include/slimeccl.h"

namespace slimeccl {

// out[i] = a[i] (op) b[i]; out may alias a or b. avg reduces like sum.
void reduceArrays(void* out, const void* a, const void* b, size_t count, slimecclDataType_t type, slimecclRedOp_t op);
// out[i] = in[i] * scalar (a pre-multiplied sum's first step), multiplied as prod multiplies;
// scalarBits holds one element of the type. out may alias in.
void scaleArray(void* out, const void* in, size_t count, slimecclDataType_t type, uint64_t scalarBits);
// data[i] /= divisor (avg's final step).
void divideArray(void* data, size_t count, slimecclDataType_t type, int divisor);

float halfToFloat(unsigned short h);
unsigned short floatToHalf(float f);
float bfloat16ToFloat(unsigned short b);
unsigned short floatToBfloat16(float f);

}  // namespace slimeccl
