#include "src/op.h"

#include <fmt/format.h>

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

std::string describeOp(const OpRecord& op) {
  if (op.isP2P())
    return fmt::format("{} (count {}, {}, {} bytes) {} peer {}", collName(op.coll), op.count, typeName(op.type),
                       op.bytes(), op.coll == Coll::Send ? "to" : "from", op.peer);
  return fmt::format("{} (seq {}, count {}, {}, {} bytes per rank)", collName(op.coll), op.seq, op.count,
                     typeName(op.type), op.bytes());
}

}  // namespace slimeccl
