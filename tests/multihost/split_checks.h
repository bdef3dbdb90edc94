// CommSplit into per-host and cross-host communicators, each checked with an AllGather.
#pragma once

#include "check_support.h"

namespace multihost {

// color = rank / ranks_per_host, key = rank: one communicator per host (shared memory only).
void run_split_by_host(const CommView& world, int ranks_per_host);

// color = rank % ranks_per_host, key = nranks - rank: one rank of each host, in reverse order,
// so the new communicator is made of cross-host peers only and its ranks follow the key.
void run_split_across_hosts(const CommView& world, int ranks_per_host);

}  // namespace multihost
