// AllGatherOverlap and AllGatherGemm as ops: an AllGather whose blocks are handed to a callback
// (src/overlap/chunk_delivery.h) as they land. Arguments are validated by the caller.
#pragma once

#include <memory>

#include "include/slimeccl.h"

struct slimecclComm;

namespace slimeccl {

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

}  // namespace slimeccl
