// A Broadcast GPU to GPU on 3 or more ranks as scatter_pull (algorithms/gpu_broadcast.h): one
// reduction kernel per rank with a single source, so a plain copy of the bits in any type. Between
// the op's two handshakes each non-root rank reads its share of the root's send buffer through the
// mapping and stores it into every non-root rank's output; the root's kernel copies its buffer into
// its own output where its call is out of place. The second handshake keeps the root's buffer
// unchanged until every peer has read its share. CUDA-free.
#pragma once

#include <vector>

#include "src/device/gpu_peers.h"
#include "src/op.h"

namespace slimeccl {

// rootSend: the root's send buffer mapped here (unused on the root); peerRecv: each peer's receive
// buffer, mapped here (null for this rank); rootInPlace: the root's call is in place. stream: a
// cudaStream_t.
slimecclResult_t queueBroadcastPull(GpuPeers& peers, const OpRecord& op, void* stream, const char* rootSend,
                                    const std::vector<char*>& peerRecv, bool rootInPlace);

}  // namespace slimeccl
