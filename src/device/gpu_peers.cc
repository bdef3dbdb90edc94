#include "src/device/gpu_peers.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "src/comm.h"
#include "src/device/driver_entry.h"
#include "src/device/gpu.h"
#include "src/device/gpu_watchdog.h"
#include "src/device/line_ops.h"
#include "src/device/reduce_kernel.h"
#include "src/device/send_snapshot.h"
#include "src/device/sm_copy.h"
#include "src/device/stream_memops.h"
#include "src/base/error.h"
#include "src/base/sys/process.h"
#include "src/base/util/secure.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

// Mappings of peers' buffers kept per comm; the oldest is closed past this many.
constexpr size_t kMaxImported = 512;

// What each rank tells the others when the path is set up.
struct SetupEntry {
  int32_t usable;     // this rank can take part
  uint64_t pidSpace;  // its pid namespace: pids compare only within one
  char busId[32];     // its GPU, named alike in every process
  uint8_t boardKey[16];
  int32_t lineBytesSet;  // SLIMECCL_GPU_LINE_BYTES, of which rank 0's counts
  uint64_t lineBytes;
  int32_t p2pDisable;       // SLIMECCL_P2P_DISABLE: any rank's sends all through host relays
  uint64_t relaySlotBytes;  // SLIMECCL_RELAY_SLOT_BYTES (0: unset), of which rank 0's counts
};

PFN_cuPointerGetAttributes_v7000 pointerGetAttributes() {
  static const auto fn = driverFunction<PFN_cuPointerGetAttributes_v7000>("cuPointerGetAttributes", 7000);
  return fn;
}

// The inode of the calling process's pid namespace (0 where it cannot be read).
uint64_t pidNamespace() {
  struct stat st {};
  return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

}  // namespace

slimecclResult_t failOpStep(const OpRecord& op, int cudaError, const char* what) {
  cudaGetLastError();
  return fail(slimecclUnhandledDeviceError, "rank {}: {}: {} failed: {}", op.comm->rank, describeOp(op), what,
              cudaGetErrorString(static_cast<cudaError_t>(cudaError)));
}

slimecclResult_t GpuPeers::setup(slimecclComm* comm, int device, std::unique_ptr<GpuPeers>* out) {
  const int n = comm->nranks, me = comm->rank;
  std::unique_ptr<GpuPeers> peers(new GpuPeers());
  GpuPeers& p = *peers;
  p.comm_ = comm;
  p.rank_ = me;
  p.nranks_ = n;
  p.device_ = device;
  p.timeoutMs_ = comm->params.timeoutMs;
  p.sendNumber_.assign(n, 0);
  p.recvNumber_.assign(n, 0);
  std::optional<OnDevice> on;
  if (device >= 0) on.emplace(device);
  std::vector<SetupEntry> table(n);
  SetupEntry& mine = table[me];
  std::memset(&mine, 0, sizeof(mine));
  mine.pidSpace = pidNamespace();
  std::string why;
  if (!comm->params.gpuDirect) {
    why = "SLIMECCL_GPU_DIRECT=0";
  } else if (device < 0) {
    why = "no GPU is this rank's";
  } else if (!on->ok() || !streamMemOpsAvailable() || pointerGetAttributes() == nullptr) {
    why = "the driver offers no stream memory operations";
  } else if (cudaDeviceGetPCIBusId(mine.busId, sizeof(mine.busId), device) != cudaSuccess) {
    why = fmt::format("GPU {} has no PCI bus id ({})", device, cudaGetErrorString(cudaGetLastError()));
  } else {
    mine.usable = 1;
  }
  if (me == 0) randomBytes(mine.boardKey, sizeof(mine.boardKey));
  mine.lineBytesSet = comm->params.lineBytes.has_value() ? 1 : 0;
  mine.lineBytes = comm->params.lineBytes.value_or(0);
  mine.p2pDisable = comm->params.p2pDisable ? 1 : 0;
  mine.relaySlotBytes = comm->params.relaySlotBytes.value_or(0);
  const Deadline deadline = Deadline::afterMs(comm->params.timeoutMs);
  SLIMECCL_CHECK(comm->ring.allgather(table.data(), sizeof(SetupEntry), deadline, &comm->aborted));
  // Through host relays where some rank asks for it, or where this rank cannot reach a peer's GPU
  // (the ranks agree on it below).
  std::string relayWhy;
  for (int r = 0; r < n && relayWhy.empty(); ++r)
    if (table[r].p2pDisable) relayWhy = fmt::format("SLIMECCL_P2P_DISABLE=1 on rank {}", r);

  // Whether this rank reaches every peer's GPU.
  const auto ownProcess = [&](int r) { return comm->peers[r].pid == comm->peers[me].pid; };
  for (int r = 0; r < n; ++r) {
    p.sameProcess_ = p.sameProcess_ && ownProcess(r);
    p.samePidSpace_ = p.samePidSpace_ && table[r].pidSpace == mine.pidSpace && mine.pidSpace != 0;
  }
  for (int r = 0; r < n && why.empty(); ++r) {
    if (!table[r].usable) {
      why = fmt::format("rank {} cannot take part (it says why)", r);
      break;
    }
    if (r == me) continue;
    // One bus id is one GPU to share, whole or split (MIG instances of a GPU report its bus id).
    if (strncmp(table[r].busId, mine.busId, sizeof(mine.busId)) == 0) {
      // Streams of one process on one GPU share its hardware queues: a stream waiting for a peer
      // could hold up the very stream that would let it go.
      if (ownProcess(r)) why = fmt::format("rank {} is a thread of this process on the same GPU {}", r, device);
      p.sharesGpu_ = true;
      continue;
    }
    int peerDevice = -1;
    if (cudaDeviceGetByPCIBusId(&peerDevice, table[r].busId) != cudaSuccess) {
      cudaGetLastError();
      // The relays need no view of a peer's GPU (each process may see only its own).
      if (relayWhy.empty()) relayWhy = fmt::format("rank {}'s GPU {} is not visible here", r, table[r].busId);
      continue;
    }
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, peerDevice) != cudaSuccess || !can) {
      cudaGetLastError();
      if (relayWhy.empty())
        relayWhy = fmt::format("GPU {} cannot access rank {}'s GPU {} (no NVLink or PCIe peer-to-peer)", device, r,
                               peerDevice);
      continue;
    }
    if (ownProcess(r) && relayWhy.empty()) {
      const cudaError_t enabled = cudaDeviceEnablePeerAccess(peerDevice, 0);
      cudaGetLastError();
      if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled)
        why = fmt::format("enabling access to GPU {} failed: {}", peerDevice, cudaGetErrorString(enabled));
    }
  }
  if (why.empty() &&
      PeerBoard::attach(table[0].boardKey, sizeof(table[0].boardKey), n, kFlagKinds, &p.board_) != slimecclSuccess) {
    why = threadError();
    clearThreadError();
  }
  if (why.empty()) {
    void* onDevice = nullptr;
    const cudaError_t pinned =
        cudaHostRegister(p.board_->flags(), p.board_->flagBytes(), cudaHostRegisterMapped | cudaHostRegisterPortable);
    if (pinned != cudaSuccess || cudaHostGetDevicePointer(&onDevice, p.board_->flags(), 0) != cudaSuccess) {
      why = fmt::format("pinning the flags failed: {}", cudaGetErrorString(cudaGetLastError()));
    } else {
      p.flagsPinned_ = true;
      p.flagsOnDevice_ = reinterpret_cast<uint64_t>(onDevice);
    }
  }
  if (why.empty()) why = p.makeCopyResources();
  // The landing zone for small ops by flagged lines, where this rank can run their kernels: not
  // beside a peer process on its GPU (a kernel waiting for a rank that takes turns with it on the
  // GPU would hold the GPU from it).
  // Made only where rank 0's setting allows them, and never freed before the comm ends: freeing device
  // memory waits for the GPU, where a peer's stream may be waiting for this rank.
  if (table[0].lineBytesSet) p.lineBytes_ = table[0].lineBytes;
  std::string noLines;
  if (!why.empty()) {
    noLines = why;
  } else if (!relayWhy.empty()) {
    noLines = "the GPUs go through host relays";
  } else if (p.lineBytes_ == 0) {
    noLines = "SLIMECCL_GPU_LINE_BYTES=0 on rank 0";
  } else if (n < 2 || n > kLineMaxRanks) {
    noLines = fmt::format("{} ranks (they serve 2 to {})", n, kLineMaxRanks);
  } else if (p.sharesGpu_) {
    noLines = "a peer process shares this rank's GPU";
  } else if (!loadLineKernels(device)) {
    noLines = "their kernels cannot be loaded on this GPU";
  } else {
    p.zone_ = LandingZone::create(me, n, &noLines);
  }
  // Every rank learns whether all can go GPU to GPU, and where each one's landing zone is; the
  // exchange also means all have attached.
  struct Ready {
    int32_t ready, lines, relay;
    LandingZone::Address zone;
  };
  std::vector<Ready> ready(n);
  std::memset(ready.data(), 0, n * sizeof(Ready));
  ready[me].ready = why.empty() ? 1 : 0;
  ready[me].lines = p.zone_ != nullptr && p.zone_->address(!p.sameProcess_, &ready[me].zone, &noLines) ? 1 : 0;
  ready[me].relay = relayWhy.empty() ? 0 : 1;
  slimecclResult_t exchanged = comm->ring.allgather(ready.data(), sizeof(Ready), deadline, &comm->aborted);
  for (int r = 0; r < n; ++r)
    if (!ready[r].ready && why.empty()) why = fmt::format("rank {} cannot go GPU to GPU", r);
  for (int r = 0; r < n && relayWhy.empty(); ++r)
    if (ready[r].relay) relayWhy = fmt::format("rank {} cannot reach every peer's GPU", r);
  if (exchanged == slimecclSuccess && why.empty() && !relayWhy.empty())
    exchanged =
        p.setUpRelay(table[0].boardKey, sizeof(table[0].boardKey),
                     table[0].relaySlotBytes != 0 ? table[0].relaySlotBytes : relaySlotBytesFor(n), deadline, &why);
  // Every rank that attached removes the names (the first to try succeeds), so none is left behind
  // when some rank could not attach or an exchange failed.
  if (p.board_ != nullptr) p.board_->unlinkName();
  if (p.relay_ != nullptr) p.relay_->unlinkName();
  SLIMECCL_CHECK(exchanged);
  if (!why.empty()) {
    SLIMECCL_INFO(kLogInit, me, "comm '{}': device buffers cross host staging: {}", comm->name, why);
    return slimecclSuccess;
  }
  if (p.relay_ != nullptr) {
    p.unusedZone_ = std::move(p.zone_);
    SLIMECCL_INFO(kLogInit, me,
                  "comm '{}': device buffers go GPU to GPU through host relays (GPU {}, slots of {} bytes): {}",
                  comm->name, device, p.relay_->slotBytes(), relayWhy);
    watchGpuPeers(peers.get());
    *out = std::move(peers);
    return slimecclSuccess;
  }
  std::vector<LandingZone::Address> zones(n);
  std::vector<int32_t> wants(n);
  for (int r = 0; r < n; ++r) {
    zones[r] = ready[r].zone;
    wants[r] = ready[r].lines;
  }
  if (!noLines.empty())
    SLIMECCL_INFO(kLogInit, me, "comm '{}': small ops take no flagged lines: {}", comm->name, noLines);
  SLIMECCL_CHECK(p.setUpLines(zones, wants, deadline));
  SLIMECCL_INFO(kLogInit, me, "comm '{}': device buffers go GPU to GPU (GPU {}, {})", comm->name, device,
                p.sameProcess_ ? "peer access between threads" : "CUDA IPC between processes");
  watchGpuPeers(peers.get());
  *out = std::move(peers);
  return slimecclSuccess;
}

// Made before the ranks agree on the path, so that a rank that cannot make them falls back to
// staging with the others rather than alone.
std::string GpuPeers::makeCopyResources() {
  const auto failed = [](const char* what) {
    return fmt::format("{} failed: {}", what, cudaGetErrorString(cudaGetLastError()));
  };
  // One per peer's copies, and at least two: an overlapped AllGather's local copy and its copies
  // to peers each take one (src/device/overlapped_allgather.h).
  for (int i = 0; i < std::max(2, nranks_ - 1); ++i) {
    cudaStream_t side = nullptr;
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return failed("creating a copy stream");
    sides_.push_back(side);
    cudaEvent_t join = nullptr;
    if (cudaEventCreateWithFlags(&join, cudaEventDisableTiming) != cudaSuccess) return failed("creating an event");
    joins_.push_back(join);
  }
  cudaEvent_t fork = nullptr;
  if (cudaEventCreateWithFlags(&fork, cudaEventDisableTiming) != cudaSuccess) return failed("creating an event");
  fork_ = fork;
  // Zeroed on a side stream of ours, which holds nothing else yet: a synchronous copy could wait
  // for the caller's queued work, and a peer's setup for this rank's.
  cudaStream_t side0 = static_cast<cudaStream_t>(sides_[0]);
  if (cudaMalloc(&smCounters_, kSmCopyCounterWords * sizeof(uint32_t)) != cudaSuccess ||
      cudaMemsetAsync(smCounters_, 0, kSmCopyCounterWords * sizeof(uint32_t), side0) != cudaSuccess ||
      cudaStreamSynchronize(side0) != cudaSuccess)
    return failed("allocating the small ops' counters");
  std::string why;
  snapshotPool_ = makeSnapshotPool(device_, &why);
  return why;
}

slimecclResult_t GpuPeers::setUpLines(const std::vector<LandingZone::Address>& zones, const std::vector<int32_t>& wants,
                                      const Deadline& deadline) {
  for (int r = 0; r < nranks_; ++r)
    if (!wants[r]) {
      if (zone_ != nullptr)
        SLIMECCL_INFO(kLogInit, rank_, "comm '{}': small ops take no flagged lines: rank {} cannot run them",
                      comm_->name, r);
      unusedZone_ = std::move(zone_);
      return slimecclSuccess;
    }
  std::vector<bool> sameProcess(nranks_);
  for (int r = 0; r < nranks_; ++r) sameProcess[r] = comm_->peers[r].pid == comm_->peers[rank_].pid;
  std::string why;
  std::vector<int32_t> opened(nranks_, 0);
  opened[rank_] = zone_->open(zones, sameProcess, &why) ? 1 : 0;
  SLIMECCL_CHECK(comm_->ring.allgather(opened.data(), sizeof(int32_t), deadline, &comm_->aborted));
  for (int r = 0; r < nranks_ && why.empty(); ++r)
    if (!opened[r]) why = fmt::format("rank {} could not map the landing zones", r);
  if (!why.empty()) {
    SLIMECCL_INFO(kLogInit, rank_, "comm '{}': small ops take no flagged lines: {}", comm_->name, why);
    unusedZone_ = std::move(zone_);
  }
  return slimecclSuccess;
}

slimecclResult_t GpuPeers::setUpRelay(const uint8_t* key, size_t keyBytes, size_t slotBytes, const Deadline& deadline,
                                      std::string* why) {
  std::string failed;
  relay_ = HostRelay::create(key, keyBytes, rank_, nranks_, slotBytes, &failed);
  std::vector<int32_t> made(nranks_, 0);
  made[rank_] = relay_ != nullptr ? 1 : 0;
  SLIMECCL_CHECK(comm_->ring.allgather(made.data(), sizeof(int32_t), deadline, &comm_->aborted));
  for (int r = 0; r < nranks_ && why->empty(); ++r)
    if (!made[r]) *why = r == rank_ ? failed : fmt::format("rank {} could not set up the host relays", r);
  if (!why->empty()) relay_.reset();
  return slimecclSuccess;
}

bool GpuPeers::smCopyUsable() const { return relay_ == nullptr && !sharesGpu_ && smCopyKernelLoaded(device_); }

bool GpuPeers::onThisGpu(Region region) const {
  int device = -1;
  return region.bytes == 0 || (isDeviceMemory(region.data, &device) && device == device_);
}

bool GpuPeers::reduceUsable() const { return relay_ == nullptr && !sharesGpu_ && reduceKernelsLoaded(device_); }

void noteGrid(slimecclComm* comm, int blocks) {
  int seen = comm->largestGrid.load(std::memory_order_relaxed);
  while (blocks > seen && !comm->largestGrid.compare_exchange_weak(seen, blocks, std::memory_order_relaxed)) {}
}

void GpuPeers::retire(std::unique_ptr<GpuPeers> peers) {
  if (peers == nullptr) return;
  // The watchdog still watches while the ops drain: it lets them go if a peer exits meanwhile.
  bool drained;
  {
    OnDevice on(peers->device_);
    drained = peers->drain(peers->timeoutMs_);
  }
  if (drained) {
    unwatchGpuPeers(peers.get());
    return;
  }
  // A stream may still reach the flags, the peers' buffers or the events: the watchdog keeps
  // letting its waits go, and frees all once its ops are done.
  SLIMECCL_WARN(kLogAll, peers->rank_,
                "GPU path: ops still in flight at teardown; the watchdog lets them go and "
                "frees what they use once they end");
  orphanGpuPeers(peers.release());
}

bool GpuPeers::orphanDone() {
  std::lock_guard<std::mutex> lock(flightMutex_);
  return orphaned_.load() && inFlight_.empty() && (zone_ == nullptr || !zone_->eagerPending());
}

GpuPeers::~GpuPeers() {
  OnDevice on(device_);
  std::lock_guard<std::mutex> lock(flightMutex_);
  relay_.reset();
  for (const InFlight& op : inFlight_) {
    freeEvents_.push_back(op.started);
    freeEvents_.push_back(op.done);
  }
  for (void* event : freeEvents_) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  for (const Imported& entry : imported_) cudaIpcCloseMemHandle(entry.base);
  for (void* side : sides_) cudaStreamDestroy(static_cast<cudaStream_t>(side));
  for (void* join : joins_) cudaEventDestroy(static_cast<cudaEvent_t>(join));
  if (fork_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(fork_));
  if (smCounters_ != nullptr) cudaFree(smCounters_);
  destroySnapshotPool(snapshotPool_);
  if (flagsPinned_) cudaHostUnregister(board_->flags());
  cudaGetLastError();
}

bool GpuPeers::retireDone() {
  while (!inFlight_.empty()) {
    const cudaError_t rc = cudaEventQuery(static_cast<cudaEvent_t>(inFlight_.front().done));
    if (rc == cudaErrorNotReady) return false;
    cudaGetLastError();
    freeEvents_.push_back(inFlight_.front().started);
    freeEvents_.push_back(inFlight_.front().done);
    inFlight_.pop_front();
  }
  return true;
}

// After timeoutMs (at once on an aborted comm) the waits are let go, and a second later the ops
// are left to the driver.
bool GpuPeers::drain(int64_t timeoutMs) {
  const Deadline letGo = Deadline::afterMs(timeoutMs);
  Deadline giveUp = Deadline::never();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(flightMutex_);
      // A zone goes once the peers have acknowledged every step sent into theirs: they write their
      // acknowledgements into it after the data reached them.
      if (retireDone() && (zone_ == nullptr || (!zone_->eagerPending() && zone_->acknowledged()))) return true;
    }
    if (letGo.expired() || comm_->aborted.load()) released_.store(true);
    if (released_.load()) {
      if (giveUp.isNever()) giveUp = Deadline::afterMs(1000);
      if (giveUp.expired()) return false;
      // A stream sets each flag it passed back to 0: release again every round.
      releaseWaits();
    }
    usleep(200);
  }
}

bool GpuPeers::exportBuffer(const void* ptr, size_t bytes, BufferAddress* out, std::string* why) {
  std::memset(out, 0, sizeof(*out));
  out->pointer = reinterpret_cast<uint64_t>(ptr);
  if (pointerGetAttributes() == nullptr) {
    *why = "the driver offers no cuPointerGetAttributes";
    return false;
  }
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
  CUdeviceptr base = 0;
  unsigned long long bufferId = 0;
  int ordinal = -1, ipcCapable = 0;
  void* values[] = {&base, &bufferId, &ordinal, &ipcCapable};
  if (pointerGetAttributes()(4, attrs, values, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS || base == 0) {
    *why = fmt::format("{} is not device memory", ptr);
    return false;
  }
  if (ordinal != device_) {
    *why = fmt::format("{} is memory of GPU {}, not of the communicator's GPU {}", ptr, ordinal, device_);
    return false;
  }
  out->offset = reinterpret_cast<uint64_t>(ptr) - base;
  out->registered = comm_->registrations.covers(ptr, bytes) ? 1 : 0;
  if (sameProcess_) return true;
  for (size_t i = 0; i < exported_.size(); ++i) {
    if (exported_[i].bufferId != bufferId || exported_[i].base != base) continue;
    std::memcpy(out->handle, exported_[i].handle, kIpcHandleBytes);
    if (i != 0) std::rotate(exported_.begin(), exported_.begin() + i, exported_.begin() + i + 1);
    return true;
  }
  if (!ipcCapable) {
    *why = fmt::format("{} cannot be shared with CUDA IPC (not from cudaMalloc)", ptr);
    return false;
  }
  cudaIpcMemHandle_t handle;
  if (cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(base)) != cudaSuccess) {
    *why = fmt::format("cudaIpcGetMemHandle of {} failed: {}", ptr, cudaGetErrorString(cudaGetLastError()));
    return false;
  }
  static_assert(sizeof(handle) == kIpcHandleBytes);
  Exported entry{bufferId, base, {}};
  std::memcpy(entry.handle, &handle, kIpcHandleBytes);
  std::memcpy(out->handle, &handle, kIpcHandleBytes);
  exported_.insert(exported_.begin(), entry);
  // An allocation freed since keeps its entry until pushed out; its id never comes back.
  if (exported_.size() > kMaxImported) exported_.pop_back();
  return true;
}

slimecclResult_t GpuPeers::importBuffer(int peer, const BufferAddress& address, bool capturing, const OpRecord& op,
                                        char** out) {
  if (sameProcess_ || comm_->peers[peer].pid == getpid()) {
    *out = reinterpret_cast<char*>(address.pointer);
    return slimecclSuccess;
  }
  // The handle names one allocation: memory freed and allocated again at the same address comes
  // with another handle, so a stale mapping is never used.
  for (size_t i = 0; i < imported_.size(); ++i) {
    if (imported_[i].peer != peer || std::memcmp(imported_[i].handle, address.handle, kIpcHandleBytes) != 0) continue;
    imported_[i].pinned = imported_[i].pinned || capturing || address.registered;
    imported_[i].lastUse = ++importUses_;
    *out = imported_[i].base + address.offset;
    if (i != 0) std::rotate(imported_.begin(), imported_.begin() + i, imported_.begin() + i + 1);
    return slimecclSuccess;
  }
  evictMapping();
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, address.handle, kIpcHandleBytes);
  void* base = nullptr;
  cudaError_t rc = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (rc == cudaErrorAlreadyMapped) {
    // The peer freed a buffer this rank still maps, and the new one lies in the same memory: the
    // stale mappings go, then it opens.
    cudaGetLastError();
    if (closeMappingsOf(peer)) rc = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  }
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: mapping a buffer of peer {} with CUDA IPC failed: {}",
                rank_, describeOp(op), peer, cudaGetErrorString(rc));
  }
  Imported entry{peer, {}, static_cast<char*>(base), capturing || address.registered != 0, ++importUses_};
  std::memcpy(entry.handle, address.handle, kIpcHandleBytes);
  imported_.insert(imported_.begin(), entry);
  *out = entry.base + address.offset;
  return slimecclSuccess;
}

bool GpuPeers::closeMappingsOf(int peer) {
  // An op in flight may copy through any of them: they go once none is (its peers' calls are all
  // queued before this one, so they end), or not at all.
  const Deadline deadline = Deadline::afterMs(timeoutMs_);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(flightMutex_);
      if (retireDone()) break;
    }
    if (deadline.expired() || comm_->aborted.load()) return false;
    usleep(50);
  }
  bool closed = false;
  for (auto it = imported_.begin(); it != imported_.end();) {
    if (it->peer != peer || it->pinned || it->lastUse > usesQueued_) {
      ++it;
      continue;
    }
    cudaIpcCloseMemHandle(it->base);
    cudaGetLastError();
    it = imported_.erase(it);
    closed = true;
  }
  return closed;
}

// Past kMaxImported mappings the oldest goes, once no op is in flight (one may copy through it)
// and unless it is pinned; until then the cache grows.
void GpuPeers::evictMapping() {
  if (imported_.size() < kMaxImported) return;
  {
    std::lock_guard<std::mutex> lock(flightMutex_);
    if (!retireDone()) return;
  }
  for (auto it = imported_.rbegin(); it != imported_.rend(); ++it) {
    if (it->pinned || it->lastUse > usesQueued_) continue;
    cudaIpcCloseMemHandle(it->base);
    cudaGetLastError();
    imported_.erase(std::next(it).base());
    return;
  }
}

void* GpuPeers::takeEvent() {
  if (!freeEvents_.empty()) {
    void* event = freeEvents_.back();
    freeEvents_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) return nullptr;
  return event;
}

slimecclResult_t GpuPeers::orderAfterLast(void* stream, const OpRecord& op) {
  if (lastStream_ == nullptr || lastStream_ == stream) return slimecclSuccess;
  if (lastByLines_) {
    MemOpBatch wait;
    wait.waitAtLeast(zone_->doneBlocksOnDevice(), lastLineBlocks_);
    return wait.enqueue(stream);
  }
  if (cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(lastDone_), 0) != cudaSuccess)
    return failOpStep(op, cudaGetLastError(), "ordering it after the comm's last op on another stream");
  return slimecclSuccess;
}

slimecclResult_t GpuPeers::beginOp(void* stream, const OpRecord& op, void** started) {
  std::lock_guard<std::mutex> lock(flightMutex_);
  SLIMECCL_CHECK(orderAfterLast(stream, op));
  *started = takeEvent();
  if (*started == nullptr) return failOpStep(op, cudaGetLastError(), "creating an event");
  if (cudaEventRecord(static_cast<cudaEvent_t>(*started), static_cast<cudaStream_t>(stream)) != cudaSuccess) {
    freeEvents_.push_back(*started);
    return failOpStep(op, cudaGetLastError(), "recording its start");
  }
  return slimecclSuccess;
}

slimecclResult_t GpuPeers::track(void* stream, const OpRecord& op, void* started) {
  std::lock_guard<std::mutex> lock(flightMutex_);
  void* done = takeEvent();
  if (done == nullptr) {
    freeEvents_.push_back(started);
    return failOpStep(op, cudaGetLastError(), "creating an event");
  }
  if (cudaEventRecord(static_cast<cudaEvent_t>(done), static_cast<cudaStream_t>(stream)) != cudaSuccess) {
    freeEvents_.push_back(started);
    freeEvents_.push_back(done);
    return failOpStep(op, cudaGetLastError(), "recording its end");
  }
  inFlight_.push_back(InFlight{started, done, op, 0});
  usesQueued_ = importUses_;
  lastStream_ = stream;
  lastDone_ = done;
  lastByLines_ = false;
  return slimecclSuccess;
}

slimecclResult_t GpuPeers::beginLineOp(void* stream, const OpRecord& op) {
  std::lock_guard<std::mutex> lock(flightMutex_);
  return orderAfterLast(stream, op);
}

void GpuPeers::lineOpQueued(void* stream, uint32_t blocksWhenDone) {
  std::lock_guard<std::mutex> lock(flightMutex_);
  lastStream_ = stream;
  lastByLines_ = true;
  lastLineBlocks_ = blocksWhenDone;
}

bool GpuPeers::idle() {
  std::lock_guard<std::mutex> lock(flightMutex_);
  LineSignature call;
  return inFlight_.empty() && !linesStuck(&call) && !orphaned_.load();
}

void GpuPeers::releaseWaits() {
  if (zone_ != nullptr) zone_->release();
  if (!flagsPinned_) return;
  uint32_t* flags = board_->flags();
  for (int kind = 0; kind < kFlagKinds; ++kind)
    for (int peer = 0; peer < nranks_; ++peer)
      __atomic_store_n(&flags[flagIndex(rank_, static_cast<FlagKind>(kind), peer)], 1u, __ATOMIC_RELEASE);
}

bool GpuPeers::peerGone(int peer) const { return processGone(comm_->peers[peer].pid); }

std::string GpuPeers::awaitedPeers(const OpRecord& op) const {
  if (op.isP2P()) return fmt::format("peer {}", op.peer);
  if (nranks_ == 2) return fmt::format("peer {}", 1 - rank_);
  return fmt::format("one of its {} peers", nranks_ - 1);
}

void GpuPeers::failFromWatchdog(slimecclResult_t code, const std::string& sentence) {
  commFail(comm_, code, sentence);
  released_.store(true);
}

void GpuPeers::watchPeers() {
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer == rank_) continue;
    if (board_->failed(peer)->load(std::memory_order_acquire) != 0) {
      failFromWatchdog(slimecclRemoteError,
                       fmt::format("rank {}: peer {}'s communicator failed (its error names the cause); the streams "
                                   "waiting for it are let go and this communicator failed too",
                                   rank_, peer));
      return;
    }
  }
  const int64_t now = nowNs();
  if (sameProcess_ || !samePidSpace_ || now - lastPeerCheckNs_ < 20 * 1000000) return;
  lastPeerCheckNs_ = now;
  for (int peer = 0; peer < nranks_; ++peer)
    if (peer != rank_ && peerGone(peer)) {
      failFromWatchdog(slimecclRemoteError,
                       fmt::format("rank {}: peer {} (pid {}) exited; its GPU ops cannot finish, so the streams "
                                   "waiting for it are let go and the communicator failed",
                                   rank_, peer, comm_->peers[peer].pid));
      return;
    }
}

bool GpuPeers::linesStuck(LineSignature* call) {
  uint64_t report = 0;
  if (zone_ == nullptr || !zone_->stuck(call, &report)) return false;
  const int64_t now = nowNs();
  if (report != lastReport_) {
    lastReport_ = report;
    lastReportSinceNs_ = now;
  }
  // A thread that still waits reports afresh every few milliseconds. A report unchanged for
  // kStaleReportNs is one whose wait ended while another thread's report was being cleared (a
  // kernel's check and clear of a report are two accesses across PCIe): nothing waits.
  constexpr int64_t kStaleReportNs = 1'000'000'000;
  return now - lastReportSinceNs_ <= kStaleReportNs;
}

void GpuPeers::watchLines() {
  if (zone_ == nullptr) return;
  int peer = -1;
  LineSignature mine, theirs;
  if (zone_->mismatch(&peer, &mine, &theirs)) {
    failFromWatchdog(slimecclInvalidUsage, fmt::format("rank {}: {} does not match peer {}'s call {}", rank_,
                                                       describeLineCall(mine), peer, describeLineCall(theirs)));
    return;
  }
  LineSignature call;
  if (!linesStuck(&call)) {
    stuckSinceNs_ = 0;
    return;
  }
  // The clock starts when the watchdog first sees a kernel's wait reported, some milliseconds
  // after it began.
  const int64_t now = nowNs();
  if (stuckSinceNs_ == 0) stuckSinceNs_ = now;
  if (timeoutMs_ > 0 && now - stuckSinceNs_ > timeoutMs_ * 1000000)
    failFromWatchdog(slimecclTimeout,
                     fmt::format("rank {}: {} did not finish on GPU {} within {} ms (SLIMECCL_TIMEOUT_MS): {} has "
                                 "not reached it; the stream is let go and the communicator failed",
                                 rank_, describeLineCall(call), device_, timeoutMs_,
                                 nranks_ == 2 ? fmt::format("peer {}", 1 - rank_) : std::string("a peer")));
}

void GpuPeers::watch() {
  // A query from this thread must not invalidate a graph another thread is capturing.
  thread_local bool relaxed = [] {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    return true;
  }();
  (void)relaxed;
  OnDevice on(device_);
  if (orphaned_.load()) {
    // Its comm is gone: only its ops are left, let go until they end.
    {
      std::lock_guard<std::mutex> lock(flightMutex_);
      retireDone();
    }
    releaseWaits();
    return;
  }
  if (!released_.load()) watchLines();
  {
    std::lock_guard<std::mutex> lock(flightMutex_);
    retireDone();
    if (!inFlight_.empty()) {
      InFlight& head = inFlight_.front();
      // The clock starts when the op does, not while it waits behind the stream's earlier work.
      if (head.startedNs == 0 && cudaEventQuery(static_cast<cudaEvent_t>(head.started)) == cudaSuccess)
        head.startedNs = nowNs();
      cudaGetLastError();
      if (!released_.load() && timeoutMs_ > 0 && head.startedNs != 0 && nowNs() - head.startedNs > timeoutMs_ * 1000000)
        failFromWatchdog(slimecclTimeout,
                         fmt::format("rank {}: {} did not finish on GPU {} within {} ms (SLIMECCL_TIMEOUT_MS) of its "
                                     "start: {} has not reached it; the stream is let go and the communicator failed",
                                     rank_, describeOp(head.op), device_, timeoutMs_, awaitedPeers(head.op)));
    }
  }
  if (!released_.load()) watchPeers();
  if (!released_.load() && (comm_->aborted.load() || comm_->asyncError.load() != slimecclSuccess))
    released_.store(true);
  if (released_.load() && !failureAnnounced_) {
    // The peers' watchdogs see it and let their streams go too.
    board_->failed(rank_)->store(1, std::memory_order_release);
    failureAnnounced_ = true;
  }
  // A stream sets each flag it passed back to 0, so released flags are set again every pass.
  if (released_.load()) releaseWaits();
}

#else

slimecclResult_t GpuPeers::setup(slimecclComm*, int, std::unique_ptr<GpuPeers>*) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
GpuPeers::~GpuPeers() = default;
void GpuPeers::retire(std::unique_ptr<GpuPeers>) {}
bool GpuPeers::orphanDone() { return true; }
bool GpuPeers::exportBuffer(const void*, size_t, BufferAddress*, std::string* why) {
  *why = gpuAbsence();
  return false;
}
slimecclResult_t GpuPeers::importBuffer(int, const BufferAddress&, bool, const OpRecord&, char**) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t GpuPeers::beginOp(void*, const OpRecord&, void**) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t GpuPeers::track(void*, const OpRecord&, void*) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t GpuPeers::beginLineOp(void*, const OpRecord&) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
void GpuPeers::lineOpQueued(void*, uint32_t) {}
void GpuPeers::releaseWaits() {}
bool GpuPeers::idle() { return true; }
void GpuPeers::watch() {}

#endif

}  // namespace slimeccl
