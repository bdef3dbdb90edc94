#include "src/overlap/device_reducescatter_overlap.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/comm.h"
#include "src/base/error.h"
#include "src/device/gpu.h"
#include "src/device/side_stream.h"
#include "src/exec/submit.h"
#include "src/op.h"
#include "src/stream.h"

namespace slimeccl {
namespace {

// The comm's side stream on `device`, made by the first call (outside any capture of the caller's).
slimecclResult_t sideStreamOf(slimecclComm* comm, int device, SideStream** out) {
  if (comm->overlapSide == nullptr) SLIMECCL_CHECK(SideStream::create(device, &comm->overlapSide));
  if (comm->overlapSide->device() != device)
    return fail(slimecclInvalidUsage,
                "rank {}: ReduceScatterOverlap: the stream is on GPU {}, but this communicator's overlapped "
                "reductions run on GPU {}",
                comm->rank, device, comm->overlapSide->device());
  *out = comm->overlapSide.get();
  return slimecclSuccess;
}

// Queues the Reduce of elements first .. first+count-1 of block `block` to rank `block` on the
// side stream, after the work on `cudaStream` so far. Where it takes host staging, waits until it
// is done.
slimecclResult_t reduceBeside(const ReduceScatterOverlapCall& call, SideStream& side, int block, size_t first,
                              size_t count, void* cudaStream) {
  slimecclComm* comm = call.comm;
  SLIMECCL_CHECK(side.waitFor(cudaStream));
  const size_t elem = typeSize(call.type);
  const char* send =
      static_cast<const char*>(call.sendbuff) + (static_cast<size_t>(block) * call.recvcount + first) * elem;
  OpRecord op{Coll::Reduce, comm,      send,         static_cast<char*>(call.recvbuff) + first * elem,
              count,        call.type, call.redOp,   block,
              -1,           0,         side.stream()};
  op.premul = call.premul;
  const uint64_t gpuToGpuBefore = comm->opsGpuToGpu.load();
  SLIMECCL_CHECK(submitOp(std::move(op)));
  // One thread issues a comm's calls, so the count moved by this op alone.
  if (comm->opsGpuToGpu.load() != gpuToGpuBefore) {
    comm->overlapReduces.fetch_add(1, std::memory_order_relaxed);
    return slimecclSuccess;
  }
  if (const slimecclResult_t rc = waitForQueuedWork(side.cudaStream(), side.device()); rc != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: ReduceScatterOverlap: ", comm->rank));
    return rc;
  }
  return commUsable(comm, "ReduceScatterOverlap");
}

}  // namespace

slimecclResult_t submitDeviceReduceScatterOverlap(const ReduceScatterOverlapCall& call, BlockProducer& producer) {
  slimecclComm* comm = call.comm;
  const CudaStreamBinding& cuda = *call.stream->cuda;
  SideStream* side = nullptr;
  SLIMECCL_CHECK(sideStreamOf(comm, cuda.device(), &side));
  const size_t elem = typeSize(call.type), perPiece = producer.pieceCount(call.recvcount);
  char* send = static_cast<char*>(call.sendbuff);
  slimecclResult_t rc = slimecclSuccess;
  for (size_t first = 0; first < call.recvcount && rc == slimecclSuccess; first += perPiece) {
    const size_t count = std::min(perPiece, call.recvcount - first);
    for (int block = 0; block < comm->nranks && rc == slimecclSuccess; ++block) {
      char* at = send + (static_cast<size_t>(block) * call.recvcount + first) * elem;
      rc = producer.produce(block, first, count, at, cuda.cudaStream());
      if (rc == slimecclSuccess) rc = reduceBeside(call, *side, block, first, count, cuda.cudaStream());
    }
  }
  // Even after a failure the caller's stream must not run ahead of what the side stream holds.
  const slimecclResult_t joined = side->joinInto(cuda.cudaStream());
  return rc != slimecclSuccess ? rc : joined;
}

}  // namespace slimeccl
