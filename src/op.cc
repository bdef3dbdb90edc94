#include "src/op.h"

#include <fmt/format.h>

#include "src/comm.h"

namespace slimeccl {

const char* collName(Coll coll) {
  switch (coll) {
    case Coll::Send: return "Send";
    case Coll::Recv: return "Recv";
    case Coll::AllGather: return "AllGather";
    case Coll::AllReduce: return "AllReduce";
    case Coll::ReduceScatter: return "ReduceScatter";
    case Coll::Broadcast: return "Broadcast";
    case Coll::Reduce: return "Reduce";
    case Coll::AlltoAll: return "AlltoAll";
  }
  return "?";
}

const char* typeName(slimecclDataType_t type) {
  static const char* kNames[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                 "half", "float", "double", "bfloat16"};
  return type >= 0 && type < slimecclNumTypes ? kNames[type] : "invalid-type";
}

const char* redOpName(slimecclRedOp_t op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < slimecclNumOps ? kNames[op] : "invalid-op";
}

size_t typeSize(slimecclDataType_t type) {
  static const size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return type >= 0 && type < slimecclNumTypes ? kSizes[type] : 0;
}

Region readRegion(const OpRecord& op) {
  const char* send = static_cast<const char*>(op.sendbuff);
  const size_t n = static_cast<size_t>(op.comm->nranks);
  switch (op.coll) {
    case Coll::Send:
    case Coll::AllGather:
    case Coll::AllReduce:
    case Coll::Reduce: return {send, op.bytes()};
    case Coll::Broadcast: return op.comm->rank == op.root ? Region{send, op.bytes()} : Region{};
    case Coll::ReduceScatter:
    case Coll::AlltoAll: return {send, op.bytes() * n};
    case Coll::Recv: return {};
  }
  return {};
}

Region writtenRegion(const OpRecord& op) {
  const char* recv = static_cast<const char*>(op.recvbuff);
  const size_t n = static_cast<size_t>(op.comm->nranks);
  switch (op.coll) {
    case Coll::Recv:
    case Coll::ReduceScatter:
    case Coll::AllReduce:
    case Coll::Broadcast: return {recv, op.bytes()};
    case Coll::Reduce: return op.comm->rank == op.root ? Region{recv, op.bytes()} : Region{};
    case Coll::AllGather:
    case Coll::AlltoAll: return {recv, op.bytes() * n};
    case Coll::Send: return {};
  }
  return {};
}

std::string describeOp(const OpRecord& op) {
  if (op.isP2P())
    return fmt::format("{} (count {}, {}, {} bytes) {} peer {}", collName(op.coll), op.count, typeName(op.type),
                       op.bytes(), op.coll == Coll::Send ? "to" : "from", op.peer);
  return fmt::format("{} (seq {}, count {}, {}, {} bytes per rank)", collName(op.coll), op.seq, op.count,
                     typeName(op.type), op.bytes());
}

}  // namespace slimeccl
