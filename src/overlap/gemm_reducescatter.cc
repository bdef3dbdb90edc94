#include "src/overlap/gemm_reducescatter.h"

#include <memory>

#include "src/comm.h"
#include "src/base/error.h"
#include "src/op.h"
#include "src/overlap/gemm_rows.h"
#include "src/overlap/gemm_threads.h"
#include "src/overlap/operand_check.h"
#include "src/overlap/reducescatter_overlap.h"
#include "src/overlap/workspace_pool.h"

namespace slimeccl {
namespace {

// What the producer reads, and the workspace it writes the partial products into, for the life of
// one op.
struct PartialProducts {
  slimecclDataType_t type;
  size_t mLocal, n, k;
  const char* a;
  const void* b;
  std::unique_ptr<WorkspaceLease> workspace;
};

// A ReduceScatterOverlap producer: block `block` of the workspace = A's rows of that block x B.
void multiplyBlock(int block, void* out, size_t, void* user) {
  const PartialProducts& p = *static_cast<const PartialProducts*>(user);
  const char* aRows = p.a + static_cast<size_t>(block) * p.mLocal * p.k * typeSize(p.type);
  multiplyRows(p.type, p.mLocal, p.n, p.k, aRows, p.b, out);
}

}  // namespace

slimecclResult_t submitGemmReduceScatter(const GemmReduceScatterCall& call) {
  slimecclComm* comm = call.comm;
  SLIMECCL_CHECK(checkGemmRows(GemmRows{call.type, call.mLocal, call.n, call.k, call.b, call.c}, comm->rank,
                               comm->nranks, "GemmReduceScatter"));
  SLIMECCL_CHECK(checkGemmReduceScatterOperands(call));
  applyGemmThreads();
  auto products = std::make_shared<PartialProducts>();
  *products =
      PartialProducts{call.type, call.mLocal, call.n, call.k, static_cast<const char*>(call.a), call.b, nullptr};
  const size_t recvcount = call.mLocal * call.n;
  products->workspace = comm->gemmWorkspace.take(recvcount * typeSize(call.type) * static_cast<size_t>(comm->nranks));
  ReduceScatterOverlapCall overlap{comm,           products->workspace->data(),
                                   call.c,         recvcount,
                                   call.type,      call.redOp,
                                   call.premul,    multiplyBlock,
                                   products.get(), call.stream};
  return submitReduceScatterOverlap(overlap, products);
}

}  // namespace slimeccl
