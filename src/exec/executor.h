// The executor: runs plans (of one or several communicators) to completion over their links,
// making the links first when needed. Every wait is bounded by the comms' timeouts and abort.
#pragma once

#include <vector>

#include "src/exec/plan.h"

namespace slimeccl {

// On failure every comm involved is marked failed with the sentence, and its links are dropped
// (their streams are out of step). Returns the first error.
slimecclResult_t runPlans(const std::vector<OpPlan*>& plans);

}  // namespace slimeccl
