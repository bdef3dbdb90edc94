// Running a lowered plan through the comm's shared slots (src/exec/mailbox.h) instead of net
// messages. For algorithms where each rank sends to each peer at most once and no send waits on
// data the rank itself has yet to receive from a peer that waits on it (direct AllGather,
// one-shot AllReduce, pairwise AlltoAll, the binomial trees of Broadcast and Reduce):
//  - a rank publishes once per op: the bytes of all its sends (each distinct range copied once)
//    and a directory of which bytes are for which peer, then the op number;
//  - it reads each peer's published bytes meant for it, in place, once that peer's slot shows
//    the op number, and compares the peer's call with its own (both calls named on a mismatch);
//  - it completes only once every peer has published this op. Every peer has then finished the
//    op before, so the slot two ops back (the same one, as slots alternate) is free to rewrite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "src/exec/plan.h"

namespace slimeccl {

// Whether the comm's shared slots carry this call with this algorithm. Decided from the call
// alone, so that all ranks of matching calls decide alike.
bool mailboxCarries(const slimecclComm* comm, const OpRecord& op, Algo algo);
// Lowers plan->schedule for the slots: local steps as usual, each transfer one whole message.
void lowerForMailbox(OpPlan* plan);
// Starts (when no earlier slot op of the comm is running), publishes and reads what it can.
slimecclResult_t progressMailbox(OpPlan* plan, bool* moved);
// After a run: the comm's slots are free for its next op.
void releaseMailbox(OpPlan* plan);
// "peer 2's slot (op 7 not published yet)" for timeouts and the flight recorder.
std::string describeMailboxWaits(const OpPlan& plan);

}  // namespace slimeccl
