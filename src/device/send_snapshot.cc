#include "src/device/send_snapshot.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "src/device/gpu_peers.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {
// What the pool keeps of freed snapshots between synchronisations: enough that a loop of in-place
// ops of up to this size allocates no memory from the driver after the first.
constexpr uint64_t kKeptSnapshotBytes = uint64_t{256} << 20;
}  // namespace

void* makeSnapshotPool(int device, std::string* why) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
    *why =
        fmt::format("creating the in-place snapshots' memory pool failed: {}", cudaGetErrorString(cudaGetLastError()));
    return nullptr;
  }
  uint64_t kept = kKeptSnapshotBytes;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &kept);
  // A copy into a peer's buffer may run on the peer GPU's engines, which then read the snapshot.
  int devices = 0;
  cudaGetDeviceCount(&devices);
  for (int other = 0; other < devices; ++other) {
    int canAccess = 0;
    if (other == device || cudaDeviceCanAccessPeer(&canAccess, other, device) != cudaSuccess || !canAccess) continue;
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = other;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    cudaMemPoolSetAccess(pool, &access, 1);
  }
  cudaGetLastError();
  return pool;
}

void destroySnapshotPool(void* pool) {
  if (pool != nullptr) cudaMemPoolDestroy(static_cast<cudaMemPool_t>(pool));
}

slimecclResult_t allocateSnapshot(void* pool, size_t bytes, void* stream, const OpRecord& op, char** out) {
  void* memory = nullptr;
  const cudaError_t rc =
      cudaMallocFromPoolAsync(&memory, bytes, static_cast<cudaMemPool_t>(pool), static_cast<cudaStream_t>(stream));
  if (rc != cudaSuccess) return failOpStep(op, rc, "allocating the snapshot of its in-place send");
  *out = static_cast<char*>(memory);
  return slimecclSuccess;
}

slimecclResult_t copySnapshot(char* snapshot, const void* src, size_t bytes, void* stream, const OpRecord& op) {
  const cudaError_t rc =
      cudaMemcpyAsync(snapshot, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream));
  return rc == cudaSuccess ? slimecclSuccess : failOpStep(op, rc, "copying its in-place send aside");
}

slimecclResult_t releaseSnapshot(char* snapshot, void* stream, const OpRecord& op) {
  const cudaError_t rc = cudaFreeAsync(snapshot, static_cast<cudaStream_t>(stream));
  return rc == cudaSuccess ? slimecclSuccess : failOpStep(op, rc, "freeing the snapshot of its in-place send");
}

#endif

}  // namespace slimeccl
