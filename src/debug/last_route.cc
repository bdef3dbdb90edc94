#include "src/debug/last_route.h"

#include <cstdio>
#include <mutex>

namespace slimeccl {

void LastRoute::started(const OpRecord& op, slimecclRoute_t route, const char* algorithm) {
  std::lock_guard<SpinLock> lock(lock_);
  route_ = route;
  coll_ = op.coll;
  algorithm_ = algorithm;
  seq_ = op.seq;
}

slimecclOpRoute LastRoute::get() const {
  slimecclOpRoute out{};
  std::lock_guard<SpinLock> lock(lock_);
  out.route = route_;
  if (route_ == slimecclRouteNone) return out;
  snprintf(out.op, sizeof(out.op), "%s", collName(coll_));
  snprintf(out.algorithm, sizeof(out.algorithm), "%s", algorithm_);
  out.seq = seq_;
  return out;
}

}  // namespace slimeccl
