#include "src/device/chunk_staging.h"

#include <cstring>

#include "src/comm.h"
#include "src/base/error.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {
namespace {

void copyHostRows(char* dst, size_t dstPitch, const char* src, size_t srcPitch, const ChunkRows& rows) {
  for (size_t r = 0; r < rows.rows; ++r) memcpy(dst + r * dstPitch, src + r * srcPitch, rows.width);
}

}  // namespace

#ifdef SLIMECCL_HAVE_CUDA

namespace {

slimecclResult_t cudaFailed(int rank, const OpRecord* op, const char* what, cudaError_t rc) {
  cudaGetLastError();
  return fail(slimecclUnhandledDeviceError, "rank {}: {}staging chunks: {} failed: {}", rank,
              op != nullptr ? describeOp(*op) + ": " : std::string(), what, cudaGetErrorString(rc));
}

// A CUDA call of rank `rank`'s chunk staging, for `op` (null at init).
#define CHUNK_CUDA_CHECK(rank, op, call, what)                                                                  \
  do {                                                                                                          \
    if (const cudaError_t chunkRc = (call); chunkRc != cudaSuccess) return cudaFailed(rank, op, what, chunkRc); \
  } while (0)

}  // namespace

slimecclResult_t ChunkStaging::create(int rank, int device, size_t chunkBytes, std::unique_ptr<ChunkStaging>* out) {
  std::unique_ptr<ChunkStaging> staging(new ChunkStaging());
  ChunkStaging& c = *staging;
  c.rank_ = rank;
  c.bayBytes_ = 2 * chunkBytes;
  const size_t arenaBytes = c.bayBytes_ * kBays;
  if (device >= 0 && gpuPresent()) {
    OnDevice on(device);
    if (!on.ok())
      return fail(slimecclUnhandledDeviceError, "rank {}: staging chunks: GPU {} cannot be made current", rank, device);
    void* arena = nullptr;
    CHUNK_CUDA_CHECK(rank, nullptr, cudaHostAlloc(&arena, arenaBytes, cudaHostAllocPortable),
                     "pinning the staging arena");
    c.arena_ = static_cast<char*>(arena);
    c.pinned_ = true;
    c.device_ = device;
    cudaStream_t in = nullptr, outStream = nullptr;
    CHUNK_CUDA_CHECK(rank, nullptr, cudaStreamCreateWithFlags(&in, cudaStreamNonBlocking), "creating a copy stream");
    c.inStream_ = in;
    CHUNK_CUDA_CHECK(rank, nullptr, cudaStreamCreateWithFlags(&outStream, cudaStreamNonBlocking),
                     "creating a copy stream");
    c.outStream_ = outStream;
    cudaEvent_t event = nullptr;
    CHUNK_CUDA_CHECK(rank, nullptr, cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "creating an event");
    c.legacyDone_ = event;
    // Blocking sync: a run at once may wait on it for as long as the application's work queued
    // before the last queued run takes; it sleeps rather than spin a core.
    CHUNK_CUDA_CHECK(rank, nullptr, cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync),
                     "creating an event");
    c.queuedRunDone_ = event;
    for (int s = 0; s < kBays; ++s) {
      CHUNK_CUDA_CHECK(rank, nullptr, cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "creating an event");
      c.inDone_[s] = event;
      CHUNK_CUDA_CHECK(rank, nullptr, cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "creating an event");
      c.outDone_[s] = event;
    }
  } else {
    c.plainArena_.resize(arenaBytes);
    c.arena_ = c.plainArena_.data();
  }
  *out = std::move(staging);
  return slimecclSuccess;
}

ChunkStaging::~ChunkStaging() {
  if (device_ < 0) return;
  OnDevice on(device_);
  if (outStream_ != nullptr) cudaStreamSynchronize(static_cast<cudaStream_t>(outStream_));
  if (inStream_ != nullptr) cudaStreamSynchronize(static_cast<cudaStream_t>(inStream_));
  for (void* e : inDone_)
    if (e != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  for (void* e : outDone_)
    if (e != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  if (legacyDone_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(legacyDone_));
  if (queuedRunDone_ != nullptr) {
    cudaEventSynchronize(static_cast<cudaEvent_t>(queuedRunDone_));
    cudaEventDestroy(static_cast<cudaEvent_t>(queuedRunDone_));
  }
  if (inStream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(inStream_));
  if (outStream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(outStream_));
  if (arena_ != nullptr) cudaFreeHost(arena_);
  cudaGetLastError();
}

slimecclResult_t ChunkStaging::copyRows(char* dst, size_t dstPitch, const char* src, size_t srcPitch,
                                        const ChunkRows& rows, int device, void* stream, CopyOrder order,
                                        const OpRecord& op, const char* direction) {
  OnDevice on(stream != nullptr ? device_ : device);
  if (!on.ok())
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: staging chunks: GPU {} cannot be made current", rank_,
                describeOp(op), device);
  if (stream == nullptr) {
    CHUNK_CUDA_CHECK(rank_, &op, cudaMemcpy2D(dst, dstPitch, src, srcPitch, rows.width, rows.rows, cudaMemcpyDefault),
                     direction);
    return slimecclSuccess;
  }
  if (order == CopyOrder::AfterLegacyStream) {
    CHUNK_CUDA_CHECK(rank_, &op, cudaEventRecord(static_cast<cudaEvent_t>(legacyDone_), cudaStreamLegacy),
                     "ordering its copy after the legacy stream");
    CHUNK_CUDA_CHECK(rank_, &op,
                     cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(legacyDone_), 0),
                     "ordering its copy after the legacy stream");
  }
  CHUNK_CUDA_CHECK(rank_, &op,
                   cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, rows.width, rows.rows, cudaMemcpyDefault,
                                     static_cast<cudaStream_t>(stream)),
                   direction);
  return slimecclSuccess;
}

slimecclResult_t ChunkStaging::sealIn(int s, const OpRecord& op) {
  return seal(inStream_, inDone_[s], &inSealed_[s], op, "marking its copies in");
}

slimecclResult_t ChunkStaging::awaitIn(int s, const OpRecord& op) {
  return await(inDone_[s], &inSealed_[s], op, "waiting for its copies in");
}

slimecclResult_t ChunkStaging::sealOut(int s, const OpRecord& op) {
  return seal(outStream_, outDone_[s], &outSealed_[s], op, "marking its copies out");
}

slimecclResult_t ChunkStaging::reclaim(int s, const OpRecord& op) {
  SLIMECCL_CHECK(await(queuedRunDone_, &queuedRunSealed_, op, "waiting for the copies of ops queued on a CUDA stream"));
  return await(outDone_[s], &outSealed_[s], op, "waiting for its copies out");
}

slimecclResult_t ChunkStaging::queueAfterLastRun(void* stream, const OpRecord& op) {
  if (!queuedRunSealed_ || device_ < 0) return slimecclSuccess;
  OnDevice on(device_);
  CHUNK_CUDA_CHECK(rank_, &op,
                   cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(queuedRunDone_), 0),
                   "ordering its copies after those of the ops queued before");
  return slimecclSuccess;
}

slimecclResult_t ChunkStaging::markLastRun(void* stream, const OpRecord& op) {
  if (device_ < 0) return slimecclSuccess;
  return seal(stream, queuedRunDone_, &queuedRunSealed_, op, "marking its copies");
}

slimecclResult_t ChunkStaging::seal(void* stream, void* event, bool* sealed, const OpRecord& op, const char* what) {
  if (stream == nullptr) return slimecclSuccess;
  OnDevice on(device_);
  CHUNK_CUDA_CHECK(rank_, &op, cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
                   what);
  *sealed = true;
  return slimecclSuccess;
}

slimecclResult_t ChunkStaging::await(void* event, bool* sealed, const OpRecord& op, const char* what) {
  if (!*sealed) return slimecclSuccess;
  *sealed = false;
  CHUNK_CUDA_CHECK(rank_, &op, cudaEventSynchronize(static_cast<cudaEvent_t>(event)), what);
  return slimecclSuccess;
}

slimecclResult_t ChunkStaging::awaitAllOut(const OpRecord& op) {
  for (bool& sealed : outSealed_) sealed = false;
  if (outStream_ == nullptr) return slimecclSuccess;
  OnDevice on(device_);
  CHUNK_CUDA_CHECK(rank_, &op, cudaStreamSynchronize(static_cast<cudaStream_t>(outStream_)),
                   "waiting for its copies out");
  return slimecclSuccess;
}

#else

slimecclResult_t ChunkStaging::create(int rank, int, size_t chunkBytes, std::unique_ptr<ChunkStaging>* out) {
  std::unique_ptr<ChunkStaging> staging(new ChunkStaging());
  staging->rank_ = rank;
  staging->bayBytes_ = 2 * chunkBytes;
  staging->plainArena_.resize(staging->bayBytes_ * kBays);
  staging->arena_ = staging->plainArena_.data();
  *out = std::move(staging);
  return slimecclSuccess;
}

ChunkStaging::~ChunkStaging() = default;

slimecclResult_t ChunkStaging::copyRows(char*, size_t, const char*, size_t, const ChunkRows&, int, void*, CopyOrder,
                                        const OpRecord& op, const char*) {
  return fail(slimecclInvalidUsage, "rank {}: {}: {}", rank_, describeOp(op), gpuAbsence());
}

slimecclResult_t ChunkStaging::sealIn(int, const OpRecord&) { return slimecclSuccess; }
slimecclResult_t ChunkStaging::awaitIn(int, const OpRecord&) { return slimecclSuccess; }
slimecclResult_t ChunkStaging::sealOut(int, const OpRecord&) { return slimecclSuccess; }
slimecclResult_t ChunkStaging::reclaim(int, const OpRecord&) { return slimecclSuccess; }
slimecclResult_t ChunkStaging::awaitAllOut(const OpRecord&) { return slimecclSuccess; }
slimecclResult_t ChunkStaging::queueAfterLastRun(void*, const OpRecord&) { return slimecclSuccess; }
slimecclResult_t ChunkStaging::markLastRun(void*, const OpRecord&) { return slimecclSuccess; }

#endif

slimecclResult_t ChunkStaging::copyIn(char* staged, const void* buffer, int device, const ChunkRows& rows,
                                      CopyOrder order, const OpRecord& op) {
  if (rows.rows == 0 || rows.width == 0) return slimecclSuccess;
  const char* src = static_cast<const char*>(buffer) + rows.offset;
  if (device < 0) {
    copyHostRows(staged, rows.width, src, rows.pitch, rows);
    return slimecclSuccess;
  }
  return copyRows(staged, rows.width, src, rows.pitch, rows, device, inStream_, order, op,
                  "copying its input to host memory");
}

slimecclResult_t ChunkStaging::copyOnGpu(char* dst, const char* src, size_t bytes, int device, CopyOrder order,
                                         const OpRecord& op) {
  if (bytes == 0) return slimecclSuccess;
  const ChunkRows row{0, bytes, bytes, 1};
  return copyRows(dst, bytes, src, bytes, row, device, inStream_, order, op, "copying its own block on the GPU");
}

slimecclResult_t ChunkStaging::copyOut(void* buffer, int device, const char* staged, const ChunkRows& rows,
                                       const OpRecord& op) {
  if (rows.rows == 0 || rows.width == 0) return slimecclSuccess;
  char* dst = static_cast<char*>(buffer) + rows.offset;
  if (device < 0) {
    copyHostRows(dst, rows.pitch, staged, rows.width, rows);
    return slimecclSuccess;
  }
  return copyRows(dst, rows.pitch, staged, rows.width, rows, device, outStream_, CopyOrder::Unordered, op,
                  "copying its result to the GPU");
}

slimecclResult_t ChunkStaging::queueIn(void* stream, char* staged, const void* buffer, const ChunkRows& rows,
                                       const OpRecord& op) {
  if (rows.rows == 0 || rows.width == 0) return slimecclSuccess;
  return copyRows(staged, rows.width, static_cast<const char*>(buffer) + rows.offset, rows.pitch, rows, device_, stream,
                  CopyOrder::Unordered, op, "copying its input to host memory");
}

slimecclResult_t ChunkStaging::queueOnGpu(void* stream, char* dst, const char* src, size_t bytes, const OpRecord& op) {
  if (bytes == 0) return slimecclSuccess;
  const ChunkRows row{0, bytes, bytes, 1};
  return copyRows(dst, bytes, src, bytes, row, device_, stream, CopyOrder::Unordered, op,
                  "copying its own block on the GPU");
}

slimecclResult_t ChunkStaging::queueOut(void* stream, void* buffer, const char* staged, const ChunkRows& rows,
                                        const OpRecord& op) {
  if (rows.rows == 0 || rows.width == 0) return slimecclSuccess;
  return copyRows(static_cast<char*>(buffer) + rows.offset, rows.pitch, staged, rows.width, rows, device_, stream,
                  CopyOrder::Unordered, op, "copying its result to the GPU");
}

}  // namespace slimeccl
