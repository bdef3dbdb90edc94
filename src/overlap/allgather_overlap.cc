#include "src/overlap/allgather_overlap.h"

#include "src/comm.h"
#include "src/error.h"
#include "src/exec/submit.h"
#include "src/overlap/chunk_delivery.h"

namespace slimeccl {

slimecclResult_t submitAllGatherOverlap(const OverlapCall& call, std::shared_ptr<void> userState) {
  slimecclComm* comm = call.comm;
  const size_t blockBytes = call.sendcount * typeSize(call.type);
  ChunkTarget target{call.onChunk,    call.user, static_cast<char*>(call.recvbuff), call.sendcount, blockBytes,
                     comm->rank,      comm->nranks};
  OpRecord op{Coll::AllGather, comm, call.sendbuff, call.recvbuff, call.sendcount, call.type, slimecclSum, -1, -1, 0,
              call.stream};
  SLIMECCL_CHECK(checkOpBuffers(op));
  op.blockListener = std::make_shared<ChunkDelivery>(target, &comm->callbackWorker, std::move(userState));
  return submitOp(op);
}

}  // namespace slimeccl
