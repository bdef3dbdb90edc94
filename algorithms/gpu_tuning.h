// The GPU path's choices that depend on an op's size and the comm's GPU count, measured on lent
// machines (docs/performance.md, "The GPU path's choices"): up to which size an op's copies run as
// one kernel rather than on copy engines, and how many blocks a reduction kernel takes. Rows for 2
// and for 3 or more GPUs; the latter were measured on 4. First match wins.
#pragma once

#include <cstddef>
#include <vector>

#include "src/base/util/op_kinds.h"

namespace slimeccl {

enum class GpuChoice : unsigned char { CopyKernelBytes, ReductionBlocks };

struct GpuChoiceRow {
  GpuChoice choice;
  Coll coll;  // Send stands for both ends of a message
  int minRanks, maxRanks;
  size_t minBytes, maxBytes;  // the op's size, as nccl-tests counts it: [minBytes, maxBytes)
  size_t value;               // CopyKernelBytes: the largest op the kernel runs; ReductionBlocks: blocks
};

const char* gpuChoiceName(GpuChoice choice);  // "copy kernel up to", "reduction blocks"
const std::vector<GpuChoiceRow>& gpuChoiceTable();

// Ops of at most this many bytes (an AllGather's output, an AlltoAll's send buffer, a Broadcast's
// buffer, a round's largest message) run their copies as one kernel.
size_t copyKernelMaxBytes(Coll coll, int nranks);
// The most blocks a reduction kernel of an op of `bytes` takes where the comm sets no maxCTAs.
int reductionBlocks(Coll coll, size_t bytes, int nranks);

}  // namespace slimeccl
