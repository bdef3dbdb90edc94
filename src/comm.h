// The communicator: identity, peers, bootstrap ring, lazily made links, sequence numbers and the
// state that failure, finalize and abort move through.
#pragma once

#include <atomic>
#include <list>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/tuner.h"
#include "include/slimeccl.h"
#include "net/net.h"
#include "src/bootstrap/ring.h"
#include "src/bootstrap/unique_id.h"
#include "src/bootstrap/wire.h"
#include "src/debug/flight_recorder.h"
#include "src/debug/last_route.h"
#include "src/device/chunk_staging.h"
#include "src/device/device_gemm.h"
#include "src/device/gpu_peers.h"
#include "topo/gdr_choice.h"
#include "src/device/registrations.h"
#include "src/device/side_stream.h"
#include "src/exec/host_tiers.h"
#include "src/exec/mailbox.h"
#include "src/exec/plan_cache.h"
#include "src/overlap/callback_worker.h"
#include "src/overlap/workspace_pool.h"
#include "src/base/param.h"
#include "src/link/link.h"
#include "src/link/secret_net_auth.h"

struct slimecclComm {
  int rank = 0;
  int nranks = 0;
  // The process that made the comm and its fork generation (src/base/sys/fork_generation.h): a child
  // forked from it may not use the comm.
  int creatorPid = 0;
  uint64_t forkGeneration = 0;
  std::string name;
  slimeccl::CommParams params;
  slimeccl::AlgoOverrides algoOverrides;  // parsed SLIMECCL_ALGO
  slimeccl::TopologySummary topology;     // host index of every rank
  int ranksOnHost = 0;                    // this comm's ranks on this rank's host
  bool ranksShareCores = false;           // and whether they outnumber the cores they may run on
  slimeccl::CommSecret secret{};
  slimeccl::SecretNetAuth netAuth{&secret};  // what the net modules' own introductions prove
  std::vector<slimeccl::RankInfo> peers;
  slimeccl::BootstrapRing ring;
  std::unique_ptr<slimeccl::Bell> bell;
  slimeccl::NetModule* nets[slimeccl::kPeerClasses] = {nullptr, nullptr};
  void* listeners[slimeccl::kPeerClasses] = {nullptr, nullptr};
  std::vector<std::unique_ptr<slimeccl::Link>> links;  // by peer rank, made on first use
  // Accepted connections whose hello has not arrived yet.
  struct PendingAccept {
    int peerClass;
    void* conn;
    void* request;
    slimeccl::ConnectHello hello;
  };
  std::list<PendingAccept> pendingAccepts;  // a list: net modules write into hello in place

  // Sequence numbers, assigned when a call is made (not when it runs).
  uint64_t collSeq = 0;
  uint64_t splitSeq = 0;
  std::vector<uint64_t> sendSeq, recvSeq;

  slimeccl::FlightRecorder recorder;
  slimeccl::LastRoute lastRoute;  // slimecclCommGetLastOpRoute
  slimeccl::PlanCache planCache;  // plans of recent calls, reused when a call repeats
  // Shared slots of a comm on one host over shm (SLIMECCL_SHARED_SLOTS), and the op using them.
  std::unique_ptr<slimeccl::Mailbox> mailbox;
  slimeccl::OpPlan* mailboxActive = nullptr;
  uint64_t nextTraceId = 0;

  std::atomic<bool> aborted{false};
  std::atomic<bool> finalized{false};
  std::atomic<int> asyncError{slimecclSuccess};
  std::mutex errorMutex;
  std::string lastError;
  std::string failure;  // the sentence of the error that failed the comm
  // Told of the comm's first failure, outside its locks (a host tier fails its sibling).
  std::function<void(slimecclResult_t, const std::string&)> onFailure;

  slimeccl::PreMulSumOps premulOps;  // slimecclRedOpCreatePreMulSum's operators
  std::mutex execMutex;              // one executor at a time drives this comm's links
  // The messages of Send and Recv ops that run as eager messages (src/exec/eager_p2p.h), one
  // per op at once; used under execMutex, made on first use.
  std::vector<std::unique_ptr<char[]>> eagerMessages;
  // Calls in flight and ops queued on streams, not yet finished. Atomic: every call counts itself
  // in and out, and the last one out takes the mutex only when waitForPendingOps is waiting.
  std::atomic<int> pendingOps{0};
  std::atomic<int> pendingWaiters{0};
  std::mutex pendingMutex;
  std::condition_variable pendingCv;

  // GPUDirect RDMA (src/device/rdma_choice.h), chosen at init: the peer class whose module reads and
  // writes this rank's device buffers itself (-1: none; they cross through host staging), the GPU
  // it was chosen for, and why.
  int gdrPeerClass = -1;
  int gdrGpu = -1;
  slimeccl::GdrChoice gdr;

  // Device buffers GPU to GPU (src/device/gpu_direct.h): set up by the first op on a CUDA-ordered
  // stream; null where the ranks cannot go so. gpuPeersTried: setup was attempted.
  std::unique_ptr<slimeccl::GpuPeers> gpuPeers;
  // The GPU given by slimecclCommInitAll's device list, the config's cudaDevice or the parent's;
  // -1: the GPU of the first CUDA-ordered stream.
  int device = -1;
  bool gpuPeersTried = false;
  slimeccl::Registrations registrations;  // slimecclCommRegister
  // Ops on device buffers by path, for slimecclCommGetDevicePathInfo.
  std::atomic<uint64_t> opsGpuToGpu{0}, opsStaged{0};
  std::atomic<uint64_t> opsBySms{0};    // of opsGpuToGpu: copied by one kernel (src/device/sm_copy.h)
  std::atomic<uint64_t> opsByLines{0};  // of opsGpuToGpu: by flagged lines (src/device/line_protocol.h)
  std::atomic<uint64_t> opsRelayed{0};  // of opsGpuToGpu: through host relays (src/device/relay_ops.h)
  // Of opsGpuToGpu: reductions by algorithm (algorithms/gpu_reduction.h), and the most blocks one
  // kernel of the rank launched with.
  std::atomic<uint64_t> reductionsOneShot{0}, reductionsTwoShot{0}, reductionsTwoShotSm{0}, reductionsRing{0},
      reductionsDirect{0};
  std::atomic<int> largestGrid{0};
  // Of opsGpuToGpu: AllGathers whose blocks went to a consumer as each landed (AllGatherOverlap and
  // AllGatherGemm on device buffers).
  std::atomic<uint64_t> overlapAllGathers{0};
  std::atomic<uint64_t> overlapReduces{0};  // of opsGpuToGpu: ReduceScatterOverlap's Reduces
  // Ops through host staging run in chunks on comms where some rank uses a GPU (decided at init,
  // alike on every rank; src/exec/chunked_run.h): the arena, null on other comms, and the chunks
  // this rank ran so.
  std::unique_ptr<slimeccl::ChunkStaging> chunkStaging;
  std::atomic<uint64_t> stagedChunks{0};
  // A comm across hosts runs AllGather in two tiers split off it at init (src/exec/host_tiers.h);
  // null where it does not.
  std::unique_ptr<slimeccl::HostTiers> hostTiers;

  // On host buffers: AllGatherGemm's gathered A when the caller gives none, GemmReduceScatter's
  // partial products.
  slimeccl::WorkspacePool gemmWorkspace;
  // AllGatherGemm and GemmReduceScatter on device buffers: cuBLASLt, the gathered A when the caller
  // gives none, and the partial products. Made by the first such call.
  std::unique_ptr<slimeccl::DeviceGemm> deviceGemm;
  // ReduceScatterOverlap's Reduces on device buffers run here, beside the next block's producer
  // on the caller's stream; made on the GPU of the first such call.
  std::unique_ptr<slimeccl::SideStream> overlapSide;
  // Runs AllGatherOverlap callbacks. Last: destroyed (joined) before the state a callback may use.
  slimeccl::CallbackWorker callbackWorker;
};

namespace slimeccl {

// Creates the listeners and doorbell, fills this rank's RankInfo (ring address set by the caller).
slimecclResult_t commPrepare(slimecclComm* comm, int rank, int nranks, RankInfo* mine);
// With the table in hand: pick modules per peer class, form the ring.
slimecclResult_t commFinish(slimecclComm* comm, std::vector<RankInfo> table, const Deadline& deadline);
// Whether the ranks' wishes in `peers` (a GpuScope's, RankInfo::stagesInChunks or ::hostTiers) take
// the comm into it: some rank wants it and none refuses. Alike on every rank.
bool gpuScopeAgreed(const std::vector<RankInfo>& peers, uint8_t RankInfo::*wish);
// Closes every link (after a failure their streams are out of step).
void commDropLinks(slimecclComm* comm);
// Closes links, listeners and the ring.
void commRelease(slimecclComm* comm);
// Marks the comm aborted and wakes its waiters, so its ops and every wait on it end at once.
void commSignalAbort(slimecclComm* comm);
// Waits for the comm's ops, releases it and frees it (slimecclCommDestroy and slimecclCommAbort,
// after commSignalAbort).
void commEnd(slimecclComm* comm);

// Marks the comm failed with code and sentence (the first failure wins).
void commFail(slimecclComm* comm, slimecclResult_t code, const std::string& sentence);
// Success, or the failure (code and sentence) that makes further ops impossible.
slimecclResult_t commUsable(slimecclComm* comm, const char* opName);
void commSetLastError(slimecclComm* comm, const std::string& sentence);

// The context this rank's connections to peers of class `peerClass` are made with.
NetContext commNetContext(slimecclComm* comm, int peerClass);
// The peer's class, whose net module serves it: 0 (same host, or the one forced module) or 1
// (other hosts).
int peerClassOf(const slimecclComm* comm, int peer);
Link* commLink(slimecclComm* comm, int peer);

void opStarted(slimecclComm* comm);
void opFinished(slimecclComm* comm);
void waitForPendingOps(slimecclComm* comm);

// An API call's count on its comm's pending ops, from its checks to its return, so that a
// concurrent abort or destroy waits for it. An op that the call queues in an open group takes the
// count over (takeCallCount), and the group lets it go once it has run the op: one count instead
// of two, which spares each call of a group two locked instructions.
class CallCount {
 public:
  explicit CallCount(slimecclComm* comm);
  ~CallCount();
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;

 private:
  friend bool takeCallCount(slimecclComm* comm);
  slimecclComm* comm_;
  bool handedOver_ = false;
  CallCount* outer_;  // the call this one runs inside, on this thread
};
// Whether the API call running on this thread counts `comm` and has now handed its count to an op
// (whose end must opFinished it); false: the op needs a count of its own (opStarted).
bool takeCallCount(slimecclComm* comm);

}  // namespace slimeccl
