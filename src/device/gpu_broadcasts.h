// Broadcast GPU to GPU: what a rank posts for it and which algorithm every rank takes
// (algorithms/gpu_broadcast.h). The root posts its send buffer as well as its receive buffer, so
// that scatter_pull's kernels can read it. CUDA-free: built without CUDA, broadcastOnGpu is left out.
#pragma once

#include <vector>

#include "algorithms/gpu_broadcast.h"
#include "src/device/gpu_peers.h"
#include "src/device/peer_board.h"
#include "src/op.h"

namespace slimeccl {

// Whether this rank can run the Broadcast GPU to GPU; fills the post (CUDA builds only).
bool broadcastOnGpu(GpuPeers& peers, const OpRecord& op, PostContents* post);
// The algorithm every rank takes, from every rank's post: rank 0's SLIMECCL_GPU_BROADCAST_ALGO where
// it serves the op, else the tuner's; scatter_pull only where every rank runs its kernel.
GpuBroadcastAlgo gpuBroadcastAlgoFor(const OpRecord& op, const std::vector<PostContents>& posts);

}  // namespace slimeccl
