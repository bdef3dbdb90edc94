#include "algorithms/reduce.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/base/util/op_kinds.h"

namespace slimeccl {
namespace {

// Integer sums and products wrap around: computed on the unsigned type of the same width, where
// wrapping is defined (a signed overflow would be undefined behaviour).
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
  using type = T;
};
template <typename T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using WrapType = typename Wrapping<T>::type;

template <typename T>
struct SumOp {
  static T apply(T a, T b) { return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b)); }
};
template <typename T>
struct ProdOp {
  static T apply(T a, T b) { return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b)); }
};
// A NaN operand wins on either side (a != a only for NaN), so that every reduction order, and
// both ranks of a pairwise exchange, agree.
template <typename T>
struct MaxOp {
  static T apply(T a, T b) { return (a > b || a != a) ? a : b; }
};
template <typename T>
struct MinOp {
  static T apply(T a, T b) { return (a < b || a != a) ? a : b; }
};

// Plain loops over restrict-free spans that the compiler vectorises (this file builds with -O3).
template <typename T, template <typename> class Op>
void reduceLoop(T* out, const T* a, const T* b, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = Op<T>::apply(a[i], b[i]);
}

template <typename T>
void reduceTyped(void* out, const void* a, const void* b, size_t count, slimecclRedOp_t op) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  switch (op) {
    case slimecclSum:
    case slimecclAvg: reduceLoop<T, SumOp>(o, x, y, count); break;
    case slimecclProd: reduceLoop<T, ProdOp>(o, x, y, count); break;
    case slimecclMax: reduceLoop<T, MaxOp>(o, x, y, count); break;
    case slimecclMin: reduceLoop<T, MinOp>(o, x, y, count); break;
    default: break;
  }
}

// 16-bit floats: widen a block to float, reduce there, round back.
template <float (*toFloat)(unsigned short), unsigned short (*fromFloat)(float)>
void reduceNarrowFloat(void* out, const void* a, const void* b, size_t count, slimecclRedOp_t op) {
  constexpr size_t kBlock = 256;
  float fa[kBlock], fb[kBlock];
  auto* o = static_cast<unsigned short*>(out);
  const auto* x = static_cast<const unsigned short*>(a);
  const auto* y = static_cast<const unsigned short*>(b);
  for (size_t base = 0; base < count; base += kBlock) {
    size_t n = count - base < kBlock ? count - base : kBlock;
    for (size_t i = 0; i < n; ++i) {
      fa[i] = toFloat(x[base + i]);
      fb[i] = toFloat(y[base + i]);
    }
    reduceTyped<float>(fa, fa, fb, n, op);
    for (size_t i = 0; i < n; ++i) o[base + i] = fromFloat(fa[i]);
  }
}

// Integers divide as numbers (truncating), not after casting the rank count to the element
// type, which would overflow (or become zero) for rank counts beyond the type's range.
template <typename T>
void divideTyped(void* data, size_t count, int divisor) {
  using Quotient =
      std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  T* d = static_cast<T*>(data);
  const Quotient div = static_cast<Quotient>(divisor);
  for (size_t i = 0; i < count; ++i) d[i] = static_cast<T>(static_cast<Quotient>(d[i]) / div);
}

}  // namespace

float halfToFloat(unsigned short h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

unsigned short floatToHalf(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000;
  uint32_t absBits = bits & 0x7fffffff;
  if (absBits >= 0x7f800000)  // inf or nan (keep nan quiet)
    return static_cast<unsigned short>(sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0));
  if (absBits >= 0x477ff000) return static_cast<unsigned short>(sign | 0x7c00);  // rounds to inf
  if (absBits < 0x38800000) {                                                    // subnormal or zero in half
    if (absBits < 0x33000000) return static_cast<unsigned short>(sign);
    uint32_t mant = (absBits & 0x7fffff) | 0x800000;
    int shift = 113 - static_cast<int>(absBits >> 23) + 13;
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return static_cast<unsigned short>(sign | half);
  }
  uint32_t half = ((absBits >> 13) - (112u << 10));
  uint32_t rest = absBits & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return static_cast<unsigned short>(sign | half);
}

float bfloat16ToFloat(unsigned short b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

unsigned short floatToBfloat16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<unsigned short>((bits >> 16) | 0x40);  // quiet nan
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<unsigned short>((bits + rounding) >> 16);
}

void reduceArrays(void* out, const void* a, const void* b, size_t count, slimecclDataType_t type, slimecclRedOp_t op) {
  switch (type) {
    case slimecclInt8: reduceTyped<int8_t>(out, a, b, count, op); break;
    case slimecclUint8: reduceTyped<uint8_t>(out, a, b, count, op); break;
    case slimecclInt32: reduceTyped<int32_t>(out, a, b, count, op); break;
    case slimecclUint32: reduceTyped<uint32_t>(out, a, b, count, op); break;
    case slimecclInt64: reduceTyped<int64_t>(out, a, b, count, op); break;
    case slimecclUint64: reduceTyped<uint64_t>(out, a, b, count, op); break;
    case slimecclFloat16: reduceNarrowFloat<halfToFloat, floatToHalf>(out, a, b, count, op); break;
    case slimecclFloat32: reduceTyped<float>(out, a, b, count, op); break;
    case slimecclFloat64: reduceTyped<double>(out, a, b, count, op); break;
    case slimecclBfloat16: reduceNarrowFloat<bfloat16ToFloat, floatToBfloat16>(out, a, b, count, op); break;
    default: break;
  }
}

void scaleArray(void* out, const void* in, size_t count, slimecclDataType_t type, uint64_t scalarBits) {
  constexpr size_t kBlock = 1024;
  const size_t elem = typeSize(type);
  char scalars[kBlock * 8];
  for (size_t i = 0; i < kBlock; ++i) memcpy(scalars + i * elem, &scalarBits, elem);
  for (size_t base = 0; base < count; base += kBlock) {
    const size_t n = count - base < kBlock ? count - base : kBlock;
    reduceArrays(static_cast<char*>(out) + base * elem, static_cast<const char*>(in) + base * elem, scalars, n, type,
                 slimecclProd);
  }
}

void divideArray(void* data, size_t count, slimecclDataType_t type, int divisor) {
  switch (type) {
    case slimecclInt8: divideTyped<int8_t>(data, count, divisor); break;
    case slimecclUint8: divideTyped<uint8_t>(data, count, divisor); break;
    case slimecclInt32: divideTyped<int32_t>(data, count, divisor); break;
    case slimecclUint32: divideTyped<uint32_t>(data, count, divisor); break;
    case slimecclInt64: divideTyped<int64_t>(data, count, divisor); break;
    case slimecclUint64: divideTyped<uint64_t>(data, count, divisor); break;
    case slimecclFloat32: divideTyped<float>(data, count, divisor); break;
    case slimecclFloat64: divideTyped<double>(data, count, divisor); break;
    case slimecclFloat16:
    case slimecclBfloat16: {
      bool half = type == slimecclFloat16;
      auto* d = static_cast<unsigned short*>(data);
      for (size_t i = 0; i < count; ++i) {
        float v = (half ? halfToFloat(d[i]) : bfloat16ToFloat(d[i])) / static_cast<float>(divisor);
        d[i] = half ? floatToHalf(v) : floatToBfloat16(v);
      }
      break;
    }
    default: break;
  }
}

}  // namespace slimeccl
