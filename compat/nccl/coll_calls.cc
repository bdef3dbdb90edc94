// NCCL's collectives and point-to-point calls on slimeccl's, on the slimeccl stream of the caller's
// CUDA stream. Gather and Scatter are groups of Send and Recv, as NCCL builds them too.
#include <string>

#include "compat/nccl/api.h"
#include "compat/nccl/compat.h"
#include "compat/nccl/stream_map.h"

using namespace slimeccl_nccl;

namespace {

// What every call needs from its arguments, in slimeccl's terms.
struct Prepared {
  slimecclDataType_t type = slimecclUint8;
  slimecclStream_t stream = nullptr;
};

ncclResult_t prepare(const char* call, ncclComm_t comm, cudaStream_t stream, ncclDataType_t type, bool reduces,
                     Prepared* out) {
  const ncclResult_t rc = usable(comm, call);
  if (rc != ncclSuccess) return rc;
  if (!nativeType(type, reduces, &out->type))
    return refuse(ncclInvalidArgument, rankedCall(comm, call) + ": " + typeRefusal(type));
  return streamFor(stream, comm->device, &out->stream);
}

ncclResult_t prepareReduction(const char* call, ncclComm_t comm, cudaStream_t stream, ncclDataType_t type,
                              ncclRedOp_t op, Prepared* out, slimecclRedOp_t* nativeOpOut) {
  const ncclResult_t rc = prepare(call, comm, stream, type, true, out);
  if (rc != ncclSuccess) return rc;
  if (!nativeOp(op, nativeOpOut)) return refuse(ncclInvalidArgument, rankedCall(comm, call) + ": " + opRefusal(op));
  return ncclSuccess;
}

size_t bytesOf(slimecclDataType_t type) {
  switch (type) {
    case slimecclInt8:
    case slimecclUint8: return 1;
    case slimecclFloat16:
    case slimecclBfloat16: return 2;
    case slimecclInt32:
    case slimecclUint32:
    case slimecclFloat32: return 4;
    default: return 8;
  }
}

}  // namespace

NCCL_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  slimecclRedOp_t native;
  const ncclResult_t rc = prepareReduction("AllReduce", comm, stream, datatype, op, &p, &native);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclAllReduce(sendbuff, recvbuff, count, p.type, native, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                        ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  slimecclRedOp_t native;
  const ncclResult_t rc = prepareReduction("ReduceScatter", comm, stream, datatype, op, &p, &native);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclReduceScatter(sendbuff, recvbuff, recvcount, p.type, native, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  slimecclRedOp_t native;
  const ncclResult_t rc = prepareReduction("Reduce", comm, stream, datatype, op, &p, &native);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclReduce(sendbuff, recvbuff, count, p.type, native, root, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                    ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  const ncclResult_t rc = prepare("AllGather", comm, stream, datatype, false, &p);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclAllGather(sendbuff, recvbuff, sendcount, p.type, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  const ncclResult_t rc = prepare("Broadcast", comm, stream, datatype, false, &p);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclBroadcast(sendbuff, recvbuff, count, p.type, root, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

NCCL_API ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                   ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  const ncclResult_t rc = prepare("AlltoAll", comm, stream, datatype, false, &p);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclAlltoAll(sendbuff, recvbuff, count, p.type, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                               cudaStream_t stream) {
  Prepared p;
  const ncclResult_t rc = prepare("Send", comm, stream, datatype, false, &p);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclSend(sendbuff, count, p.type, peer, comm->native, p.stream));
}

NCCL_API ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                               cudaStream_t stream) {
  Prepared p;
  const ncclResult_t rc = prepare("Recv", comm, stream, datatype, false, &p);
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclRecv(recvbuff, count, p.type, peer, comm->native, p.stream));
}

namespace {

// Gather (the root receives block r of recvbuff from rank r) or Scatter (the root sends block r of
// sendbuff to rank r): a group of Send and Recv, the root's own block included.
ncclResult_t rootedBlocks(const char* call, bool gather, const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  Prepared p;
  const ncclResult_t rc = prepare(call, comm, stream, datatype, false, &p);
  if (rc != ncclSuccess) return rc;
  int nranks = 0, rank = 0;
  slimecclCommCount(comm->native, &nranks);
  slimecclCommUserRank(comm->native, &rank);
  if (root < 0 || root >= nranks)
    return refuse(ncclInvalidArgument, rankedCall(comm, call) + ": root " + std::to_string(root) +
                                           " is out of range (nranks " + std::to_string(nranks) + ")");
  const size_t block = count * bytesOf(p.type);
  slimecclResult_t first = slimecclSuccess;
  auto keep = [&first](slimecclResult_t r) {
    if (first == slimecclSuccess) first = r;
  };
  slimecclGroupStart();
  for (int r = 0; rank == root && r < nranks; ++r)
    keep(gather
             ? slimecclRecv(static_cast<char*>(recvbuff) + r * block, count, p.type, r, comm->native, p.stream)
             : slimecclSend(static_cast<const char*>(sendbuff) + r * block, count, p.type, r, comm->native, p.stream));
  keep(gather ? slimecclSend(sendbuff, count, p.type, root, comm->native, p.stream)
              : slimecclRecv(recvbuff, count, p.type, root, comm->native, p.stream));
  keep(slimecclGroupEnd());
  return fromNative(first);
}

}  // namespace

NCCL_API ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream) {
  return rootedBlocks("Gather", true, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

NCCL_API ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream) {
  return rootedBlocks("Scatter", false, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

// slimeccl's operators, numbered from ncclNumOps as NCCL's are.
NCCL_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                               ncclScalarResidence_t residence, ncclComm_t comm) {
  const ncclResult_t rc = usable(comm, "RedOpCreatePreMulSum");
  if (rc != ncclSuccess) return rc;
  if (op == nullptr) return refuse(ncclInvalidArgument, rankedCall(comm, "RedOpCreatePreMulSum") + ": op is NULL");
  slimecclDataType_t type = slimecclFloat32;
  if (!nativeType(datatype, true, &type))
    return refuse(ncclInvalidArgument, rankedCall(comm, "RedOpCreatePreMulSum") + ": " + typeRefusal(datatype));
  slimecclRedOp_t made = slimecclSum;
  const ncclResult_t created = fromNative(slimecclRedOpCreatePreMulSum(
      &made, scalar, type, static_cast<slimecclScalarResidence_t>(residence), comm->native));
  if (created == ncclSuccess) *op = static_cast<ncclRedOp_t>(made);
  return created;
}

NCCL_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  const ncclResult_t rc = usable(comm, "RedOpDestroy");
  if (rc != ncclSuccess) return rc;
  return fromNative(slimecclRedOpDestroy(static_cast<slimecclRedOp_t>(op), comm->native));
}

PROFILING_NAME(ncclAllReduce)
PROFILING_NAME(ncclReduceScatter)
PROFILING_NAME(ncclReduce)
PROFILING_NAME(ncclAllGather)
PROFILING_NAME(ncclBroadcast)
PROFILING_NAME(ncclBcast)
PROFILING_NAME(ncclAlltoAll)
PROFILING_NAME(ncclSend)
PROFILING_NAME(ncclRecv)
PROFILING_NAME(ncclGather)
PROFILING_NAME(ncclScatter)
PROFILING_NAME(ncclRedOpCreatePreMulSum)
PROFILING_NAME(ncclRedOpDestroy)
