#include "src/overlap/operand_check.h"

#include "src/comm.h"
#include "src/base/error.h"
#include "src/op.h"

namespace slimeccl {
namespace {

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  return x != nullptr && y != nullptr && aBytes != 0 && bBytes != 0 && x < y + bBytes && y < x + aBytes;
}

}  // namespace

slimecclResult_t checkSeparateOutputs(const GemmCall& call) {
  const slimecclComm* comm = call.comm;
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
  // The gathered rows land while B is still read.
  if (overlaps(call.aGathered, inputs[1].bytes, call.b, inputs[2].bytes))
    return fail(slimecclInvalidArgument, "rank {}: AllGatherGemm: aGathered overlaps b", comm->rank);
  return slimecclSuccess;
}

slimecclResult_t checkGemmReduceScatterOperands(const GemmReduceScatterCall& call) {
  const size_t elem = typeSize(call.type), nranks = static_cast<size_t>(call.comm->nranks);
  const Region c{static_cast<const char*>(call.c), call.mLocal * call.n * elem};
  const struct {
    const char* name;
    Region region;
  } inputs[] = {{"a", {static_cast<const char*>(call.a), nranks * call.mLocal * call.k * elem}},
                {"b", {static_cast<const char*>(call.b), call.k * call.n * elem}}};
  for (const auto& input : inputs)
    if (c.bytes != 0 && input.region.bytes != 0 && overlaps(c, input.region))
      return fail(slimecclInvalidArgument,
                  "rank {}: GemmReduceScatter: c overlaps {} (c is written while {} is still read)", call.comm->rank,
                  input.name, input.name);
  return slimecclSuccess;
}

}  // namespace slimeccl
