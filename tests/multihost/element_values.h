// Element values that depend on (seed, source, index) through a hash, so that a block landing at
// the wrong offset, from the wrong source or left over from an earlier call fails the check.
// Every value is an integer the datatype holds exactly, so comparing with == is sound.
#pragma once

#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

namespace multihost {

template <typename T>
struct DatatypeOf;
template <>
struct DatatypeOf<int8_t> {
  static constexpr slimecclDataType_t kValue = slimecclInt8;
  static constexpr const char* kName = "int8";
};
template <>
struct DatatypeOf<float> {
  static constexpr slimecclDataType_t kValue = slimecclFloat;
  static constexpr const char* kName = "float";
};
template <>
struct DatatypeOf<double> {
  static constexpr slimecclDataType_t kValue = slimecclDouble;
  static constexpr const char* kName = "double";
};

// splitmix64 of the three inputs.
inline uint64_t mix(uint64_t seed, uint64_t source, uint64_t index) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (source + 1) * 0xC2B2AE3D27D4EB4Full ^ index;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <typename T>
T elementValue(uint64_t seed, uint64_t source, size_t index) {
  uint64_t h = mix(seed, source, index);
  if constexpr (std::is_same_v<T, int8_t>)
    return static_cast<int8_t>(h & 0xFF);
  else if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(h & ((1u << 24) - 1));
  else
    return static_cast<double>(h & ((1ull << 53) - 1));
}

// A value guaranteed to differ from `expected`: receive buffers start with it, so an element
// the library never wrote cannot pass for a received one.
template <typename T>
T unwrittenMarker(T expected) {
  return static_cast<T>(expected + 1);
}

template <typename T>
void fillValues(T* data, size_t count, uint64_t seed, uint64_t source) {
  for (size_t i = 0; i < count; ++i) data[i] = elementValue<T>(seed, source, i);
}

template <typename T>
void fillUnwritten(T* data, size_t count, uint64_t seed, uint64_t source) {
  for (size_t i = 0; i < count; ++i) data[i] = unwrittenMarker(elementValue<T>(seed, source, i));
}

// Empty when data holds the values of (seed, source); otherwise names the first wrong element.
template <typename T>
std::string firstMismatch(const T* data, size_t count, uint64_t seed, uint64_t source) {
  for (size_t i = 0; i < count; ++i) {
    T expected = elementValue<T>(seed, source, i);
    if (data[i] == expected) continue;
    std::ostringstream out;
    out << "element " << i << " of " << count << " is " << +data[i] << ", expected " << +expected;
    if (data[i] == unwrittenMarker(expected)) out << " (never written)";
    return out.str();
  }
  return {};
}

}  // namespace multihost
