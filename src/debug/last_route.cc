#include "src/debug/last_route.h"

#include <cstdio>
#include <mutex>

namespace slimeccl {

void LastRoute::started(const OpRecord& op, slimecclRoute_t route, const char* algorithm) {
  std::lock_guard<SpinLock> lock(lock_);
  route_.route = route;
  snprintf(route_.op, sizeof(route_.op), "%s", collName(op.coll));
  snprintf(route_.algorithm, sizeof(route_.algorithm), "%s", algorithm);
  route_.seq = op.seq;
}

slimecclOpRoute LastRoute::get() const {
  std::lock_guard<SpinLock> lock(lock_);
  return route_;
}

}  // namespace slimeccl
