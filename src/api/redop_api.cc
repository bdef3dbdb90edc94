// NCCL's pre-multiplied sum operators (src/premul.h).
#include "src/api/boundary.h"
#include "src/comm.h"

using namespace slimeccl;

SLIMECCL_API slimecclResult_t slimecclRedOpCreatePreMulSum(slimecclRedOp_t* op, void* scalar,
                                                           slimecclDataType_t datatype,
                                                           slimecclScalarResidence_t residence, slimecclComm_t comm) {
  SLIMECCL_API_COMM_BODY(comm, [&] { return comm->premulOps.create(comm->rank, scalar, datatype, residence, op); });
}

SLIMECCL_API slimecclResult_t slimecclRedOpDestroy(slimecclRedOp_t op, slimecclComm_t comm) {
  SLIMECCL_API_COMM_BODY(comm, [&] { return comm->premulOps.destroy(comm->rank, op); });
}
