// What a Reduce of ReduceScatterOverlap waits for before it runs: its send buffer being produced
// (by a callback, a GEMM) on another thread. The executor awaits the gate when the op reaches it,
// in the stream's or the call's order, so the producer works on the next block while this one's
// reduction runs.
#pragma once

#include "include/slimeccl.h"

struct slimecclComm;

namespace slimeccl {

class InputGate {
 public:
  virtual ~InputGate() = default;
  // Returns once the op's send buffer holds its final bytes, or with the reason it never will (a
  // failed communicator stops the producer).
  virtual slimecclResult_t await(slimecclComm* comm) = 0;
};

}  // namespace slimeccl
