// One recorded call: what the user asked for, fixed at call time (including its sequence number).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "include/slimeccl.h"
#include "src/premul.h"
#include "src/base/util/op_kinds.h"

namespace slimeccl {

class BlockConsumer;
class InputGate;
class BlockListener;

struct OpRecord {
  Coll coll;
  slimecclComm_t comm;
  const void* sendbuff;
  void* recvbuff;
  size_t count;  // Send/Recv: elements; AllGather: elements per rank
  slimecclDataType_t type;
  slimecclRedOp_t redOp;
  int root;
  int peer;      // Send/Recv
  uint64_t seq;  // collectives: per-comm collective number; P2P: per-peer, per-direction number
  slimecclStream_t stream;
  uint64_t traceId = 0;  // per-comm call number, for the flight recorder
  // Its entry in the comm's flight recorder: 1 + the entry's index in the ring; 0 while it has none.
  uint64_t recordedAs = 0;
  // AllGather only: told as each rank's block lands (AllGatherOverlap, AllGatherGemm).
  std::shared_ptr<BlockListener> blockListener{};
  // AllGather on device buffers only: handed each block in the CUDA stream's order as it lands.
  std::shared_ptr<BlockConsumer> blockConsumer{};
  // Awaited before the op runs: its send buffer is still being produced (ReduceScatterOverlap).
  std::shared_ptr<InputGate> inputGate{};
  // A reduction with an operator of slimecclRedOpCreatePreMulSum: the rank's scalar.
  PreMulScalar premul{};
  // The net module reads or writes its device buffer itself (GPUDirect RDMA): the executor copies
  // the bytes it handles by hand (a small message's inline part) with the GPU.
  bool netReachesDevice = false;

  size_t bytes() const { return count * typeSize(type); }
  bool isP2P() const { return isPointToPoint(coll); }
};

// Whether the op runs in place: AllGather's sendbuff at recvbuff + rank * bytes, ReduceScatter's
// recvbuff at sendbuff + rank * bytes, AllReduce's (and Broadcast's and Reduce's at the root)
// sendbuff == recvbuff.
bool isInPlace(const OpRecord& op);
// The size of the op's largest buffer on this rank (AllGather's and AlltoAll's receive buffer,
// ReduceScatter's send buffer: nranks blocks); false when it does not fit a size_t.
bool largestBufferBytes(const OpRecord& op, size_t* bytes);

// An op's buffers as a whole, before it is queued: sizes that fit the address space, and send and
// receive buffers that are either apart or exactly in place (a partial overlap would make the op
// read bytes it has already overwritten).
slimecclResult_t checkOpBuffers(const OpRecord& op);

// A stretch of one of an op's buffers on this rank.
struct Region {
  const char* data = nullptr;
  size_t bytes = 0;
};
inline bool overlaps(Region a, Region b) { return a.data < b.data + b.bytes && b.data < a.data + a.bytes; }
// The bytes the op reads on this rank (Broadcast's only at the root) and those it writes (Reduce's
// only at the root); empty where it reads or writes none.
Region readRegion(const OpRecord& op);
Region writtenRegion(const OpRecord& op);

// "AllGather (seq 3, count 4, float, 16 bytes per rank)" / "Send (count 4, float, 16 bytes) to peer 2".
std::string describeOp(const OpRecord& op);

}  // namespace slimeccl
