// CommSplit into per-host and cross-host communicators, each checked with an AllGather.
#pragma once

#include "check_support.h"

namespace multihost {

// color = rank / ranksPerHost, key = rank: one communicator per host (shared memory only).
void runSplitByHost(const CommView& world, int ranksPerHost);

// color = rank % ranksPerHost, key = nranks - rank: one rank of each host, in reverse order,
// so the new communicator is made of cross-host peers only and its ranks follow the key.
void runSplitAcrossHosts(const CommView& world, int ranksPerHost);

}  // namespace multihost
