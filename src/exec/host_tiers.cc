#include "src/exec/host_tiers.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/exec/submit.h"
#include "src/init.h"
#include "src/stream.h"

namespace slimeccl {

// The two tiers, for the hooks by which each fails the other (failEachOther).
struct TierPair {
  std::recursive_mutex mutex;
  slimecclComm* tiers[2];
  std::atomic<int> firstFailed{-1};  // the index of the tier that failed first, whose sentence names the cause
};

namespace {

// "its ranks 0, 1, 2 are ranks 1, 3, 5 here"
std::string rankMap(const std::vector<int>& ranks) {
  std::string theirs, ours;
  for (size_t i = 0; i < ranks.size(); ++i) {
    theirs += fmt::format("{}{}", i == 0 ? "" : ", ", i);
    ours += fmt::format("{}{}", i == 0 ? "" : ", ", ranks[i]);
  }
  return fmt::format("its ranks {} are ranks {} here", theirs, ours);
}

std::vector<int> acrossHostsRanks(const HostTiers& tiers) {
  std::vector<int> ranks;
  for (const std::vector<int>& host : tiers.members) ranks.push_back(host[tiers.place]);
  return ranks;
}

// A tier that fails fails the other: its peers then learn of it too (GPU to GPU, through the
// failure word the watchdog sets), instead of finishing ops whose blocks can never all arrive.
// The tiers' own threads may fail them at any time, so the hooks reach the tiers through the pair,
// which forgets them before they are freed; its mutex is recursive, since failing one tier fails
// the other from within its hook.
void failEachOther(HostTiers& tiers) {
  tiers.pair = std::make_shared<TierPair>();
  tiers.pair->tiers[0] = tiers.inHost;
  tiers.pair->tiers[1] = tiers.acrossHosts;
  for (int i = 0; i < 2; ++i)
    tiers.pair->tiers[i]->onFailure = [pair = tiers.pair, other = 1 - i](slimecclResult_t code,
                                                                         const std::string& sentence) {
      std::lock_guard<std::recursive_mutex> lock(pair->mutex);
      int none = -1;
      pair->firstFailed.compare_exchange_strong(none, 1 - other);
      slimecclComm* tier = pair->tiers[other];
      if (tier == nullptr) return;
      commFail(tier, code, fmt::format("rank {}: the other host tier failed: {}", tier->rank, sentence));
      // Its peers learn of it from its links: closed now where no op runs on it (no thread holds
      // both tiers' locks), else by that op, which sees the failure at once.
      std::unique_lock<std::mutex> exec(tier->execMutex, std::try_to_lock);
      if (exec.owns_lock()) commDropLinks(tier);
      if (tier->bell) tier->bell->wake();
    };
}

// Splits one tier off the comm, named after it.
slimecclResult_t splitTier(slimecclComm* comm, int color, int key, const std::string& name, slimecclComm** tier) {
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  config.commName = name.c_str();
  if (!comm->params.net.empty()) config.netName = comm->params.net.c_str();
  return commSplit(comm, color, key, tier, &config, slimecclSuccess);
}

// The side stream on `device` for the transfers between hosts, made on first use; under sidesMutex.
slimecclResult_t sideOn(HostTiers& tiers, int device, SideStream** side) {
  for (const std::unique_ptr<SideStream>& s : tiers.sides)
    if (s->device() == device) {
      *side = s.get();
      return slimecclSuccess;
    }
  std::unique_ptr<SideStream> made;
  SLIMECCL_CHECK(SideStream::create(device, &made));
  *side = made.get();
  tiers.sides.push_back(std::move(made));
  return slimecclSuccess;
}

// One AllGather in tiers. Every rank issues the same sequence of groups on the two tiers, so
// their sequence numbers meet: its host's blocks within the host, then for each piece of the
// blocks and each distance d = 1 .. hosts - 1, the exchange with the hosts d before and d after
// it, and the piece from the host d before it within the host.
class TieredAllGather {
 public:
  TieredAllGather(const OpRecord& op, HostTiers& tiers)
      : op_(op), tiers_(tiers), blockBytes_(op.bytes()), typeBytes_(typeSize(op.type)) {}

  slimecclResult_t run() {
    const bool onCuda = op_.stream != nullptr && op_.stream->cuda != nullptr;
    std::unique_lock<std::mutex> lock(tiers_.sidesMutex);
    SideStream* side = nullptr;
    acrossStream_ = withinStream_ = op_.stream;
    if (onCuda) {
      void* cuda = op_.stream->cuda->cudaStream();
      SLIMECCL_CHECK(sideOn(tiers_, op_.stream->cuda->device(), &side));
      SLIMECCL_CHECK(side->waitFor(cuda));
      acrossStream_ = side->stream();
    }
    SLIMECCL_CHECK(withinHost(0, 0, op_.count));
    const size_t pieceCount = std::max<size_t>(1, tiers_.pieceBytes / typeBytes_);
    const int hosts = static_cast<int>(tiers_.members.size());
    for (size_t first = 0; first < op_.count; first += pieceCount) {
      const size_t count = std::min(pieceCount, op_.count - first);
      for (int distance = 1; distance < hosts; ++distance) {
        SLIMECCL_CHECK(acrossHosts(distance, first, count));
        if (side != nullptr) SLIMECCL_CHECK(side->joinInto(op_.stream->cuda->cudaStream()));
        SLIMECCL_CHECK(withinHost(distance, first, count));
      }
    }
    return slimecclSuccess;
  }

 private:
  const char* sendFrom(size_t first) const { return static_cast<const char*>(op_.sendbuff) + first * typeBytes_; }
  char* blockOf(int rank, size_t first) const {
    return static_cast<char*>(op_.recvbuff) + rank * blockBytes_ + first * typeBytes_;
  }
  int hostBefore(int distance) const {
    const int hosts = static_cast<int>(tiers_.members.size());
    return (tiers_.host - distance + hosts) % hosts;
  }

  static OpRecord message(Coll coll, slimecclComm* tier, const void* send, void* recv, size_t count,
                          slimecclDataType_t type, int peer, slimecclStream_t stream) {
    return OpRecord{coll, tier, send, recv, count, type, slimecclSum, -1, peer, 0, stream};
  }

  // Elements [first, first + count) of the blocks of host `hostBefore(distance)`'s ranks: this
  // rank has its place's (its own block at distance 0) and swaps it for the others' in the host.
  slimecclResult_t withinHost(int distance, size_t first, size_t count) {
    slimecclComm* tier = tiers_.inHost;
    const std::vector<int>& from = tiers_.members[hostBefore(distance)];
    const int place = tiers_.place;
    const char* mine = distance == 0 ? sendFrom(first) : blockOf(from[place], first);
    std::vector<OpRecord> ops;
    if (distance == 0 && mine != blockOf(from[place], first)) {
      ops.push_back(message(Coll::Send, tier, mine, nullptr, count, op_.type, place, withinStream_));
      ops.push_back(
          message(Coll::Recv, tier, nullptr, blockOf(from[place], first), count, op_.type, place, withinStream_));
    }
    for (int peer = 0; peer < tier->nranks; ++peer) {
      if (peer == place) continue;
      ops.push_back(message(Coll::Send, tier, mine, nullptr, count, op_.type, peer, withinStream_));
      ops.push_back(
          message(Coll::Recv, tier, nullptr, blockOf(from[peer], first), count, op_.type, peer, withinStream_));
    }
    return submitTierGroup(
        tier, ops, distance == 0 ? "its host's blocks within the host" : "blocks from another host within the host");
  }

  // Sends this rank's piece to the host `distance` after it and takes the piece of the rank at its
  // place on the host `distance` before it.
  slimecclResult_t acrossHosts(int distance, size_t first, size_t count) {
    slimecclComm* tier = tiers_.acrossHosts;
    const int hosts = static_cast<int>(tiers_.members.size());
    const int before = hostBefore(distance), after = (tiers_.host + distance) % hosts;
    std::vector<OpRecord> ops{
        message(Coll::Send, tier, sendFrom(first), nullptr, count, op_.type, after, acrossStream_),
        message(Coll::Recv, tier, nullptr, blockOf(tiers_.members[before][tiers_.place], first), count, op_.type,
                before, acrossStream_)};
    return submitTierGroup(tier, ops, "blocks between hosts");
  }

  slimecclResult_t submitTierGroup(slimecclComm* tier, const std::vector<OpRecord>& ops, const char* what) {
    slimecclResult_t rc = commUsable(tier, "AllGather");
    if (rc == slimecclSuccess) {
      groupStart();
      for (const OpRecord& op : ops)
        if (rc == slimecclSuccess) rc = submitOp(op);
      const slimecclResult_t ended = groupEnd();
      if (rc == slimecclSuccess) rc = ended;
    }
    if (rc != slimecclSuccess) {
      const std::vector<int> ranks = tier == tiers_.inHost ? tiers_.members[tiers_.host] : acrossHostsRanks(tiers_);
      prefixThreadError(fmt::format("rank {}: {} in host tiers, {} (comm '{}': {}): ", op_.comm->rank, describeOp(op_),
                                    what, tier->name, rankMap(ranks)));
    }
    return rc;
  }

  const OpRecord& op_;
  HostTiers& tiers_;
  const size_t blockBytes_, typeBytes_;
  slimecclStream_t acrossStream_ = nullptr, withinStream_ = nullptr;
};

}  // namespace

slimecclResult_t setUpHostTiers(slimecclComm* comm) {
  if (comm->topology.singleHost() || !gpuScopeAgreed(comm->peers, &RankInfo::hostTiers)) return slimecclSuccess;
  const std::vector<int>& hostOf = comm->topology.hostOf;
  auto tiers = std::make_unique<HostTiers>();
  tiers->members.resize(*std::max_element(hostOf.begin(), hostOf.end()) + 1);
  for (int rank = 0; rank < comm->nranks; ++rank) tiers->members[hostOf[rank]].push_back(rank);
  const size_t perHost = tiers->members[0].size();
  for (const std::vector<int>& host : tiers->members)
    if (host.size() != perHost || perHost < 2) {
      SLIMECCL_INFO(kLogInit, comm->rank,
                    "AllGather runs as one op, not in host tiers: the hosts do not all hold the same number of "
                    "ranks, at least two");
      return slimecclSuccess;
    }
  tiers->host = hostOf[comm->rank];
  const std::vector<int>& here = tiers->members[tiers->host];
  tiers->place = static_cast<int>(std::find(here.begin(), here.end(), comm->rank) - here.begin());
  tiers->pieceBytes = 4 * comm->peers[0].stagingChunkBytes;
  const std::string name = comm->name.empty() ? std::string("comm") : comm->name;
  slimecclResult_t rc =
      splitTier(comm, tiers->host, comm->rank, fmt::format("{}.host{}", name, tiers->host), &tiers->inHost);
  if (rc == slimecclSuccess)
    rc = splitTier(comm, tiers->place, tiers->host, fmt::format("{}.place{}", name, tiers->place), &tiers->acrossHosts);
  if (rc == slimecclSuccess && gpuPresent()) {
    const int device = comm->device >= 0 ? comm->device : gpuInUse();
    SideStream* side;
    if (device >= 0) rc = sideOn(*tiers, device, &side);
  }
  if (rc != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: setting up AllGather in host tiers: ", comm->rank));
    for (slimecclComm* tier : {tiers->inHost, tiers->acrossHosts}) {
      if (tier == nullptr) continue;
      commSignalAbort(tier);
      commEnd(tier);
    }
    return rc;
  }
  failEachOther(*tiers);
  SLIMECCL_INFO(kLogInit, comm->rank, "AllGather runs in host tiers: {} hosts of {} ranks, pieces of {} bytes",
                tiers->members.size(), perHost, tiers->pieceBytes);
  comm->hostTiers = std::move(tiers);
  return slimecclSuccess;
}

bool takesHostTiers(const OpRecord& op) {
  return op.coll == Coll::AllGather && op.comm->hostTiers != nullptr && op.blockListener == nullptr &&
         op.blockConsumer == nullptr;
}

slimecclResult_t allGatherInHostTiers(OpRecord op) {
  slimecclComm* comm = op.comm;
  if (op.stream != nullptr && op.stream->cuda != nullptr && isCapturing(op.stream->cuda->cudaStream()))
    return fail(slimecclInvalidUsage,
                "rank {}: {}: an AllGather across hosts in host tiers cannot be captured into a CUDA graph: its "
                "transfers between hosts run on host staging (nothing was queued; as one op, with "
                "SLIMECCL_HOST_TIERS=off, it could not be captured either)",
                comm->rank, describeOp(op));
  op.seq = comm->collSeq++;
  comm->lastRoute.started(op, slimecclRouteHostTiers, "");
  comm->hostTiers->allGathers.fetch_add(1);
  const slimecclResult_t rc = TieredAllGather(op, *comm->hostTiers).run();
  if (rc == slimecclSuccess) return rc;
  // Where a tier failed (a part of this call may have been refused for it), the comm fails with the
  // sentence of the tier that failed first, which names the cause, and the call returns it.
  adoptHostTierFailure(comm);
  if (comm->asyncError.load() == slimecclSuccess) {
    commFail(comm, rc, threadError());
    return rc;
  }
  std::lock_guard<std::mutex> lock(comm->errorMutex);
  return setError(rc, comm->failure);
}

void adoptHostTierFailure(slimecclComm* comm) {
  const HostTiers* tiers = comm->hostTiers.get();
  if (tiers == nullptr || comm->asyncError.load() != slimecclSuccess) return;
  // The tier that failed first names the cause; the other says only that it failed.
  const int first = tiers->pair->firstFailed.load();
  for (slimecclComm* tier :
       {first == 1 ? tiers->acrossHosts : tiers->inHost, first == 1 ? tiers->inHost : tiers->acrossHosts}) {
    const int code = tier->asyncError.load();
    if (code == slimecclSuccess) continue;
    std::string failure;
    {
      std::lock_guard<std::mutex> lock(tier->errorMutex);
      failure = tier->failure;
    }
    const std::vector<int> ranks = tier == tiers->inHost ? tiers->members[tiers->host] : acrossHostsRanks(*tiers);
    commFail(
        comm, static_cast<slimecclResult_t>(code),
        fmt::format("rank {}: AllGather in host tiers failed {} (comm '{}': {}): {}", comm->rank,
                    tier == tiers->inHost ? "within the host" : "between hosts", tier->name, rankMap(ranks), failure));
    return;
  }
}

void waitForHostTierOps(slimecclComm* comm) {
  if (comm->hostTiers == nullptr) return;
  waitForPendingOps(comm->hostTiers->acrossHosts);
  waitForPendingOps(comm->hostTiers->inHost);
}

void endHostTiers(slimecclComm* comm) {
  std::unique_ptr<HostTiers> tiers = std::move(comm->hostTiers);
  if (tiers == nullptr) return;
  if (tiers->pair != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(tiers->pair->mutex);
    tiers->pair->tiers[0] = tiers->pair->tiers[1] = nullptr;
  }
  // Both go before either is waited for: a stream may wait on one tier's op that waits on the other's.
  if (comm->aborted.load()) {
    commSignalAbort(tiers->acrossHosts);
    commSignalAbort(tiers->inHost);
  }
  commEnd(tiers->acrossHosts);
  commEnd(tiers->inHost);
}

void addHostTierPaths(const slimecclComm* comm, slimecclDevicePathInfo* info) {
  const HostTiers* tiers = comm->hostTiers.get();
  info->hostTiers = tiers != nullptr ? 1 : 0;
  info->tieredAllGathers = tiers != nullptr ? tiers->allGathers.load() : 0;
  if (tiers == nullptr) return;
  for (const slimecclComm* tier : {tiers->inHost, tiers->acrossHosts}) {
    info->gpuToGpu = info->gpuToGpu || tier->gpuPeers != nullptr ? 1 : 0;
    info->hostRelays = info->hostRelays || (tier->gpuPeers != nullptr && tier->gpuPeers->relay() != nullptr) ? 1 : 0;
    info->opsGpuToGpu += tier->opsGpuToGpu.load();
    info->opsBySms += tier->opsBySms.load();
    info->opsRelayed += tier->opsRelayed.load();
    info->opsStaged += tier->opsStaged.load();
    info->stagedChunks += tier->stagedChunks.load();
    info->stagingPinned =
        info->stagingPinned || (tier->chunkStaging != nullptr && tier->chunkStaging->pinned()) ? 1 : 0;
  }
}

}  // namespace slimeccl
