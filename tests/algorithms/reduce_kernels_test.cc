// The reduction kernels (algorithms/reduce.h) against results computed without them: every type
// and op, in place and across the narrow floats' internal blocks, integer wrap-around and
// truncating average, half and bfloat16 conversions rounding to nearest even, and NaN and
// infinity passing through every op in either operand order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "algorithms/reduce.h"
#include "tests/algorithms/algo_test_support_b.h"

namespace slimeccl {
namespace {

using reductiontest::allOps;
using reductiontest::allTypes;
using reductiontest::bfloat16Value;
using reductiontest::bytesOf;
using reductiontest::encode;
using reductiontest::expectedElement;
using reductiontest::halfValue;
using reductiontest::inputValue;
using reductiontest::nearestBfloat16;
using reductiontest::nearestHalf;
using reductiontest::show;

std::vector<char> encodeAll(slimecclDataType_t type, const std::vector<int64_t>& values) {
  std::vector<char> out;
  for (int64_t v : values) {
    std::vector<char> e = encode(type, static_cast<double>(v));
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

uint16_t bitsOf16(const void* p) {
  uint16_t b;
  memcpy(&b, p, 2);
  return b;
}

TEST(ReductionKernels, EveryTypeAndOpMatchesTheReference) {
  // 1000 elements: several of the narrow floats' internal blocks and a ragged end.
  const size_t count = 1000;
  for (slimecclDataType_t type : allTypes())
    for (slimecclRedOp_t op : allOps()) {
      std::vector<int64_t> a(count), b(count);
      for (size_t i = 0; i < count; ++i) {
        a[i] = inputValue(type, op, 2, 0, i);
        b[i] = inputValue(type, op, 2, 1, i);
      }
      const std::vector<char> x = encodeAll(type, a), y = encodeAll(type, b);
      std::vector<char> out(x.size()), inPlace = x;
      reduceArrays(out.data(), x.data(), y.data(), count, type, op);
      reduceArrays(inPlace.data(), inPlace.data(), y.data(), count, type, op);
      const size_t elem = bytesOf(type);
      for (size_t i = 0; i < count; ++i) {
        // avg reduces like sum; the division is divideArray's.
        std::vector<char> want = expectedElement(type, op == slimecclAvg ? slimecclSum : op, {a[i], b[i]});
        ASSERT_EQ(memcmp(out.data() + i * elem, want.data(), elem), 0)
            << typeName(type) << " " << redOpName(op) << " element " << i << ": " << show(type, out.data() + i * elem)
            << ", expected " << show(type, want.data());
        ASSERT_EQ(memcmp(inPlace.data() + i * elem, want.data(), elem), 0) << typeName(type) << " in place";
      }
    }
}

TEST(ReductionKernels, IntegersWrapAround) {
  int8_t a8[] = {100, -128, 127}, b8[] = {100, -1, 1}, out8[3];
  reduceArrays(out8, a8, b8, 3, slimecclInt8, slimecclSum);
  EXPECT_EQ(out8[0], -56);
  EXPECT_EQ(out8[1], 127);
  EXPECT_EQ(out8[2], -128);
  int32_t a32[] = {std::numeric_limits<int32_t>::max(), 65536}, b32[] = {1, 65536}, out32[2];
  reduceArrays(out32, a32, b32, 2, slimecclInt32, slimecclSum);
  EXPECT_EQ(out32[0], std::numeric_limits<int32_t>::min());
  reduceArrays(out32, a32, b32, 2, slimecclInt32, slimecclProd);
  EXPECT_EQ(out32[1], 0);  // 2^32 wraps to 0
  int64_t a64[] = {std::numeric_limits<int64_t>::max()}, b64[] = {2}, out64[1];
  reduceArrays(out64, a64, b64, 1, slimecclInt64, slimecclProd);
  EXPECT_EQ(out64[0], -2);
  uint8_t au[] = {16, 0}, bu[] = {16, 1}, outu[2];
  reduceArrays(outu, au, bu, 2, slimecclUint8, slimecclProd);
  EXPECT_EQ(outu[0], 0);
  reduceArrays(outu, au, bu, 2, slimecclUint8, slimecclMin);
  EXPECT_EQ(outu[1], 0);
}

TEST(ReductionKernels, IntegerAverageTruncatesTowardZero) {
  int8_t i8[] = {7, -7, 127, -128};
  divideArray(i8, 4, slimecclInt8, 2);
  EXPECT_EQ(i8[0], 3);
  EXPECT_EQ(i8[1], -3);
  EXPECT_EQ(i8[2], 63);
  EXPECT_EQ(i8[3], -64);
  // Rank counts beyond the type's range divide as numbers, not as the type.
  int8_t small[] = {-100, 100};
  divideArray(small, 2, slimecclInt8, 200);
  EXPECT_EQ(small[0], 0);
  EXPECT_EQ(small[1], 0);
  uint8_t u8[] = {255};
  divideArray(u8, 1, slimecclUint8, 256);
  EXPECT_EQ(u8[0], 0);
  uint8_t third[] = {200};
  divideArray(third, 1, slimecclUint8, 3);
  EXPECT_EQ(third[0], 66);
  int32_t i32[] = {-1000000001};
  divideArray(i32, 1, slimecclInt32, 1000);
  EXPECT_EQ(i32[0], -1000000);
  uint32_t u32[] = {4000000000u};
  divideArray(u32, 1, slimecclUint32, 3);
  EXPECT_EQ(u32[0], 1333333333u);
  int64_t i64[] = {-9};
  divideArray(i64, 1, slimecclInt64, 4);
  EXPECT_EQ(i64[0], -2);
  uint64_t u64[] = {std::numeric_limits<uint64_t>::max()};
  divideArray(u64, 1, slimecclUint64, 1024);
  EXPECT_EQ(u64[0], std::numeric_limits<uint64_t>::max() / 1024);
}

TEST(ReductionKernels, FloatAverageDividesInFloatAndRoundsOnce) {
  float f[] = {1.0f, 10.0f};
  divideArray(f, 2, slimecclFloat32, 3);
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  EXPECT_EQ(f[1], 10.0f / 3.0f);
  double d[] = {1.0};
  divideArray(d, 1, slimecclFloat64, 3);
  EXPECT_EQ(d[0], 1.0 / 3.0);
  for (int divisor : {3, 7, 10, 1000}) {
    uint16_t h[] = {nearestHalf(1.0), nearestHalf(2047.0)}, b[] = {nearestBfloat16(1.0), nearestBfloat16(255.0)};
    divideArray(h, 2, slimecclFloat16, divisor);
    divideArray(b, 2, slimecclBfloat16, divisor);
    EXPECT_EQ(h[0], nearestHalf(1.0f / static_cast<float>(divisor))) << divisor;
    EXPECT_EQ(h[1], nearestHalf(2047.0f / static_cast<float>(divisor))) << divisor;
    EXPECT_EQ(b[0], nearestBfloat16(1.0f / static_cast<float>(divisor))) << divisor;
    EXPECT_EQ(b[1], nearestBfloat16(255.0f / static_cast<float>(divisor))) << divisor;
  }
}

TEST(ReductionKernels, NarrowFloatSumsRoundToNearestEven) {
  // fp16 has 11 significant bits: above 2048 the spacing is 2, above 4096 it is 4.
  const double halfCases[][2] = {{2048, 1}, {2048, 3}, {2050, 1}, {4096, 2}, {4096, 6}, {65504, 16}, {65504, 8}};
  for (const auto& c : halfCases) {
    uint16_t a = nearestHalf(c[0]), b = nearestHalf(c[1]), out;
    reduceArrays(&out, &a, &b, 1, slimecclFloat16, slimecclSum);
    EXPECT_EQ(out, nearestHalf(c[0] + c[1])) << c[0] << " + " << c[1];
  }
  EXPECT_EQ(nearestHalf(2049), nearestHalf(2048));  // a tie goes to the even pattern
  EXPECT_EQ(nearestHalf(2051), nearestHalf(2052));
  EXPECT_TRUE(std::isinf(halfValue(nearestHalf(65520))));  // the midpoint to 65536 rounds up
  // bfloat16 has 8 significant bits: above 256 the spacing is 2.
  const double bfloatCases[][2] = {{256, 1}, {256, 3}, {258, 1}, {512, 2}, {1.0, 1.0 / 256}};
  for (const auto& c : bfloatCases) {
    uint16_t a = nearestBfloat16(c[0]), b = nearestBfloat16(c[1]), out;
    reduceArrays(&out, &a, &b, 1, slimecclBfloat16, slimecclSum);
    EXPECT_EQ(out, nearestBfloat16(c[0] + c[1])) << c[0] << " + " << c[1];
  }
}

TEST(ReductionKernels, HalfConversionsMatchTheReference) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double want = halfValue(static_cast<uint16_t>(bits));
    const float got = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << bits;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << bits;
      // Every half value converts back to itself (zero keeps its sign).
      ASSERT_EQ(floatToHalf(got), bits) << std::hex << bits;
    }
  }
  std::mt19937 random(1);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t raw = anyBits(random);
    // Mostly floats in and just around the half range, where rounding happens.
    if (i % 2) raw = (raw & 0x807fffff) | ((100 + raw % 45) << 23);
    float f;
    memcpy(&f, &raw, sizeof(f));
    const uint16_t got = floatToHalf(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(halfValue(got)));
    } else {
      ASSERT_EQ(got, nearestHalf(f)) << f << " (0x" << std::hex << raw << ")";
    }
  }
}

TEST(ReductionKernels, Bfloat16ConversionsMatchTheReference) {
  std::mt19937 random(2);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t raw = anyBits(random);
    float f;
    memcpy(&f, &raw, sizeof(f));
    const uint16_t got = floatToBfloat16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bfloat16Value(got)));
    } else {
      ASSERT_EQ(got, nearestBfloat16(f)) << f << " (0x" << std::hex << raw << ")";
    }
  }
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double value = bfloat16Value(static_cast<uint16_t>(bits));
    ASSERT_EQ(std::isnan(value), std::isnan(bfloat16ToFloat(static_cast<uint16_t>(bits))));
    if (!std::isnan(value)) {
      ASSERT_EQ(floatToBfloat16(static_cast<float>(value)), bits);
    }
  }
}

TEST(ReductionKernels, NanAndInfinityPassThroughInEitherOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (slimecclDataType_t type : {slimecclFloat16, slimecclFloat32, slimecclFloat64, slimecclBfloat16})
    for (slimecclRedOp_t op : allOps()) {
      // Each pair is reduced both ways round; the result must not depend on the order.
      const double pairs[][3] = {{nan, 1, nan}, {nan, -inf, nan}, {inf, 1, inf}, {-inf, -1, -inf}};
      for (const auto& p : pairs) {
        double want = p[2];
        if (!std::isnan(p[0]) && (op == slimecclMax || op == slimecclMin))
          want = op == slimecclMax ? std::max(p[0], p[1]) : std::min(p[0], p[1]);
        if (op == slimecclProd && p[0] == -inf) want = inf;
        for (bool swap : {false, true}) {
          std::vector<char> a = encode(type, swap ? p[1] : p[0]), b = encode(type, swap ? p[0] : p[1]);
          std::vector<char> out(a.size());
          reduceArrays(out.data(), a.data(), b.data(), 1, type, op);
          double got;
          if (type == slimecclFloat16)
            got = halfValue(bitsOf16(out.data()));
          else if (type == slimecclBfloat16)
            got = bfloat16Value(bitsOf16(out.data()));
          else if (type == slimecclFloat32)
            got = *reinterpret_cast<float*>(out.data());
          else
            got = *reinterpret_cast<double*>(out.data());
          const std::string what = std::string(typeName(type)) + " " + redOpName(op) + " of " + std::to_string(p[0]) +
                                   " and " + std::to_string(p[1]) + (swap ? " (swapped)" : "");
          if (std::isnan(want))
            EXPECT_TRUE(std::isnan(got)) << what << " gave " << got;
          else
            EXPECT_EQ(got, want) << what;
        }
      }
    }
}

}  // namespace
}  // namespace slimeccl
