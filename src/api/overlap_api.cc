// AllGatherOverlap and AllGatherGemm entry points: validate, then submit (src/overlap/).
#include <utility>

#include "src/api/boundary.h"
#include "src/comm.h"
#include "src/overlap/allgather_gemm.h"
#include "src/overlap/allgather_overlap.h"

using namespace slimeccl;

namespace {

slimecclResult_t runGemm(const GemmCall& call) {
#ifdef SLIMECCL_HAVE_BLAS
  return submitAllGatherGemm(call);
#else
  return fail(slimecclInvalidUsage,
              "rank {}: AllGatherGemm: this build has no BLAS (install OpenBLAS and configure with "
              "SLIMECCL_WITH_BLAS=ON)",
              call.comm->rank);
#endif
}

}  // namespace

SLIMECCL_API slimecclResult_t slimecclAllGatherOverlap(const void* sendbuff, void* recvbuff, size_t sendcount,
                                                       slimecclDataType_t datatype, slimecclChunkFn onChunk,
                                                       void* user, slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AllGatherOverlap", datatype, stream));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherOverlap", "sendbuff", sendbuff, sendcount));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherOverlap", "recvbuff", recvbuff, sendcount));
    SLIMECCL_CHECK(checkHostBuffer(comm, "AllGatherOverlap", "sendbuff", sendbuff));
    SLIMECCL_CHECK(checkHostBuffer(comm, "AllGatherOverlap", "recvbuff", recvbuff));
    if (onChunk == nullptr)
      return fail(slimecclInvalidArgument, "rank {}: AllGatherOverlap: onChunk is NULL", comm->rank);
    return submitAllGatherOverlap(OverlapCall{comm, sendbuff, recvbuff, sendcount, datatype, onChunk, user, stream});
  });
}

SLIMECCL_API slimecclResult_t slimecclAllGatherGemm(const void* aLocal, void* aGathered, const void* b, void* c,
                                                    size_t mLocal, size_t n, size_t k, slimecclDataType_t datatype,
                                                    slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AllGatherGemm", datatype, stream));
    if (datatype != slimecclFloat32 && datatype != slimecclFloat64)
      return fail(slimecclInvalidArgument,
                  "rank {}: AllGatherGemm: datatype {} has no host GEMM (float and double do; the OpenBLAS this "
                  "library uses has no bfloat16 GEMM)",
                  comm->rank, typeName(datatype));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherGemm", "aLocal", aLocal, mLocal * k));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherGemm", "b", b, k * n));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherGemm", "c", c, mLocal * n));
    for (auto [what, ptr] : {std::pair<const char*, const void*>{"aLocal", aLocal}, {"aGathered", aGathered},
                             {"b", b}, {"c", c}})
      SLIMECCL_CHECK(checkHostBuffer(comm, "AllGatherGemm", what, ptr));
    return runGemm(GemmCall{comm, aLocal, aGathered, b, c, mLocal, n, k, datatype, stream});
  });
}
