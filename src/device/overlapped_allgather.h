// An AllGather GPU to GPU whose blocks go to a consumer as they land (src/exec/block_consumer.h):
// the copies run on side streams by copy engine, one peer after another (rank+1 first, so each
// rank's first remote block, rank-1's, lands after 1/(n-1) of the transfer), each followed by
// its flag on that peer; the caller's stream takes the own block at once, then waits for each
// peer's flag in landing order and hands its block, so the consumer's work on a block overlaps
// the copies of the blocks after it. The flags are those of every GPU-to-GPU collective, set and
// cleared alike, so a peer may run the same AllGather without a consumer. CUDA-free.
#pragma once

#include <vector>

#include "src/device/gpu_peers.h"
#include "src/op.h"

namespace slimeccl {

// peerRecv: each peer's receive buffer, mapped here (null for this rank). stream: a cudaStream_t.
slimecclResult_t queueOverlappedAllGather(GpuPeers& peers, const OpRecord& op, void* stream,
                                          const std::vector<char*>& peerRecv, bool capturing);

}  // namespace slimeccl
