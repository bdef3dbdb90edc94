// The GPU path's choices that depend on an op's size and the comm's GPU count, measured on lent
// machines (docs/performance.md, "The GPU path's choices"): up to which size an op's copies run as
// one kernel rather than on copy engines, which algorithm a reduction takes and how many blocks its
// kernel takes. Rows for 2 and for 3 or more GPUs; the latter were measured on 4. First match wins.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/gpu_broadcast.h"
#include "algorithms/gpu_reduction.h"
#include "src/base/util/op_kinds.h"

namespace slimeccl {

enum class GpuChoice : unsigned char {
  CopyKernelBytes,
  ReductionAlgorithm,
  ReductionBlocks,
  LineBytes,
  BroadcastAlgorithm
};

struct GpuChoiceRow {
  GpuChoice choice;
  Coll coll;  // Send stands for both ends of a message
  int minRanks, maxRanks;
  size_t minBytes, maxBytes;  // the op's size, as nccl-tests counts it: [minBytes, maxBytes)
  // CopyKernelBytes: the largest op the kernel runs; ReductionAlgorithm: a GpuReductionAlgo;
  // ReductionBlocks: blocks (Broadcast: scatter_pull's kernel); LineBytes: the largest op that goes by
  // flagged lines; BroadcastAlgorithm: a GpuBroadcastAlgo
  size_t value;
};

// "copy kernel up to", "reduction algorithm", "reduction blocks", "flagged lines up to", "broadcast
// algorithm"
const char* gpuChoiceName(GpuChoice choice);
const std::vector<GpuChoiceRow>& gpuChoiceTable();

// Ops of at most this many bytes (an AllGather's output, an AlltoAll's send buffer, a Broadcast's
// buffer, a round's largest message) run their copies as one kernel.
size_t copyKernelMaxBytes(Coll coll, int nranks);
// Ops of at most this many bytes (as nccl-tests counts them: an AllGather's output, a ReduceScatter's
// input, an AlltoAll's send buffer, a message) go by flagged lines, one kernel with no host in the
// op (src/device/line_protocol.h).
size_t lineMaxBytes(Coll coll, int nranks);
// A reduction's algorithm, alike on every rank: one-shot while the bytes each rank reads from its
// peers stay small (the op's time is then the handshakes', and one-shot writes nothing across
// NVLink) and no rank's call is in place, else the table's row for the size and GPU count, else
// two-shot-sm; ReduceScatter has direct alone.
GpuReductionAlgo tuneGpuReduction(Coll coll, size_t bytes, int nranks, bool inPlace);
// A Broadcast's algorithm, alike on every rank: the table's row for the size and GPU count, else the
// root's copies.
GpuBroadcastAlgo tuneGpuBroadcast(size_t bytes, int nranks);
// The most blocks a reduction kernel (or scatter_pull's) of an op of `bytes` takes where the comm sets no maxCTAs.
int reductionBlocks(Coll coll, size_t bytes, int nranks);

}  // namespace slimeccl
