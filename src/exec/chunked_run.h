// Ops through host staging in chunks, run at once: on a comm with a chunk arena
// (src/device/chunk_staging.h), a call or group whose ops are larger than a chunk runs as the rounds
// of its plan (src/exec/chunk_plan.h). While the host runs round c, the copies of round c + 1 into
// the next bay and of round c - 1 out of the last one run on the GPU's copy engines. Ops of a
// CUDA-ordered stream queue their copies ahead instead (src/exec/queued_rounds.h).
#pragma once

#include <functional>
#include <vector>

#include "src/device/gpu.h"
#include "src/op.h"

namespace slimeccl {

// Whether the op runs through its comm's arena: the comm has one, the op hands no blocks to a
// listener or consumer, has no PreMulSum scalar, and has device buffers here or is larger than a
// chunk (so it is cut on every rank, whatever memory its buffers are on).
bool runsThroughArena(const OpRecord& op);

// How many sequence numbers the op takes (its comm's collective numbers, or its peer's for
// Send/Recv): one per chunk where the arena serves it, so that each chunk's op has one of its own
// on every rank (the checks that calls match compare them); else one.
uint64_t sequenceNumbersOf(const OpRecord& op);

// Runs `ops` (of one call or group, some of them through the arena) round by round; `runRound`
// runs one round's ops, whose buffers are host memory except those of ops the arena does not
// serve, which it stages itself. Those run whole in the first round.
slimecclResult_t runInChunks(const std::vector<OpRecord>& ops, CopyOrder order,
                             const std::function<slimecclResult_t(std::vector<OpRecord>&)>& runRound);

}  // namespace slimeccl
