// Ops GPU to GPU through host relays (src/device/host_relay.h), on comms whose GPUs do not reach
// each other or where SLIMECCL_P2P_DISABLE=1: each op's plan (algorithms/relay_plan.h) is queued on
// the relay's streams, forked from the caller's CUDA stream and joined back to it: copy-engine
// copies between the rank's GPU and the relays, a reduction kernel for what the peers sent, and
// flag writes and waits between the GPUs, with no host thread between the ranks; the call returns
// once it is queued, and a graph captures it. Every rank posts the op on the peer board as on the
// peer-mapped path, so all decide alike. CUDA-free: in a build without CUDA the queuing calls fail
// with a sentence and the others are not built (no op reaches them).
#pragma once

#include <vector>

#include "include/slimeccl.h"
#include "src/device/gpu_peers.h"
#include "src/device/peer_board.h"
#include "src/op.h"

namespace slimeccl {

// Whether this rank can run the collective through the relays: its buffers are device memory of
// the comm's GPU; a reduction's operator is built in or a PreMulSum with a host scalar (a peer
// cannot read a scalar in this GPU's memory), on at most kReduceMaxRanks ranks, with the reduction
// kernels loaded; an AllGather hands no block to a consumer. Fills what the post tells the peers:
// a PreMulSum's scalar.
bool relayServesCollective(const GpuPeers& peers, const OpRecord& op, PostContents* post);
// Whether it can run the Send or Recv so: its buffer is device memory of the comm's GPU.
bool relayServesMessage(const GpuPeers& peers, const OpRecord& op);

// Queues a collective that every rank runs through the relays; posts: every rank's post of it (a
// PreMulSum's scalars). stream: a cudaStream_t.
slimecclResult_t queueRelayedCollective(GpuPeers& peers, const OpRecord& op, void* stream,
                                        const std::vector<PostContents>& posts, bool capturing);

// A Send or Recv of a call and where it reads (a Send's snapshot, where a Recv of the call
// overwrites its bytes) or writes.
struct RelayedMessage {
  const OpRecord* op;
  char* bytes;
};
// Queues one comm's messages of a call, in call order, as one plan. stream: a cudaStream_t.
slimecclResult_t queueRelayedMessages(GpuPeers& peers, const std::vector<RelayedMessage>& messages, void* stream,
                                      bool capturing);

}  // namespace slimeccl
