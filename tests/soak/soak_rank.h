// One rank of the soak test: runs its part of the plan on its own communicators and checks every
// result as it goes. The first failure is printed with its op and ends the rank.
#pragma once

#include <slimeccl.h>

#include <cstdint>

#include "soak_plan.h"

namespace slimeccl_soak {

struct RankResult {
  bool passed = false;
  int opsRun = 0;             // ops this rank took part in
  uint64_t bytesChecked = 0;  // received bytes compared with what their sender wrote
};

RankResult runRank(const Plan& plan, int worldRank, int nranks, const slimecclUniqueId& id, uint64_t seed);

}  // namespace slimeccl_soak
