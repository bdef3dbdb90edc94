// What consumes the blocks of an AllGather on device buffers as they land (AllGatherOverlap and
// AllGatherGemm on a CUDA-ordered stream): each block is handed on the calling thread while the op
// is queued, with the CUDA stream ordered after that block's bytes have landed, so the consumer
// queues its work for the block (a kernel, a GEMM) there. GPU to GPU, the own block comes first,
// then each peer's in the order they land (rank-1, rank-2, ...); where the op takes host staging,
// all come after it, in the same order. CUDA-free.
#pragma once

#include <cstddef>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl {

class BlockConsumer {
 public:
  BlockConsumer(int rank, int nranks) : rank_(rank), handed_(static_cast<size_t>(nranks), false) {}
  virtual ~BlockConsumer() = default;

  // Block `srcRank` is at `block`, landed for the work queued on `cudaStream` from now on.
  slimecclResult_t hand(int srcRank, const void* block, void* cudaStream);
  // Hands the blocks not handed yet, the own one (at `ownBlock`) first, then the others of `recv`
  // (blocks of `blockBytes`) from rank-1 down: the whole AllGather is done before `cudaStream` goes on.
  slimecclResult_t handRest(const char* recv, const void* ownBlock, size_t blockBytes, void* cudaStream);
  // Whether the own block must be copied into the receive buffer (out of place): not where that
  // buffer is the library's own and the consumer reads the own block from the send buffer.
  virtual bool needsOwnBlockInRecv() const { return true; }
  // How many blocks it has been handed.
  size_t handedCount() const;

 protected:
  virtual slimecclResult_t consume(int srcRank, const void* block, void* cudaStream) = 0;

 private:
  int rank_;
  std::vector<bool> handed_;
};

}  // namespace slimeccl
