// Ops on device buffers that run GPU to GPU: on a CUDA-ordered stream of a communicator whose
// ranks share one host and whose GPUs reach each other, AllGather, Broadcast, AlltoAll and
// Send/Recv are queued on the CUDA stream as copy-engine copies into the peers' buffers between
// flag writes and waits (docs/cuda.md), AllReduce, ReduceScatter and Reduce as one reduction kernel
// (src/device/gpu_reductions.h), and the call returns. Every rank posts each such op on
// the peer board, so all decide alike which path it takes; the others take host staging.
#pragma once

#include <vector>

#include "include/slimeccl.h"
#include "src/op.h"

namespace slimeccl {

// One stream's part of a call or group: its ops in, in call order.
struct StreamPart {
  slimecclStream_t stream;  // CUDA-ordered
  std::vector<OpRecord> ops;
};

// Queues, GPU to GPU, the ops of the parts that can go so, and leaves the others in their parts,
// in order, for host staging; the ops it queued are finished (the comms' pending counts, the
// flight recorder). Every part's posts go up before any part waits for its peers, so one thread
// may drive several ranks of a comm. On failure the ops it did not queue stay in their parts,
// their comms failed, for the caller to fail; an op that would take host staging inside a graph
// capture fails the call the same way.
slimecclResult_t takeGpuDirectOps(std::vector<StreamPart>& parts);

// Sets the path up at init, collectively, when any rank of the new comm named its GPU in its
// config: then every rank takes part, one that named none as a rank without a GPU (so the comm
// keeps host staging, and says why at SLIMECCL_DEBUG=INFO).
slimecclResult_t setUpNamedGpus(slimecclComm_t comm);

// Sets the path up for a rank of slimecclCommInitAll, at init: one thread may drive all its ranks
// later, and the setup is collective. device: the rank's GPU (-1: none). Other comms set it up with
// their first op on a CUDA-ordered stream.
slimecclResult_t setUpGpuDirectAtInit(slimecclComm_t comm, int device);

}  // namespace slimeccl
