#include "src/param.h"

#include <cstdlib>
#include <cstring>

#include "src/sys/cache_size.h"

namespace slimeccl {

int64_t envInt(const char* name, int64_t fallback) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  long long value = strtoll(text, &end, 0);
  return (end != nullptr && *end == '\0') ? value : fallback;
}

size_t envBytes(const char* name, size_t fallback) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  unsigned long long value = strtoull(text, &end, 0);
  if (end == text) return fallback;
  switch (*end) {
    case 'k': case 'K': value <<= 10; ++end; break;
    case 'm': case 'M': value <<= 20; ++end; break;
    case 'g': case 'G': value <<= 30; ++end; break;
    default: break;
  }
  return *end == '\0' ? value : fallback;
}

std::string envString(const char* name, const char* fallback) {
  const char* text = getenv(name);
  return text != nullptr ? std::string(text) : std::string(fallback);
}

CommParams CommParams::fromEnv() {
  CommParams p;
  p.timeoutMs = envInt("SLIMECCL_TIMEOUT_MS", kDefaultTimeoutMs);
  p.net = envString("SLIMECCL_NET");
  p.netPlugin = envString("SLIMECCL_NET_PLUGIN");
  p.chunkBytes = envBytes("SLIMECCL_CHUNK_BYTES", 0);
  if (p.chunkBytes != 0 && p.chunkBytes < 4096) p.chunkBytes = 4096;
  p.algo = envString("SLIMECCL_ALGO");
  // -1: chosen when the communicator knows how many ranks share this host (chooseIdlePolicy).
  p.spinIterations = static_cast<int>(envInt("SLIMECCL_SPIN", -1));
  p.yieldIterations = static_cast<int>(envInt("SLIMECCL_YIELD", -1));
  p.sharedSlots = envInt("SLIMECCL_SHARED_SLOTS", 1) != 0;
  p.streamCopyBytes = envBytes("SLIMECCL_STREAM_COPY_BYTES", lastLevelCacheBytes(kStreamCopyFallbackBytes));
  return p;
}

}  // namespace slimeccl
