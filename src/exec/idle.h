// How an executor with nothing to do waits: spin briefly, then yield, then block on what the
// pending requests can be woken by (the rank's doorbell or socket fds), in slices so that abort
// and deadlines are seen.
#pragma once

#include <functional>
#include <vector>

#include "net/net.h"

namespace slimeccl {

class IdleWaiter {
 public:
  IdleWaiter(int spinIterations, int yieldIterations) : spin_(spinIterations), yield_(yieldIterations) {}
  void progressed() { rounds_ = 0; }
  // hints: what the in-flight requests wait on; stillIdle(): one more progress pass, true if
  // nothing moved (called after announcing sleep so that a wake-up cannot be lost).
  void wait(const std::vector<WaitHint>& hints, const std::vector<Bell*>& bells,
            const std::function<bool()>& stillIdle);

 private:
  int spin_;
  int yield_;
  int rounds_ = 0;
};

}  // namespace slimeccl
