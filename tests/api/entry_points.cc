#include "entry_points.h"

namespace slimeccl_test {

namespace {

void ignoreChunk(int, void*, size_t, void*) {}

}  // namespace

const std::vector<EntryPoint>& entryPoints() {
  static const std::vector<EntryPoint> table = {
      {"slimecclAllGather", kUsesSendbuff | kUsesRecvbuff,
       [](const CallArgs& a) {
         return slimecclAllGather(a.sendbuff, a.recvbuff, a.count, a.datatype, a.comm, nullptr);
       }},
      {"slimecclAllReduce", kUsesSendbuff | kUsesRecvbuff | kUsesRedOp,
       [](const CallArgs& a) {
         return slimecclAllReduce(a.sendbuff, a.recvbuff, a.count, a.datatype, a.op, a.comm, nullptr);
       }},
      {"slimecclReduceScatter", kUsesSendbuff | kUsesRecvbuff | kUsesRedOp,
       [](const CallArgs& a) {
         return slimecclReduceScatter(a.sendbuff, a.recvbuff, a.count, a.datatype, a.op, a.comm, nullptr);
       }},
      {"slimecclBroadcast", kUsesSendbuff | kUsesRecvbuff | kUsesRoot,
       [](const CallArgs& a) {
         return slimecclBroadcast(a.sendbuff, a.recvbuff, a.count, a.datatype, a.root, a.comm, nullptr);
       }},
      {"slimecclReduce", kUsesSendbuff | kUsesRecvbuff | kUsesRedOp | kUsesRoot,
       [](const CallArgs& a) {
         return slimecclReduce(a.sendbuff, a.recvbuff, a.count, a.datatype, a.op, a.root, a.comm, nullptr);
       }},
      {"slimecclAlltoAll", kUsesSendbuff | kUsesRecvbuff,
       [](const CallArgs& a) {
         return slimecclAlltoAll(a.sendbuff, a.recvbuff, a.count, a.datatype, a.comm, nullptr);
       }},
      {"slimecclSend", kUsesSendbuff | kUsesPeer,
       [](const CallArgs& a) { return slimecclSend(a.sendbuff, a.count, a.datatype, a.peer, a.comm, nullptr); }},
      {"slimecclRecv", kUsesRecvbuff | kUsesPeer,
       [](const CallArgs& a) { return slimecclRecv(a.recvbuff, a.count, a.datatype, a.peer, a.comm, nullptr); }},
      {"slimecclAllGatherGemm", kUsesSendbuff | kUsesRecvbuff,
       [](const CallArgs& a) {
         return slimecclAllGatherGemm(a.sendbuff, a.gemmGathered, a.gemmB, a.recvbuff, a.count, a.count, a.count,
                                      a.datatype, a.comm, nullptr);
       }},
      {"slimecclAllGatherOverlap", kUsesSendbuff | kUsesRecvbuff,
       [](const CallArgs& a) {
         return slimecclAllGatherOverlap(a.sendbuff, a.recvbuff, a.count, a.datatype, a.onChunk, nullptr, a.comm,
                                         nullptr);
       }},
      {"slimecclGemmReduceScatter", kUsesSendbuff | kUsesRecvbuff | kUsesRedOp,
       [](const CallArgs& a) {
         return slimecclGemmReduceScatter(a.sendbuff, a.gemmB, a.recvbuff, a.count, a.count, a.count, a.datatype, a.op,
                                          a.comm, nullptr);
       }},
      {"slimecclReduceScatterOverlap", kUsesSendbuff | kUsesRecvbuff | kUsesRedOp,
       [](const CallArgs& a) {
         // The producer writes the send buffer; ignoreChunk writes nothing.
         return slimecclReduceScatterOverlap(const_cast<void*>(a.sendbuff), a.recvbuff, a.count, a.datatype, a.op,
                                             a.onChunk, nullptr, a.comm, nullptr);
       }},
  };
  return table;
}

CallArgs validCallArgs(slimecclComm_t comm, CallBuffers& buffers) {
  // Count 4 of float32 suits every entry point, the GEMM ops' 4x4 matrices included.
  return CallArgs{buffers.send, buffers.recv, 4,         slimecclFloat32, slimecclSum, 0, 0,
                  comm,         ignoreChunk,  buffers.b, nullptr};
}

}  // namespace slimeccl_test
