#include "src/base/sys/cache_size.h"

#include <cstdio>
#include <string>

namespace slimeccl {
namespace {

// "32768K" -> 33554432; 0 when unreadable.
size_t readCacheSize(const std::string& path) {
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  unsigned long long value = 0;
  char unit = '\0';
  int fields = fscanf(f, "%llu%c", &value, &unit);
  fclose(f);
  if (fields < 1) return 0;
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  return static_cast<size_t>(value);
}

size_t largestCacheOfCpu0() {
  size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    size_t bytes = readCacheSize("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    if (bytes > largest) largest = bytes;
  }
  return largest;
}

}  // namespace

size_t lastLevelCacheBytes(size_t fallback) {
  static const size_t bytes = largestCacheOfCpu0();
  return bytes != 0 ? bytes : fallback;
}

}  // namespace slimeccl
