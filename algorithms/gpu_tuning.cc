#include "algorithms/gpu_tuning.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "algorithms/byte_sizes.h"

namespace slimeccl {
namespace {

// Where no row matches (a collective the GPU path does not run).
constexpr size_t kFallbackCopyKernelBytes = 8 * kMiB;
constexpr int kFallbackReductionBlocks = 64;
// Up to this many bytes read from peers, one-shot (measured in docs/performance.md).
constexpr size_t kOneShotPeerBytes = size_t{512} << 10;

GpuChoiceRow copyKernel(Coll coll, int minRanks, int maxRanks, size_t bytes) {
  return {GpuChoice::CopyKernelBytes, coll, minRanks, maxRanks, 0, SIZE_MAX, bytes};
}

GpuChoiceRow lines(Coll coll, int minRanks, int maxRanks, size_t bytes) {
  return {GpuChoice::LineBytes, coll, minRanks, maxRanks, 0, SIZE_MAX, bytes};
}

GpuChoiceRow algorithm(Coll coll, int minRanks, int maxRanks, size_t minBytes, size_t maxBytes, GpuReductionAlgo algo) {
  return {GpuChoice::ReductionAlgorithm, coll, minRanks, maxRanks, minBytes, maxBytes, static_cast<size_t>(algo)};
}

GpuChoiceRow blocks(Coll coll, int minRanks, int maxRanks, size_t minBytes, size_t maxBytes, int count) {
  return {GpuChoice::ReductionBlocks, coll, minRanks, maxRanks, minBytes, maxBytes, static_cast<size_t>(count)};
}

GpuChoiceRow broadcast(int minRanks, int maxRanks, size_t minBytes, GpuBroadcastAlgo algo) {
  return {GpuChoice::BroadcastAlgorithm, Coll::Broadcast, minRanks, maxRanks, minBytes, SIZE_MAX,
          static_cast<size_t>(algo)};
}

// The measurements behind each row: docs/performance.md, "The GPU path's choices".
std::vector<GpuChoiceRow> measuredRows() {
  return {
      // The kernel's blocks start at once where copy engines start one after another; past these
      // sizes the copy engines' bandwidth wins.
      copyKernel(Coll::AllGather, 1, INT_MAX, 64 * kMiB),
      copyKernel(Coll::AlltoAll, 1, INT_MAX, 64 * kMiB),
      // On 2 GPUs the kernel's one pass also writes the root's own output, where copy engines run
      // that copy beside the peer's and lose to the kernel up to 32 MiB.
      copyKernel(Coll::Broadcast, 1, 2, 32 * kMiB),
      // On 3 or more GPUs (where the root's copies run only when forced: the Broadcast row below) past
      // 8 MiB the copy engines beat the kernel, whose root writes the whole buffer to every peer.
      copyKernel(Coll::Broadcast, 3, INT_MAX, 8 * kMiB),
      copyKernel(Coll::Send, 1, INT_MAX, 16 * kMiB),
      // On 3 or more GPUs each non-root rank's kernel pulling its share from the root beats both the
      // root's kernel (whose links carry the buffer once per peer) and the copy engines' relay at every
      // size past flagged lines; with fewer blocks past 8 MiB, the root's links are read faster.
      broadcast(3, INT_MAX, 0, GpuBroadcastAlgo::Pull),
      // On 2 GPUs the copy engines' all-gather half outruns the kernel's stores from 256 MiB; on 4,
      // two-shot-sm (the default past one-shot) wins at every size, and the ring nowhere on NVSwitch.
      algorithm(Coll::AllReduce, 1, 2, 256 * kMiB, SIZE_MAX, GpuReductionAlgo::TwoShot),
      // With three or more GPUs, fewer blocks reading the peers at once read them faster past 8 MiB.
      blocks(Coll::AllReduce, 1, 2, 0, SIZE_MAX, 64),
      blocks(Coll::AllReduce, 3, INT_MAX, 0, 8 * kMiB, 64),
      blocks(Coll::AllReduce, 3, INT_MAX, 8 * kMiB, SIZE_MAX, 16),
      // Reduce's plans read as AllReduce's do.
      blocks(Coll::Reduce, 1, 2, 0, SIZE_MAX, 64),
      blocks(Coll::Reduce, 3, INT_MAX, 0, 8 * kMiB, 64),
      blocks(Coll::Reduce, 3, INT_MAX, 8 * kMiB, SIZE_MAX, 16),
      blocks(Coll::Broadcast, 3, INT_MAX, 0, 8 * kMiB, 16),
      blocks(Coll::Broadcast, 3, INT_MAX, 8 * kMiB, SIZE_MAX, 8),
      blocks(Coll::ReduceScatter, 1, 2, 0, SIZE_MAX, 64),
      blocks(Coll::ReduceScatter, 3, INT_MAX, 0, SIZE_MAX, 32),
      // Flagged lines carry half their bytes as flags, but need no host between the ranks: below
      // these sizes the op's time is the launch's and the flags', not the bandwidth's.
      lines(Coll::AllGather, 1, INT_MAX, 512 << 10),
      lines(Coll::AlltoAll, 1, INT_MAX, 1 * kMiB),
      lines(Coll::Broadcast, 1, INT_MAX, 512 << 10),
      lines(Coll::Send, 1, INT_MAX, 512 << 10),
      lines(Coll::AllReduce, 1, INT_MAX, 256 << 10),
      lines(Coll::ReduceScatter, 1, INT_MAX, 512 << 10),
      lines(Coll::Reduce, 1, INT_MAX, 512 << 10),
  };
}

const GpuChoiceRow* find(GpuChoice choice, Coll coll, size_t bytes, int nranks) {
  for (const GpuChoiceRow& row : gpuChoiceTable())
    if (row.choice == choice && row.coll == coll && nranks >= row.minRanks && nranks <= row.maxRanks &&
        bytes >= row.minBytes && bytes < row.maxBytes)
      return &row;
  return nullptr;
}

}  // namespace

const char* gpuChoiceName(GpuChoice choice) {
  switch (choice) {
    case GpuChoice::CopyKernelBytes: return "copy kernel up to";
    case GpuChoice::ReductionAlgorithm: return "reduction algorithm";
    case GpuChoice::ReductionBlocks: return "reduction blocks";
    case GpuChoice::LineBytes: return "flagged lines up to";
    case GpuChoice::BroadcastAlgorithm: return "broadcast algorithm";
  }
  return "?";
}

const std::vector<GpuChoiceRow>& gpuChoiceTable() {
  static const std::vector<GpuChoiceRow> table = measuredRows();
  return table;
}

size_t copyKernelMaxBytes(Coll coll, int nranks) {
  const Coll key = coll == Coll::Recv ? Coll::Send : coll;
  const GpuChoiceRow* row = find(GpuChoice::CopyKernelBytes, key, 0, nranks);
  return row != nullptr ? row->value : kFallbackCopyKernelBytes;
}

size_t lineMaxBytes(Coll coll, int nranks) {
  const Coll key = coll == Coll::Recv ? Coll::Send : coll;
  const GpuChoiceRow* row = find(GpuChoice::LineBytes, key, 0, nranks);
  return row != nullptr ? row->value : 0;
}

GpuReductionAlgo tuneGpuReduction(Coll coll, size_t bytes, int nranks, bool inPlace) {
  if (coll == Coll::ReduceScatter) return GpuReductionAlgo::Direct;
  const bool small = bytes * static_cast<size_t>(std::max(nranks - 1, 1)) <= kOneShotPeerBytes;
  if (small && gpuReductionAlgoFits(coll, GpuReductionAlgo::OneShot, inPlace)) return GpuReductionAlgo::OneShot;
  const GpuChoiceRow* row = find(GpuChoice::ReductionAlgorithm, coll, bytes, nranks);
  if (row != nullptr && gpuReductionAlgoFits(coll, static_cast<GpuReductionAlgo>(row->value), inPlace))
    return static_cast<GpuReductionAlgo>(row->value);
  return GpuReductionAlgo::TwoShotSm;
}

GpuBroadcastAlgo tuneGpuBroadcast(size_t bytes, int nranks) {
  const GpuChoiceRow* row = find(GpuChoice::BroadcastAlgorithm, Coll::Broadcast, bytes, nranks);
  return row != nullptr ? static_cast<GpuBroadcastAlgo>(row->value) : GpuBroadcastAlgo::Root;
}

int reductionBlocks(Coll coll, size_t bytes, int nranks) {
  const GpuChoiceRow* row = find(GpuChoice::ReductionBlocks, coll, bytes, nranks);
  return row != nullptr ? static_cast<int>(row->value) : kFallbackReductionBlocks;
}

}  // namespace slimeccl
