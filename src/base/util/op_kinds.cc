#include "src/base/util/op_kinds.h"

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
  static const char* kNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                 "uint64", "half",  "float", "double", "bfloat16"};
  return type >= 0 && type < slimecclNumTypes ? kNames[type] : "invalid-type";
}

const char* redOpName(slimecclRedOp_t op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  if (op >= slimecclNumOps) return "premulsum";
  return op >= 0 ? kNames[op] : "invalid-op";
}

}  // namespace slimeccl
