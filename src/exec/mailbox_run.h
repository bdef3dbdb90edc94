// Running a lowered plan through the comm's shared slots (src/exec/mailbox.h) instead of net
// messages. For algorithms where each rank sends to each peer at most once and no send waits on
// data the rank itself has yet to receive from a peer that waits on it (direct AllGather,
// one-shot AllReduce, pairwise AlltoAll, the binomial trees of Broadcast and Reduce):
//  - a rank publishes once per op: the bytes of all its sends (each distinct range copied once)
//    and a directory of which bytes are for which peer, then the op number;
//  - it reads each peer's published bytes meant for it straight from that peer's slot (a copy or
//    a reduction into the op's buffers, no staging) once the slot shows the op number, and
//    compares the peer's call with its own (both calls named on a mismatch);
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
// Compares the calls peers have announced for this collective (every collective of a comm with
// slots is announced, whichever path it takes) with this rank's: InvalidUsage naming both calls
// when they differ. For waits that last: a peer whose call went another way sends nothing.
slimecclResult_t checkAnnouncedCalls(const OpPlan& plan);
// After a failed run: a started op that published nothing publishes its call marked failed, so
// that peers fail at once instead of waiting for the timeout.
void abandonMailbox(OpPlan* plan);
// After a run: the comm's slots are free for its next op.
void releaseMailbox(OpPlan* plan);
// "peer 2 (nothing in its shared slot for this op yet)" for timeouts and the flight recorder.
std::string describeMailboxWaits(const OpPlan& plan);

}  // namespace slimeccl
