// Send and Recv of small messages, straight through the net module. Such an op is one message,
// the eager header (the sender's short descriptor, then the data); planning it and running it
// through the executor would cost more than moving it. Ping-pong latency across hosts, and a
// group's exchange with its neighbours (sendrecv), are this path.
#pragma once

#include <span>

#include "include/slimeccl.h"
#include "src/op.h"

namespace slimeccl {

// Runs blocking Send and Recv ops of one comm (a call alone on its thread, or a group's ops with
// no stream) as one eager message each, all at once, when every op qualifies: host buffers, at
// most kInlineBytes in one chunk, a peer other than this rank whose link is connected with nothing
// queued on it, and no two ops on one lane (at most one Send and one Recv per peer). Returns false,
// having done nothing, when they do not; *rc is the ops' outcome otherwise. Each message is the
// one the executor would send (or expect), so either end may take either path; the receiver still
// compares the descriptors.
bool runEagerP2P(std::span<OpRecord> ops, slimecclResult_t* rc);

}  // namespace slimeccl
