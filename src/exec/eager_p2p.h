// Blocking Send and Recv of small messages, straight through the net module. Such a call is one
// message, the eager header (the sender's short descriptor, then the data); planning it and running it
// through the executor would cost more than moving it. Ping-pong latency across hosts is this path.
#pragma once

#include "include/slimeccl.h"
#include "src/op.h"

namespace slimeccl {

// Runs a Send or Recv made alone on its thread (no group, no stream) as one eager message when it
// qualifies: host buffers, at most kInlineBytes in one chunk, and a link to the peer that is
// connected with nothing queued on it. Returns false, having done nothing, when
// it does not; *rc is the op's outcome otherwise. The message is the one the executor would send
// (or expect), so either end may take either path; the receiver still compares the descriptors.
bool runEagerP2P(OpRecord& op, slimecclResult_t* rc);

}  // namespace slimeccl
