// Ops on device buffers that run GPU to GPU: on a CUDA-ordered stream of a communicator whose
// ranks share one host and whose GPUs reach each other, AllGather, Broadcast, AlltoAll and
// Send/Recv are queued on the CUDA stream as copy-engine copies into the peers' buffers between
// flag writes and waits (docs/cuda.md), and the call returns. Every rank posts each such op on
// the peer board, so all decide alike which path it takes; the others take host staging.
#pragma once

#include <vector>

#include "include/slimeccl.h"
#include "src/op.h"

namespace slimeccl {

// Queues, GPU to GPU, the ops of `ops` (one stream's part of a call or group) that can go so, and
// leaves the others in `ops`, in order, for the host path. Ops it queued are finished for the
// comm's pending count.
slimecclResult_t takeGpuDirectOps(slimecclStream_t stream, std::vector<OpRecord>& ops);

}  // namespace slimeccl
