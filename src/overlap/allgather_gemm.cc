#include "src/overlap/allgather_gemm.h"

#include <memory>

#include "src/comm.h"
#include "src/base/error.h"
#include "src/overlap/allgather_overlap.h"
#include "src/overlap/gemm_rows.h"
#include "src/overlap/gemm_threads.h"
#include "src/overlap/operand_check.h"
#include "src/overlap/workspace_pool.h"

namespace slimeccl {
namespace {

// What the callback reads, and the workspace it may gather into, for the life of one op.
struct GemmState {
  GemmRows rows;
  std::unique_ptr<WorkspaceLease> workspace;
};

}  // namespace

slimecclResult_t submitAllGatherGemm(const GemmCall& call) {
  slimecclComm* comm = call.comm;
  auto state = std::make_shared<GemmState>();
  state->rows = GemmRows{call.type, call.mLocal, call.n, call.k, call.b, call.c};
  SLIMECCL_CHECK(checkGemmRows(state->rows, comm->rank, comm->nranks, "AllGatherGemm"));
  SLIMECCL_CHECK(checkSeparateOutputs(call));
  applyGemmThreads();
  const size_t sendcount = call.mLocal * call.k;
  void* gathered = call.aGathered;
  if (gathered == nullptr) {
    state->workspace = comm->gemmWorkspace.take(sendcount * typeSize(call.type) * static_cast<size_t>(comm->nranks));
    gathered = state->workspace->data();
  }
  OverlapCall overlap{comm, call.aLocal, gathered, sendcount, call.type, multiplyRowBlock, &state->rows, call.stream};
  return submitAllGatherOverlap(overlap, state);
}

}  // namespace slimeccl
