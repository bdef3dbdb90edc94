// ReduceScatterOverlap and GemmReduceScatter on device buffers: for block d = 0, 1, ... (the same
// order on every rank) the producer queues on the caller's CUDA stream the work that fills block d
// of the send buffer; the comm's side stream (src/device/side_stream.h) then waits for that work
// and runs block d's Reduce to rank d, GPU to GPU, while the caller's stream goes on to produce
// block d+1. A producer may fill the blocks in pieces (GemmReduceScatter's runs of rows): then
// piece 0 of every block comes first, then piece 1, ..., each reduced as it is filled, so the
// Reduce that nothing hides at the end is one piece's. The caller's stream joins the side stream at
// the end. Where a Reduce takes host
// staging instead, the call waits for it before producing the next block (queuing a GEMM that CUDA
// loads lazily could otherwise wait for the staging thread's copies, which wait behind the load).
#pragma once

#include "src/overlap/reducescatter_overlap.h"

namespace slimeccl {

class BlockProducer {
 public:
  virtual ~BlockProducer() = default;
  // Elements of a block per piece (the block's recvcount for one piece per block).
  virtual size_t pieceCount(size_t recvcount) const { return recvcount; }
  // Queues on `cudaStream` the work that fills elements first .. first+count-1 of block `block`
  // (at `out`).
  virtual slimecclResult_t produce(int block, size_t first, size_t count, void* out, void* cudaStream) = 0;
};

// Arguments validated by the caller (device buffers of the stream's GPU, a CUDA-ordered stream, no
// open group); call.onBlock is not used.
slimecclResult_t submitDeviceReduceScatterOverlap(const ReduceScatterOverlapCall& call, BlockProducer& producer);

// The producer of ReduceScatterOverlap on device buffers: onBlock on the calling thread.
class ChunkFnProducer final : public BlockProducer {
 public:
  explicit ChunkFnProducer(const ReduceScatterOverlapCall& call)
      : onBlock_(call.onBlock), user_(call.user), count_(call.recvcount) {}
  slimecclResult_t produce(int block, size_t, size_t, void* out, void*) override {
    onBlock_(block, out, count_, user_);
    return slimecclSuccess;
  }

 private:
  slimecclChunkFn onBlock_;
  void* user_;
  size_t count_;
};

}  // namespace slimeccl
