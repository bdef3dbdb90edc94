// A Broadcast GPU to GPU on 3 or more ranks by copy engines, as a relay (algorithms/gpu_broadcast.h):
// after the "arrived" handshake the root copies each round's pieces to their holders, one side
// stream per holder, each copy followed by the holder's flag for that round; each holder waits for
// its flag of each round and copies that piece on into every other non-root rank's buffer; the
// "landed" handshake ends the op. The root's links carry the buffer once, where sending it whole to
// every peer carried it once per peer. CUDA-free.
#pragma once

#include <vector>

#include "src/device/gpu_peers.h"
#include "src/op.h"

namespace slimeccl {

// peerRecv: each peer's receive buffer, mapped here (null for this rank). stream: a cudaStream_t.
slimecclResult_t queueBroadcastRelay(GpuPeers& peers, const OpRecord& op, void* stream,
                                     const std::vector<char*>& peerRecv, bool capturing);

}  // namespace slimeccl
