// The bootstrap root: collects every rank's RankInfo, checks the secret, and hands the table to
// all ranks (or, at the deadline, an error naming the ranks that never arrived). It runs on its
// own thread, one per unique id, and ends when the table is out.
#pragma once

#include "include/slimeccl.h"
#include "src/bootstrap/unique_id.h"

namespace slimeccl {

// Binds bindAddr (port 0 picks one; the bound address is written back) and starts the thread.
// idleTimeoutMs bounds how long the root waits for the first rank (<= 0: forever).
slimecclResult_t startRoot(SockAddr* bindAddr, const CommSecret& secret, int64_t idleTimeoutMs);

// When this process hosts the root at addr, waits (at most timeoutMs) until it has answered every
// rank: a rank that returns from init and exits must not take the root down with it.
void waitForLocalRoot(const SockAddr& addr, int timeoutMs);

}  // namespace slimeccl
