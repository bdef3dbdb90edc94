// Queuing a GPU-to-GPU op's copies and flag batches on CUDA streams: copies in one call where
// CUDA allows, or spread over the side streams beside the caller's stream; flags as stream memory
// operations. For the device code that queues ops (src/device/gpu_direct.cc,
// src/device/overlapped_allgather.cc); it names CUDA types, so host-only code never includes it.
#pragma once

#ifdef SLIMECCL_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <vector>

#include "src/device/gpu_peers.h"
#include "src/device/op_handshake.h"
#include "src/device/stream_memops.h"
#include "src/op.h"

namespace slimeccl {

struct Copy {
  char* dst;
  const char* src;
  size_t bytes;
};

// Returns from the calling function with a sentence naming `op` (in scope) and the step.
#define OP_CUDA_CHECK(call, what)                                       \
  do {                                                                  \
    const cudaError_t cuda_rc_ = (call);                                \
    if (cuda_rc_ != cudaSuccess) return failOpStep(op, cuda_rc_, what); \
  } while (0)

// Queues a batch of flag operations for the op.
slimecclResult_t queueFlags(MemOpBatch& batch, const OpRecord& op, cudaStream_t stream);
// Copies queued in one call where there are several; a capture takes no batched copies: there each
// goes alone. Copies within one GPU (`withinGpu`) go as pieces (src/device/copy_pieces.h), each its
// own call, so that work beside them on the GPU keeps its speed.
slimecclResult_t queueCopiesOn(const OpRecord& op, cudaStream_t stream, const std::vector<Copy>& copies, bool withinGpu,
                               bool capturing);
// Runs `copies` beside each other: the first on the caller's stream, the others on side streams
// from `firstSide` on, forked from it and joined back.
slimecclResult_t queueCopies(GpuPeers& peers, const OpRecord& op, cudaStream_t stream, const std::vector<Copy>& copies,
                             int firstSide, bool capturing);
// Side stream `side` runs what is queued on it next after what the caller's stream holds so far.
slimecclResult_t forkSide(const GpuPeers& peers, const OpRecord& op, cudaStream_t stream, int side);
// The caller's stream waits for what side stream `side` holds so far.
slimecclResult_t joinSide(const GpuPeers& peers, const OpRecord& op, cudaStream_t stream, int side);
// The handshake's flag writes, then its waits, each wait clearing its flag.
MemOpBatch asBatch(const Handshake& h);

}  // namespace slimeccl

#endif
