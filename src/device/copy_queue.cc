#include "src/device/copy_queue.h"

#ifdef SLIMECCL_HAVE_CUDA

#include <fmt/format.h>

#include "src/comm.h"
#include "src/device/copy_pieces.h"
#include "src/base/error.h"

namespace slimeccl {

slimecclResult_t queueFlags(MemOpBatch& batch, const OpRecord& op, cudaStream_t stream) {
  const slimecclResult_t rc = batch.enqueue(stream);
  if (rc != slimecclSuccess) prefixThreadError(fmt::format("rank {}: {}: ", op.comm->rank, describeOp(op)));
  return rc;
}

#if CUDART_VERSION >= 13000
namespace {

// The copies in one call (cudaMemcpyBatchAsync, in this form from CUDA 13 on), each after what the
// stream did before, with the hint that they should overlap the SMs' work: CUDA then keeps them on
// copy engines, off the SMs.
slimecclResult_t queueBatched(const OpRecord& op, cudaStream_t stream, const std::vector<Copy>& copies) {
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<size_t> sizes;
  for (const Copy& c : copies) {
    dsts.push_back(c.dst);
    srcs.push_back(c.src);
    sizes.push_back(c.bytes);
  }
  cudaMemcpyAttributes order{};
  order.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  order.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t firstWithOrder = 0;
  OP_CUDA_CHECK(
      cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), copies.size(), &order, &firstWithOrder, 1, stream),
      "queuing copies");
  return slimecclSuccess;
}
}  // namespace
#endif

slimecclResult_t queueCopiesOn(const OpRecord& op, cudaStream_t stream, const std::vector<Copy>& copies, bool withinGpu,
                               bool capturing) {
  // A copy within the GPU goes in pieces, each its own call: one large copy slows the SMs' work
  // beside it far more than the same bytes in pieces (docs/performance.md, "Beside a GEMM").
  if (withinGpu) {
    for (const Copy& c : copies)
      for (const CopyPiece& p : copyPieces(c.bytes, op.comm->params.localCopyPieceBytes))
        SLIMECCL_CHECK(queueCopiesOn(op, stream, {{c.dst + p.offset, c.src + p.offset, p.bytes}}, false, capturing));
    return slimecclSuccess;
  }
#if CUDART_VERSION >= 13000
  // cudaMemcpyBatchAsync refuses the legacy default stream, which is PyTorch's default stream.
  if (!capturing && stream != nullptr && stream != cudaStreamLegacy) return queueBatched(op, stream, copies);
#endif
  for (const Copy& c : copies)
    OP_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDefault, stream), "queuing a copy");
  return slimecclSuccess;
}

slimecclResult_t queueCopies(GpuPeers& peers, const OpRecord& op, cudaStream_t stream, const std::vector<Copy>& copies,
                             int firstSide, bool capturing) {
  if (copies.empty()) return slimecclSuccess;
  const int sides = peers.sideStreams() - firstSide;
  std::vector<Copy> onStream{copies[0]};
  std::vector<bool> used(peers.sideStreams(), false);
  for (size_t i = 1; i < copies.size(); ++i) {
    if (sides <= 0) {
      onStream.push_back(copies[i]);
      continue;
    }
    const int side = firstSide + static_cast<int>((i - 1) % sides);
    cudaStream_t on = static_cast<cudaStream_t>(peers.side(side));
    if (i == 1) OP_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(peers.forkEvent()), stream), "forking copies");
    if (!used[side])
      OP_CUDA_CHECK(cudaStreamWaitEvent(on, static_cast<cudaEvent_t>(peers.forkEvent()), 0), "forking copies");
    used[side] = true;
    SLIMECCL_CHECK(queueCopiesOn(op, on, {copies[i]}, false, capturing));
  }
  SLIMECCL_CHECK(queueCopiesOn(op, stream, onStream, false, capturing));
  for (int side = 0; side < peers.sideStreams(); ++side) {
    if (!used[side]) continue;
    cudaEvent_t join = static_cast<cudaEvent_t>(peers.joinEvent(side));
    OP_CUDA_CHECK(cudaEventRecord(join, static_cast<cudaStream_t>(peers.side(side))), "joining copies");
    OP_CUDA_CHECK(cudaStreamWaitEvent(stream, join, 0), "joining copies");
  }
  return slimecclSuccess;
}

slimecclResult_t forkSide(const GpuPeers& peers, const OpRecord& op, cudaStream_t stream, int side) {
  cudaEvent_t fork = static_cast<cudaEvent_t>(peers.forkEvent());
  OP_CUDA_CHECK(cudaEventRecord(fork, stream), "forking a copy stream");
  OP_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(peers.side(side)), fork, 0), "forking a copy stream");
  return slimecclSuccess;
}

slimecclResult_t joinSide(const GpuPeers& peers, const OpRecord& op, cudaStream_t stream, int side) {
  cudaEvent_t join = static_cast<cudaEvent_t>(peers.joinEvent(side));
  OP_CUDA_CHECK(cudaEventRecord(join, static_cast<cudaStream_t>(peers.side(side))), "joining a copy stream");
  OP_CUDA_CHECK(cudaStreamWaitEvent(stream, join, 0), "joining a copy stream");
  return slimecclSuccess;
}

MemOpBatch asBatch(const Handshake& h) {
  MemOpBatch batch;
  for (const uint64_t flag : h.set) batch.write(flag, 1);
  for (const uint64_t flag : h.wait) {
    batch.waitEquals(flag, 1);
    batch.write(flag, 0);
  }
  return batch;
}

}  // namespace slimeccl

#endif
