// ReduceScatterOverlap and GemmReduceScatter as ops on host buffers: a ReduceScatter whose send
// blocks are produced one after another (by a callback, a GEMM) on the communicator's callback
// thread while the blocks already produced are being reduced. Block d is reduced to rank d by a
// Reduce of its own, which waits for the block at its gate (src/overlap/block_production.h); every
// rank produces and reduces the blocks in the same order, 0 first. Arguments are validated by the
// caller.
#pragma once

#include <memory>

#include "include/slimeccl.h"
#include "src/premul.h"

struct slimecclComm;

namespace slimeccl {

struct ReduceScatterOverlapCall {
  slimecclComm* comm;
  void* sendbuff;  // nranks blocks of recvcount elements, written by onBlock
  void* recvbuff;
  size_t recvcount;
  slimecclDataType_t type;
  slimecclRedOp_t redOp;
  PreMulScalar premul;
  slimecclChunkFn onBlock;
  void* user;
  slimecclStream_t stream;
};

// `userState` is what `user` and sendbuff point into, kept until the last Reduce has ended.
slimecclResult_t submitReduceScatterOverlap(const ReduceScatterOverlapCall& call,
                                            std::shared_ptr<void> userState = nullptr);

}  // namespace slimeccl
