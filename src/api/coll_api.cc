// Collective and point-to-point entry points: validate, record, submit.
#include "src/api/boundary.h"
#include "src/comm.h"
#include "src/exec/submit.h"

using namespace slimeccl;

namespace {

OpRecord record(Coll coll, slimecclComm_t comm, const void* sendbuff, void* recvbuff, size_t count,
                slimecclDataType_t type, slimecclRedOp_t redOp, int root, int peer, slimecclStream_t stream) {
  return OpRecord{coll, comm, sendbuff, recvbuff, count, type, redOp, root, peer, 0, stream};
}

OpRecord withScalar(OpRecord op, const PreMulScalar& premul) {
  op.premul = premul;
  return op;
}

slimecclResult_t submitChecked(OpRecord op) {
  SLIMECCL_CHECK(checkOpBuffers(op));
  return submitOp(std::move(op));
}

}  // namespace

SLIMECCL_API slimecclResult_t slimecclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                                slimecclDataType_t datatype, slimecclComm_t comm,
                                                slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AllGather", datatype, stream));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGather", "sendbuff", sendbuff, sendcount));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGather", "recvbuff", recvbuff, sendcount));
    if (sendcount == 0) return slimecclSuccess;
    return submitChecked(
        record(Coll::AllGather, comm, sendbuff, recvbuff, sendcount, datatype, slimecclSum, -1, -1, stream));
  });
}

SLIMECCL_API slimecclResult_t slimecclSend(const void* sendbuff, size_t count, slimecclDataType_t datatype, int peer,
                                           slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "Send", datatype, stream));
    SLIMECCL_CHECK(checkRank(comm, "Send", "peer", peer));
    SLIMECCL_CHECK(checkBuffer(comm, "Send", "sendbuff", sendbuff, count));
    if (count == 0) return slimecclSuccess;
    return submitChecked(record(Coll::Send, comm, sendbuff, nullptr, count, datatype, slimecclSum, -1, peer, stream));
  });
}

SLIMECCL_API slimecclResult_t slimecclRecv(void* recvbuff, size_t count, slimecclDataType_t datatype, int peer,
                                           slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "Recv", datatype, stream));
    SLIMECCL_CHECK(checkRank(comm, "Recv", "peer", peer));
    SLIMECCL_CHECK(checkBuffer(comm, "Recv", "recvbuff", recvbuff, count));
    if (count == 0) return slimecclSuccess;
    return submitChecked(record(Coll::Recv, comm, nullptr, recvbuff, count, datatype, slimecclSum, -1, peer, stream));
  });
}

SLIMECCL_API slimecclResult_t slimecclGroupStart(void) {
  SLIMECCL_API_BODY(nullptr, [] { return groupStart(); });
}

SLIMECCL_API slimecclResult_t slimecclGroupEnd(void) {
  SLIMECCL_API_BODY(nullptr, [] { return groupEnd(); });
}

SLIMECCL_API slimecclResult_t slimecclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                                slimecclDataType_t datatype, slimecclRedOp_t op, slimecclComm_t comm,
                                                slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AllReduce", datatype, stream));
    PreMulScalar premul;
    SLIMECCL_CHECK(checkRedOp(comm, "AllReduce", op, datatype, &premul));
    SLIMECCL_CHECK(checkBuffer(comm, "AllReduce", "sendbuff", sendbuff, count));
    SLIMECCL_CHECK(checkBuffer(comm, "AllReduce", "recvbuff", recvbuff, count));
    if (count == 0) return slimecclSuccess;
    return submitChecked(
        withScalar(record(Coll::AllReduce, comm, sendbuff, recvbuff, count, datatype, op, -1, -1, stream), premul));
  });
}

SLIMECCL_API slimecclResult_t slimecclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                                    slimecclDataType_t datatype, slimecclRedOp_t op,
                                                    slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "ReduceScatter", datatype, stream));
    PreMulScalar premul;
    SLIMECCL_CHECK(checkRedOp(comm, "ReduceScatter", op, datatype, &premul));
    SLIMECCL_CHECK(checkBuffer(comm, "ReduceScatter", "sendbuff", sendbuff, recvcount));
    SLIMECCL_CHECK(checkBuffer(comm, "ReduceScatter", "recvbuff", recvbuff, recvcount));
    if (recvcount == 0) return slimecclSuccess;
    return submitChecked(withScalar(
        record(Coll::ReduceScatter, comm, sendbuff, recvbuff, recvcount, datatype, op, -1, -1, stream), premul));
  });
}

SLIMECCL_API slimecclResult_t slimecclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                                slimecclDataType_t datatype, int root, slimecclComm_t comm,
                                                slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "Broadcast", datatype, stream));
    SLIMECCL_CHECK(checkRank(comm, "Broadcast", "root", root));
    if (comm->rank == root) SLIMECCL_CHECK(checkBuffer(comm, "Broadcast", "sendbuff", sendbuff, count));
    SLIMECCL_CHECK(checkBuffer(comm, "Broadcast", "recvbuff", recvbuff, count));
    if (count == 0) return slimecclSuccess;
    return submitChecked(
        record(Coll::Broadcast, comm, sendbuff, recvbuff, count, datatype, slimecclSum, root, -1, stream));
  });
}

SLIMECCL_API slimecclResult_t slimecclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                             slimecclDataType_t datatype, slimecclRedOp_t op, int root,
                                             slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "Reduce", datatype, stream));
    PreMulScalar premul;
    SLIMECCL_CHECK(checkRedOp(comm, "Reduce", op, datatype, &premul));
    SLIMECCL_CHECK(checkRank(comm, "Reduce", "root", root));
    SLIMECCL_CHECK(checkBuffer(comm, "Reduce", "sendbuff", sendbuff, count));
    if (comm->rank == root) SLIMECCL_CHECK(checkBuffer(comm, "Reduce", "recvbuff", recvbuff, count));
    if (count == 0) return slimecclSuccess;
    return submitChecked(
        withScalar(record(Coll::Reduce, comm, sendbuff, recvbuff, count, datatype, op, root, -1, stream), premul));
  });
}

SLIMECCL_API slimecclResult_t slimecclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                               slimecclDataType_t datatype, slimecclComm_t comm,
                                               slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AlltoAll", datatype, stream));
    SLIMECCL_CHECK(checkBuffer(comm, "AlltoAll", "sendbuff", sendbuff, count));
    SLIMECCL_CHECK(checkBuffer(comm, "AlltoAll", "recvbuff", recvbuff, count));
    if (count == 0) return slimecclSuccess;
    return submitChecked(
        record(Coll::AlltoAll, comm, sendbuff, recvbuff, count, datatype, slimecclSum, -1, -1, stream));
  });
}
