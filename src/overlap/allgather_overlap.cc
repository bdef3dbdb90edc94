#include "src/overlap/allgather_overlap.h"

#include <fmt/format.h>

#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/exec/block_consumer.h"
#include "src/exec/submit.h"
#include "src/overlap/chunk_delivery.h"
#include "src/stream.h"

namespace slimeccl {

slimecclResult_t submitAllGatherOverlap(const OverlapCall& call, std::shared_ptr<void> userState) {
  slimecclComm* comm = call.comm;
  const size_t blockBytes = call.sendcount * typeSize(call.type);
  ChunkTarget target{call.onChunk, call.user,   static_cast<char*>(call.recvbuff), call.sendcount, blockBytes,
                     comm->rank,   comm->nranks};
  OpRecord op{Coll::AllGather, comm, call.sendbuff, call.recvbuff, call.sendcount, call.type, slimecclSum, -1, -1, 0,
              call.stream};
  SLIMECCL_CHECK(checkOpBuffers(op));
  op.blockListener = std::make_shared<ChunkDelivery>(target, &comm->callbackWorker, std::move(userState));
  return submitOp(op);
}

namespace {

// The comm whose device AllGatherOverlap callback the thread is running, if any.
thread_local const slimecclComm* chunkFnComm = nullptr;

class ChunkFnConsumer : public BlockConsumer {
 public:
  explicit ChunkFnConsumer(const OverlapCall& call)
      : BlockConsumer(call.comm->rank, call.comm->nranks), comm_(call.comm), onChunk_(call.onChunk), user_(call.user),
        count_(call.sendcount) {}

 protected:
  slimecclResult_t consume(int srcRank, const void* block, void*) override {
    const slimecclComm* outer = chunkFnComm;
    chunkFnComm = comm_;
    onChunk_(srcRank, const_cast<void*>(block), count_, user_);
    chunkFnComm = outer;
    return slimecclSuccess;
  }

 private:
  const slimecclComm* comm_;
  slimecclChunkFn onChunk_;
  void* user_;
  size_t count_;
};

}  // namespace

std::shared_ptr<BlockConsumer> chunkFnConsumer(const OverlapCall& call) {
  return std::make_shared<ChunkFnConsumer>(call);
}

bool inDeviceChunkFnOf(const slimecclComm* comm) { return chunkFnComm == comm; }

slimecclResult_t submitDeviceAllGatherOverlap(const OverlapCall& call, std::shared_ptr<BlockConsumer> consumer) {
  slimecclComm* comm = call.comm;
  OpRecord op{Coll::AllGather, comm, call.sendbuff, call.recvbuff, call.sendcount, call.type, slimecclSum, -1, -1, 0,
              call.stream};
  SLIMECCL_CHECK(checkOpBuffers(op));
  op.blockConsumer = consumer;
  const uint64_t byLinesBefore = comm->opsByLines.load();
  SLIMECCL_CHECK(submitOp(op));
  // GPU to GPU, every block was handed as the op was queued, or (a small op by flagged lines) none
  // was and the stream is ordered after the whole op. By host staging none was either, and the CUDA
  // stream waits on a host thread's staged AllGather: the consumer's work waits here until that is
  // done (this op's, not the stream's earlier errors), since queuing a kernel that CUDA loads
  // lazily may wait for the context to go idle while the staging thread's copies wait behind that
  // load. One thread issues a comm's calls, so the count moved by this op alone.
  if (consumer->handedCount() == 0 && comm->opsByLines.load() == byLinesBefore) {
    const CudaStreamBinding& cuda = *call.stream->cuda;
    if (const slimecclResult_t rc = waitForQueuedWork(cuda.cudaStream(), cuda.device()); rc != slimecclSuccess) {
      prefixThreadError(fmt::format("rank {}: AllGatherOverlap: ", comm->rank));
      return rc;
    }
    SLIMECCL_CHECK(commUsable(comm, "AllGatherOverlap"));
  }
  const size_t blockBytes = op.bytes();
  const char* recv = static_cast<const char*>(call.recvbuff);
  const void* own = isInPlace(op) ? recv + static_cast<size_t>(comm->rank) * blockBytes : call.sendbuff;
  return consumer->handRest(recv, own, blockBytes, call.stream->cuda->cudaStream());
}
}  // namespace slimeccl
