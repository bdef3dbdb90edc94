// Unit tests of the perf harness logic that needs no library: options, sweeps, bandwidth, timing,
// 16-bit floats, patterns, reduction values, rank discovery and the report text.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/bandwidth.h"
#include "common/datatypes.h"
#include "common/element_counts.h"
#include "common/float16.h"
#include "common/gemm_options.h"
#include "common/host_buffer.h"
#include "common/options.h"
#include "common/pattern.h"
#include "common/process_env.h"
#include "common/reduction_values.h"
#include "common/report.h"
#include "common/sweep.h"
#include "common/timing.h"
#include "common/usage_error.h"

namespace slimeccl_perf {
namespace {

Options parse(std::vector<const char*> args) { return parseOptions(args); }

EnvLookup fakeEnvironment(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

const std::vector<slimecclDataType_t>& allTypes() {
  static const std::vector<slimecclDataType_t> types = parseDataTypes("all");
  return types;
}

// Reads element `index` of a pattern buffer back as a double, through the type's own representation.
double loadAsDouble(slimecclDataType_t type, const void* buffer, size_t index) {
  const char* at = static_cast<const char*>(buffer) + index * dataTypeSize(type);
  auto load = [at]<typename T>(T) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    return value;
  };
  switch (type) {
    case slimecclInt8: return load(int8_t{});
    case slimecclUint8: return load(uint8_t{});
    case slimecclInt32: return load(int32_t{});
    case slimecclUint32: return load(uint32_t{});
    case slimecclInt64: return static_cast<double>(load(int64_t{}));
    case slimecclUint64: return static_cast<double>(load(uint64_t{}));
    case slimecclFloat16: return halfToFloat(load(uint16_t{}));
    case slimecclFloat32: return load(float{});
    case slimecclFloat64: return load(double{});
    case slimecclBfloat16: return bfloat16ToFloat(load(uint16_t{}));
    case slimecclNumTypes: break;
  }
  return std::nan("");
}

const std::vector<slimecclRedOp_t>& allOps() {
  static const std::vector<slimecclRedOp_t> ops = parseRedOps("all");
  return ops;
}

// One reduction step in T's own arithmetic, as the library computes it.
template <typename T>
T combine(T a, T b, slimecclRedOp_t op) {
  switch (op) {
    case slimecclProd: return static_cast<T>(a * b);
    case slimecclMax: return std::max(a, b);
    case slimecclMin: return std::min(a, b);
    case slimecclSum:
    case slimecclAvg:
    case slimecclNumOps:
    case slimecclMaxRedOp: break;
  }
  return static_cast<T>(a + b);
}

template <typename T>
void combineInto(void* accumulator, const void* input, size_t count, slimecclRedOp_t op) {
  for (size_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, static_cast<char*>(accumulator) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const char*>(input) + i * sizeof(T), sizeof(T));
    const T result = combine(a, b, op);
    std::memcpy(static_cast<char*>(accumulator) + i * sizeof(T), &result, sizeof(T));
  }
}

// 16-bit floats: computed in float and rounded back after every step.
template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float)>
void combineNarrowInto(void* accumulator, const void* input, size_t count, slimecclRedOp_t op) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t a;
    uint16_t b;
    std::memcpy(&a, static_cast<char*>(accumulator) + i * 2, 2);
    std::memcpy(&b, static_cast<const char*>(input) + i * 2, 2);
    const uint16_t result = fromFloat(combine(toFloat(a), toFloat(b), op));
    std::memcpy(static_cast<char*>(accumulator) + i * 2, &result, 2);
  }
}

void referenceCombine(void* accumulator, const void* input, slimecclDataType_t type, slimecclRedOp_t op, size_t count) {
  switch (type) {
    case slimecclInt8: return combineInto<int8_t>(accumulator, input, count, op);
    case slimecclUint8: return combineInto<uint8_t>(accumulator, input, count, op);
    case slimecclInt32: return combineInto<int32_t>(accumulator, input, count, op);
    case slimecclUint32: return combineInto<uint32_t>(accumulator, input, count, op);
    case slimecclInt64: return combineInto<int64_t>(accumulator, input, count, op);
    case slimecclUint64: return combineInto<uint64_t>(accumulator, input, count, op);
    case slimecclFloat16: return combineNarrowInto<halfToFloat, floatToHalf>(accumulator, input, count, op);
    case slimecclFloat32: return combineInto<float>(accumulator, input, count, op);
    case slimecclFloat64: return combineInto<double>(accumulator, input, count, op);
    case slimecclBfloat16: return combineNarrowInto<bfloat16ToFloat, floatToBfloat16>(accumulator, input, count, op);
    case slimecclNumTypes: break;
  }
}

template <typename T>
void divideInPlace(void* data, size_t count, int divisor) {
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, static_cast<char*>(data) + i * sizeof(T), sizeof(T));
    value = static_cast<T>(value / static_cast<T>(divisor));
    std::memcpy(static_cast<char*>(data) + i * sizeof(T), &value, sizeof(T));
  }
}

template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float)>
void divideNarrowInPlace(void* data, size_t count, int divisor) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t value;
    std::memcpy(&value, static_cast<char*>(data) + i * 2, 2);
    value = fromFloat(toFloat(value) / static_cast<float>(divisor));
    std::memcpy(static_cast<char*>(data) + i * 2, &value, 2);
  }
}

// avg's last step: the sum divided by the rank count.
void referenceDivide(void* data, slimecclDataType_t type, size_t count, int divisor) {
  switch (type) {
    case slimecclInt8: return divideInPlace<int8_t>(data, count, divisor);
    case slimecclUint8: return divideInPlace<uint8_t>(data, count, divisor);
    case slimecclInt32: return divideInPlace<int32_t>(data, count, divisor);
    case slimecclUint32: return divideInPlace<uint32_t>(data, count, divisor);
    case slimecclInt64: return divideInPlace<int64_t>(data, count, divisor);
    case slimecclUint64: return divideInPlace<uint64_t>(data, count, divisor);
    case slimecclFloat16: return divideNarrowInPlace<halfToFloat, floatToHalf>(data, count, divisor);
    case slimecclFloat32: return divideInPlace<float>(data, count, divisor);
    case slimecclFloat64: return divideInPlace<double>(data, count, divisor);
    case slimecclBfloat16: return divideNarrowInPlace<bfloat16ToFloat, floatToBfloat16>(data, count, divisor);
    case slimecclNumTypes: break;
  }
}

enum class ReductionOrder { Ascending, Descending, Tree };

// Reduces the ranks' inputs in the given order, each step rounded in the type, as a library might.
std::vector<char> referenceReduction(std::vector<std::vector<char>> inputs, ReductionOrder order,
                                     slimecclDataType_t type, slimecclRedOp_t op, size_t count) {
  const int nranks = static_cast<int>(inputs.size());
  if (order == ReductionOrder::Descending) std::reverse(inputs.begin(), inputs.end());
  if (order == ReductionOrder::Tree) {
    for (size_t stride = 1; stride < inputs.size(); stride *= 2) {
      for (size_t i = 0; i + stride < inputs.size(); i += 2 * stride) {
        referenceCombine(inputs[i].data(), inputs[i + stride].data(), type, op, count);
      }
    }
  } else {
    for (size_t i = 1; i < inputs.size(); ++i) referenceCombine(inputs[0].data(), inputs[i].data(), type, op, count);
  }
  if (op == slimecclAvg) referenceDivide(inputs[0].data(), type, count, nranks);
  return inputs[0];
}

TEST(ParseSize, AcceptsPlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(parseSize("0"), 0u);
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_EQ(parseSize("1K"), 1024u);
  EXPECT_EQ(parseSize("64k"), 64u * 1024);
  EXPECT_EQ(parseSize("8M"), 8u << 20);
  EXPECT_EQ(parseSize("2G"), size_t{2} << 30);
  EXPECT_EQ(parseSize("3g"), size_t{3} << 30);
}

TEST(ParseSize, RejectsMalformedSizes) {
  for (const char* bad : {"", "K", "-1", "8X", "8MB", "1.5M", " 8", "99999999999999999999"}) {
    EXPECT_THROW(parseSize(bad), UsageError) << bad;
  }
}

TEST(ParseOptions, DefaultsMatchNcclTests) {
  const Options options = parse({});
  EXPECT_EQ(options.minBytes, 32u << 20);
  EXPECT_EQ(options.maxBytes, 32u << 20);
  EXPECT_EQ(options.stepBytes, 1u << 20);
  EXPECT_EQ(options.stepFactor, 1u);
  EXPECT_EQ(options.iters, 20);
  EXPECT_EQ(options.warmupIters, 5);
  EXPECT_EQ(options.check, 1);
  EXPECT_EQ(options.threads, 1);
  EXPECT_EQ(options.dataTypes, std::vector{slimecclFloat});
  EXPECT_EQ(options.redOps, std::vector{slimecclSum});
  EXPECT_EQ(options.root, 0);
  EXPECT_FALSE(options.blocking);
  EXPECT_EQ(options.average, TimeAverage::Mean);
  EXPECT_TRUE(options.algo.empty());
  EXPECT_FALSE(options.sharedBuffers);
  EXPECT_FALSE(options.deviceBuffers);
  EXPECT_EQ(options.rounds, 5);
  EXPECT_FALSE(options.help);
}

TEST(ParseOptions, ReadsEveryFlagInShortForm) {
  const Options options =
      parse({"-b",   "8",  "-e", "128M", "-f",  "2",  "-i", "4K", "-n",   "7",  "-w", "3",  "-c", "0",  "-d",
             "half", "-t", "4",  "-o",   "max", "-r", "2",  "-A", "ring", "-z", "1",  "-a", "3",  "-R", "1"});
  EXPECT_EQ(options.minBytes, 8u);
  EXPECT_EQ(options.maxBytes, 128u << 20);
  EXPECT_EQ(options.stepFactor, 2u);
  EXPECT_EQ(options.stepBytes, 4096u);
  EXPECT_EQ(options.iters, 7);
  EXPECT_EQ(options.warmupIters, 3);
  EXPECT_EQ(options.check, 0);
  EXPECT_EQ(options.dataTypes, std::vector{slimecclFloat16});
  EXPECT_EQ(options.threads, 4);
  EXPECT_EQ(options.redOps, std::vector{slimecclMax});
  EXPECT_EQ(options.root, 2);
  EXPECT_EQ(options.algo, "ring");
  EXPECT_TRUE(options.blocking);
  EXPECT_EQ(options.average, TimeAverage::Max);
  EXPECT_TRUE(options.sharedBuffers);
}

TEST(ParseOptions, ReadsLongFormsAndAttachedValues) {
  const Options options = parse({"--minbytes=1K", "--maxbytes", "1M", "-f2", "--datatype=bfloat16", "--nthreads=3",
                                 "--warmup_iters", "0", "--blocking=0", "--algo", "allgather:ring,broadcast:tree"});
  EXPECT_EQ(options.minBytes, 1024u);
  EXPECT_EQ(options.maxBytes, 1u << 20);
  EXPECT_EQ(options.stepFactor, 2u);
  EXPECT_EQ(options.dataTypes, std::vector{slimecclBfloat16});
  EXPECT_EQ(options.threads, 3);
  EXPECT_EQ(options.warmupIters, 0);
  EXPECT_FALSE(options.blocking);
  EXPECT_EQ(options.algo, "allgather:ring,broadcast:tree");
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--device_buffers=1"}).deviceBuffers);
  EXPECT_TRUE(parse({"-D", "1"}).deviceBuffers);
  // nccl-tests' GPUs per process: one rank thread per GPU.
  EXPECT_EQ(parse({"-g", "2", "-D", "1"}).threads, 2);
  EXPECT_EQ(parse({"--ngpus=4"}).threads, 4);
}

TEST(ParseOptions, AllSelectsEveryDatatypeAndOp) {
  const Options options = parse({"-d", "all", "-o", "all"});
  EXPECT_EQ(options.dataTypes.size(), static_cast<size_t>(slimecclNumTypes));
  EXPECT_EQ(options.redOps.size(), static_cast<size_t>(slimecclNumOps));
}

TEST(ParseOptions, RejectsBadCommandLines) {
  const std::vector<std::vector<const char*>> bad{
      {"-x"},
      {"--nosuch=1"},
      {"-b"},
      {"-n", "0"},
      {"-n", "ten"},
      {"-t", "0"},
      {"-z", "2"},
      {"-a", "4"},
      {"-r", "-2"},
      {"-d", "float8"},
      {"-o", "xor"},
      {"-h=1"},
      {"-A", ""},
      {"-w", "-1"},
      {"-c", "2"},
      {"-b", "2M", "-e", "1M"},
      {"-i", "0", "-e", "64M"},
      {"-R", "2"},
      {"-K", "0"},
      {"-A", "ring,"},
      {"-A", ",hd"},
      {"-A", "ring,,hd"},
      {"-D", "2"},
      {"-R", "1", "-D", "1"},
      {"-g", "0"},
  };
  for (const auto& args : bad) EXPECT_THROW(parse(args), UsageError) << args.front();
}

TEST(ParseOptions, StepBytesMayBeZeroForOneSize) { EXPECT_NO_THROW(parse({"-i", "0", "-b", "8", "-e", "8"})); }

TEST(Usage, ListsEveryFlag) {
  const std::string usage = usageText("allgather_perf");
  EXPECT_EQ(usage.rfind("USAGE: allgather_perf\n", 0), 0u);
  for (const char* flag :
       {"-t,--nthreads", "-b,--minbytes", "-e,--maxbytes", "-i,--stepbytes", "-f,--stepfactor", "-n,--iters",
        "-w,--warmup_iters", "-c,--check", "-o,--op", "-d,--datatype", "-r,--root", "-z,--blocking", "-a,--average",
        "-A,--algo", "-R,--shared_buffers", "-D,--device_buffers", "-K,--rounds", "-g,--ngpus", "-h,--help"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(ParseOptions, ReadsAnAlgorithmListAndRounds) {
  const Options options = parse({"-A", "ring,hd,default", "--rounds", "9"});
  EXPECT_EQ(options.rounds, 9);
  EXPECT_EQ(algoList(options.algo), (std::vector<std::string>{"ring", "hd", "default"}));
}

TEST(AlgoList, SplitsNamesButKeepsASettingWhole) {
  EXPECT_TRUE(algoList("").empty());
  EXPECT_EQ(algoList("ring"), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(algoList("tree,chain"), (std::vector<std::string>{"tree", "chain"}));
  EXPECT_EQ(algoList("allgather:ring,broadcast:tree"), (std::vector<std::string>{"allgather:ring,broadcast:tree"}));
}

TEST(AlgoEnvValue, PrefixesTheCollectiveUnlessGiven) {
  EXPECT_EQ(algoEnvValue("allgather", "ring"), "allgather:ring");
  EXPECT_EQ(algoEnvValue("allgather", "allgather:hd"), "allgather:hd");
}

TEST(SizeSweep, MultipliesWithAFactor) {
  EXPECT_EQ(sizeSweep(8, 64, 2, 1 << 20), (std::vector<size_t>{8, 16, 32, 64}));
  EXPECT_EQ(sizeSweep(8, 100, 4, 1), (std::vector<size_t>{8, 32}));
}

TEST(SizeSweep, AddsStepBytesWithoutAFactor) {
  EXPECT_EQ(sizeSweep(1 << 20, 3 << 20, 1, 1 << 20), (std::vector<size_t>{1 << 20, 2 << 20, 3 << 20}));
  EXPECT_EQ(sizeSweep(0, 10, 1, 4), (std::vector<size_t>{0, 4, 8}));
}

TEST(SizeSweep, HandlesEdgeCases) {
  EXPECT_EQ(sizeSweep(32, 32, 2, 1), (std::vector<size_t>{32}));
  EXPECT_EQ(sizeSweep(0, 4, 2, 1), (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(sizeSweep(5, 5, 1, 0), (std::vector<size_t>{5}));
  EXPECT_TRUE(sizeSweep(9, 8, 2, 1).empty());
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  const std::vector<size_t> sizes = sizeSweep(size_t{1} << 62, kMax, 2, 1);
  EXPECT_EQ(sizes, (std::vector<size_t>{size_t{1} << 62, size_t{1} << 63}));
  EXPECT_EQ(sizeSweep(kMax - 1, kMax, 1, 4), (std::vector<size_t>{kMax - 1}));
}

TEST(RootSweep, FollowsNcclTests) {
  EXPECT_EQ(rootSweep(0, 4, false), std::vector<int>{-1});
  EXPECT_EQ(rootSweep(2, 4, true), std::vector<int>{2});
  EXPECT_EQ(rootSweep(-1, 3, true), (std::vector<int>{0, 1, 2}));
}

TEST(Bandwidth, AlgbwIsBytesOverTimeInGBs) {
  EXPECT_DOUBLE_EQ(algBandwidthGBs(1000000000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(algBandwidthGBs(1 << 20, 1e-3), 1.048576);
  EXPECT_DOUBLE_EQ(algBandwidthGBs(0, 1e-6), 0.0);
  EXPECT_DOUBLE_EQ(algBandwidthGBs(100, 0.0), 0.0);
}

TEST(Bandwidth, BusBwFactors) {
  EXPECT_DOUBLE_EQ(allGatherBusBwFactor(1), 0.0);
  EXPECT_DOUBLE_EQ(allGatherBusBwFactor(2), 0.5);
  EXPECT_DOUBLE_EQ(allGatherBusBwFactor(8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(sendRecvBusBwFactor(1), 1.0);
  EXPECT_DOUBLE_EQ(sendRecvBusBwFactor(16), 1.0);
}

TEST(Bandwidth, BusBwFactorsOfTheReductionAndAllToAllTools) {
  EXPECT_DOUBLE_EQ(allReduceBusBwFactor(1), 0.0);
  EXPECT_DOUBLE_EQ(allReduceBusBwFactor(2), 1.0);
  EXPECT_DOUBLE_EQ(allReduceBusBwFactor(8), 2.0 * 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(reduceScatterBusBwFactor(4), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(reduceScatterBusBwFactor(1), 0.0);
  EXPECT_DOUBLE_EQ(broadcastBusBwFactor(1), 1.0);
  EXPECT_DOUBLE_EQ(broadcastBusBwFactor(8), 1.0);
  EXPECT_DOUBLE_EQ(reduceBusBwFactor(3), 1.0);
  EXPECT_DOUBLE_EQ(allToAllBusBwFactor(2), 0.5);
  EXPECT_DOUBLE_EQ(allToAllBusBwFactor(16), 15.0 / 16.0);
}

TEST(Timing, CombinesPerRankTimes) {
  const std::vector<double> times{4.0, 1.0, 7.0, 4.0};
  EXPECT_DOUBLE_EQ(combineRankTimes(times, TimeAverage::Mean), 4.0);
  EXPECT_DOUBLE_EQ(combineRankTimes(times, TimeAverage::Rank0), 4.0);
  EXPECT_DOUBLE_EQ(combineRankTimes(times, TimeAverage::Min), 1.0);
  EXPECT_DOUBLE_EQ(combineRankTimes(times, TimeAverage::Max), 7.0);
}

TEST(Timing, MedianOfOddAndEvenCounts) {
  std::vector<double> odd{5.0, 1.0, 3.0};
  EXPECT_DOUBLE_EQ(medianOf(odd), 3.0);
  std::vector<double> even{4.0, 1.0, 10.0, 2.0};
  EXPECT_DOUBLE_EQ(medianOf(even), 3.0);
  std::vector<double> one{7.5};
  EXPECT_DOUBLE_EQ(medianOf(one), 7.5);
}

TEST(Float16, EveryHalfSurvivesARoundTrip) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float value = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value)))) << bits;
      continue;
    }
    EXPECT_EQ(floatToHalf(value), bits) << bits;
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(halfToFloat(floatToHalf(2049.0f)), 2048.0f);
  EXPECT_EQ(halfToFloat(floatToHalf(2051.0f)), 2052.0f);
  EXPECT_EQ(halfToFloat(floatToHalf(2050.0f)), 2050.0f);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -30)), 0x0000);
}

#if defined(__FLT16_MAX__)
TEST(Float16, MatchesTheCompilersFloat16) {
  std::mt19937 generator(12345);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 1000000; ++i) {
    const float value = std::bit_cast<float>(bits(generator));
    if (std::isnan(value)) continue;
    const auto reference = std::bit_cast<uint16_t>(static_cast<_Float16>(value));
    ASSERT_EQ(floatToHalf(value), reference) << value;
  }
  // Densely over the floats near half's range, where subnormals, rounding and overflow happen.
  for (uint32_t bits = 0x32000000u; bits < 0x48000000u; bits += 97) {
    for (const uint32_t sign : {0u, 0x80000000u}) {
      const float value = std::bit_cast<float>(bits | sign);
      ASSERT_EQ(floatToHalf(value), std::bit_cast<uint16_t>(static_cast<_Float16>(value))) << value;
    }
  }
}
#endif

TEST(Bfloat16, EveryBfloat16SurvivesARoundTrip) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float value = bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(value)))) << bits;
      continue;
    }
    EXPECT_EQ(floatToBfloat16(value), bits) << bits;
  }
}

TEST(Bfloat16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3F80);
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(257.0f)), 256.0f);
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(259.0f)), 260.0f);
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(258.0f)), 258.0f);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Pattern, EveryValueIsExactInItsType) {
  for (const slimecclDataType_t type : allTypes()) {
    const uint64_t period = patternPeriod(type);
    const size_t count = static_cast<size_t>(std::min<uint64_t>(period, 5000)) + 3;
    std::vector<char> buffer(count * dataTypeSize(type));
    for (const int rank : {0, 1, 5, 1000}) {
      // Start near the top of the period too, where rounding would show first.
      for (const size_t first : {size_t{0}, static_cast<size_t>(period - count / 2)}) {
        fillPattern(buffer.data(), type, count, rank, first);
        for (size_t i = 0; i < count; ++i) {
          const uint64_t value = patternValue(type, rank, first + i);
          ASSERT_LT(value, period);
          ASSERT_EQ(loadAsDouble(type, buffer.data(), i), static_cast<double>(value))
              << dataTypeName(type) << " rank " << rank << " index " << first + i;
        }
      }
    }
  }
}

TEST(Pattern, DependsOnRankAndIndex) {
  for (const slimecclDataType_t type : allTypes()) {
    EXPECT_NE(patternValue(type, 0, 0), patternValue(type, 1, 0)) << dataTypeName(type);
    EXPECT_NE(patternValue(type, 0, 0), patternValue(type, 0, 1)) << dataTypeName(type);
    EXPECT_EQ(patternValue(type, 3, 17), patternValue(type, 3, 17)) << dataTypeName(type);
  }
}

TEST(Pattern, PoisonMatchesNoPatternValue) {
  for (const slimecclDataType_t type : allTypes()) {
    const size_t size = dataTypeSize(type);
    std::vector<char> poison(size);
    fillPoison(poison.data(), type, 1);
    std::vector<char> value(size);
    const uint64_t checked = std::min<uint64_t>(patternPeriod(type), 100000);
    for (uint64_t v = 0; v < checked; ++v) {
      storeValue(type, v, value.data(), 0);
      ASSERT_NE(std::memcmp(value.data(), poison.data(), size), 0) << dataTypeName(type) << " " << v;
    }
  }
}

TEST(Pattern, CountsMismatchedElements) {
  for (const slimecclDataType_t type : allTypes()) {
    constexpr size_t kCount = 1000;
    std::vector<char> expected(kCount * dataTypeSize(type));
    std::vector<char> actual(expected.size());
    fillPattern(expected.data(), type, kCount, 2);
    fillPattern(actual.data(), type, kCount, 2);
    EXPECT_EQ(countMismatches(actual.data(), expected.data(), type, kCount), 0u);
    fillPoison(actual.data() + 10 * dataTypeSize(type), type, 5);
    storeValue(type, patternValue(type, 2, 500) + 1, actual.data(), 500);
    EXPECT_EQ(countMismatches(actual.data(), expected.data(), type, kCount), 6u) << dataTypeName(type);
    fillPattern(actual.data(), type, kCount, 3);
    EXPECT_EQ(countMismatches(actual.data(), expected.data(), type, kCount), kCount) << dataTypeName(type);
    EXPECT_EQ(countMismatches(actual.data(), expected.data(), type, 0), 0u);
  }
}

TEST(ReductionValues, ResultIsExactInEveryOrderOfReduction) {
  constexpr size_t kCount = 600;
  // Crosses the end of the value period.
  constexpr size_t kFirstIndex = kReductionValuePeriod - 250;
  for (const slimecclDataType_t type : allTypes()) {
    const size_t bytes = kCount * dataTypeSize(type);
    for (const slimecclRedOp_t op : allOps()) {
      for (const int nranks : {1, 2, 3, 5, 8, 13, 64}) {
        std::vector<std::vector<char>> inputs(static_cast<size_t>(nranks), std::vector<char>(bytes));
        for (int rank = 0; rank < nranks; ++rank) {
          fillReductionInput(inputs[static_cast<size_t>(rank)].data(), type, op, nranks, rank, kCount, kFirstIndex);
        }
        std::vector<char> expected(bytes);
        fillReductionResult(expected.data(), type, op, nranks, kCount, kFirstIndex);
        if (op != slimecclAvg) {
          // The stored result is the mathematical one: nothing overflowed or rounded.
          for (size_t i = 0; i < kCount; ++i) {
            double exact = op == slimecclProd ? 1.0 : op == slimecclMin ? std::numeric_limits<double>::max() : 0.0;
            for (int rank = 0; rank < nranks; ++rank) {
              const auto value = static_cast<double>(reductionInputValue(type, op, nranks, rank, kFirstIndex + i));
              exact = op == slimecclSum    ? exact + value
                      : op == slimecclProd ? exact * value
                      : op == slimecclMax  ? std::max(exact, value)
                                           : std::min(exact, value);
            }
            ASSERT_EQ(loadAsDouble(type, expected.data(), i), exact) << dataTypeName(type) << " " << redOpName(op);
          }
        }
        for (const ReductionOrder order :
             {ReductionOrder::Ascending, ReductionOrder::Descending, ReductionOrder::Tree}) {
          const std::vector<char> actual = referenceReduction(inputs, order, type, op, kCount);
          ASSERT_EQ(countMismatches(actual.data(), expected.data(), type, kCount), 0u)
              << dataTypeName(type) << " " << redOpName(op) << " nranks " << nranks << " order "
              << static_cast<int>(order);
        }
      }
    }
  }
}

TEST(ReductionValues, InputsAndResultsVaryWithRankAndIndex) {
  constexpr int kRanks = 4;
  constexpr size_t kCount = 1000;
  for (const slimecclDataType_t type : allTypes()) {
    for (const slimecclRedOp_t op : allOps()) {
      size_t rankDifferences = 0;
      for (size_t index = 0; index < kCount; ++index) {
        rankDifferences +=
            reductionInputValue(type, op, kRanks, 0, index) != reductionInputValue(type, op, kRanks, 1, index);
      }
      EXPECT_GT(rankDifferences, kCount / 4) << dataTypeName(type) << " " << redOpName(op);
      std::vector<char> result(kCount * dataTypeSize(type));
      fillReductionResult(result.data(), type, op, kRanks, kCount);
      std::set<double> distinct;
      for (size_t index = 0; index < kCount; ++index) distinct.insert(loadAsDouble(type, result.data(), index));
      EXPECT_GE(distinct.size(), 4u) << dataTypeName(type) << " " << redOpName(op);
    }
  }
}

TEST(ReductionValues, FillsRepeatThePeriodFromTheFirstIndex) {
  constexpr size_t kFirstIndex = 5;
  constexpr size_t kCount = 2 * kReductionValuePeriod + 17;
  std::vector<float> input(kCount);
  fillReductionInput(input.data(), slimecclFloat, slimecclSum, 4, 2, kCount, kFirstIndex);
  for (const size_t i :
       {size_t{0}, kReductionValuePeriod - 1, kReductionValuePeriod, kReductionValuePeriod + 9, kCount - 1}) {
    const uint64_t value = reductionInputValue(slimecclFloat, slimecclSum, 4, 2, kFirstIndex + i);
    EXPECT_EQ(input[i], static_cast<float>(value)) << i;
  }
  std::vector<float> result(kCount);
  fillReductionResult(result.data(), slimecclFloat, slimecclMax, 4, kCount, kFirstIndex);
  for (size_t i = 0; i + kReductionValuePeriod < kCount; i += 997) {
    EXPECT_EQ(result[i], result[i + kReductionValuePeriod]) << i;
  }
  std::vector<float> shifted(kCount - 100);
  fillReductionResult(shifted.data(), slimecclFloat, slimecclMax, 4, shifted.size(), kFirstIndex + 100);
  EXPECT_TRUE(std::equal(shifted.begin(), shifted.end(), result.begin() + 100));
}

TEST(ReductionValues, AverageOfIntegersTruncatesTheSum) {
  constexpr int kRanks = 3;
  constexpr size_t kCount = 200;
  std::vector<int32_t> sum(kCount);
  std::vector<int32_t> average(kCount);
  // avg and sum draw the same inputs.
  fillReductionResult(sum.data(), slimecclInt32, slimecclSum, kRanks, kCount);
  fillReductionResult(average.data(), slimecclInt32, slimecclAvg, kRanks, kCount);
  size_t inexact = 0;
  for (size_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(average[i], sum[i] / kRanks) << i;
    inexact += sum[i] % kRanks != 0;
  }
  EXPECT_GT(inexact, 0u);
}

TEST(Datatypes, NamesAndSizesFollowNcclTests) {
  EXPECT_EQ(parseDataTypes("all"),
            (std::vector{slimecclInt8, slimecclUint8, slimecclInt32, slimecclUint32, slimecclInt64, slimecclUint64,
                         slimecclFloat16, slimecclFloat32, slimecclFloat64, slimecclBfloat16}));
  EXPECT_STREQ(dataTypeName(slimecclFloat16), "half");
  EXPECT_STREQ(dataTypeName(slimecclBfloat16), "bfloat16");
  EXPECT_EQ(dataTypeSize(slimecclFloat64), 8u);
  EXPECT_EQ(dataTypeSize(slimecclBfloat16), 2u);
  EXPECT_STREQ(redOpName(slimecclAvg), "avg");
  EXPECT_EQ(parseRedOps("prod"), std::vector{slimecclProd});
}

TEST(ElementCounts, InPlaceExtentAndRowBytes) {
  // AllGather of 3 elements per rank over 4 ranks.
  const ElementCounts allGather{.send = 3, .recv = 12, .param = 3, .sendInPlaceOffset = 3, .recvInPlaceOffset = 0};
  EXPECT_EQ(inPlaceExtent(allGather, 0), 12u);
  EXPECT_EQ(inPlaceExtent(allGather, 3), 12u);
  EXPECT_EQ(rowBytes(allGather, 4), 48u);
  // ReduceScatter shape: the result sits at the rank's block of the send data.
  const ElementCounts reduceScatter{.send = 8, .recv = 2, .param = 2, .sendInPlaceOffset = 0, .recvInPlaceOffset = 2};
  EXPECT_EQ(inPlaceExtent(reduceScatter, 3), 8u);
  EXPECT_EQ(rowBytes(reduceScatter, 2), 16u);
}

TEST(ProcessEnv, LoneProcessWithoutVariables) {
  const ProcessPlacement placement = discoverProcessPlacement(fakeEnvironment({}));
  EXPECT_EQ(placement.rank, 0);
  EXPECT_EQ(placement.count, 1);
  EXPECT_TRUE(placement.source.empty());
  EXPECT_NO_THROW(requireBootstrapAddress(placement, fakeEnvironment({})));
}

TEST(ProcessEnv, ReadsEachLauncherInOrder) {
  const ProcessPlacement ompi = discoverProcessPlacement(fakeEnvironment(
      {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "9"}}));
  EXPECT_EQ(ompi.rank, 2);
  EXPECT_EQ(ompi.count, 4);
  EXPECT_EQ(ompi.source, "OMPI_COMM_WORLD_RANK");
  const ProcessPlacement own = discoverProcessPlacement(fakeEnvironment({{"SLIMECCL_RANK", "1"},
                                                                         {"SLIMECCL_NRANKS", "2"},
                                                                         {"OMPI_COMM_WORLD_RANK", "3"},
                                                                         {"OMPI_COMM_WORLD_SIZE", "4"}}));
  EXPECT_EQ(own.rank, 1);
  EXPECT_EQ(own.count, 2);
  const ProcessPlacement pmi = discoverProcessPlacement(fakeEnvironment({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}));
  EXPECT_EQ(pmi.count, 3);
  const ProcessPlacement slurm =
      discoverProcessPlacement(fakeEnvironment({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}}));
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.source, "SLURM_PROCID");
}

TEST(ProcessEnv, RejectsIncompleteOrInconsistentVariables) {
  EXPECT_THROW(discoverProcessPlacement(fakeEnvironment({{"PMI_RANK", "0"}})), UsageError);
  EXPECT_THROW(discoverProcessPlacement(fakeEnvironment({{"PMI_RANK", "3"}, {"PMI_SIZE", "3"}})), UsageError);
  EXPECT_THROW(discoverProcessPlacement(fakeEnvironment({{"PMI_RANK", "x"}, {"PMI_SIZE", "3"}})), UsageError);
  EXPECT_THROW(discoverProcessPlacement(fakeEnvironment({{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}})), UsageError);
}

TEST(ProcessEnv, SeveralProcessesNeedTheBootstrapAddress) {
  const ProcessPlacement placement{1, 2, "SLIMECCL_RANK"};
  EXPECT_THROW(requireBootstrapAddress(placement, fakeEnvironment({})), UsageError);
  EXPECT_THROW(requireBootstrapAddress(placement, fakeEnvironment({{"SLIMECCL_COMM_ID", ""}})), UsageError);
  EXPECT_NO_THROW(requireBootstrapAddress(placement, fakeEnvironment({{"SLIMECCL_COMM_ID", "node0:29500"}})));
  try {
    requireBootstrapAddress(placement, fakeEnvironment({}));
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("SLIMECCL_COMM_ID=host:port"), std::string::npos);
  }
}

TEST(ProcessEnv, GlobalRankIsProcessMajor) {
  EXPECT_EQ(globalRank(0, 1, 0), 0);
  EXPECT_EQ(globalRank(2, 4, 1), 9);
}

TEST(Report, ColumnHeaderIsNcclTests) {
  EXPECT_EQ(formatColumnHeader(),
            "#\n"
            "#                                                              out-of-place                       "
            "in-place          \n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
            "  busbw #wrong\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
            "  (GB/s)       \n");
}

TEST(Report, RowMatchesNcclTestsLayout) {
  const Measurement outOfPlace{.seconds = 1211.2e-6, .algBw = 110.81, .busBw = 110.81, .wrongElements = 0};
  const Measurement inPlace{.seconds = 1211.8e-6, .algBw = 110.76, .busBw = 110.76, .wrongElements = std::nullopt};
  EXPECT_EQ(formatRowStart(134217728, 33554432, "float", "none", -1) + formatMeasurement(outOfPlace) +
                formatMeasurement(inPlace),
            "   134217728      33554432     float    none      -1   1211.2  110.81  110.81      0   1211.8  110.76  "
            "110.76    N/A");
}

TEST(Report, TimePrecisionShrinksAsTimeGrows) {
  EXPECT_EQ(formatTime(12.345), "  12.35");
  EXPECT_EQ(formatTime(123.45), "  123.5");
  EXPECT_EQ(formatTime(12345.6), "  12346");
}

TEST(Report, SettingsLine) {
  Options options;
  options.minBytes = 8;
  options.maxBytes = 1024;
  options.stepFactor = 2;
  EXPECT_EQ(formatSettings(options, ""),
            "# nThread 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n#\n");
  options.stepFactor = 1;
  options.blocking = true;
  options.sharedBuffers = true;
  const std::string text = formatSettings(options, "allgather:ring");
  EXPECT_NE(text.find("step: 1048576(bytes)"), std::string::npos);
  EXPECT_NE(text.find("# Blocking Enabled"), std::string::npos);
  EXPECT_NE(text.find("# Shared buffers"), std::string::npos);
  EXPECT_NE(text.find("SLIMECCL_ALGO=allgather:ring"), std::string::npos);
}

TEST(Report, ComparisonNamesOneTimeColumnPerAlgorithm) {
  const std::vector<std::string> names{"ring", "scatter_ag", "default"};
  const std::string header = formatComparisonHeader(names, 7);
  EXPECT_NE(header.find("median of 7 rounds"), std::string::npos);
  EXPECT_NE(header.find("root        ring  scatter_ag     default  #wrong\n"), std::string::npos) << header;
  const std::vector<double> seconds{12.5e-6, 1.5e-3, 0.02};
  EXPECT_EQ(formatComparisonTimes(seconds, 0), "       12.50      1500.0       20000       0\n");
  EXPECT_EQ(formatComparisonTimes(seconds, std::nullopt), "       12.50      1500.0       20000     N/A\n");
  EXPECT_EQ(formatComparisonTimes(seconds, 3).substr(36), "       3\n");
}

TEST(Report, DevicesNumberRanksWithinTheirHost) {
  const std::vector<RankDescription> ranks{{0, 100, "nodeA"}, {1, 101, "nodeA"}, {2, 200, "nodeB"}};
  EXPECT_EQ(formatDevices(ranks),
            "# Using devices\n"
            "#  Rank  0 Group  0 Pid    100 on      nodeA device  0 [host] CPU\n"
            "#  Rank  1 Group  0 Pid    101 on      nodeA device  1 [host] CPU\n"
            "#  Rank  2 Group  0 Pid    200 on      nodeB device  0 [host] CPU\n");
}

TEST(Report, Footer) {
  EXPECT_EQ(formatFooter(0, 12.5), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5\n#\n");
  EXPECT_EQ(formatFooter(3, 0.25), "# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 0.25\n#\n");
}

TEST(HostBuffer, IsPageAlignedAndZeroed) {
  const HostBuffer buffer(10000);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 4096, 0u);
  EXPECT_EQ(buffer.size(), 10000u);
  for (size_t i = 0; i < buffer.size(); ++i) ASSERT_EQ(buffer.data()[i], 0);
  EXPECT_NE(HostBuffer(0).data(), nullptr);
}

TEST(HostBuffer, SharedBuffersComeFromSlimecclMemAlloc) {
  HostBuffer buffer(10000, true);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 4096, 0u);
  for (size_t i = 0; i < buffer.size(); ++i) ASSERT_EQ(buffer.data()[i], 0);
  // Only a live allocation of slimecclMemAlloc can be freed: a second free of the same pointer fails.
  char* memory = buffer.data();
  buffer = HostBuffer();
  EXPECT_EQ(slimecclMemFree(memory), slimecclInvalidArgument);
}

}  // namespace

TEST(GemmOptions, ShapesAreMLocalByKByN) {
  const std::vector<GemmShape> shapes = parseShapes("64x1024x4096,1x3x5");
  ASSERT_EQ(2u, shapes.size());
  EXPECT_EQ(64u, shapes[0].mLocal);
  EXPECT_EQ(1024u, shapes[0].k);
  EXPECT_EQ(4096u, shapes[0].n);
  EXPECT_EQ(1u, shapes[1].mLocal);
  EXPECT_EQ(3u, shapes[1].k);
  EXPECT_EQ(5u, shapes[1].n);
}

TEST(GemmOptions, FlagsAndRefusals) {
  const std::vector<const char*> args = {"-s", "8x16x32", "-d", "double", "-n", "3",
                                         "-w", "0",       "-c", "0",      "-A", "ring"};
  const GemmOptions options = parseGemmOptions(args);
  EXPECT_EQ(1u, options.shapes.size());
  EXPECT_EQ(slimecclDouble, options.type);
  EXPECT_EQ(3, options.iters);
  EXPECT_EQ(0, options.warmupIters);
  EXPECT_EQ(0, options.check);
  EXPECT_EQ("ring", options.algo);
  for (const char* bad : {"8x16", "0x16x32", "8x16x", "ax1x1", ""}) EXPECT_THROW(parseShapes(bad), UsageError) << bad;
  const std::vector<std::vector<const char*>> badArgs = {{"-d", "half"}, {"-x", "1"}, {"-n"}, {"-n", "0"}, {"extra"}};
  for (const auto& bad : badArgs) EXPECT_THROW(parseGemmOptions(bad), UsageError) << bad.front();
}

TEST(GemmOptions, DeviceBuffersTakeTheTensorParallelShapesInBfloat16) {
  const std::vector<const char*> args = {"-D", "1", "-g", "2", "-B", "/lib/libnccl.so.2"};
  const GemmOptions options = parseGemmOptions(args);
  EXPECT_TRUE(options.deviceBuffers);
  EXPECT_EQ(2, options.threads);
  EXPECT_EQ("/lib/libnccl.so.2", options.ncclLibrary);
  EXPECT_EQ(slimecclBfloat16, options.type);
  ASSERT_EQ(4u, options.shapes.size());
  EXPECT_EQ(16384u, options.shapes[3].mLocal);
  EXPECT_EQ(8192u, options.shapes[3].k);
  EXPECT_EQ(3584u, options.shapes[3].n);
  const std::vector<const char*> given = {"-D", "1", "-d", "half", "-s", "8x16x32"};
  const GemmOptions chosen = parseGemmOptions(given);
  EXPECT_EQ(slimecclFloat16, chosen.type);
  ASSERT_EQ(1u, chosen.shapes.size());
  EXPECT_EQ(8u, chosen.shapes[0].mLocal);
}

}  // namespace slimeccl_perf
