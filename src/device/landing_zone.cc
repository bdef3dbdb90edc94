#include "src/device/landing_zone.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "src/base/error.h"
#include "src/device/gpu.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

std::string failed(const char* what) {
  return fmt::format("{} failed: {}", what, cudaGetErrorString(cudaGetLastError()));
}

template <typename T>
T readOnce(const T& word) {
  return __atomic_load_n(&word, __ATOMIC_ACQUIRE);
}

}  // namespace

std::unique_ptr<LandingZone> LandingZone::create(int rank, int nranks, std::string* why) {
  std::unique_ptr<LandingZone> zone(new LandingZone());
  zone->rank_ = rank;
  zone->nranks_ = nranks;
  const size_t zoneBytes = lineZoneBytes(nranks);
  void* progress = nullptr;
  // Zeroed on a stream of its own, which holds nothing else: a synchronous copy could wait for the
  // caller's queued work.
  cudaStream_t side = nullptr;
  if (cudaMalloc(&zone->zone_, zoneBytes) != cudaSuccess ||
      cudaMalloc(&zone->state_, sizeof(LineState)) != cudaSuccess) {
    *why = failed("allocating the landing zone");
  } else if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess ||
             cudaMemsetAsync(zone->zone_, 0, zoneBytes, side) != cudaSuccess ||
             cudaMemsetAsync(zone->state_, 0, sizeof(LineState), side) != cudaSuccess ||
             cudaStreamSynchronize(side) != cudaSuccess) {
    *why = failed("clearing the landing zone");
  } else if (cudaHostAlloc(&progress, sizeof(LineProgress) + sizeof(uint32_t),
                           cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
    *why = failed("allocating the progress words in pinned host memory");
  } else if (cudaStreamCreateWithFlags(reinterpret_cast<cudaStream_t*>(&zone->reader_), cudaStreamNonBlocking) !=
             cudaSuccess) {
    *why = failed("creating a stream");
  } else {
    zone->doneBlocksCopy_ = reinterpret_cast<uint32_t*>(static_cast<char*>(progress) + sizeof(LineProgress));
    zone->progress_ = static_cast<LineProgress*>(progress);
    *zone->progress_ = LineProgress{};
    void* onDevice = nullptr;
    if (cudaHostGetDevicePointer(&onDevice, progress, 0) != cudaSuccess)
      *why = failed("mapping the progress words for the GPU");
    zone->progressOnDevice_ = reinterpret_cast<uint64_t>(onDevice);
  }
  if (progress != nullptr && zone->progress_ == nullptr) cudaFreeHost(progress);
  if (side != nullptr) cudaStreamDestroy(side);
  cudaGetLastError();
  if (!why->empty()) return nullptr;
  return zone;
}

LandingZone::~LandingZone() {
  for (void* mapped : opened_) cudaIpcCloseMemHandle(mapped);
  for (void* snapshot : snapshots_) cudaFree(snapshot);
  if (zone_ != nullptr) cudaFree(zone_);
  if (state_ != nullptr) cudaFree(state_);
  if (progress_ != nullptr) cudaFreeHost(progress_);
  if (reader_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(reader_));
  cudaGetLastError();
}

bool LandingZone::address(bool share, Address* out, std::string* why) const {
  std::memset(out, 0, sizeof(*out));
  out->pointer = reinterpret_cast<uint64_t>(zone_);
  if (!share) return true;
  cudaIpcMemHandle_t handle;
  static_assert(sizeof(handle) == sizeof(out->handle));
  if (cudaIpcGetMemHandle(&handle, zone_) != cudaSuccess) {
    *why = failed("sharing the landing zone (cudaIpcGetMemHandle)");
    return false;
  }
  std::memcpy(out->handle, &handle, sizeof(handle));
  return true;
}

bool LandingZone::open(const std::vector<Address>& zones, const std::vector<bool>& sameProcess, std::string* why) {
  peerZones_.assign(nranks_, 0);
  for (int r = 0; r < nranks_; ++r) {
    if (sameProcess[r]) {
      peerZones_[r] = zones[r].pointer;
      continue;
    }
    cudaIpcMemHandle_t handle;
    std::memcpy(&handle, zones[r].handle, sizeof(handle));
    void* mapped = nullptr;
    if (cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      *why = fmt::format("mapping rank {}'s landing zone failed: {}", r, cudaGetErrorString(cudaGetLastError()));
      return false;
    }
    opened_.push_back(mapped);
    peerZones_[r] = reinterpret_cast<uint64_t>(mapped);
  }
  return true;
}

LineJob LandingZone::jobTemplate() const {
  LineJob job;
  for (int r = 0; r < nranks_; ++r) job.zones[r] = peerZones_[r];
  job.state = reinterpret_cast<uint64_t>(state_);
  job.progress = progressOnDevice_;
  job.rank = rank_;
  job.nranks = nranks_;
  return job;
}

bool LandingZone::reaches(const void* p, size_t bytes, int device) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  for (int i = 0; i < kRemembered; ++i)
    if (at >= remembered_[i].begin && at + bytes <= remembered_[i].end) {
      if (i != 0) std::rotate(remembered_, remembered_ + i, remembered_ + i + 1);
      return true;
    }
  if (!kernelReaches(p, device)) return false;
  const char* base = nullptr;
  size_t size = 0;
  if (deviceAllocation(p, &base, &size)) {
    std::move_backward(remembered_, remembered_ + kRemembered - 1, remembered_ + kRemembered);
    remembered_[0] = Range{reinterpret_cast<uintptr_t>(base), reinterpret_cast<uintptr_t>(base) + size};
  }
  return true;
}

void* LandingZone::snapshotSpace(uint64_t bytes) {
  if (bytes <= snapshotBytes_) return snapshots_.back();
  void* space = nullptr;
  if (cudaMalloc(&space, bytes) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  snapshots_.push_back(space);
  snapshotBytes_ = bytes;
  return space;
}

bool LandingZone::stuck(LineSignature* call, uint64_t* report) const {
  const uint64_t reported = readOnce(progress_->stuckId);
  if (reported == 0 || reported == readOnce(progress_->resolvedId)) return false;
  *report = reported;
  std::memcpy(call, const_cast<const LineSignature*>(&progress_->stuckCall), sizeof(*call));
  return true;
}

bool LandingZone::eagerPending() {
  const uint32_t launched = __atomic_load_n(&launchedBlocks_, __ATOMIC_ACQUIRE);
  const auto stream = static_cast<cudaStream_t>(reader_);
  if (cudaMemcpyAsync(doneBlocksCopy_, static_cast<char*>(state_) + offsetof(LineState, doneBlocks), sizeof(uint32_t),
                      cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    // The GPU cannot say: nothing it runs can be waited for any more.
    cudaGetLastError();
    return false;
  }
  return static_cast<int32_t>(*doneBlocksCopy_ - launched) < 0;
}

bool LandingZone::acknowledged() {
  const auto stream = static_cast<cudaStream_t>(reader_);
  std::vector<LineState> state(1);
  const size_t ackBytes = lineZoneBytes(nranks_) - lineAck(nranks_, 0, 0, 0);
  std::vector<uint64_t> acks(ackBytes / sizeof(uint64_t));
  if (cudaMemcpyAsync(state.data(), state_, sizeof(LineState), cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaMemcpyAsync(acks.data(), static_cast<char*>(zone_) + lineAck(nranks_, 0, 0, 0), ackBytes,
                      cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  for (int peer = 0; peer < nranks_; ++peer)
    for (int lane = 0; lane < kLineMaxLanes; ++lane) {
      const uint64_t sent = state[0].sentSteps[peer][lane];
      const size_t at =
          (lineAck(nranks_, peer, lane, static_cast<int>(sent % kLineSlots)) - lineAck(nranks_, 0, 0, 0)) /
          sizeof(uint64_t);
      if (sent != 0 && acks[at] < sent) return false;
    }
  return true;
}

uint64_t LandingZone::doneBlocksOnDevice() const {
  return reinterpret_cast<uint64_t>(state_) + offsetof(LineState, doneBlocks);
}

bool LandingZone::mismatch(int* peer, LineSignature* mine, LineSignature* theirs) const {
  if (readOnce(progress_->mismatch) == 0) return false;
  *peer = progress_->mismatchPeer;
  std::memcpy(mine, &progress_->mine, sizeof(*mine));
  std::memcpy(theirs, &progress_->theirs, sizeof(*theirs));
  return true;
}

void LandingZone::release() { __atomic_store_n(&progress_->release, 1u, __ATOMIC_RELEASE); }

#else

std::unique_ptr<LandingZone> LandingZone::create(int, int, std::string* why) {
  *why = "built without CUDA";
  return nullptr;
}
LandingZone::~LandingZone() = default;
bool LandingZone::address(bool, Address*, std::string* why) const {
  *why = "built without CUDA";
  return false;
}
bool LandingZone::open(const std::vector<Address>&, const std::vector<bool>&, std::string* why) {
  *why = "built without CUDA";
  return false;
}
LineJob LandingZone::jobTemplate() const { return LineJob{}; }
bool LandingZone::reaches(const void*, size_t, int) { return false; }
void* LandingZone::snapshotSpace(uint64_t) { return nullptr; }
bool LandingZone::stuck(LineSignature*, uint64_t*) const { return false; }
bool LandingZone::eagerPending() { return false; }
bool LandingZone::acknowledged() { return true; }

uint64_t LandingZone::doneBlocksOnDevice() const { return 0; }
bool LandingZone::mismatch(int*, LineSignature*, LineSignature*) const { return false; }
void LandingZone::release() {}

#endif

}  // namespace slimeccl
