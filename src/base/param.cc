#include "src/base/param.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "src/base/log.h"
#include "src/base/sys/cache_size.h"

namespace slimeccl {

namespace {

const char* nonEmptyEnv(const char* name) {
  const char* text = getenv(name);
  return (text == nullptr || *text == '\0') ? nullptr : text;
}

GpuScope gpuScopeFromEnv(const char* name) {
  const std::string text = envString(name, "gpu");
  if (text == "gpu") return GpuScope::Gpu;
  if (text == "all") return GpuScope::All;
  if (text == "off") return GpuScope::Off;
  SLIMECCL_WARN(kLogInit, -1, "{}='{}' is not gpu, all or off; using gpu", name, text);
  return GpuScope::Gpu;
}

}  // namespace

int64_t envInt(const char* name, int64_t fallback, int64_t min, int64_t max) {
  const char* text = nonEmptyEnv(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  errno = 0;
  long long value = strtoll(text, &end, 0);
  if (end == text || *end != '\0') {
    SLIMECCL_WARN(kLogInit, -1, "{}='{}' is not an integer; using {}", name, text, fallback);
    return fallback;
  }
  if (errno == ERANGE || value < min || value > max) {
    int64_t clamped = (errno == ERANGE ? (value < 0 ? min : max) : (value < min ? min : max));
    SLIMECCL_WARN(kLogInit, -1, "{}='{}' is outside {}..{}; using {}", name, text, min, max, clamped);
    return clamped;
  }
  return value;
}

size_t envBytes(const char* name, size_t fallback, size_t min, size_t max) {
  const char* text = nonEmptyEnv(name);
  if (text == nullptr) return fallback;
  const char* digits = text;
  while (isspace(static_cast<unsigned char>(*digits))) ++digits;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = strtoull(digits, &end, 0);
  // strtoull accepts "-1" as the largest value: a negative size is a mistake, not "unlimited".
  bool parsed = *digits != '-' && end != digits;
  bool tooLarge = errno == ERANGE;
  if (parsed) {
    int shift = 0;
    switch (*end) {
      case 'k':
      case 'K':
        shift = 10;
        ++end;
        break;
      case 'm':
      case 'M':
        shift = 20;
        ++end;
        break;
      case 'g':
      case 'G':
        shift = 30;
        ++end;
        break;
      default: break;
    }
    if (shift != 0 && value > (ULLONG_MAX >> shift)) tooLarge = true;
    if (!tooLarge) value <<= shift;
    parsed = *end == '\0';
  }
  if (!parsed) {
    SLIMECCL_WARN(kLogInit, -1, "{}='{}' is not a byte count (digits, then K, M or G); using {}", name, text, fallback);
    return fallback;
  }
  if (tooLarge || value > max || value < min) {
    size_t clamped = (tooLarge || value > max) ? max : min;
    SLIMECCL_WARN(kLogInit, -1, "{}='{}' is outside {}..{} bytes; using {}", name, text, min, max, clamped);
    return clamped;
  }
  return static_cast<size_t>(value);
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
  p.chunkBytes = envBytes("SLIMECCL_CHUNK_BYTES", 0, 0, kMaxChunkBytes);
  if (p.chunkBytes != 0 && p.chunkBytes < 4096) p.chunkBytes = 4096;
  p.algo = envString("SLIMECCL_ALGO");
  // -1: chosen when the communicator knows how many ranks share this host (chooseIdlePolicy).
  p.spinIterations = static_cast<int>(envInt("SLIMECCL_SPIN", -1, -1, kMaxIdleIterations));
  p.yieldIterations = static_cast<int>(envInt("SLIMECCL_YIELD", -1, -1, kMaxIdleIterations));
  p.sharedSlots = envInt("SLIMECCL_SHARED_SLOTS", 1) != 0;
  p.gpuDirect = envInt("SLIMECCL_GPU_DIRECT", 1) != 0;
  p.p2pDisable = envInt("SLIMECCL_P2P_DISABLE", 0) != 0;
  if (!envString("SLIMECCL_RELAY_SLOT_BYTES").empty())
    p.relaySlotBytes =
        envBytes("SLIMECCL_RELAY_SLOT_BYTES", kMinRelaySlotBytes, kMinRelaySlotBytes, kMaxRelaySlotBytes) /
        kMinRelaySlotBytes * kMinRelaySlotBytes;
  if (!envString("SLIMECCL_GPU_SM_COPY_BYTES").empty()) p.smCopyBytes = envBytes("SLIMECCL_GPU_SM_COPY_BYTES", 0);
  if (!envString("SLIMECCL_GPU_LINE_BYTES").empty()) p.lineBytes = envBytes("SLIMECCL_GPU_LINE_BYTES", 0);
  p.smCopyBlocks = static_cast<int>(envInt("SLIMECCL_GPU_SM_COPY_BLOCKS", kDefaultSmCopyBlocks, 1, kMaxSmCopyBlocks));
  p.localCopyPieceBytes = envBytes("SLIMECCL_GPU_LOCAL_COPY_PIECE_BYTES", kDefaultLocalCopyPieceBytes);
  if (!envString("SLIMECCL_MAX_CTAS").empty())
    p.maxCtas = static_cast<int>(envInt("SLIMECCL_MAX_CTAS", kDefaultSmCopyBlocks, 1, kMaxSmCopyBlocks));
  p.gpuReduceAlgo = envString("SLIMECCL_GPU_REDUCE_ALGO");
  p.gpuBroadcastAlgo = envString("SLIMECCL_GPU_BROADCAST_ALGO");
  p.gemmTf32 = envInt("SLIMECCL_GEMM_TF32", 0) != 0;
  p.gemmRsPieceBytes = envBytes("SLIMECCL_GEMM_RS_PIECE_BYTES", kDefaultGemmRsPieceBytes);
  p.stagingChunks = gpuScopeFromEnv("SLIMECCL_STAGING_CHUNKS");
  p.hostTiers = gpuScopeFromEnv("SLIMECCL_HOST_TIERS");
  p.gdr = envString("SLIMECCL_GDR", "auto");
  p.gdrLevel = envString("SLIMECCL_GDR_LEVEL", "PXB");
  p.stagingChunkBytes =
      envBytes("SLIMECCL_STAGING_CHUNK_BYTES", kDefaultStagingChunkBytes, kMinStagingChunkBytes, kMaxChunkBytes);
  p.streamCopyBytes = envBytes("SLIMECCL_STREAM_COPY_BYTES", lastLevelCacheBytes(kStreamCopyFallbackBytes));
  return p;
}

}  // namespace slimeccl
