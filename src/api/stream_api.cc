// Host stream entry points.
#include "src/api/boundary.h"
#include "src/comm.h"
#include "src/stream.h"

using namespace slimeccl;

namespace {
slimecclResult_t checkStreamArg(slimecclStream_t stream, const char* name) {
  if (stream == nullptr) return fail(slimecclInvalidArgument, "{}: stream is NULL", name);
  if (!streamIsLive(stream))
    return fail(slimecclInvalidArgument,
                "{}: the stream {} is not a live slimecclStream_t (one from slimecclStreamCreate or "
                "slimecclStreamCreateFromCuda, not destroyed)",
                name, static_cast<const void*>(stream));
  return slimecclSuccess;
}
}  // namespace

SLIMECCL_API slimecclResult_t slimecclStreamCreate(slimecclStream_t* stream) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (stream == nullptr) return fail(slimecclInvalidArgument, "StreamCreate: stream is NULL");
    return streamCreate(stream);
  });
}

SLIMECCL_API slimecclResult_t slimecclStreamCreateFromCuda(slimecclStream_t* stream, void* cudaStream) {
  SLIMECCL_API_BODY(nullptr, [&] {
    if (stream == nullptr) return fail(slimecclInvalidArgument, "StreamCreateFromCuda: stream is NULL");
    return streamCreateFromCuda(cudaStream, stream);
  });
}

SLIMECCL_API slimecclResult_t slimecclStreamSynchronize(slimecclStream_t stream) {
  SLIMECCL_API_BODY(nullptr, [&] {
    SLIMECCL_CHECK(checkStreamArg(stream, "StreamSynchronize"));
    return streamSynchronize(stream);
  });
}

SLIMECCL_API slimecclResult_t slimecclStreamQuery(slimecclStream_t stream) {
  SLIMECCL_API_BODY(nullptr, [&] {
    SLIMECCL_CHECK(checkStreamArg(stream, "StreamQuery"));
    return streamQuery(stream);
  });
}

SLIMECCL_API slimecclResult_t slimecclStreamDestroy(slimecclStream_t stream) {
  SLIMECCL_API_BODY(nullptr, [&] {
    SLIMECCL_CHECK(checkStreamArg(stream, "StreamDestroy"));
    streamDestroy(stream);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommGetDevicePathInfo(slimecclComm_t comm, slimecclDevicePathInfo* info) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    if (info == nullptr)
      return fail(slimecclInvalidArgument, "rank {}: CommGetDevicePathInfo: info is NULL", comm->rank);
    info->gpuToGpu = comm->gpuPeers != nullptr ? 1 : 0;
    info->opsGpuToGpu = comm->opsGpuToGpu.load();
    info->opsBySms = comm->opsBySms.load();
    info->opsStaged = comm->opsStaged.load();
    info->reductionsOneShot = comm->reductionsOneShot.load();
    info->reductionsTwoShot = comm->reductionsTwoShot.load();
    info->reductionsTwoShotSm = comm->reductionsTwoShotSm.load();
    info->reductionsRing = comm->reductionsRing.load();
    info->flaggedLines = comm->gpuPeers != nullptr && comm->gpuPeers->zone() != nullptr ? 1 : 0;
    info->opsByLines = comm->opsByLines.load();
    info->hostRelays = comm->gpuPeers != nullptr && comm->gpuPeers->relay() != nullptr ? 1 : 0;
    info->opsRelayed = comm->opsRelayed.load();
    info->reductionsDirect = comm->reductionsDirect.load();
    info->largestGrid = comm->largestGrid.load();
    info->overlapAllGathers = comm->overlapAllGathers.load();
    info->overlapReduces = comm->overlapReduces.load();
    info->stagedChunks = comm->stagedChunks.load();
    info->stagingPinned = comm->chunkStaging != nullptr && comm->chunkStaging->pinned() ? 1 : 0;
    addHostTierPaths(comm, info);
    return slimecclSuccess;
  });
}

SLIMECCL_API slimecclResult_t slimecclCommGetLastOpRoute(slimecclComm_t comm, slimecclOpRoute* route) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    if (route == nullptr)
      return fail(slimecclInvalidArgument, "rank {}: CommGetLastOpRoute: route is NULL", comm->rank);
    *route = comm->lastRoute.get();
    return slimecclSuccess;
  });
}
