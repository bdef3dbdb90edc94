// SLIMECCL_* parameters. A communicator takes one snapshot when it is created (so a process can
// run communicators with different settings); process-wide ones are read once on first use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "algorithms/tuner.h"

namespace slimeccl {

struct CommParams {
  int64_t timeoutMs;        // SLIMECCL_TIMEOUT_MS: every wait of init and ops; <= 0: none
  std::string net;          // SLIMECCL_NET: force one net module for every peer ("" = by topology)
  std::string netPlugin;    // SLIMECCL_NET_PLUGIN: external module for peers on other hosts
  size_t chunkBytes;        // SLIMECCL_CHUNK_BYTES: pipelining unit of the executor (0: the tuner's)
  std::string algo;         // SLIMECCL_ALGO: per-collective algorithm overrides
  int spinIterations;       // SLIMECCL_SPIN: idle polls before yielding (-1: by chooseIdlePolicy)
  int yieldIterations;      // SLIMECCL_YIELD: yields before blocking (-1: by chooseIdlePolicy)
  bool sharedSlots;         // SLIMECCL_SHARED_SLOTS: tiny collectives of one-host comms use shared slots
  size_t streamCopyBytes;   // SLIMECCL_STREAM_COPY_BYTES: see kStreamCopyFallbackBytes (0: never)
  bool gpuDirect;           // SLIMECCL_GPU_DIRECT: device buffers GPU to GPU where the GPUs reach each other
  size_t smCopyBytes;       // SLIMECCL_GPU_SM_COPY_BYTES: GPU-to-GPU ops no larger go by one kernel
  int smCopyBlocks;         // SLIMECCL_GPU_SM_COPY_BLOCKS: the most blocks of threads (SMs) that kernel takes
  int maxCtas;              // SLIMECCL_MAX_CTAS or the config's maxCTAs: the most blocks any GPU kernel takes
  std::string gpuReduceAlgo;  // SLIMECCL_GPU_REDUCE_ALGO: force a GPU reduction algorithm ("": the tuner's)
  bool gemmTf32;             // SLIMECCL_GEMM_TF32: float AllGatherGemms on device buffers may use TF32

  static CommParams fromEnv();
};

// Unset or empty: fallback. Not a number: fallback, with a warning. Outside [min, max]: the nearer
// bound, with a warning, so that no setting can wrap a size or a count computed from it.
int64_t envInt(const char* name, int64_t fallback, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
// A byte count with an optional suffix K, M or G (powers of 1024). A negative value is not a
// number here: strtoull would read "-1" as the largest size.
size_t envBytes(const char* name, size_t fallback, size_t min = 0, size_t max = SIZE_MAX);
std::string envString(const char* name, const char* fallback = "");

constexpr int64_t kDefaultTimeoutMs = 300000;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;
constexpr int64_t kMaxIdleIterations = 1000000000;
// An op whose ranks on this host write together at least SLIMECCL_STREAM_COPY_BYTES (default: the
// last-level cache, else this) copies into receive buffers with streaming stores: its data no
// longer fits the cache, so passing it through the cache only adds memory traffic.
constexpr size_t kStreamCopyFallbackBytes = size_t{32} << 20;
// GPU-to-GPU ops of at most this many bytes (an AllGather's output, an AlltoAll's send buffer, a
// Broadcast's buffer, a message) go by one kernel (src/device/sm_copy.h) of at most
// kDefaultSmCopyBlocks blocks: a copy engine's fixed start and the host calls around it outweigh
// what the kernel's blocks take. Larger ones go by copy engine and take no SMs.
// Measured on 2x H200 with 32 blocks: the kernel leads up to 8 MiB; from 16 MiB copy engines do.
constexpr size_t kDefaultSmCopyBytes = size_t{8} << 20;
constexpr int kDefaultSmCopyBlocks = 32;
constexpr int kMaxSmCopyBlocks = 1024;
// The most blocks of threads one kernel of the GPU path takes unless the config or SLIMECCL_MAX_CTAS
// says otherwise (NCCL's maxCTAs). The reduction kernels take one block per 16 KiB of the span they
// reduce, so only spans past 1 MiB reach it (a two-shot AllReduce's span is 1/N of the vector); on 2x H100, 64 blocks ran 1 GiB AllReduces 3% faster
// than 32 (docs/performance.md). The copy kernel stays within SLIMECCL_GPU_SM_COPY_BLOCKS.
constexpr int kDefaultMaxCtas = 64;

}  // namespace slimeccl
