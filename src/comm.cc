#include "src/comm.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "src/device/gpu_rdma.h"
#include "src/device/rdma_choice.h"
#include "src/base/error.h"
#include "src/exec/idle.h"
#include "src/base/sys/cpu_mask.h"
#include "src/base/sys/fork_generation.h"
#include "src/base/util/hash.h"
#include "src/link/system_net_placement.h"
#include "src/base/util/secure.h"
#include "topo/host_id.h"
#include "topo/net_selection.h"

namespace slimeccl {
namespace {

void closeLane(Link* link, Lane* lane, bool sending) {
  if (lane->conn == nullptr) return;
  if (sending)
    link->net->closeSend(lane->conn);
  else
    link->net->closeRecv(lane->conn);
  lane->conn = nullptr;
  // A hello not yet sent belongs to the link (the executor's connectOut made it); the lane's other
  // net operations belong to the plans of their ops.
  for (const std::deque<NetOp*>* queue : {&lane->waiting, &lane->inflight})
    for (NetOp* op : *queue)
      if (op->kind == NetOpKind::Hello) {
        delete reinterpret_cast<ConnectHello*>(op->data);
        delete op;
      }
  lane->waiting.clear();
  lane->inflight.clear();
}

// Once per process, at the first comm: which library answers, and what this build can do.
void logVersionOnce(int rank) {
  static std::once_flag once;
  std::call_once(once, [rank] {
#ifdef SLIMECCL_HAVE_CUDA
    constexpr const char* kCuda = "yes";
#else
    constexpr const char* kCuda = "no";
#endif
#ifdef SLIMECCL_HAVE_IB
    constexpr const char* kVerbs = "yes";
#else
    constexpr const char* kVerbs = "no";
#endif
    SLIMECCL_INFO(kLogInit, rank, "slimeccl {}.{}.{} (built with CUDA: {}, RDMA verbs: {})", SLIMECCL_MAJOR,
                  SLIMECCL_MINOR, SLIMECCL_PATCH, kCuda, kVerbs);
  });
}

// The GPU this rank stages chunks for: the comm's, else the one the creating thread uses; -1.
int stagingGpu(const slimecclComm* comm) { return comm->device >= 0 ? comm->device : gpuInUse(); }

// What this rank says of a mechanism of GPUScope `scope`: kScopeVeto (off), kScopeWanted (it uses a
// GPU, or all), else kScopeIndifferent.
uint8_t gpuScopeWish(const slimecclComm* comm, GpuScope scope) {
  switch (scope) {
    case GpuScope::Off: return kScopeVeto;
    case GpuScope::All: return kScopeWanted;
    case GpuScope::Gpu: return stagingGpu(comm) >= 0 ? kScopeWanted : kScopeIndifferent;
  }
  return kScopeIndifferent;
}

// Every rank decides alike, from the same table: chunks where some rank wants them and none
// vetoes, of rank 0's size. The arena is pinned for this rank's GPU, where it has one.
slimecclResult_t setUpChunkStaging(slimecclComm* comm) {
  if (!gpuScopeAgreed(comm->peers, &RankInfo::stagesInChunks)) return slimecclSuccess;
  SLIMECCL_CHECK(
      ChunkStaging::create(comm->rank, stagingGpu(comm), comm->peers[0].stagingChunkBytes, &comm->chunkStaging));
  SLIMECCL_INFO(kLogInit, comm->rank, "staged ops run in chunks of {} bytes through an arena {}",
                comm->chunkStaging->chunkBytes(),
                comm->chunkStaging->pinned() ? fmt::format("pinned for GPU {}", stagingGpu(comm))
                                             : std::string("of plain host memory (no GPU in use here)"));
  return slimecclSuccess;
}

// Whether the module serving this rank's peers on other hosts (the one module, where one is forced)
// reads and writes its device buffers itself (GPUDirect RDMA). Decided before the ranks know each
// other, and by each rank alone: the wire is the same either way.
slimecclResult_t chooseGdr(slimecclComm* comm) {
  const int peerClass = comm->nets[1] != nullptr ? 1 : 0;
  const int gpu = stagingGpu(comm);
  SLIMECCL_CHECK(chooseGdrForRank(gpu, comm->nets[peerClass], commNetContext(comm, peerClass),
                                  GdrSettings{comm->params.gdr, comm->params.gdrLevel}, &comm->gdr));
  if (comm->gdr.refused) return fail(slimecclInvalidUsage, "rank {}: {}", comm->rank, comm->gdr.reason);
  SLIMECCL_INFO(kLogInit, comm->rank, "device buffers to other hosts: {}", comm->gdr.reason);
  if (comm->gdr.route == DeviceMemoryRoute::None) return slimecclSuccess;
  comm->gdrPeerClass = peerClass;
  comm->gdrGpu = gpu;
  return slimecclSuccess;
}

}  // namespace

slimecclResult_t commPrepare(slimecclComm* comm, int rank, int nranks, RankInfo* mine) {
  logVersionOnce(rank);
  comm->rank = rank;
  comm->nranks = nranks;
  comm->creatorPid = getpid();
  comm->forkGeneration = forkGeneration();
  if (AlgoOverrides::parse(comm->params.algo, &comm->algoOverrides) != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: ", rank));
    return slimecclInvalidArgument;
  }
  comm->bell.reset(Bell::create());
  if (!comm->bell)
    return fail(slimecclSystemError, "rank {}: cannot create the doorbell (memfd): {}", rank, strerror(errno));
  // Topology decides the module of each peer class (SLIMECCL_NET and SLIMECCL_NET_PLUGIN override).
  SLIMECCL_CHECK(selectNetModules(comm->params, rank, comm->nets));
  *mine = RankInfo{};
  std::string host = hostIdentity();
  snprintf(mine->hostId, sizeof(mine->hostId), "%s", host.c_str());
  mine->hostHash = fnv1a64(host);
  mine->pid = getpid();
  mine->rank = rank;
  mine->cpus = CpuMask::ofThisThread();
  mine->canShareSlots = comm->params.sharedSlots && comm->nets[0] == shmNetModule() ? 1 : 0;
  mine->namedGpu = comm->device >= 0 ? 1 : 0;
  mine->stagesInChunks = gpuScopeWish(comm, comm->params.stagingChunks);
  mine->hostTiers = gpuScopeWish(comm, comm->params.hostTiers);
  mine->stagingChunkBytes = comm->params.stagingChunkBytes;
  if (!randomBytes(mine->slotsNonce, sizeof(mine->slotsNonce)) || !makeNonce(&mine->connectionNonce))
    return fail(slimecclSystemError, "rank {}: cannot read random bytes: {}", rank, strerror(errno));
  comm->netAuth.setListenNonce(mine->connectionNonce);
  SLIMECCL_CHECK(chooseGdr(comm));
  for (int peerClass = 0; peerClass < kPeerClasses; ++peerClass) {
    if (comm->nets[peerClass] == nullptr) continue;
    const NetContext ctx = commNetContext(comm, peerClass);
    slimecclResult_t rc = comm->nets[peerClass]->listen(ctx, mine->netHandles[peerClass], &comm->listeners[peerClass]);
    if (rc != slimecclSuccess) {
      prefixThreadError(fmt::format("rank {}: net module '{}': ", rank, comm->nets[peerClass]->name()));
      return rc;
    }
  }
  return slimecclSuccess;
}

slimecclResult_t commFinish(slimecclComm* comm, std::vector<RankInfo> table, const Deadline& deadline) {
  comm->peers = std::move(table);
  comm->sendSeq.assign(comm->nranks, 0);
  comm->recvSeq.assign(comm->nranks, 0);
  comm->links.resize(comm->nranks);
  // Hosts are numbered in order of their first rank.
  comm->topology.hostOf.assign(comm->nranks, -1);
  for (int r = 0, hosts = 0; r < comm->nranks; ++r) {
    if (comm->topology.hostOf[r] >= 0) continue;
    for (int p = r; p < comm->nranks; ++p)
      if (comm->peers[p].hostHash == comm->peers[r].hostHash &&
          strncmp(comm->peers[p].hostId, comm->peers[r].hostId, sizeof(RankInfo::hostId)) == 0)
        comm->topology.hostOf[p] = hosts;
    ++hosts;
  }
  std::vector<CpuMask> cpusOfRanksOnHost;
  for (int p = 0; p < comm->nranks; ++p)
    if (comm->topology.hostOf[p] == comm->topology.hostOf[comm->rank]) cpusOfRanksOnHost.push_back(comm->peers[p].cpus);
  comm->ranksOnHost = static_cast<int>(cpusOfRanksOnHost.size());
  comm->ranksShareCores = ranksOutnumberCores(comm->peers[comm->rank].cpus, cpusOfRanksOnHost);
  chooseIdlePolicy(comm->ranksShareCores, &comm->params.spinIterations, &comm->params.yieldIterations);
  // Every rank decides alike, from the same table: slots only when every rank can use them.
  bool everyRankCanShareSlots = true;
  for (const RankInfo& info : comm->peers) everyRankCanShareSlots = everyRankCanShareSlots && info.canShareSlots;
  if (everyRankCanShareSlots && comm->topology.singleHost() && comm->nranks >= 2 && comm->nranks <= kMailboxMaxRanks)
    SLIMECCL_CHECK(Mailbox::attach(comm->peers[0].slotsNonce, sizeof(comm->peers[0].slotsNonce), comm->rank,
                                   comm->nranks, &comm->mailbox));
  SLIMECCL_CHECK(setUpChunkStaging(comm));
  std::vector<SockAddr> ringAddrs;
  for (const RankInfo& info : comm->peers) ringAddrs.push_back(info.ringAddr);
  slimecclResult_t rc = comm->ring.form(ringAddrs, comm->rank, comm->secret, deadline, &comm->aborted);
  if (rc != slimecclSuccess) return rc;
  if (comm->rank == 0 && logEnabled(LogLevel::Info, kLogTune))
    SLIMECCL_INFO(kLogTune, comm->rank, "tuner table in force:\n{}", describeTunerTable(comm->algoOverrides));
  if (logEnabled(LogLevel::Info, kLogInit)) {
    int local = 0;
    for (int p = 0; p < comm->nranks; ++p) local += p != comm->rank && peerClassOf(comm, p) == 0 ? 1 : 0;
    int remote = comm->nranks - 1 - local;
    const char* slots = comm->mailbox ? "; tiny collectives over shared slots" : "";
    if (comm->nets[1] == nullptr)
      SLIMECCL_INFO(kLogInit, comm->rank, "comm '{}' ready: nranks {}, every peer over '{}' (forced){}", comm->name,
                    comm->nranks, comm->nets[0]->name(), slots);
    else
      SLIMECCL_INFO(kLogInit, comm->rank,
                    "comm '{}' ready: nranks {}, {} peers on this host over '{}', {} elsewhere over '{}'{}", comm->name,
                    comm->nranks, local, comm->nets[0]->name(), remote, comm->nets[1]->name(), slots);
  }
  return slimecclSuccess;
}

bool gpuScopeAgreed(const std::vector<RankInfo>& peers, uint8_t RankInfo::*wish) {
  bool wanted = false, vetoed = false;
  for (const RankInfo& info : peers) {
    wanted = wanted || info.*wish == kScopeWanted;
    vetoed = vetoed || info.*wish == kScopeVeto;
  }
  return wanted && !vetoed;
}

void commDropLinks(slimecclComm* comm) {
  for (auto& link : comm->links) {
    if (!link) continue;
    closeLane(link.get(), &link->dataOut, true);
    closeLane(link.get(), &link->ctrlOut, true);
    closeLane(link.get(), &link->dataIn, false);
    closeLane(link.get(), &link->ctrlIn, false);
    link.reset();
  }
  for (auto& pending : comm->pendingAccepts) comm->nets[pending.peerClass]->closeRecv(pending.conn);
  comm->pendingAccepts.clear();
}

void commRelease(slimecclComm* comm) {
  endHostTiers(comm);
  unregisterFromDumps(comm);
  commDropLinks(comm);
  for (int peerClass = 0; peerClass < kPeerClasses; ++peerClass) {
    if (comm->listeners[peerClass] != nullptr) comm->nets[peerClass]->closeListen(comm->listeners[peerClass]);
    comm->listeners[peerClass] = nullptr;
  }
  // Before the ring: its streams may still wait on flags on the board.
  slimeccl::GpuPeers::retire(std::move(comm->gpuPeers));
  comm->ring.close();
  comm->mailbox.reset();
}

void commSignalAbort(slimecclComm* comm) {
  comm->aborted.store(true);
  // Waiters sleep on the doorbell or in slices; both see the flag promptly.
  if (comm->bell) comm->bell->wake();
}

void commEnd(slimecclComm* comm) {
  waitForPendingOps(comm);
  {
    // The guard must end before the delete: its mutex lives in the comm.
    std::lock_guard<std::mutex> exec(comm->execMutex);
    commRelease(comm);
  }
  delete comm;
}

void commSetLastError(slimecclComm* comm, const std::string& sentence) {
  std::lock_guard<std::mutex> lock(comm->errorMutex);
  comm->lastError = sentence;
}

void commFail(slimecclComm* comm, slimecclResult_t code, const std::string& sentence) {
  {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    comm->lastError = sentence;
    if (comm->asyncError.load() != slimecclSuccess) return;
    comm->failure = sentence;
    comm->asyncError.store(code);
  }
  SLIMECCL_WARN(kLogAll, comm->rank, "{}", sentence);
  if (comm->onFailure) comm->onFailure(code, sentence);
}

slimecclResult_t commUsable(slimecclComm* comm, const char* opName) {
  // Asked here, twice per op: a call of adoptHostTierFailure for a comm without tiers (nearly all
  // of them) costs a small op the saves and restores of its registers.
  if (comm->hostTiers != nullptr) adoptHostTierFailure(comm);
  if (comm->aborted.load())
    return fail(slimecclInvalidUsage, "rank {}: {} on an aborted communicator", comm->rank, opName);
  if (comm->finalized.load())
    return fail(slimecclInvalidUsage, "rank {}: {} called after slimecclCommFinalize", comm->rank, opName);
  int code = comm->asyncError.load();
  if (code != slimecclSuccess) {
    std::lock_guard<std::mutex> lock(comm->errorMutex);
    return fail(static_cast<slimecclResult_t>(code), "rank {}: {} refused: the communicator failed earlier: {}",
                comm->rank, opName, comm->failure);
  }
  return slimecclSuccess;
}

NetContext commNetContext(slimecclComm* comm, int peerClass) {
  NetContext ctx{comm->bell.get(),      comm->rank,    comm->ranksOnHost, comm->ranksShareCores,
                 &systemNetPlacement(), &comm->netAuth};
  if (peerClass == comm->gdrPeerClass) {
    ctx.deviceMemory = &cudaDeviceMemory();
    ctx.deviceRoute = comm->gdr.route;
  }
  return ctx;
}

int peerClassOf(const slimecclComm* comm, int peer) {
  if (comm->nets[1] == nullptr) return 0;
  const RankInfo& me = comm->peers[comm->rank];
  const RankInfo& other = comm->peers[peer];
  bool sameHost = me.hostHash == other.hostHash && strncmp(me.hostId, other.hostId, sizeof(me.hostId)) == 0;
  return sameHost ? 0 : 1;
}

Link* commLink(slimecclComm* comm, int peer) {
  std::unique_ptr<Link>& link = comm->links[peer];
  if (!link) {
    link = std::make_unique<Link>();
    link->peer = peer;
    link->peerClass = peerClassOf(comm, peer);
    link->net = comm->nets[link->peerClass];
    link->dataOut.sending = link->ctrlOut.sending = true;
  }
  return link.get();
}

void opStarted(slimecclComm* comm) { comm->pendingOps.fetch_add(1); }

void opFinished(slimecclComm* comm) {
  // A waiter that sees the count reach 0 may free the comm at once (destroy, abort): nothing of it
  // is touched after the decrement except under the mutex, which the waiter takes before it goes.
  if (comm->pendingWaiters.load() == 0) {
    comm->pendingOps.fetch_sub(1);
    return;
  }
  std::lock_guard<std::mutex> lock(comm->pendingMutex);
  if (comm->pendingOps.fetch_sub(1) == 1) comm->pendingCv.notify_all();
}

namespace {
thread_local CallCount* currentCall = nullptr;
}  // namespace

CallCount::CallCount(slimecclComm* comm) : comm_(comm), outer_(currentCall) {
  opStarted(comm);
  currentCall = this;
}

CallCount::~CallCount() {
  currentCall = outer_;
  if (!handedOver_) opFinished(comm_);
}

bool takeCallCount(slimecclComm* comm) {
  CallCount* call = currentCall;
  if (call == nullptr || call->comm_ != comm || call->handedOver_) return false;
  call->handedOver_ = true;
  return true;
}

void waitForPendingOps(slimecclComm* comm) {
  std::unique_lock<std::mutex> lock(comm->pendingMutex);
  comm->pendingWaiters.fetch_add(1);
  // A decrement that came just before this waiter counted itself in wakes nobody: look again
  // every millisecond.
  while (comm->pendingOps.load() != 0) comm->pendingCv.wait_for(lock, std::chrono::milliseconds(1));
  comm->pendingWaiters.fetch_sub(1);
}

}  // namespace slimeccl
