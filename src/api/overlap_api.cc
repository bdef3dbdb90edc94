// AllGatherOverlap, AllGatherGemm, ReduceScatterOverlap and GemmReduceScatter entry points:
// validate, then submit (src/overlap/). On host buffers the blocks go to and come from host code;
// on device buffers, from and to work queued on a CUDA stream.
#include <initializer_list>
#include <utility>

#include "src/api/boundary.h"
#include "src/comm.h"
#include "src/device/device_gemm.h"
#include "src/device/gpu.h"
#include "src/exec/submit.h"
#include "src/overlap/allgather_gemm.h"
#include "src/overlap/allgather_overlap.h"
#include "src/overlap/device_allgather_gemm.h"
#include "src/overlap/device_gemm_reducescatter.h"
#include "src/overlap/device_reducescatter_overlap.h"
#include "src/overlap/gemm_reducescatter.h"
#include "src/overlap/reducescatter_overlap.h"
#include "src/stream.h"

using namespace slimeccl;

namespace {

using NamedBuffer = std::pair<const char*, const void*>;

#ifndef SLIMECCL_HAVE_BLAS
slimecclResult_t withoutBlas(const slimecclComm* comm, const char* opName) {
  return fail(slimecclInvalidUsage,
              "rank {}: {}: this build has no BLAS (install OpenBLAS and configure with SLIMECCL_WITH_BLAS=ON)",
              comm->rank, opName);
}
#endif

slimecclResult_t runHostGemm(const GemmCall& call) {
#ifdef SLIMECCL_HAVE_BLAS
  return submitAllGatherGemm(call);
#else
  return withoutBlas(call.comm, "AllGatherGemm");
#endif
}

slimecclResult_t runHostGemmReduceScatter(const GemmReduceScatterCall& call) {
#ifdef SLIMECCL_HAVE_BLAS
  return submitGemmReduceScatter(call);
#else
  return withoutBlas(call.comm, "GemmReduceScatter");
#endif
}

// *onDevice: the given buffers (NULL ones aside) are device memory. Then they must all be memory of
// the GPU of the stream, a stream in a CUDA stream's order, outside a group: their blocks are handed
// while the call queues the op.
slimecclResult_t checkResidence(slimecclComm_t comm, const char* opName, slimecclStream_t stream,
                                std::initializer_list<NamedBuffer> buffers, bool* onDevice) {
  const NamedBuffer* deviceOne = nullptr;
  for (const NamedBuffer& buffer : buffers)
    if (buffer.second != nullptr && isDeviceMemory(buffer.second)) deviceOne = &buffer;
  *onDevice = deviceOne != nullptr;
  if (!*onDevice) return slimecclSuccess;
  if (stream == nullptr || stream->cuda == nullptr)
    return fail(slimecclInvalidUsage,
                "rank {}: {}: {} is CUDA device memory, which needs a stream from slimecclStreamCreateFromCuda: the "
                "blocks are handed on in that CUDA stream's order",
                comm->rank, opName, deviceOne->first);
  if (groupIsOpen())
    return fail(slimecclInvalidUsage,
                "rank {}: {}: on device buffers it cannot be called inside slimecclGroupStart/slimecclGroupEnd (its "
                "blocks are handed on while the call queues it)",
                comm->rank, opName);
  const int streamGpu = stream->cuda->device();
  for (const NamedBuffer& buffer : buffers) {
    if (buffer.second == nullptr) continue;
    int gpu = -1;
    if (!isDeviceMemory(buffer.second, &gpu))
      return fail(slimecclInvalidArgument,
                  "rank {}: {}: {} is host memory but {} is CUDA device memory; the buffers must all be device "
                  "memory or all host memory",
                  comm->rank, opName, buffer.first, deviceOne->first);
    if (gpu != streamGpu)
      return fail(slimecclInvalidArgument, "rank {}: {}: {} is memory of GPU {}, but the stream is on GPU {}",
                  comm->rank, opName, buffer.first, gpu, streamGpu);
  }
  return slimecclSuccess;
}

slimecclResult_t submitOverlap(const OverlapCall& call) {
  bool onDevice = false;
  SLIMECCL_CHECK(checkResidence(call.comm, "AllGatherOverlap", call.stream,
                                {{"sendbuff", call.sendbuff}, {"recvbuff", call.recvbuff}}, &onDevice));
  return onDevice ? submitDeviceAllGatherOverlap(call, chunkFnConsumer(call)) : submitAllGatherOverlap(call);
}

// A GEMM-overlap op's datatype: on device buffers cuBLASLt's, on host buffers OpenBLAS's.
slimecclResult_t checkGemmType(const slimecclComm* comm, const char* opName, slimecclDataType_t type, bool onDevice) {
  if (onDevice) {
    if (!deviceGemmTakes(type))
      return fail(slimecclInvalidArgument,
                  "rank {}: {}: datatype {} has no GPU GEMM (bfloat16, float16, float and double do)", comm->rank,
                  opName, typeName(type));
    return slimecclSuccess;
  }
  if (type != slimecclFloat32 && type != slimecclFloat64)
    return fail(slimecclInvalidArgument,
                "rank {}: {}: datatype {} has no host GEMM (float and double do; the OpenBLAS this library uses has "
                "no bfloat16 GEMM; on device buffers bfloat16 and float16 work)",
                comm->rank, opName, typeName(type));
  return slimecclSuccess;
}

slimecclResult_t submitGemm(const GemmCall& call) {
  slimecclComm_t comm = call.comm;
  bool onDevice = false;
  SLIMECCL_CHECK(checkResidence(comm, "AllGatherGemm", call.stream,
                                {{"aLocal", call.aLocal}, {"aGathered", call.aGathered}, {"b", call.b}, {"c", call.c}},
                                &onDevice));
  SLIMECCL_CHECK(checkGemmType(comm, "AllGatherGemm", call.type, onDevice));
  return onDevice ? submitDeviceAllGatherGemm(call) : runHostGemm(call);
}

slimecclResult_t submitReduceScatterOverlapCall(const ReduceScatterOverlapCall& call) {
  bool onDevice = false;
  SLIMECCL_CHECK(checkResidence(call.comm, "ReduceScatterOverlap", call.stream,
                                {{"sendbuff", call.sendbuff}, {"recvbuff", call.recvbuff}}, &onDevice));
  if (!onDevice) return submitReduceScatterOverlap(call);
  ChunkFnProducer producer(call);
  return submitDeviceReduceScatterOverlap(call, producer);
}

slimecclResult_t submitGemmReduceScatterCall(const GemmReduceScatterCall& call) {
  bool onDevice = false;
  SLIMECCL_CHECK(checkResidence(call.comm, "GemmReduceScatter", call.stream,
                                {{"a", call.a}, {"b", call.b}, {"c", call.c}}, &onDevice));
  SLIMECCL_CHECK(checkGemmType(call.comm, "GemmReduceScatter", call.type, onDevice));
  return onDevice ? submitDeviceGemmReduceScatter(call) : runHostGemmReduceScatter(call);
}

}  // namespace

SLIMECCL_API slimecclResult_t slimecclAllGatherOverlap(const void* sendbuff, void* recvbuff, size_t sendcount,
                                                       slimecclDataType_t datatype, slimecclChunkFn onChunk, void* user,
                                                       slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AllGatherOverlap", datatype, stream));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherOverlap", "sendbuff", sendbuff, sendcount));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherOverlap", "recvbuff", recvbuff, sendcount));
    if (onChunk == nullptr)
      return fail(slimecclInvalidArgument, "rank {}: AllGatherOverlap: onChunk is NULL", comm->rank);
    return submitOverlap(OverlapCall{comm, sendbuff, recvbuff, sendcount, datatype, onChunk, user, stream});
  });
}

SLIMECCL_API slimecclResult_t slimecclAllGatherGemm(const void* aLocal, void* aGathered, const void* b, void* c,
                                                    size_t mLocal, size_t n, size_t k, slimecclDataType_t datatype,
                                                    slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "AllGatherGemm", datatype, stream));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherGemm", "aLocal", aLocal, mLocal * k));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherGemm", "b", b, k * n));
    SLIMECCL_CHECK(checkBuffer(comm, "AllGatherGemm", "c", c, mLocal * n));
    return submitGemm(GemmCall{comm, aLocal, aGathered, b, c, mLocal, n, k, datatype, stream});
  });
}

SLIMECCL_API slimecclResult_t slimecclReduceScatterOverlap(void* sendbuff, void* recvbuff, size_t recvcount,
                                                           slimecclDataType_t datatype, slimecclRedOp_t op,
                                                           slimecclChunkFn produce, void* user, slimecclComm_t comm,
                                                           slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "ReduceScatterOverlap", datatype, stream));
    PreMulScalar premul;
    SLIMECCL_CHECK(checkRedOp(comm, "ReduceScatterOverlap", op, datatype, &premul));
    SLIMECCL_CHECK(checkBuffer(comm, "ReduceScatterOverlap", "sendbuff", sendbuff, recvcount));
    SLIMECCL_CHECK(checkBuffer(comm, "ReduceScatterOverlap", "recvbuff", recvbuff, recvcount));
    if (produce == nullptr)
      return fail(slimecclInvalidArgument, "rank {}: ReduceScatterOverlap: produce is NULL", comm->rank);
    if (recvcount == 0) return slimecclSuccess;
    return submitReduceScatterOverlapCall(
        ReduceScatterOverlapCall{comm, sendbuff, recvbuff, recvcount, datatype, op, premul, produce, user, stream});
  });
}

SLIMECCL_API slimecclResult_t slimecclGemmReduceScatter(const void* a, const void* b, void* c, size_t mLocal, size_t n,
                                                        size_t k, slimecclDataType_t datatype, slimecclRedOp_t op,
                                                        slimecclComm_t comm, slimecclStream_t stream) {
  SLIMECCL_API_COMM_BODY(comm, [&] {
    SLIMECCL_CHECK(checkOp(comm, "GemmReduceScatter", datatype, stream));
    PreMulScalar premul;
    SLIMECCL_CHECK(checkRedOp(comm, "GemmReduceScatter", op, datatype, &premul));
    SLIMECCL_CHECK(checkBuffer(comm, "GemmReduceScatter", "a", a, mLocal * k));
    SLIMECCL_CHECK(checkBuffer(comm, "GemmReduceScatter", "b", b, k * n));
    SLIMECCL_CHECK(checkBuffer(comm, "GemmReduceScatter", "c", c, mLocal * n));
    if (mLocal == 0 || n == 0) return slimecclSuccess;
    return submitGemmReduceScatterCall(
        GemmReduceScatterCall{comm, a, b, c, mLocal, n, k, datatype, op, premul, stream});
  });
}
