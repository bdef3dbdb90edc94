// What a communicator whose ranks share one host needs to move device buffers GPU to GPU: the
// peer board (src/device/peer_board.h) with the ranks' flags, pinned for the GPUs (the host can
// set a flag directly, so a stream stuck on one can always be let go, even where every hardware
// queue is busy); the mappings of peers' buffers (CUDA IPC between processes, peer access between
// threads of one process); side streams for copies that run beside each other; and what the watchdog
// (src/device/gpu_watchdog.h) needs to release a stream whose peer is gone. CUDA-free: the core
// includes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/relay_plan.h"
#include "include/slimeccl.h"
#include "src/device/host_relay.h"
#include "src/device/landing_zone.h"
#include "src/base/sys/time.h"
#include "src/device/peer_board.h"
#include "src/op.h"

struct slimecclComm;

namespace slimeccl {

// The flags a rank keeps for each peer; a peer sets one to 1 and the owner's stream waits for it
// and sets it back to 0, so a captured graph can replay the same writes and waits. A reduction
// whose steps wait for a peer's has one flag per step (StepDone, then the kinds after it): a peer
// may finish several steps before this rank clears the flag of the first. A Broadcast relayed in
// rounds (src/device/broadcast_relay.h) uses them, one per round, for "your piece landed".
// Through host relays (src/device/host_relay.h) a writer sets a reader's RelayFull flag of a slot of
// its lane when a chunk is there, and the reader sets the writer's RelayFree flag of that slot once
// it has taken it; one flag per lane kind and slot.
enum class FlagKind { CollArrived = 0, CollLanded = 1, RecvReady = 2, SendLanded = 3, StepDone = 4 };
constexpr int kStepFlags = 6;  // the users check that it is enough (static_assert)
constexpr int kRelayFlagsPerKind = kRelayLanes * kRelaySlots;
constexpr int kRelayFullFlags = 4 + kStepFlags;
constexpr int kRelayFreeFlags = kRelayFullFlags + kRelayFlagsPerKind;
constexpr int kFlagKinds = kRelayFreeFlags + kRelayFlagsPerKind;
// The flag that tells a peer this rank has finished step (or round) `step` of an op.
inline FlagKind stepDoneFlag(int step) { return static_cast<FlagKind>(static_cast<int>(FlagKind::StepDone) + step); }
inline FlagKind relayFullFlag(RelayLane lane, int slot) {
  return static_cast<FlagKind>(kRelayFullFlags + static_cast<int>(lane) * kRelaySlots + slot);
}
inline FlagKind relayFreeFlag(RelayLane lane, int slot) {
  return static_cast<FlagKind>(kRelayFreeFlags + static_cast<int>(lane) * kRelaySlots + slot);
}

// A CUDA call (cudaError_t `cudaError`) of a step of `op` failed: the sentence names the rank,
// the op, the step and the cause. Builds with CUDA only.
slimecclResult_t failOpStep(const OpRecord& op, int cudaError, const char* what);

// Records that a kernel of `comm` launched with `blocks` blocks (slimecclDevicePathInfo::largestGrid).
void noteGrid(slimecclComm* comm, int blocks);

class GpuPeers {
 public:
  // Collective over the comm's ranks; device -1: this rank has no GPU. *out stays null (with the
  // reason logged) where some pair of ranks cannot go GPU to GPU; an error only where the exchange
  // itself failed.
  static slimecclResult_t setup(slimecclComm* comm, int device, std::unique_ptr<GpuPeers>* out);
  // Ends the comm's use: waits for its ops in flight (letting them go after its timeout, at once
  // when aborted) and frees all; ops still running a second after that are left to the watchdog,
  // which keeps letting their waits go and frees all once they end.
  static void retire(std::unique_ptr<GpuPeers> peers);
  // Frees all; its ops have ended.
  ~GpuPeers();
  // Whether the watchdog may free it now: retired with ops running, which have all ended.
  bool orphanDone();
  // Retired with ops still running: it no longer has a comm. Set by the watchdog between passes.
  void markOrphaned() { orphaned_.store(true); }
  GpuPeers(const GpuPeers&) = delete;
  GpuPeers& operator=(const GpuPeers&) = delete;

  int device() const { return device_; }
  PeerBoard& board() const { return *board_; }
  // The flag `peer` sets on this rank, and the flag this rank sets on `peer` (device addresses).
  uint64_t ownFlag(FlagKind kind, int peer) const { return flagOnDevice(flagIndex(rank_, kind, peer)); }
  uint64_t peerFlag(FlagKind kind, int peer) const { return flagOnDevice(flagIndex(peer, kind, rank_)); }

  // Whether `region` is device memory of this rank's GPU (an empty one is).
  bool onThisGpu(Region region) const;
  // Where `p` (device memory of this rank's GPU) is, for peers to map; false with a sentence in
  // *why when it is not memory a peer can map.
  bool exportBuffer(const void* p, size_t bytes, BufferAddress* out, std::string* why);
  // `peer`'s buffer in this process. A mapping made or used while a graph is captured stays for
  // the comm's life (the graph may write through it at any replay), and so does one of a buffer
  // its owner registered.
  // Errors name `op`, for which it maps.
  slimecclResult_t importBuffer(int peer, const BufferAddress& address, bool capturing, const OpRecord& op, char** out);

  // Counters that number the posts on the board, alike on every rank.
  uint64_t nextCollNumber() { return collNumber_++; }
  uint64_t nextSendNumber(int peer) { return sendNumber_[peer]++; }
  uint64_t nextRecvNumber(int peer) { return recvNumber_[peer]++; }

  // Copies that run beside the caller's stream: side(i) for i < sideStreams().
  int sideStreams() const { return static_cast<int>(sides_.size()); }
  void* side(int i) const { return sides_[i]; }
  void* forkEvent() const { return fork_; }
  void* joinEvent(int i) const { return joins_[i]; }
  // Where in-place Sends' snapshots come from (src/device/send_snapshot.h): a cudaMemPool_t.
  void* snapshotPool() const { return snapshotPool_; }
  // Two zeroed words of device memory on which the blocks of a small op's kernel meet.
  uint64_t smCopyCounters() const { return reinterpret_cast<uint64_t>(smCounters_); }
  // Whether small ops may go by one kernel: it is loaded, peers' buffers are mapped (no relays), and
  // no peer shares this GPU (a kernel waiting for a rank that takes turns with it on the GPU would
  // hold the GPU from it).
  bool smCopyUsable() const;
  // Whether reductions may run GPU to GPU through the peers' mappings: their kernels are loaded, and
  // as for smCopyUsable.
  bool reduceUsable() const;

  // The comm's host relays, where its GPUs do not reach each other (or SLIMECCL_P2P_DISABLE=1): then
  // every op GPU to GPU goes through them (src/device/relay_ops.h). Null on the peer-mapped path.
  HostRelay* relay() const { return relay_.get(); }

  // The comm's landing zones for small ops by flagged lines (src/device/line_protocol.h); null where
  // its ranks could not all set them up (then every rank takes the other forms).
  LandingZone* zone() const { return zone_.get(); }
  // Rank 0's SLIMECCL_GPU_LINE_BYTES, alike on every rank: ops of at most this many bytes go by
  // lines (unset: the tuner's bound per op).
  const std::optional<size_t>& lineBytes() const { return lineBytes_; }

  // Before an op queued on `stream` (not captured): it waits for the comm's last op where that
  // went to another stream, since the flags serve one op at a time; *started marks where the op
  // begins, for the watchdog's clock.
  slimecclResult_t beginOp(void* stream, const OpRecord& op, void** started);
  // Before a kernel by flagged lines queued on `stream` (not captured): it waits for the comm's last
  // op where that went to another stream, as beginOp does. After it, the kernel is the comm's last
  // op, done when the count of finished blocks reaches blocksWhenDone.
  slimecclResult_t beginLineOp(void* stream, const OpRecord& op);
  void lineOpQueued(void* stream, uint32_t blocksWhenDone);
  // After it: the watchdog watches it until it is done.
  slimecclResult_t track(void* stream, const OpRecord& op, void* started);
  // Lets every wait of this rank's streams pass from now on (the comm failed or was aborted).
  void releaseWaits();
  // No op of this rank is in flight on the GPU (the watchdog then looks less often).
  bool idle();
  // Called by the watchdog: ends finished ops; fails the comm and releases its waits when the
  // oldest op ran past the timeout after it started, a peer process is gone or a peer's comm
  // failed; tells the peers when this rank's comm failed.
  void watch();

 private:
  GpuPeers() = default;
  uint64_t flagOnDevice(size_t index) const { return flagsOnDevice_ + index * sizeof(uint32_t); }
  // The flag that `setter` sets on `owner`.
  size_t flagIndex(int owner, FlagKind kind, int setter) const {
    return (static_cast<size_t>(owner) * kFlagKinds + static_cast<size_t>(kind)) * nranks_ + setter;
  }
  std::string makeCopyResources();
  // Makes `stream` wait for the comm's last op where that went to another stream: for its end event,
  // or for a kernel by lines, until the count of finished blocks reaches that kernel's. Under
  // flightMutex_.
  slimecclResult_t orderAfterLast(void* stream, const OpRecord& op);
  // Sets up the landing zones with the peers once every rank is ready for the other forms; alike on
  // every rank (an error only where the exchange failed).
  slimecclResult_t setUpLines(const std::vector<LandingZone::Address>& zones, const std::vector<int32_t>& wants,
                              const Deadline& deadline);
  // Sets up the host relays named by `key` with rank 0's slot size, alike on every rank: *why says
  // why not where some rank could not (an error only where the exchange failed).
  slimecclResult_t setUpRelay(const uint8_t* key, size_t keyBytes, size_t slotBytes, const Deadline& deadline,
                              std::string* why);
  // Fails the comm where a kernel by lines found a mismatched call or ran past the timeout.
  void watchLines();
  // Whether a kernel by lines reports a wait that goes on (*call: its call); the watchdog's thread.
  bool linesStuck(LineSignature* call);
  // Who a stuck op waits for, as far as this rank can tell: "peer 3".
  std::string awaitedPeers(const OpRecord& op) const;
  void failFromWatchdog(slimecclResult_t code, const std::string& sentence);
  bool peerGone(int peer) const;
  void watchPeers();
  // Ends the ops that are done; true when none is left. Under flightMutex_.
  bool retireDone();
  // Waits for the ops in flight; false when some were still running when it gave up.
  bool drain(int64_t timeoutMs);
  void evictMapping();
  // Closes this rank's mappings of `peer`'s buffers, once no op is in flight, except those a graph
  // or a registration holds and those handed out for ops not queued yet; false when none was closed.
  bool closeMappingsOf(int peer);
  // A free event, or a new one (null where none can be made). Under flightMutex_.
  void* takeEvent();

  slimecclComm* comm_ = nullptr;
  int rank_ = 0, nranks_ = 0, device_ = 0;
  int64_t timeoutMs_ = 0;
  bool sameProcess_ = true;   // every rank is a thread of this process
  bool samePidSpace_ = true;  // every rank's pid means the same process here
  std::unique_ptr<PeerBoard> board_;
  bool flagsPinned_ = false;
  uint64_t flagsOnDevice_ = 0;  // the board's flags as the GPU addresses them
  uint64_t collNumber_ = 0;
  std::vector<uint64_t> sendNumber_, recvNumber_;
  std::vector<void*> sides_, joins_;
  void* smCounters_ = nullptr;
  void* snapshotPool_ = nullptr;
  bool sharesGpu_ = false;  // a peer process runs on this rank's GPU
  void* fork_ = nullptr;

  struct Exported {
    uint64_t bufferId;
    uint64_t base;
    uint8_t handle[kIpcHandleBytes];
  };
  std::vector<Exported> exported_;  // most recent first
  struct Imported {
    int peer;
    uint8_t handle[kIpcHandleBytes];
    char* base;
    bool pinned;       // a graph may write through it, or its owner registered it
    uint64_t lastUse;  // importUses_ when last handed out
  };
  std::vector<Imported> imported_;  // most recent first
  uint64_t importUses_ = 0;         // mappings handed out so far
  uint64_t usesQueued_ = 0;         // of them, those whose ops are queued (and tracked)

  // The ops in flight on the GPU, oldest first, for the watchdog.
  struct InFlight {
    void* started;  // cudaEvent_t at the op's start
    void* done;     // and at its end
    OpRecord op;
    int64_t startedNs;  // when the watchdog saw it start; 0 before
  };
  std::mutex flightMutex_;
  std::deque<InFlight> inFlight_;
  std::vector<void*> freeEvents_;
  void* lastStream_ = nullptr;  // where the comm's last op went, and its end
  void* lastDone_ = nullptr;
  bool lastByLines_ = false;  // and whether it was a kernel by lines (then when it is done)
  uint32_t lastLineBlocks_ = 0;
  std::unique_ptr<HostRelay> relay_;
  std::unique_ptr<LandingZone> zone_;
  // A zone made where some peer could not take part: kept until the comm ends, since freeing device
  // memory waits for the GPU, where a peer's stream may be waiting for this rank.
  std::unique_ptr<LandingZone> unusedZone_;
  std::optional<size_t> lineBytes_;
  // Since when the watchdog has seen a kernel by lines stuck (0: none is), and the report it saw
  // last with when that report first showed (the watchdog's thread alone uses them).
  int64_t stuckSinceNs_ = 0;
  uint64_t lastReport_ = 0;
  int64_t lastReportSinceNs_ = 0;
  std::atomic<bool> released_{false};
  std::atomic<bool> orphaned_{false};  // retired with ops still running: no comm any more
  bool failureAnnounced_ = false;
  int64_t lastPeerCheckNs_ = 0;
};

}  // namespace slimeccl
