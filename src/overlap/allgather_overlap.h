// AllGatherOverlap and AllGatherGemm as ops: an AllGather whose blocks are handed as they land, on
// host buffers to a callback on the library's thread (src/overlap/chunk_delivery.h), on device
// buffers to a consumer on the calling thread in the CUDA stream's order (src/exec/block_consumer.h).
// Arguments are validated by the caller.
#pragma once

#include <memory>

#include "include/slimeccl.h"

struct slimecclComm;

namespace slimeccl {

class BlockConsumer;

struct OverlapCall {
  slimecclComm* comm;
  const void* sendbuff;
  void* recvbuff;
  size_t sendcount;
  slimecclDataType_t type;
  slimecclChunkFn onChunk;
  void* user;
  slimecclStream_t stream;
};

// `userState` is what `user` points into, kept until the op ends.
slimecclResult_t submitAllGatherOverlap(const OverlapCall& call, std::shared_ptr<void> userState = nullptr);
// On device buffers and a CUDA-ordered stream, outside a group: `consumer` has been handed every
// block when it returns success (call.onChunk is not used).
slimecclResult_t submitDeviceAllGatherOverlap(const OverlapCall& call, std::shared_ptr<BlockConsumer> consumer);
// The consumer of AllGatherOverlap on device buffers: onChunk on the calling thread.
std::shared_ptr<BlockConsumer> chunkFnConsumer(const OverlapCall& call);
// Whether the calling thread is inside such an onChunk of `comm`: the comm is queuing that op, so
// it can take no other call until the op is queued.
bool inDeviceChunkFnOf(const slimecclComm* comm);

}  // namespace slimeccl
