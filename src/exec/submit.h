// Where a validated call goes: into the open group, onto a stream, or straight to the executor.
#pragma once

#include <string>
#include <vector>

#include "src/device/gpu.h"
#include "src/exec/queued_rounds.h"
#include "src/op.h"

namespace slimeccl {

// Assigns the op's sequence number, then runs or queues it.
slimecclResult_t submitOp(OpRecord op);
// Runs ops (from one group or one call) on the calling thread; used by streams too. Ops on device
// buffers run on host staging, with copies in and out in `deviceCopies` order.
slimecclResult_t executeOps(const std::vector<OpRecord>& ops, CopyOrder deviceCopies);
// Puts the ops of a call or group in the order both ends of every link queue them: collectives
// first, by sequence number, then point-to-point in call order (the order between any one pair of
// ranks), whatever order the calls came in.
void sortForExecution(std::vector<OpRecord>& ops);
// Runs, on the calling thread (a CUDA-ordered stream's worker), a group whose rounds and device
// copies were queued on its CUDA stream; every buffer its rounds touch is host memory, so it makes
// no CUDA call.
slimecclResult_t executeQueuedRounds(QueuedRounds& rounds);

slimecclResult_t groupStart();
// Whether the calling thread has a group open.
bool groupIsOpen();
slimecclResult_t groupEnd();

// The ops of `comm` in the calling thread's open group: they keep the comm's pending count raised
// until slimecclGroupEnd, so the comm cannot be destroyed before that on this thread.
size_t openGroupOpsOf(const slimecclComm* comm);
// Takes them out of the group, failed with `why` (an abort).
void dropOpenGroupOps(slimecclComm* comm, const std::string& why);

}  // namespace slimeccl
