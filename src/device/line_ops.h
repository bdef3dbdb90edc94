// Ops by flagged lines (src/device/line_protocol.h): which ops of a comm go so, alike on every
// rank without asking the others, and their queuing as one kernel on the caller's stream. No host
// waits for or meets the peers: a mismatched call is caught by the receiving kernel and reported by
// the watchdog after the fact (src/device/gpu_peers.h). CUDA-free.
#pragma once

#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "src/device/gpu_peers.h"
#include "src/device/line_protocol.h"
#include "src/op.h"

namespace slimeccl {

// What the kernels carry of a call: its kind, count, type, operator and root; a Send's or Recv's
// bytes alone.
LineSignature lineSignatureOf(const OpRecord& op);
// "AllReduce (count 4, float, sum)", "a Send or Recv of 16 bytes".
std::string describeLineCall(const LineSignature& call);

// Whether the op goes by flagged lines: the comm's ranks set up landing zones, the op is a
// collective or a Send/Recv without a consumer of its blocks, and its bytes (as nccl-tests counts
// them) are at most rank 0's SLIMECCL_GPU_LINE_BYTES, else the tuner's bound for the op. Every rank
// decides alike from its own call.
bool goesByLines(const GpuPeers& peers, const OpRecord& op);
// Whether one kernel can carry a comm's Sends and Recvs of one call or group (each of which goes by
// lines): at most kLineMaxMessages messages and kLineMaxUnits peers.
bool messagesFitOneKernel(const std::vector<const OpRecord*>& ops);

// Queues a collective as one kernel on `stream` (a cudaStream_t of the comm's GPU).
slimecclResult_t queueCollectiveByLines(GpuPeers& peers, const OpRecord& op, void* stream, bool capturing);
// Queues one comm's Sends and Recvs of one call or group as one kernel; a Send to itself pairs with
// a Recv from itself of the same size. Where some Recv overwrites what some Send reads (in place),
// the kernel first copies every Send's bytes aside (not where a peer's one Recv takes exactly the bytes
// of its one Send: each step's bytes are read before they are written).
slimecclResult_t queueMessagesByLines(GpuPeers& peers, const std::vector<const OpRecord*>& ops, void* stream,
                                      bool capturing);

}  // namespace slimeccl
