// AllReduce, ReduceScatter and Reduce GPU to GPU: each rank's kernel reduces the spans its plan
// (algorithms/gpu_reduction.h) names, reading the peers' send buffers and writing their receive
// buffers through the mappings, between the op's two handshakes. Posts carry both buffers'
// addresses. CUDA-free: built without CUDA, nothing here runs.
#pragma once

#include <vector>

#include "algorithms/gpu_reduction.h"
#include "src/device/gpu_peers.h"
#include "src/device/peer_board.h"
#include "src/op.h"

namespace slimeccl {

// Whether the op is a reduction this path serves.
bool isGpuReduction(const OpRecord& op);
// Whether this rank can run the reduction GPU to GPU; fills the post's buffer addresses.
bool reductionOnGpu(GpuPeers& peers, const OpRecord& op, PostContents* post);
// The algorithm every rank takes for the op, from every rank's post: rank 0's
// SLIMECCL_GPU_REDUCE_ALGO where it fits, else the tuner's. Some rank's call in place (each rank's
// form may differ) rules one-shot out for all.
GpuReductionAlgo gpuReductionAlgoFor(const OpRecord& op, const std::vector<PostContents>& posts);
// Queues a reduction that every rank runs GPU to GPU by `algo` (gpuReductionAlgoFor's); posts:
// every rank's post of it. stream: a cudaStream_t.
slimecclResult_t queueReduction(GpuPeers& peers, const OpRecord& op, GpuReductionAlgo algo, void* stream,
                                const std::vector<PostContents>& posts, bool capturing);

}  // namespace slimeccl
