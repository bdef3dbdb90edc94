// AllGather on a communicator across hosts in two tiers (docs/cuda.md#across-hosts): the ranks of
// each host exchange blocks among themselves (GPU to GPU where their buffers are device memory), and
// each rank exchanges its own block with the ranks of the same place on the other hosts over the
// net module; the blocks that came from other hosts then go on within each host, piece by piece as
// they land, while the next pieces still cross between hosts. Each tier is a communicator of its
// own, split from the comm at init, so each runs on the paths it already has.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "include/slimeccl.h"
#include "src/device/side_stream.h"
#include "src/op.h"

namespace slimeccl {

struct TierPair;

struct HostTiers {
  slimecclComm* inHost = nullptr;         // this rank's host: its ranks in the comm's order
  slimecclComm* acrossHosts = nullptr;    // one rank per host, each at this rank's place; rank = host index
  std::vector<std::vector<int>> members;  // per host index: its ranks in the comm, ascending
  int host = 0;                           // this rank's host index
  int place = 0;                          // and its place among the host's ranks
  size_t pieceBytes = 0;                  // per block: how much crosses between hosts before it goes on within the host
  std::mutex sidesMutex;                  // the side streams, and the fork and join of one call at a time
  std::vector<std::unique_ptr<SideStream>> sides;  // one per GPU: the transfers between hosts
  std::atomic<uint64_t> allGathers{0};
  std::shared_ptr<TierPair> pair;  // how each tier fails the other
};

// Splits the tiers off a comm at init, collectively, where the comm spans several hosts with as
// many ranks on each (at least two), some rank wants them (SLIMECCL_HOST_TIERS: gpu, a rank that
// uses a GPU; all: every such comm) and none refuses (off). Every rank decides alike.
slimecclResult_t setUpHostTiers(slimecclComm* comm);
// Whether an op submitted outside a group goes in tiers: an AllGather of a comm that has them, with
// no consumer of its blocks. Alike on every rank, whatever memory or stream the op is on.
bool takesHostTiers(const OpRecord& op);
// Runs or queues the AllGather in tiers on the op's stream (a CUDA-ordered stream: the transfers
// between hosts on a side stream of the same GPU, joined back piece by piece).
slimecclResult_t allGatherInHostTiers(OpRecord op);
// A failure of either tier fails the comm, with a sentence that maps the tier's ranks to the comm's.
void adoptHostTierFailure(slimecclComm* comm);
// Returns once the tiers' ops issued so far are done (slimecclCommFinalize).
void waitForHostTierOps(slimecclComm* comm);
// Ends the tiers with the comm: aborts them where the comm was aborted, else waits for their ops.
void endHostTiers(slimecclComm* comm);
// Fills `info`'s hostTiers and tieredAllGathers, and adds the tiers' counts of device ops to the rest.
void addHostTierPaths(const slimecclComm* comm, slimecclDevicePathInfo* info);

}  // namespace slimeccl
