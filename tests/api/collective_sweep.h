// The lists of calls one test makes inside one launch: every rank builds the same list and runs
// it in order, so a single communicator serves hundreds of checked calls.
#pragma once

#include <slimeccl.h>

#include <vector>

#include "algorithm_case.h"
#include "collective_checks.h"

namespace slimeccl_test {

// Every datatype with counts {0, 1, nranks-1, 13, 19*nranks-1} in place and out of place
// (rooted collectives also with NULL unused buffers); reductions run every op of every datatype
// at the uneven count 19*nranks-1. Roots {0, nranks/2, nranks-1}, and the op of the other
// counts, rotate from call to call.
std::vector<CallShape> sweepCalls(Collective collective, int nranks);

// Two large calls of about 1 MiB (nccl-tests' op bytes) with odd sizes: int8 out of place
// and float32 in place (avg for reductions).
std::vector<CallShape> largeCalls(Collective collective, int nranks);

void runCalls(Collective collective, slimecclComm_t comm, const std::vector<CallShape>& calls);

}  // namespace slimeccl_test
