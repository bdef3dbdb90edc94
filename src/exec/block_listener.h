// What an AllGather caller hears from the executor: which rank's block of the receive buffer holds
// its final bytes. The executor calls blockLanded from its progress thread, so a listener hands
// the news to another thread instead of doing work there.
#pragma once

#include "include/slimeccl.h"

namespace slimeccl {

class BlockListener {
 public:
  virtual ~BlockListener() = default;
  // The op is about to run on this thread; blockLanded calls follow.
  virtual void begin() = 0;
  // Block `rank` of recvbuff is complete and will not be written again by this op.
  virtual void blockLanded(int rank) = 0;
  // The executor is done with the op, which ended with rc. Returns once the listener is done too,
  // with the op's final result.
  virtual slimecclResult_t end(slimecclResult_t rc) = 0;
};

}  // namespace slimeccl
