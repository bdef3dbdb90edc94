#include "src/overlap/reducescatter_overlap.h"

#include "src/comm.h"
#include "src/base/error.h"
#include "src/exec/submit.h"
#include "src/op.h"
#include "src/overlap/block_production.h"

namespace slimeccl {

slimecclResult_t submitReduceScatterOverlap(const ReduceScatterOverlapCall& call, std::shared_ptr<void> userState) {
  slimecclComm* comm = call.comm;
  const size_t blockBytes = call.recvcount * typeSize(call.type);
  char* send = static_cast<char*>(call.sendbuff);
  std::vector<OpRecord> reduces;
  for (int block = 0; block < comm->nranks; ++block) {
    OpRecord op{Coll::Reduce,
                comm,
                send + static_cast<size_t>(block) * blockBytes,
                call.recvbuff,
                call.recvcount,
                call.type,
                call.redOp,
                block,
                -1,
                0,
                call.stream};
    op.premul = call.premul;
    SLIMECCL_CHECK(checkOpBuffers(op));
    reduces.push_back(op);
  }
  auto production = std::make_shared<BlockProduction>(
      ProductionTarget{call.onBlock, call.user, send, call.recvcount, blockBytes, comm->nranks}, &comm->callbackWorker,
      std::move(userState));
  for (int block = 0; block < comm->nranks; ++block) {
    OpRecord& op = reduces[static_cast<size_t>(block)];
    op.inputGate = production->gateOf(block);
    if (const slimecclResult_t rc = submitOp(std::move(op)); rc != slimecclSuccess) {
      // The Reduces already queued find the producer stopped and fail; none reads a block after this.
      production->stopAndWait();
      return rc;
    }
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
