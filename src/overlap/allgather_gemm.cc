#include "src/overlap/allgather_gemm.h"

#include <memory>

#include "src/comm.h"
#include "src/error.h"
#include "src/overlap/allgather_overlap.h"
#include "src/overlap/gemm_rows.h"
#include "src/overlap/gemm_threads.h"
#include "src/overlap/workspace_pool.h"

namespace slimeccl {
namespace {

// What the callback reads, and the workspace it may gather into, for the life of one op.
struct GemmState {
  GemmRows rows;
  std::unique_ptr<WorkspaceLease> workspace;
};

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  return x != nullptr && y != nullptr && aBytes != 0 && bBytes != 0 && x < y + bBytes && y < x + aBytes;
}

// C is written while A and B are still read: it must not share bytes with any of them; nor may
// the gathered A with B.
slimecclResult_t checkSeparateOutputs(slimecclComm_t comm, const GemmCall& call) {
  const size_t elem = typeSize(call.type), nranks = static_cast<size_t>(comm->nranks);
  const size_t cBytes = nranks * call.mLocal * call.n * elem;
  const struct {
    const char* name;
    const void* data;
    size_t bytes;
  } inputs[] = {{"aLocal", call.aLocal, call.mLocal * call.k * elem},
                {"aGathered", call.aGathered, nranks * call.mLocal * call.k * elem},
                {"b", call.b, call.k * call.n * elem}};
  for (const auto& input : inputs)
    if (overlaps(call.c, cBytes, input.data, input.bytes))
      return fail(slimecclInvalidArgument, "rank {}: AllGatherGemm: c overlaps {}", comm->rank, input.name);
  // The gathered rows land while B is still read. (aGathered against aLocal is the AllGather's
  // own check: apart, or exactly in place.)
  if (overlaps(call.aGathered, inputs[1].bytes, call.b, inputs[2].bytes))
    return fail(slimecclInvalidArgument, "rank {}: AllGatherGemm: aGathered overlaps b", comm->rank);
  return slimecclSuccess;
}

}  // namespace

slimecclResult_t submitAllGatherGemm(const GemmCall& call) {
  slimecclComm* comm = call.comm;
  auto state = std::make_shared<GemmState>();
  state->rows = GemmRows{call.type, call.mLocal, call.n, call.k, call.b, call.c};
  SLIMECCL_CHECK(checkGemmRows(state->rows, comm->rank, comm->nranks));
  SLIMECCL_CHECK(checkSeparateOutputs(comm, call));
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
