// What kind of call an op is and what it carries, with their names: the words every layer shares,
// from the algorithms up (src/op.h records whole calls on top of them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "include/slimeccl.h"

namespace slimeccl {

enum class Coll : uint8_t { Send, Recv, AllGather, AllReduce, ReduceScatter, Broadcast, Reduce, AlltoAll };

const char* collName(Coll coll);
inline bool isPointToPoint(Coll coll) { return coll == Coll::Send || coll == Coll::Recv; }
const char* typeName(slimecclDataType_t type);
const char* redOpName(slimecclRedOp_t op);
// Inline: every op asks for its bytes several times.
inline size_t typeSize(slimecclDataType_t type) {
  static constexpr size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  static_assert(sizeof(kSizes) / sizeof(kSizes[0]) == slimecclNumTypes);
  return type >= 0 && type < slimecclNumTypes ? kSizes[type] : 0;
}

}  // namespace slimeccl
