#include "src/api/boundary.h"

#include <unistd.h>

#include <mutex>

#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/overlap/allgather_overlap.h"
#include "src/stream.h"
#include "src/base/sys/fork_generation.h"

namespace slimeccl {
namespace {
std::mutex globalMutex;
std::string globalError;
thread_local std::string threadLastError;
}  // namespace

slimecclResult_t recordFailure(slimecclComm_t comm, slimecclResult_t rc) {
  std::string sentence = threadError();
  if (sentence.empty()) sentence = slimecclGetErrorString(rc);
  threadLastError = sentence;
  {
    std::lock_guard<std::mutex> lock(globalMutex);
    globalError = sentence;
  }
  // A comm inherited across fork is left alone: its mutex may be held by a thread of the parent.
  if (comm != nullptr && !commInheritedAcrossFork(comm)) commSetLastError(comm, sentence);
  return rc;
}

const char* globalLastError() {
  if (!threadLastError.empty()) return threadLastError.c_str();
  static thread_local std::string copy;
  std::lock_guard<std::mutex> lock(globalMutex);
  copy = globalError;
  return copy.c_str();
}

bool commInheritedAcrossFork(slimecclComm_t comm) { return comm->forkGeneration != forkGeneration(); }

slimecclResult_t checkCommArg(slimecclComm_t comm, const char* opName) {
  if (comm == nullptr) return fail(slimecclInvalidArgument, "{}: comm is NULL", opName);
  // Its threads stayed in the parent, and its sockets and shared memory are the parent's: using
  // them here would take the parent's messages or corrupt its state.
  if (commInheritedAcrossFork(comm))
    return fail(slimecclInvalidUsage,
                "{}: this communicator (rank {} of {}) belongs to process {}, which forked this process ({}); a "
                "forked child cannot use its parent's communicators: make new ones here",
                opName, comm->rank, comm->nranks, comm->creatorPid, getpid());
  return slimecclSuccess;
}

slimecclResult_t checkType(slimecclComm_t comm, const char* opName, slimecclDataType_t type) {
  if (type < 0 || type >= slimecclNumTypes)
    return fail(slimecclInvalidArgument, "rank {}: {}: datatype {} is not a slimecclDataType_t (0..{})", comm->rank,
                opName, static_cast<int>(type), slimecclNumTypes - 1);
  return slimecclSuccess;
}

slimecclResult_t checkRedOp(slimecclComm_t comm, const char* opName, slimecclRedOp_t op, slimecclDataType_t type,
                            PreMulScalar* premul) {
  if (op >= slimecclNumOps) return comm->premulOps.take(comm->rank, opName, op, type, premul);
  if (op < 0)
    return fail(slimecclInvalidArgument, "rank {}: {}: reduction op {} is not a slimecclRedOp_t (0..{})", comm->rank,
                opName, static_cast<int>(op), slimecclNumOps - 1);
  return slimecclSuccess;
}

slimecclResult_t checkRank(slimecclComm_t comm, const char* opName, const char* what, int value) {
  if (value < 0 || value >= comm->nranks)
    return fail(slimecclInvalidArgument, "rank {}: {}: {} {} is out of range (nranks {})", comm->rank, opName, what,
                value, comm->nranks);
  return slimecclSuccess;
}

slimecclResult_t checkBuffer(slimecclComm_t comm, const char* opName, const char* what, const void* ptr, size_t count) {
  if (ptr == nullptr && count > 0)
    return fail(slimecclInvalidArgument, "rank {}: {}: {} is NULL with count {}", comm->rank, opName, what, count);
  return slimecclSuccess;
}

slimecclResult_t checkStream(slimecclComm_t comm, const char* opName, slimecclStream_t stream) {
  if (stream != nullptr && !streamIsLive(stream))
    return fail(slimecclInvalidArgument,
                "rank {}: {}: the stream {} is not a live slimecclStream_t (one from slimecclStreamCreate or "
                "slimecclStreamCreateFromCuda, not destroyed; a cudaStream_t goes through "
                "slimecclStreamCreateFromCuda)",
                comm->rank, opName, static_cast<const void*>(stream));
  return slimecclSuccess;
}

slimecclResult_t checkNotQueuingBlocks(slimecclComm_t comm, const char* opName) {
  if (inDeviceChunkFnOf(comm))
    return fail(slimecclInvalidUsage,
                "rank {}: {}: called from an AllGatherOverlap callback on device buffers of this communicator, which "
                "runs while that op is being queued; call it after slimecclAllGatherOverlap returns",
                comm->rank, opName);
  return slimecclSuccess;
}

slimecclResult_t checkOp(slimecclComm_t comm, const char* opName, slimecclDataType_t type, slimecclStream_t stream) {
  SLIMECCL_CHECK(checkNotQueuingBlocks(comm, opName));
  SLIMECCL_CHECK(checkType(comm, opName, type));
  SLIMECCL_CHECK(checkStream(comm, opName, stream));
  return commUsable(comm, opName);
}

}  // namespace slimeccl
