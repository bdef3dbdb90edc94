// Element counts of one op at one size, in the shape of nccl-tests' getCollByteCount.
#pragma once

#include <cstddef>

namespace slimeccl_perf {

struct ElementCounts {
  size_t send = 0;               // elements in each rank's send buffer
  size_t recv = 0;               // elements in each rank's result, all of them checked
  size_t param = 0;              // the count argument of the call; the table's count column
  size_t sendInPlaceOffset = 0;  // in place, rank r sends from recvbuff + r * this
  size_t recvInPlaceOffset = 0;  // in place, rank r's result starts at recvbuff + r * this
};

// Receive-buffer elements that rank `rank` touches in place (its send data and its result).
size_t inPlaceExtent(const ElementCounts& counts, int rank);

// The table's size column and the bytes algbw divides by.
size_t rowBytes(const ElementCounts& counts, size_t typeSize);

}  // namespace slimeccl_perf
