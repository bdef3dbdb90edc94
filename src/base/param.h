// SLIMECCL_* parameters. A communicator takes one snapshot when it is created (so a process can
// run communicators with different settings); process-wide ones are read once on first use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace slimeccl {

// Which comms a mechanism for ranks with GPUs serves: those where a rank uses a GPU, every comm
// (for tests and debugging), or none. Each rank says at init; a comm takes it where some rank
// wants it and none refuses.
enum class GpuScope { Off, Gpu, All };

struct CommParams {
  int64_t timeoutMs;       // SLIMECCL_TIMEOUT_MS: every wait of init and ops; <= 0: none
  std::string net;         // SLIMECCL_NET: force one net module for every peer ("" = by topology)
  std::string netPlugin;   // SLIMECCL_NET_PLUGIN: external module for peers on other hosts
  size_t chunkBytes;       // SLIMECCL_CHUNK_BYTES: pipelining unit of the executor (0: the tuner's)
  std::string algo;        // SLIMECCL_ALGO: per-collective algorithm overrides
  int spinIterations;      // SLIMECCL_SPIN: idle polls before yielding (-1: by chooseIdlePolicy)
  int yieldIterations;     // SLIMECCL_YIELD: yields before blocking (-1: by chooseIdlePolicy)
  bool sharedSlots;        // SLIMECCL_SHARED_SLOTS: tiny collectives of one-host comms use shared slots
  size_t streamCopyBytes;  // SLIMECCL_STREAM_COPY_BYTES: see kStreamCopyFallbackBytes (0: never)
  bool gpuDirect;          // SLIMECCL_GPU_DIRECT: device buffers GPU to GPU where the GPUs reach each other
  // SLIMECCL_P2P_DISABLE: the GPU path moves device buffers through host relays, never through peer
  // mappings, as it does where some pair of GPUs cannot reach each other
  bool p2pDisable;
  // SLIMECCL_RELAY_SLOT_BYTES: the bytes of one slot of a host relay (src/device/host_relay.h; unset:
  // by the rank count, algorithms/relay_plan.h); rank 0's counts
  std::optional<size_t> relaySlotBytes;
  // SLIMECCL_GPU_SM_COPY_BYTES: GPU-to-GPU ops no larger go by one kernel (unset: per op, the
  // tuner's, algorithms/gpu_tuning.h)
  std::optional<size_t> smCopyBytes;
  // SLIMECCL_GPU_LINE_BYTES: GPU-to-GPU ops no larger go by flagged lines (0: none; unset: per op,
  // the tuner's); rank 0's counts
  std::optional<size_t> lineBytes;
  int smCopyBlocks;  // SLIMECCL_GPU_SM_COPY_BLOCKS: the most blocks of threads (SMs) that kernel takes
  // SLIMECCL_GPU_LOCAL_COPY_PIECE_BYTES: a copy within one GPU goes as pieces no larger (0: whole)
  size_t localCopyPieceBytes;
  // SLIMECCL_MAX_CTAS or the config's maxCTAs: the most blocks any GPU kernel takes (unset: the
  // reduction kernels take the tuner's count, the copy kernel SLIMECCL_GPU_SM_COPY_BLOCKS)
  std::optional<int> maxCtas;
  std::string gpuReduceAlgo;     // SLIMECCL_GPU_REDUCE_ALGO: force a GPU reduction algorithm ("": the tuner's)
  std::string gpuBroadcastAlgo;  // SLIMECCL_GPU_BROADCAST_ALGO: force a GPU Broadcast algorithm ("": the tuner's)
  bool gemmTf32;                 // SLIMECCL_GEMM_TF32: float AllGatherGemms on device buffers may use TF32
  // SLIMECCL_GEMM_RS_PIECE_BYTES: the most bytes of C one GemmReduceScatter piece on device buffers
  // covers (src/overlap/device_reducescatter_overlap.h)
  size_t gemmRsPieceBytes;
  // SLIMECCL_STAGING_CHUNKS: gpu (comms where a rank uses a GPU), all, or off
  GpuScope stagingChunks;
  size_t stagingChunkBytes;  // SLIMECCL_STAGING_CHUNK_BYTES: the most bytes of one buffer of a chunk
  // SLIMECCL_HOST_TIERS: which comms across hosts run AllGather in two tiers (src/exec/host_tiers.h)
  GpuScope hostTiers;
  // SLIMECCL_GDR (auto, on, off) and SLIMECCL_GDR_LEVEL (the farthest PCI path auto accepts):
  // whether device buffers cross hosts by GPUDirect RDMA (src/device/rdma_choice.h reads them)
  std::string gdr;
  std::string gdrLevel;

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
// A host relay's slot (the most bytes one copy between a GPU and the relay moves) lies on whole
// pages, so that every chunk of a reduction lies on 16-byte words.
constexpr size_t kMinRelaySlotBytes = 4096;
constexpr size_t kMaxRelaySlotBytes = size_t{64} << 20;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;
constexpr int64_t kMaxIdleIterations = 1000000000;
// An op whose ranks on this host write together at least SLIMECCL_STREAM_COPY_BYTES (default: the
// last-level cache, else this) copies into receive buffers with streaming stores: its data no
// longer fits the cache, so passing it through the cache only adds memory traffic.
constexpr size_t kStreamCopyFallbackBytes = size_t{32} << 20;
// The copy kernel of GPU-to-GPU ops (src/device/sm_copy.h) takes at most this many blocks: on 2
// and 4 H200s 64 blocks copied 16-64 MiB AllGathers 5-10% faster than 32, and 128 no faster
// (docs/performance.md). Which ops it runs is the tuner's (algorithms/gpu_tuning.h).
constexpr int kDefaultSmCopyBlocks = 64;
// A copy within one GPU (an out-of-place AllGather's own block) goes as pieces no larger: on 2
// H200s a cuBLAS GEMM beside 1 GiB out-of-place AllGathers slowed by 20-23% with each copy whole
// and by 8-10% in pieces, timed alike, and the pieces took as long alone (docs/performance.md,
// "Beside a GEMM").
constexpr size_t kDefaultLocalCopyPieceBytes = size_t{64} << 20;
// A GemmReduceScatter on device buffers reduces each rank's block of C in pieces no larger (at most 8
// per block), so that the last piece's Reduce, which no GEMM hides, is short: on 2 H200s 8 MiB made
// 4096 x 14336 x 8192 1.12x PyTorch's fused op where whole blocks made it 1.03x (2 and 4 MiB gave
// the same 8 pieces; docs/overlap.md).
constexpr size_t kDefaultGemmRsPieceBytes = size_t{8} << 20;
// Chunks of staged ops: at least this large, so that a Send/Recv posted straight to its link
// (8 KiB at most) is never cut on one rank and whole on the other.
constexpr size_t kMinStagingChunkBytes = 64 * 1024;
constexpr size_t kDefaultStagingChunkBytes = 4 << 20;
constexpr int kMaxSmCopyBlocks = 1024;

}  // namespace slimeccl
