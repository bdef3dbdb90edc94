// The route of a communicator's most recently started op, for slimecclCommGetLastOpRoute: which
// way it went (net, shared slots, eager, GPU to GPU) and its algorithm, so that tests can see
// the route an op took and not only its data.
#pragma once

#include "include/slimeccl.h"
#include "src/op.h"
#include "src/base/util/spin_lock.h"

namespace slimeccl {

class LastRoute {
 public:
  // algorithm: SLIMECCL_ALGO's spelling, or "" (a static string). Called for every op, so it
  // keeps what it is given; get() spells it out.
  void started(const OpRecord& op, slimecclRoute_t route, const char* algorithm);
  slimecclOpRoute get() const;

 private:
  mutable SpinLock lock_;
  slimecclRoute_t route_ = slimecclRouteNone;
  Coll coll_ = Coll::AllReduce;
  const char* algorithm_ = "";
  uint64_t seq_ = 0;
};

}  // namespace slimeccl
