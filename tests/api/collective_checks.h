// One collective call on one rank through the public API, checked: every element of the output,
// the guard bytes around every buffer, and every buffer the library must not write (the send
// buffer out of place, buffers the API leaves unused off the root). In place follows NCCL:
//   AllReduce, AlltoAll      sendbuff == recvbuff
//   ReduceScatter            recvbuff == sendbuff + rank*count
//   AllGather                sendbuff == recvbuff + rank*count
//   Broadcast, Reduce        sendbuff == recvbuff on every rank (in place at the root)
#pragma once

#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "algorithm_case.h"

namespace slimeccl_test {

struct CallShape {
  slimecclDataType_t datatype;
  slimecclRedOp_t op;  // reductions only
  size_t count;        // the count argument of the call
  int root;            // Broadcast and Reduce only
  bool inPlace;
  // Out of place: Broadcast's sendbuff and Reduce's recvbuff off the root are NULL rather than
  // a buffer that must stay untouched.
  bool unusedBuffersNull;
  uint64_t seed;  // fresh per call, so data left over from an earlier call is wrong data
};

// E.g. "Reduce of 13 x int8, op max, root 2, in place, seed 7".
std::string describeCall(Collective collective, const CallShape& shape);

// Runs the call on this rank and throws RankFailure when it fails or any check does.
void checkCall(Collective collective, slimecclComm_t comm, const CallShape& shape);

void checkAllreduce(slimecclComm_t comm, const CallShape& shape);
void checkReducescatter(slimecclComm_t comm, const CallShape& shape);
void checkReduce(slimecclComm_t comm, const CallShape& shape);
void checkBroadcast(slimecclComm_t comm, const CallShape& shape);
void checkAlltoall(slimecclComm_t comm, const CallShape& shape);
void checkAllgather(slimecclComm_t comm, const CallShape& shape);

}  // namespace slimeccl_test
